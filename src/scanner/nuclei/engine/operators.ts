import { byteLength, encodeString } from '../bytes.js';
import { dslToString, evaluateDsl, parseDsl, renderMarkers, type DslScope, type DslValue } from '../dsl/index.js';
import { findAll } from '../goregex.js';
import { runJq } from '../jq.js';
import { extractXPath, matchXPath } from '../xpath.js';
import type { Extractor, HttpRequestBlock, Matcher } from '../types.js';

export interface OperatorResult {
  matched: boolean;
  /** Named, non-internal matchers that matched (only with matchers-condition: or). */
  matches: string[];
  /** Named, non-internal extractor results. */
  extracts: Map<string, string[]>;
  /** All non-internal extracted values, de-duplicated. */
  outputExtracts: string[];
  /** Internal extractor values (feed later requests). */
  dynamicValues: Map<string, string[]>;
}

export class MutableScope implements DslScope {
  readonly local = new Map<string, DslValue>();
  constructor(private readonly base: DslScope) {}
  get(name: string): DslValue | undefined {
    const v = this.local.get(name);
    return v !== undefined ? v : this.base.get(name);
  }
}

/** The text a matcher / extractor `part` names in an event; each protocol maps parts its own way. */
export type PartResolver = (part: string, scope: DslScope) => string | undefined;

/** The matchers and extractors of a request block, whatever its protocol. */
export type OperatorBlock = Pick<HttpRequestBlock, 'matchers' | 'extractors' | 'matchersCondition'>;

/** HTTP parts: nuclei's http getMatchPart (`header` → all_headers, `raw` → response, `all` → body + headers). */
function matchPart(part: string, scope: DslScope): string | undefined {
  let key = part || 'body';
  if (key === 'header') key = 'all_headers';
  if (key === 'raw') key = 'response';
  if (key === 'all') return dslToString(scope.get('body') ?? '') + dslToString(scope.get('all_headers') ?? '');
  const v = scope.get(key);
  return v === undefined ? undefined : dslToString(v);
}

function bytesContain(hay: Uint8Array, needle: Uint8Array): boolean {
  return Buffer.from(hay.buffer, hay.byteOffset, hay.byteLength).indexOf(Buffer.from(needle.buffer, needle.byteOffset, needle.byteLength)) !== -1;
}

function lowerAscii(b: Uint8Array): Uint8Array {
  const out = Uint8Array.from(b);
  for (let i = 0; i < out.length; i++) if (out[i] >= 0x41 && out[i] <= 0x5a) out[i] += 0x20;
  return out;
}

function conditionFold(results: Iterable<boolean>, condition: 'and' | 'or'): boolean {
  let any = false;
  for (const r of results) {
    if (condition === 'and' && !r) return false;
    if (condition === 'or' && r) return true;
    any = true;
  }
  return condition === 'and' ? any : false;
}

function evaluateDslMatcherExpr(d: Matcher['dsl'][number], scope: DslScope): boolean | undefined {
  let ast = d.ast;
  if (d.hasMarkers) {
    const rendered = renderMarkers(d.source, scope);
    if (rendered.unresolved.length || rendered.errors.length) return undefined;
    ast = parseDsl(rendered.text).ast;
  }
  if (!ast) return undefined;
  try {
    const v = evaluateDsl(ast, scope);
    return typeof v === 'boolean' ? v : undefined;
  } catch {
    return undefined;
  }
}

function matchOne(m: Matcher, scope: DslScope, partOf: PartResolver): boolean {
  const result = (v: boolean) => (m.negative ? !v : v);
  if (m.type === 'status') {
    const code = scope.get('status_code');
    if (typeof code !== 'number') return false;
    return result(m.status.includes(code));
  }
  if (m.type === 'dsl') {
    const outcomes = m.dsl.map((d) => () => evaluateDslMatcherExpr(d, scope) === true);
    return result(conditionFold(lazy(outcomes), m.condition));
  }
  const item = partOf(m.part, scope);
  if (item === undefined) return false;
  switch (m.type) {
    case 'size':
      return result(m.size.includes(byteLength(item)));
    case 'word': {
      if (m.binary.length && m.words.length === 0) {
        // hex-encoded words: compare bytes
        let corpus: Uint8Array = encodeString(item);
        if (m.caseInsensitive) corpus = lowerAscii(corpus);
        const needles = m.caseInsensitive ? m.binary.map(lowerAscii) : m.binary;
        return result(conditionFold(lazy(needles.map((n) => () => bytesContain(corpus, n))), m.condition));
      }
      const corpus = m.caseInsensitive ? item.toLowerCase() : item;
      const checks = m.words.map((w) => () => {
        let word = w;
        if (word.includes('{{')) {
          const rendered = renderMarkers(word, scope);
          if (rendered.unresolved.length === 0 && rendered.errors.length === 0) word = rendered.text;
          if (m.caseInsensitive) word = word.toLowerCase();
        }
        return corpus.includes(word);
      });
      return result(conditionFold(lazy(checks), m.condition));
    }
    case 'regex':
      return result(conditionFold(lazy(m.regex.map((re) => () => re.test(item))), m.condition));
    case 'binary': {
      const corpus = encodeString(item);
      return result(conditionFold(lazy(m.binary.map((n) => () => bytesContain(corpus, n))), m.condition));
    }
    case 'xpath':
      return result(matchXPath(item, m.xpath ?? [], m.condition));
    default:
      return false;
  }
}

