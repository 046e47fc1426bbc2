/**
 * A safe evaluator for the nuclei DSL (govaluate syntax + nuclei helper functions).
 *
 * Hand-written tokenizer, recursive-descent parser and tree-walking evaluator: no `eval`, no `new Function`,
 * no access to JavaScript objects. Values are strings, numbers, booleans, null and arrays.
 *
 * Semantics follow govaluate as used by nuclei:
 *  - strings in '...' or "..." — a backslash makes the next character literal (`'\''`), there are no other escapes
 *  - `+` adds numbers and concatenates as soon as one side is a string; `== !=` are type-strict (200 != "200")
 *  - `< <= > >=` compare two numbers or two strings; `&& || !` need booleans; `=~ !~` match a Go regex
 *  - `? :` ternary, `??` coalesce, `in` against a parenthesised list, `**`, `%`, bitwise operators
 *  - a missing variable is an evaluation error (`No parameter 'x' found.`), which matchers treat as "false"
 * Strings are byte strings in the bytes.ts sense: hashing, base64, `len()` work on the UTF-8 bytes.
 */
import { createHash, createHmac, randomInt } from 'node:crypto';
import zlib from 'node:zlib';
import { byteLength, decodeBytes, encodeString } from './bytes.js';
import { compileGoRegex, replaceAllGo, type GoRegex } from './goregex.js';
import { goJson } from './jq.js';
import { mmh3Signed } from './mmh3.js';
import { compareVersions } from './versions.js';

export type DslValue = string | number | boolean | null | DslValue[];

export type DslNode =
  | { k: 'lit'; v: DslValue }
  | { k: 'var'; name: string }
  | { k: 'unary'; op: '!' | '-' | '~'; arg: DslNode }
  | { k: 'bin'; op: string; l: DslNode; r: DslNode }
  | { k: 'tern'; c: DslNode; t: DslNode; f?: DslNode }
  | { k: 'call'; name: string; args: DslNode[] }
  | { k: 'arr'; items: DslNode[] };

export interface DslScope {
  get(name: string): DslValue | undefined;
}

export class DslSyntaxError extends Error {}

export class DslEvalError extends Error {
  constructor(
    message: string,
    readonly missingVariable?: string,
  ) {
    super(message);
  }
}

/* ------------------------------------------------------------------------------------------------------------ */
/* Tokenizer                                                                                                    */
/* ------------------------------------------------------------------------------------------------------------ */

type Tok =
  | { t: 'num'; v: number; pos: number }
  | { t: 'str'; v: string; pos: number }
  | { t: 'id'; v: string; pos: number }
  | { t: 'op'; v: string; pos: number }
  | { t: 'eof'; pos: number };

const OPERATORS = [
  '**',
  '==',
  '!=',
  '>=',
  '<=',
  '=~',
  '!~',
  '&&',
  '||',
  '??',
  '<<',
  '>>',
  '>',
  '<',
  '+',
  '-',
  '*',
  '/',
  '%',
  '!',
  '~',
  '&',
  '|',
  '^',
  '?',
  ':',
  '(',
  ')',
  ',',
];

const MAX_EXPRESSION_LENGTH = 20_000;

function tokenize(src: string): Tok[] {
  if (src.length > MAX_EXPRESSION_LENGTH) throw new DslSyntaxError('expression too long');
  const toks: Tok[] = [];
  let i = 0;
  const n = src.length;
  while (i < n) {
    const c = src[i];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    const start = i;
    if (c >= '0' && c <= '9') {
      const hex = /^0[xX][0-9a-fA-F]+/.exec(src.slice(i));
      if (hex) {
        toks.push({ t: 'num', v: Number.parseInt(hex[0].slice(2), 16), pos: start });
        i += hex[0].length;
        continue;
      }
      const m = /^[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/.exec(src.slice(i));
      if (!m) throw new DslSyntaxError(`bad number at ${i}`);
      toks.push({ t: 'num', v: Number(m[0]), pos: start });
      i += m[0].length;
      continue;
    }
    if (c === "'" || c === '"') {
      let out = '';
      i++;
      let closed = false;
      while (i < n) {
        const d = src[i];
        if (d === '\\') {
          if (i + 1 < n) out += src[i + 1];
          i += 2;
          continue;
        }
        if (d === c) {
          closed = true;
          i++;
          break;
        }
        out += d;
        i++;
      }
      if (!closed) throw new DslSyntaxError(`unclosed string literal at ${start}`);
      toks.push({ t: 'str', v: out, pos: start });
      continue;
    }
    if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i));
      toks.push({ t: 'id', v: m![0], pos: start });
      i += m![0].length;
      continue;
    }
    if (c === '[') {
      // govaluate escaped parameter name: [some-name]
      const end = src.indexOf(']', i + 1);
      if (end === -1) throw new DslSyntaxError(`unclosed [ at ${i}`);
      const name = src.slice(i + 1, end);
      if (!name) throw new DslSyntaxError(`empty [] at ${i}`);
      toks.push({ t: 'id', v: name, pos: start });
      // mark as forced variable by prefixing? keep simple: treat as identifier that can't be a call
      toks.push({ t: 'op', v: '[]', pos: start });
      i = end + 1;
      continue;
    }
    const op = OPERATORS.find((o) => src.startsWith(o, i));
    if (!op) throw new DslSyntaxError(`unexpected character '${c}' at ${i}`);
    toks.push({ t: 'op', v: op, pos: start });
    i += op.length;
  }
  toks.push({ t: 'eof', pos: n });
  return toks;
}

