/** `{{marker}}` rendering: finds markers in request text and replaces them as nuclei's expressions.Evaluate. */
import { DslEvalError, type DslScope } from './ast.js';
import { evaluateDsl } from './evaluate.js';
import { parseDsl } from './parser.js';
import { dslToString } from './values.js';

export interface Marker {
  start: number;
  /** Index just after the closing `}}`. */
  end: number;
  inner: string;
}

/** Finds top-level `{{ ... }}` markers; quotes inside a marker are honoured so `{{base64("}}")}}` works. */
export function findMarkers(text: string): Marker[] {
  const out: Marker[] = [];
  let i = 0;
  for (;;) {
    const start = text.indexOf('{{', i);
    if (start === -1) break;
    let j = start + 2;
    let quote: string | undefined;
    let depth = 0;
    let end = -1;
    while (j < text.length) {
      const c = text[j];
      if (quote) {
        if (c === '\\') {
          j += 2;
          continue;
        }
        if (c === quote) quote = undefined;
        j++;
        continue;
      }
      if (c === "'" || c === '"') {
        quote = c;
        j++;
        continue;
      }
      if (c === '{' && text[j + 1] === '{') {
        depth++;
        j += 2;
        continue;
      }
      if (c === '}' && text[j + 1] === '}') {
        if (depth === 0) {
          end = j + 2;
          break;
        }
        depth--;
        j += 2;
        continue;
      }
      if (c === '\n' && !quote) {
        // markers do not span lines unless inside quotes
        break;
      }
      j++;
    }
    if (end === -1) {
      // unbalanced quotes: fall back to the first closing braces
      const plain = text.indexOf('}}', start + 2);
      const nl = text.indexOf('\n', start + 2);
      if (plain === -1 || (nl !== -1 && nl < plain)) {
        i = start + 2;
        continue;
      }
      end = plain + 2;
    }
    out.push({ start, end, inner: text.slice(start + 2, end - 2) });
    i = end;
  }
  return out;
}

export interface RenderResult {
  text: string;
  /** Markers left in the text that reference unknown variables (nuclei would refuse to send such a request). */
  unresolved: string[];
  /** Markers whose expression failed for another reason (bad arguments, unknown function...). */
  errors: string[];
}

const NUMERIC_LITERAL = /^[0-9+\-*/%().\s]+$/;
const IDENTIFIER_LIKE = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

/**
 * Replace `{{name}}` and `{{expression}}` markers, like nuclei's expressions.Evaluate: a marker naming a known
 * variable is replaced by its value; a marker containing a helper call or variables is evaluated; literal-only
 * markers such as `{{7*7}}` (SSTI payloads) are left as they are.
 */
export function renderMarkers(text: string, scope: DslScope, depth = 0): RenderResult {
  if (!text.includes('{{')) return { text, unresolved: [], errors: [] };
  const unresolved: string[] = [];
  const errors: string[] = [];
  let out = '';
  let last = 0;
  for (const m of findMarkers(text)) {
    out += text.slice(last, m.start);
    last = m.end;
    let inner = m.inner;
    if (inner.includes('{{') && depth < 5) {
      const nested = renderMarkers(inner, scope, depth + 1);
      inner = nested.text;
      unresolved.push(...nested.unresolved);
      errors.push(...nested.errors);
    }
    const name = inner.trim();
    const direct = scope.get(name);
    if (direct !== undefined) {
      out += dslToString(direct);
      continue;
    }
    const parsed = parseDsl(name);
    if (!parsed.ast) {
      out += `{{${inner}}}`;
      if (IDENTIFIER_LIKE.test(name)) unresolved.push(name);
      else if (!NUMERIC_LITERAL.test(name)) errors.push(`{{${name}}}: ${parsed.error}`);
      continue;
    }
    if (parsed.variables.length === 0 && parsed.functions.length === 0) {
      // literal only ({{7*7}}, {{'a'}}): nuclei leaves these untouched
      out += `{{${inner}}}`;
      continue;
    }
    try {
      const value = evaluateDsl(parsed.ast, scope);
      out += dslToString(value);
    } catch (err) {
      out += `{{${inner}}}`;
      if (err instanceof DslEvalError && err.missingVariable) unresolved.push(err.missingVariable);
      else errors.push(`{{${name}}}: ${(err as Error).message}`);
    }
  }
  out += text.slice(last);
  return { text: out, unresolved: [...new Set(unresolved)], errors };
}