function* lazy(fns: Array<() => boolean>): Generator<boolean> {
  for (const fn of fns) yield fn();
}

function extractOne(e: Extractor, scope: DslScope, partOf: PartResolver): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  const add = (v: string) => {
    if (!seen.has(v)) {
      seen.add(v);
      out.push(v);
    }
  };
  switch (e.type) {
    case 'regex': {
      const item = partOf(e.part, scope);
      if (item === undefined) return out;
      for (const re of e.regex) {
        for (const m of findAll(re, item)) {
          const value = m[e.group];
          if (value !== undefined) add(value);
        }
      }
      return out;
    }
    case 'kval': {
      for (const key of e.kval) {
        let v: DslValue | undefined = scope.get(key);
        if (v === undefined && e.caseInsensitive) v = scope.get(key.toLowerCase());
        if (v === undefined) continue;
        const s = dslToString(v);
        add(e.caseInsensitive ? s.toLowerCase() : s);
      }
      return out;
    }
    case 'json': {
      const item = partOf(e.part, scope);
      if (item === undefined) return out;
      let doc: unknown;
      try {
        doc = JSON.parse(item);
      } catch {
        return out;
      }
      for (const program of e.json) for (const v of runJq(program, doc)) add(v);
      return out;
    }
    case 'xpath': {
      const item = partOf(e.part, scope);
      if (item !== undefined) for (const v of extractXPath(item, e.xpath ?? [], e.attribute)) add(v);
      return out;
    }
    case 'dsl': {
      for (const d of e.dsl) {
        let ast = d.ast;
        if (d.hasMarkers) {
          const rendered = renderMarkers(d.source, scope);
          ast = parseDsl(rendered.text).ast;
        }
        if (!ast) continue;
        try {
          const v = evaluateDsl(ast, scope);
          const s = dslToString(v);
          if (v !== null && s !== '') add(s);
        } catch {}
      }
      return out;
    }
    default:
      return out;
  }
}

/** nuclei operators.Execute; returns undefined when nothing at all came out. */
export function executeOperators(
  block: OperatorBlock,
  scope: MutableScope,
  blockUnsupported: boolean,
  partOf: PartResolver = matchPart,
): OperatorResult | undefined {
  const result: OperatorResult = { matched: false, matches: [], extracts: new Map(), outputExtracts: [], dynamicValues: new Map() };
  const outputSeen = new Set<string>();
  let allInternal = true;
  for (const e of block.extractors) {
    if (!e.internal) allInternal = false;
    if (e.unsupported) continue;
    const values = extractOne(e, scope, partOf);
    if (values.length === 0) continue;
    if (e.internal) {
      if (e.name) result.dynamicValues.set(e.name, [...(result.dynamicValues.get(e.name) ?? []), ...values]);
    } else {
      for (const v of values) {
        if (!outputSeen.has(v)) {
          outputSeen.add(v);
          result.outputExtracts.push(v);
        }
      }
      if (e.name) result.extracts.set(e.name, values);
    }
    if (e.name) scope.local.set(e.name, values.length === 1 ? values[0] : values);
  }
  for (const [name, values] of result.dynamicValues) {
    if (values.length > 1) {
      values.forEach((v, i) => {
        scope.local.set(`${name}${i}`, v);
      });
      scope.local.set(name, values);
    } else scope.local.set(name, values[0]);
  }

  let matches = false;
  if (block.matchers.length && !blockUnsupported) {
    for (const m of block.matchers) {
      if (matchOne(m, scope, partOf)) {
        if (block.matchersCondition === 'or' && m.name && !m.internal && !result.matches.includes(m.name)) result.matches.push(m.name);
        matches = true;
      } else if (block.matchersCondition === 'and') {
        matches = false;
        result.matches = [];
        if (result.dynamicValues.size) return result;
        return undefined;
      }
    }
  }
  result.matched = matches;
  if (result.dynamicValues.size && allInternal) return result;
  if (block.matchers.length && !matches) return result.dynamicValues.size ? result : undefined;
  if (result.extracts.size || result.outputExtracts.length || matches) return result;
  if (result.dynamicValues.size) return result;
  return undefined;
}