/* ------------------------------------------------------------------------------------------------------------ */
/* Parser                                                                                                       */
/* ------------------------------------------------------------------------------------------------------------ */

const COMPARATORS = new Set(['==', '!=', '>', '>=', '<', '<=', '=~', '!~', 'in']);
const MAX_DEPTH = 200;

class Parser {
  private p = 0;
  private depth = 0;
  constructor(private readonly toks: Tok[]) {}

  private peek(): Tok {
    return this.toks[this.p];
  }
  private next(): Tok {
    return this.toks[this.p++];
  }
  private isOp(v: string): boolean {
    const t = this.peek();
    return t.t === 'op' && t.v === v;
  }
  private expectOp(v: string) {
    const t = this.next();
    if (t.t !== 'op' || t.v !== v) throw new DslSyntaxError(`expected '${v}' at ${t.pos}`);
  }

  parseAll(): DslNode {
    const node = this.expr();
    const t = this.peek();
    if (t.t !== 'eof') throw new DslSyntaxError(`unexpected token at ${t.pos}`);
    return node;
  }

  private expr(): DslNode {
    if (++this.depth > MAX_DEPTH) throw new DslSyntaxError('expression nested too deeply');
    try {
      return this.ternary();
    } finally {
      this.depth--;
    }
  }

  private ternary(): DslNode {
    const c = this.coalesce();
    if (this.isOp('?')) {
      this.next();
      const t = this.expr();
      if (this.isOp(':')) {
        this.next();
        const f = this.expr();
        return { k: 'tern', c, t, f };
      }
      return { k: 'tern', c, t };
    }
    return c;
  }

  private binaryLevel(ops: string[], nextLevel: () => DslNode): DslNode {
    let l = nextLevel();
    for (;;) {
      const t = this.peek();
      if (t.t === 'op' && ops.includes(t.v)) {
        this.next();
        const r = nextLevel();
        l = { k: 'bin', op: t.v, l, r };
      } else return l;
    }
  }

  private coalesce = (): DslNode => this.binaryLevel(['??'], this.or);
  private or = (): DslNode => this.binaryLevel(['||'], this.and);
  private and = (): DslNode => this.binaryLevel(['&&'], this.cmp);
  private cmp = (): DslNode => {
    let l = this.bitor();
    for (;;) {
      const t = this.peek();
      const op = t.t === 'op' ? t.v : t.t === 'id' && t.v === 'in' ? 'in' : undefined;
      if (op && COMPARATORS.has(op)) {
        this.next();
        const r = this.bitor();
        l = { k: 'bin', op, l, r };
      } else return l;
    }
  };
  private bitor = (): DslNode => this.binaryLevel(['|'], this.bitxor);
  private bitxor = (): DslNode => this.binaryLevel(['^'], this.bitand);
  private bitand = (): DslNode => this.binaryLevel(['&'], this.shift);
  private shift = (): DslNode => this.binaryLevel(['<<', '>>'], this.add);
  private add = (): DslNode => this.binaryLevel(['+', '-'], this.mul);
  private mul = (): DslNode => this.binaryLevel(['*', '/', '%'], this.pow);
  private pow = (): DslNode => this.binaryLevel(['**'], this.unary);

  private unary = (): DslNode => {
    const t = this.peek();
    if (t.t === 'op' && (t.v === '!' || t.v === '-' || t.v === '~')) {
      this.next();
      if (++this.depth > MAX_DEPTH) throw new DslSyntaxError('expression nested too deeply');
      try {
        return { k: 'unary', op: t.v, arg: this.unary() };
      } finally {
        this.depth--;
      }
    }
    return this.primary();
  };

  private primary(): DslNode {
    const t = this.next();
    switch (t.t) {
      case 'num':
        return { k: 'lit', v: t.v };
      case 'str':
        return { k: 'lit', v: t.v };
      case 'id': {
        if (this.isOp('[]')) {
          this.next();
          return { k: 'var', name: t.v };
        }
        if (t.v === 'true') return { k: 'lit', v: true };
        if (t.v === 'false') return { k: 'lit', v: false };
        if (t.v === 'nil' || t.v === 'null') return { k: 'lit', v: null };
        if (this.isOp('(')) {
          this.next();
          const args: DslNode[] = [];
          if (!this.isOp(')')) {
            args.push(this.expr());
            while (this.isOp(',')) {
              this.next();
              args.push(this.expr());
            }
          }
          this.expectOp(')');
          return { k: 'call', name: t.v, args };
        }
        return { k: 'var', name: t.v };
      }
      case 'op':
        if (t.v === '(') {
          const first = this.expr();
          if (this.isOp(',')) {
            const items = [first];
            while (this.isOp(',')) {
              this.next();
              items.push(this.expr());
            }
            this.expectOp(')');
            return { k: 'arr', items };
          }
          this.expectOp(')');
          return first;
        }
        throw new DslSyntaxError(`unexpected '${t.v}' at ${t.pos}`);
      case 'eof':
        throw new DslSyntaxError('unexpected end of expression');
    }
  }
}

export interface ParsedDsl {
  ast?: DslNode;
  error?: string;
  /** Functions called in the expression that the engine does not implement. */
  unknownFunctions: string[];
  /** Calls with a wrong number of arguments, e.g. `md5/2`. */
  badArity: string[];
  /** Variables referenced. */
  variables: string[];
  /** Functions referenced (known or not). */
  functions: string[];
}

function walk(node: DslNode, visit: (n: DslNode) => void) {
  visit(node);
  switch (node.k) {
    case 'unary':
      walk(node.arg, visit);
      break;
    case 'bin':
      walk(node.l, visit);
      walk(node.r, visit);
      break;
    case 'tern':
      walk(node.c, visit);
      walk(node.t, visit);
      if (node.f) walk(node.f, visit);
      break;
    case 'call':
      for (const a of node.args) walk(a, visit);
      break;
    case 'arr':
      for (const a of node.items) walk(a, visit);
      break;
    default:
      break;
  }
}

const parseCache = new Map<string, ParsedDsl>();

export function parseDsl(src: string): ParsedDsl {
  const cached = parseCache.get(src);
  if (cached) return cached;
  let result: ParsedDsl;
  try {
    const ast = new Parser(tokenize(src)).parseAll();
    const unknownFunctions = new Set<string>();
    const badArity = new Set<string>();
    const variables = new Set<string>();
    const functions = new Set<string>();
    walk(ast, (n) => {
      if (n.k === 'var') variables.add(n.name);
      if (n.k === 'call') {
        functions.add(n.name);
        const def = FUNCTIONS.get(n.name);
        if (!def) unknownFunctions.add(n.name);
        else if (n.args.length < def.min || n.args.length > def.max) badArity.add(`${n.name}/${n.args.length}`);
      }
    });
    result = {
      ast,
      unknownFunctions: [...unknownFunctions],
      badArity: [...badArity],
      variables: [...variables],
      functions: [...functions],
    };
  } catch (err) {
    result = {
      error: (err as Error).message,
      unknownFunctions: [],
      badArity: [],
      variables: [],
      functions: [],
    };
  }
  if (parseCache.size > 5000) parseCache.clear();
  parseCache.set(src, result);
  return result;
}

/* ------------------------------------------------------------------------------------------------------------ */
/* Values                                                                                                       */
/* ------------------------------------------------------------------------------------------------------------ */

/** Go's `fmt.Sprint` of a value, as nuclei's toString does. */
export function dslToString(v: DslValue | undefined): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return formatNumber(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  return `[${v.map(dslToString).join(' ')}]`;
}

function formatNumber(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Infinity) return '+Inf';
  if (n === -Infinity) return '-Inf';
  return String(n);
}

function typeOf(v: DslValue): string {
  if (v === null) return 'nil';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

function deepEqual(a: DslValue, b: DslValue): boolean {
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  }
  return a === b;
}

function num(v: DslValue, op: string): number {
  if (typeof v !== 'number') throw new DslEvalError(`value '${dslToString(v)}' (${typeOf(v)}) cannot be used with '${op}', it is not a number`);
  return v;
}

function bool(v: DslValue, op: string): boolean {
  if (typeof v !== 'boolean') throw new DslEvalError(`value '${dslToString(v)}' (${typeOf(v)}) cannot be used with '${op}', it is not a boolean`);
  return v;
}

/* ------------------------------------------------------------------------------------------------------------ */
/* Evaluator                                                                                                    */
/* ------------------------------------------------------------------------------------------------------------ */

const MAX_STRING = 64 * 1024 * 1024;

function checkSize(s: string): string {
  if (s.length > MAX_STRING) throw new DslEvalError('string result too large');
  return s;
}

export function evaluateDsl(node: DslNode, scope: DslScope): DslValue {
  switch (node.k) {
    case 'lit':
      return node.v;
    case 'var': {
      const v = scope.get(node.name);
      if (v === undefined) throw new DslEvalError(`No parameter '${node.name}' found.`, node.name);
      return v;
    }
    case 'arr':
      return node.items.map((i) => evaluateDsl(i, scope));
    case 'unary': {
      const v = evaluateDsl(node.arg, scope);
      if (node.op === '!') return !bool(v, '!');
      if (node.op === '-') return -num(v, '-');
      return ~num(v, '~');
    }
    case 'tern': {
      const c = evaluateDsl(node.c, scope);
      if (bool(c, '?')) return evaluateDsl(node.t, scope);
      return node.f ? evaluateDsl(node.f, scope) : null;
    }
    case 'call': {
      const def = FUNCTIONS.get(node.name);
      if (!def) throw new DslEvalError(`unknown function '${node.name}'`);
      if (node.args.length < def.min || node.args.length > def.max) {
        throw new DslEvalError(`invalid number of arguments for ${node.name}: ${node.args.length}`);
      }
      const args = node.args.map((a) => evaluateDsl(a, scope));
      return def.fn(args);
    }
    case 'bin':
      return evalBinary(node, scope);
  }
}

function evalBinary(node: Extract<DslNode, { k: 'bin' }>, scope: DslScope): DslValue {
  const op = node.op;
  if (op === '&&') {
    if (!bool(evaluateDsl(node.l, scope), '&&')) return false;
    return bool(evaluateDsl(node.r, scope), '&&');
  }
  if (op === '||') {
    if (bool(evaluateDsl(node.l, scope), '||')) return true;
    return bool(evaluateDsl(node.r, scope), '||');
  }
  if (op === '??') {
    let l: DslValue;
    try {
      l = evaluateDsl(node.l, scope);
    } catch (err) {
      if (err instanceof DslEvalError && err.missingVariable) l = null;
      else throw err;
    }
    return l !== null ? l : evaluateDsl(node.r, scope);
  }
  const l = evaluateDsl(node.l, scope);
  const r = evaluateDsl(node.r, scope);
  switch (op) {
    case '==':
      return deepEqual(l, r);
    case '!=':
      return !deepEqual(l, r);
    case '>':
    case '<':
    case '>=':
    case '<=': {
      if (typeof l === 'string' && typeof r === 'string') {
        return op === '>' ? l > r : op === '<' ? l < r : op === '>=' ? l >= r : l <= r;
      }
      const a = num(l, op);
      const b = num(r, op);
      return op === '>' ? a > b : op === '<' ? a < b : op === '>=' ? a >= b : a <= b;
    }
    case '=~':
    case '!~': {
      if (typeof r !== 'string' || typeof l !== 'string') throw new DslEvalError(`'${op}' needs strings`);
      const re = compileGoRegex(r);
      if (!re.regex) throw new DslEvalError(`invalid regex '${r}': ${re.error}`);
      const m = re.regex.test(l);
      return op === '=~' ? m : !m;
    }
    case 'in': {
      const list = Array.isArray(r) ? r : [r];
      return list.some((x) => deepEqual(l, x));
    }
    case '+':
      if (typeof l === 'string' || typeof r === 'string') return checkSize(dslToString(l) + dslToString(r));
      return num(l, '+') + num(r, '+');
    case '-':
      return num(l, '-') - num(r, '-');
    case '*':
      return num(l, '*') * num(r, '*');
    case '/':
      return num(l, '/') / num(r, '/');
    case '%':
      return num(l, '%') % num(r, '%');
    case '**':
      return num(l, '**') ** num(r, '**');
    case '&':
      return num(l, '&') & num(r, '&');
    case '|':
      return num(l, '|') | num(r, '|');
    case '^':
      return num(l, '^') ^ num(r, '^');
    case '<<':
      return num(l, '<<') << num(r, '<<');
    case '>>':
      return num(l, '>>') >> num(r, '>>');
    default:
      throw new DslEvalError(`unknown operator ${op}`);
  }
}

/** Parse and evaluate in one go. Throws DslSyntaxError / DslEvalError. */
export function evaluateExpression(src: string, scope: DslScope): DslValue {
  const parsed = parseDsl(src);
  if (!parsed.ast) throw new DslSyntaxError(parsed.error ?? 'invalid expression');
  return evaluateDsl(parsed.ast, scope);
}

/* ------------------------------------------------------------------------------------------------------------ */
/* Scopes                                                                                                       */
/* ------------------------------------------------------------------------------------------------------------ */

export type DslRecord = Record<string, DslValue | undefined>;

/** A scope over several records; later records win. Own properties only. */
export function scopeOf(...records: Array<DslRecord | DslScope | undefined>): DslScope {
  const layers = records.filter((r): r is DslRecord | DslScope => r !== undefined).reverse();
  return {
    get(name: string) {
      for (const layer of layers) {
        if (typeof (layer as DslScope).get === 'function') {
          const v = (layer as DslScope).get(name);
          if (v !== undefined) return v;
        } else if (Object.hasOwn(layer, name)) {
          const v = (layer as DslRecord)[name];
          if (v !== undefined) return v;
        }
      }
      return undefined;
    },
  };
}

/* ------------------------------------------------------------------------------------------------------------ */
/* {{ marker }} rendering                                                                                        */
/* ------------------------------------------------------------------------------------------------------------ */

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

/* ------------------------------------------------------------------------------------------------------------ */
/* Helper functions                                                                                             */
/* ------------------------------------------------------------------------------------------------------------ */

interface FnDef {
  min: number;
  max: number;
  fn: (args: DslValue[]) => DslValue;
}

const S = dslToString;
const LETTERS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
const NUMBERS = '0123456789';
const MAX_DECOMPRESSED = 10 * 1024 * 1024;
const MAX_RANDOM_LENGTH = 1024 * 1024;

function bytes(v: DslValue): Buffer {
  return encodeString(S(v));
}

function fromBytes(b: Uint8Array): string {
  return decodeBytes(b);
}

function intArg(v: DslValue, fname: string): number {
  if (typeof v === 'number' && Number.isFinite(v)) return Math.trunc(v);
  const s = S(v).trim();
  if (/^-?\d+$/.test(s)) return Number(s);
  throw new DslEvalError(`${fname}: '${S(v)}' is not an integer`);
}

function randSeq(charset: string, length: number): string {
  if (length < 0 || length > MAX_RANDOM_LENGTH) throw new DslEvalError('random length out of range');
  if (!charset) throw new DslEvalError('empty character set');
  const chars = [...charset];
  let out = '';
  for (let i = 0; i < length; i++) out += chars[randomInt(chars.length)];
  return out;
}

function trimAll(s: string, cutset: string): string {
  const cut = new Set([...cutset]);
  return [...s].filter((c) => !cut.has(c)).join('');
}

function trimChars(s: string, cutset: string, left: boolean, right: boolean): string {
  const cut = new Set([...cutset]);
  const chars = [...s];
  let a = 0;
  let b = chars.length;
  if (left) while (a < b && cut.has(chars[a])) a++;
  if (right) while (b > a && cut.has(chars[b - 1])) b--;
  return chars.slice(a, b).join('');
}

function hash(algo: string, v: DslValue): string {
  return createHash(algo).update(bytes(v)).digest('hex');
}

function strictBase64Decode(s: string): Buffer {
  const clean = s.replace(/[\r\n]/g, '');
  if (clean.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(clean)) {
    throw new DslEvalError('illegal base64 data');
  }
  return Buffer.from(clean, 'base64');
}

function goQueryEscape(v: DslValue): string {
  let out = '';
  for (const b of bytes(v)) {
    const c = String.fromCharCode(b);
    if (/[A-Za-z0-9\-_.~]/.test(c)) out += c;
    else if (b === 0x20) out += '+';
    else out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function goQueryUnescape(s: string): string {
  const out: number[] = [];
  const src = encodeString(s);
  for (let i = 0; i < src.length; i++) {
    const b = src[i];
    if (b === 0x25) {
      const hex = String.fromCharCode(src[i + 1] ?? 0, src[i + 2] ?? 0);
      if (!/^[0-9a-fA-F]{2}$/.test(hex)) throw new DslEvalError(`invalid URL escape "%${hex}"`);
      out.push(Number.parseInt(hex, 16));
      i += 2;
    } else if (b === 0x2b) out.push(0x20);
    else out.push(b);
  }
  return fromBytes(Uint8Array.from(out));
}

const HTML_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0', '#39': "'", '#34': '"' };

function htmlUnescape(s: string): string {
  return s.replace(/&(#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z]+);/g, (whole, ent: string) => {
    if (ent[0] === '#') {
      const cp = ent[1] === 'x' || ent[1] === 'X' ? Number.parseInt(ent.slice(2), 16) : Number.parseInt(ent.slice(1), 10);
      if (Number.isFinite(cp) && cp > 0 && cp <= 0x10ffff) return String.fromCodePoint(cp);
      return whole;
    }
    return HTML_ENTITIES[ent] ?? whole;
  });
}

function regexOrThrow(pattern: string): GoRegex {
  const re = compileGoRegex(pattern);
  if (!re.regex) throw new DslEvalError(`invalid regex '${pattern}': ${re.error}`);
  return re.regex;
}

function stringNumberToDecimal(v: DslValue, prefix: string, radix: number): number {
  let s = S(v).trim().toLowerCase();
  if (s.startsWith(prefix)) s = s.slice(prefix.length);
  const valid = radix === 16 ? /^[0-9a-f]+$/ : radix === 8 ? /^[0-7]+$/ : /^[01]+$/;
  if (!valid.test(s)) throw new DslEvalError(`invalid number '${S(v)}'`);
  return Number.parseInt(s, radix);
}

function toStringList(v: DslValue): string[] {
  return Array.isArray(v) ? v.map(S) : [S(v)];
}

function zlibOp(fn: (b: Buffer, o: zlib.ZlibOptions) => Buffer, v: DslValue, decompress: boolean): string {
  try {
    return fromBytes(fn(bytes(v), decompress ? { maxOutputLength: MAX_DECOMPRESSED } : {}));
  } catch (err) {
    throw new DslEvalError((err as Error).message);
  }
}

const FUNCTIONS = new Map<string, FnDef>();

function def(name: string, min: number, max: number, fn: (args: DslValue[]) => DslValue) {
  FUNCTIONS.set(name, { min, max, fn });
}

const INF = Number.POSITIVE_INFINITY;

def('len', 1, 1, ([v]) => (Array.isArray(v) ? v.length : byteLength(S(v))));
def('to_upper', 1, 1, ([v]) => S(v).toUpperCase());
def('to_lower', 1, 1, ([v]) => S(v).toLowerCase());
def('sort', 1, INF, (args) => (args.length === 1 ? [...S(args[0])].sort().join('') : args.map(S).sort()));
def('uniq', 1, INF, (args) => (args.length === 1 ? [...new Set([...S(args[0])])].join('') : [...new Set(args.map(S))]));
def('repeat', 2, 2, ([s, n]) => {
  const count = intArg(n, 'repeat');
  if (count < 0 || S(s).length * count > MAX_STRING) throw new DslEvalError('repeat count out of range');
  return S(s).repeat(count);
});
def('replace', 3, 3, ([s, a, b]) => checkSize(S(s).split(S(a)).join(S(b))));
def('replace_regex', 3, 3, ([s, p, r]) => checkSize(replaceAllGo(regexOrThrow(S(p)), S(s), S(r))));
def('trim', 2, 2, ([s, c]) => trimChars(S(s), S(c), true, true));
def('trim_left', 2, 2, ([s, c]) => trimChars(S(s), S(c), true, false));
def('trim_right', 2, 2, ([s, c]) => trimChars(S(s), S(c), false, true));
def('trim_space', 1, 1, ([s]) => S(s).trim());
def('trim_prefix', 2, 2, ([s, p]) => (S(s).startsWith(S(p)) ? S(s).slice(S(p).length) : S(s)));
def('trim_suffix', 2, 2, ([s, p]) => (S(p) !== '' && S(s).endsWith(S(p)) ? S(s).slice(0, S(s).length - S(p).length) : S(s)));
def('reverse', 1, 1, ([s]) => [...S(s)].reverse().join(''));
def('base64', 1, 1, ([v]) => bytes(v).toString('base64'));
def('base64_py', 1, 1, ([v]) => {
  // Python's base64.encodebytes: lines of 76 characters, each terminated by "\n"
  const b64 = bytes(v).toString('base64');
  let out = '';
  for (let i = 0; i < b64.length; i += 76) out += `${b64.slice(i, i + 76)}\n`;
  return out;
});
def('base64_decode', 1, 1, ([v]) => fromBytes(strictBase64Decode(S(v))));
def('gzip', 1, 1, ([v]) => zlibOp(zlib.gzipSync, v, false));
def('gzip_decode', 1, 1, ([v]) => zlibOp(zlib.gunzipSync, v, true));
def('zlib', 1, 1, ([v]) => zlibOp(zlib.deflateSync, v, false));
def('zlib_decode', 1, 1, ([v]) => zlibOp(zlib.inflateSync, v, true));
def('deflate', 1, 1, ([v]) => zlibOp(zlib.deflateRawSync, v, false));
def('inflate', 1, 1, ([v]) => zlibOp(zlib.inflateRawSync, v, true));
def('url_encode', 1, 1, ([v]) => goQueryEscape(v));
def('url_decode', 1, 1, ([v]) => goQueryUnescape(S(v)));
def('hex_encode', 1, 1, ([v]) => bytes(v).toString('hex'));
def('hex_decode', 1, 1, ([v]) => {
  const s = S(v);
  if (s.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(s)) throw new DslEvalError('invalid hex string');
  return fromBytes(Buffer.from(s, 'hex'));
});
def('hmac', 3, 3, ([algo, data, key]) => {
  const a = S(algo).toLowerCase().replace('-', '');
  if (a !== 'sha1' && a !== 'sha256' && a !== 'sha512') throw new DslEvalError(`unsupported hash algorithm: '${S(algo)}'`);
  return createHmac(a, bytes(key)).update(bytes(data)).digest('hex');
});
def('html_escape', 1, 1, ([v]) => S(v).replace(/[&'<>"]/g, (c) => ({ '&': '&amp;', "'": '&#39;', '<': '&lt;', '>': '&gt;', '"': '&#34;' })[c]!));
def('html_unescape', 1, 1, ([v]) => htmlUnescape(S(v)));
def('md5', 1, 1, ([v]) => hash('md5', v));
def('sha1', 1, 1, ([v]) => hash('sha1', v));
def('sha256', 1, 1, ([v]) => hash('sha256', v));
def('sha512', 1, 1, ([v]) => hash('sha512', v));
def('mmh3', 1, 1, ([v]) => String(mmh3Signed(bytes(v))));
def('contains', 2, 2, ([s, sub]) => S(s).includes(S(sub)));
def('contains_all', 2, INF, ([s, ...subs]) => subs.every((x) => S(s).includes(S(x))));
def('contains_any', 2, INF, ([s, ...subs]) => subs.some((x) => S(s).includes(S(x))));
def('starts_with', 2, INF, ([s, ...p]) => p.some((x) => S(s).startsWith(S(x))));
def('ends_with', 2, INF, ([s, ...p]) => p.some((x) => S(s).endsWith(S(x))));
def('line_starts_with', 2, INF, ([s, ...p]) =>
  S(s)
    .split('\n')
    .some((line) => p.some((x) => line.startsWith(S(x)))),
);
def('line_ends_with', 2, INF, ([s, ...p]) =>
  S(s)
    .split('\n')
    .some((line) => p.some((x) => line.endsWith(S(x)))),
);
def('concat', 0, INF, (args) => checkSize(args.map(S).join('')));
def('split', 2, 3, (args) => {
  const input = S(args[0]);
  if (args.length === 2) {
    const sep = S(args[1]);
    if (/^-?\d+$/.test(sep)) {
      const size = Number(sep);
      if (size <= 0) throw new DslEvalError('split: chunk size must be positive');
      const chunks: string[] = [];
      for (let i = 0; i < input.length; i += size) chunks.push(input.slice(i, i + size));
      return chunks;
    }
    return input.split(sep);
  }
  const n = intArg(args[2], 'split');
  const parts = input.split(S(args[1]));
  if (n < 0 || parts.length <= n) return parts;
  if (n === 0) return [];
  return [...parts.slice(0, n - 1), parts.slice(n - 1).join(S(args[1]))];
});
def('join', 2, INF, ([sep, ...rest]) => {
  if (rest.length === 1) {
    if (!Array.isArray(rest[0])) throw new DslEvalError('cannot cast elements into string');
    return rest[0].map(S).join(S(sep));
  }
  if (rest.some(Array.isArray)) throw new DslEvalError('cannot use join on more than one slice element');
  return rest.map(S).join(S(sep));
});
def('regex', 2, 2, ([p, s]) => regexOrThrow(S(p)).test(S(s)));
def('regex_any', 2, 2, ([s, ps]) => toStringList(ps).some((p) => regexOrThrow(p).test(S(s))));
def('regex_all', 2, 2, ([s, ps]) => toStringList(ps).every((p) => regexOrThrow(p).test(S(s))));
def('equals_any', 2, INF, ([v, ...rest]) => rest.flatMap((r) => (Array.isArray(r) ? r : [r])).some((r) => deepEqual(v, r)));
def('remove_bad_chars', 2, 2, ([s, bad]) => trimAll(S(s), S(bad)));
def('rand_char', 0, 1, (args) => {
  const cs = args.length && S(args[0]).trim() !== '' ? S(args[0]) : LETTERS + NUMBERS;
  return randSeq(cs, 1);
});
def('rand_base', 1, 2, (args) => {
  const cs = args.length === 2 && S(args[1]).trim() !== '' ? S(args[1]) : LETTERS + NUMBERS;
  return randSeq(cs, intArg(args[0], 'rand_base'));
});
def('rand_text_alphanumeric', 1, 2, (args) =>
  randSeq(trimAll(LETTERS + NUMBERS, args.length === 2 ? S(args[1]) : ''), intArg(args[0], 'rand_text_alphanumeric')),
);
def('rand_text_alpha', 1, 2, (args) => randSeq(trimAll(LETTERS, args.length === 2 ? S(args[1]) : ''), intArg(args[0], 'rand_text_alpha')));
def('rand_text_numeric', 1, 2, (args) => randSeq(trimAll(NUMBERS, args.length === 2 ? S(args[1]) : ''), intArg(args[0], 'rand_text_numeric')));
def('rand_int', 0, 2, (args) => {
  const min = args.length >= 1 ? intArg(args[0], 'rand_int') : 0;
  const max = args.length === 2 ? intArg(args[1], 'rand_int') : 2147483647;
  if (max <= min) throw new DslEvalError('rand_int: max must be greater than min');
  return min + randomInt(Math.min(max - min, 281474976710655));
});
def('unix_time', 0, 1, (args) => Math.floor(Date.now() / 1000) + (args.length ? intArg(args[0], 'unix_time') : 0));
def('to_number', 1, 1, ([v]) => {
  if (typeof v === 'number') return v;
  const s = S(v).trim();
  if (/^[+-]?\d+$/.test(s) || /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) return Number(s);
  throw new DslEvalError(`${s} could not be converted to int`);
});
def('to_string', 1, 1, ([v]) => S(v));
def('dec_to_hex', 1, 1, ([v]) => {
  if (typeof v !== 'number') throw new DslEvalError('invalid number');
  return Math.trunc(v).toString(16);
});
def('hex_to_dec', 1, 1, ([v]) => stringNumberToDecimal(v, '0x', 16));
def('oct_to_dec', 1, 1, ([v]) => stringNumberToDecimal(v, '0o', 8));
def('bin_to_dec', 1, 1, ([v]) => stringNumberToDecimal(v, '0b', 2));
def('substr', 2, 3, (args) => {
  const s = S(args[0]);
  if (s.length === 0) throw new DslEvalError('empty string');
  const start = intArg(args[1], 'substr');
  if (start < 0 || start > s.length) throw new DslEvalError('start position out of range');
  if (args.length === 2) return s.slice(start);
  const end = intArg(args[2], 'substr');
  if (end < start || end > s.length) throw new DslEvalError('end position out of range');
  return s.slice(start, end);
});
def('count', 2, 2, ([s, sub]) => {
  const a = S(s);
  const b = S(sub);
  if (b === '') return [...a].length + 1;
  return a.split(b).length - 1;
});
def('index', 2, 2, ([v, i]) => {
  const idx = intArg(i, 'index');
  if (Array.isArray(v)) {
    if (idx < 0 || idx >= v.length) throw new DslEvalError('index out of range');
    return v[idx];
  }
  const s = S(v);
  if (idx < 0 || idx >= s.length) throw new DslEvalError('index out of range');
  return s[idx];
});
def('padding', 4, 4, ([s, pad, len, mode]) => {
  const data = S(s);
  const p = S(pad);
  const n = intArg(len, 'padding');
  if (n <= 0 || n > MAX_RANDOM_LENGTH) throw new DslEvalError('invalid padding length');
  if (!p) throw new DslEvalError('invalid padding byte');
  if (data.length >= n) return data;
  let padding = '';
  for (let i = 0; padding.length < n - data.length; i++) padding += p[i % p.length];
  if (S(mode) === 'prefix') return padding + data;
  if (S(mode) === 'suffix') return data + padding;
  throw new DslEvalError("padding mode must be 'prefix' or 'suffix'");
});
def('json_minify', 1, 1, ([v]) => {
  try {
    return goJson(JSON.parse(S(v)));
  } catch (err) {
    throw new DslEvalError((err as Error).message);
  }
});
def('json_prettify', 1, 1, ([v]) => {
  try {
    return JSON.stringify(JSON.parse(S(v)), null, 4);
  } catch (err) {
    throw new DslEvalError((err as Error).message);
  }
});
def('compare_versions', 2, INF, ([v, ...constraints]) => {
  try {
    return compareVersions(S(v), ...constraints.map(S));
  } catch (err) {
    throw new DslEvalError((err as Error).message);
  }
});
def('xor', 2, INF, (args) => {
  const bufs = args.map(bytes);
  const n = bufs[0].length;
  if (bufs.some((b) => b.length !== n)) throw new DslEvalError('all arguments must have the same length');
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) for (const b of bufs) out[i] ^= b[i];
  return fromBytes(out);
});

// nuclei also registers every helper without underscores (tolower, base64decode, ...)
for (const [name, d] of [...FUNCTIONS]) {
  const alias = name.replace(/_/g, '');
  if (alias !== name && !FUNCTIONS.has(alias)) FUNCTIONS.set(alias, d);
}

export function isKnownFunction(name: string): boolean {
  return FUNCTIONS.has(name);
}

export function knownFunctionNames(): string[] {
  return [...FUNCTIONS.keys()].sort();
}
