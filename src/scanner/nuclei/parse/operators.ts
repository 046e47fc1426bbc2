/** Matchers and extractors of a request block. */
import { compileGoRegex } from '../goregex.js';
import { compileJq } from '../jq.js';
import { xpathProblem } from '../xpath.js';
import type { Extractor, ExtractorType, Matcher, MatcherType } from '../types.js';
import { type Ctx, isHex, isRecord, type Seg, typeName, pathString } from './context.js';
import { compileDsl } from './dsl.js';

const MATCHER_TYPES: MatcherType[] = ['word', 'regex', 'status', 'size', 'dsl', 'binary', 'xpath'];
const EXTRACTOR_TYPES: ExtractorType[] = ['regex', 'kval', 'json', 'xpath', 'dsl'];

const MATCHER_FIELDS = new Set([
  'type',
  'condition',
  'part',
  'negative',
  'name',
  'status',
  'size',
  'words',
  'regex',
  'binary',
  'dsl',
  'xpath',
  'encoding',
  'case-insensitive',
  'match-all',
  'internal',
]);

const EXTRACTOR_FIELDS = new Set(['type', 'name', 'regex', 'group', 'kval', 'json', 'xpath', 'attribute', 'dsl', 'part', 'internal', 'case-insensitive']);

export function parseMatcher(ctx: Ctx, raw: unknown, segs: Seg[], index: number): Matcher | undefined {
  if (!isRecord(raw)) {
    ctx.error(`matcher must be a mapping, got ${typeName(raw)}`, segs);
    return undefined;
  }
  for (const key of Object.keys(raw)) {
    if (!MATCHER_FIELDS.has(key)) ctx.warn(`unknown matcher field '${key}' ignored`, [...segs, key], true);
  }
  const typeRaw = raw.type;
  if (typeRaw === undefined || typeRaw === null || typeRaw === '') {
    ctx.error("missing required field 'type'", segs);
    return undefined;
  }
  if (typeof typeRaw !== 'string' || !MATCHER_TYPES.includes(typeRaw.trim().toLowerCase() as MatcherType)) {
    ctx.error(`unknown matcher type ${JSON.stringify(typeRaw)} (expected one of word, regex, status, size, dsl, binary)`, [...segs, 'type']);
    return undefined;
  }
  const type = typeRaw.trim().toLowerCase() as MatcherType;
  const m: Matcher = {
    path: pathString(segs),
    index,
    type,
    part: (ctx.str(raw, 'part', segs) ?? 'body').trim() || 'body',
    condition: ctx.condition(raw, 'condition', segs),
    negative: ctx.bool(raw, 'negative', segs) ?? false,
    caseInsensitive: ctx.bool(raw, 'case-insensitive', segs) ?? false,
    name: ctx.str(raw, 'name', segs)?.trim() || undefined,
    internal: ctx.bool(raw, 'internal', segs) ?? false,
    matchAll: ctx.bool(raw, 'match-all', segs) ?? false,
    words: [],
    regex: [],
    regexSource: [],
    status: [],
    size: [],
    dsl: [],
    binary: [],
  };
  const unsupported: string[] = [];
  const requireList = <T>(list: T[] | undefined, field: string): T[] => {
    const given = raw[field];
    if (list === undefined && (given === undefined || given === null)) ctx.error(`${type} matcher requires '${field}'`, segs);
    else if (list !== undefined && list.length === 0 && !(Array.isArray(given) && given.length > 0)) {
      ctx.error(`${type} matcher requires at least one '${field}' value`, [...segs, field]);
    }
    return list ?? [];
  };
  if (m.caseInsensitive && type !== 'word') {
    ctx.error(`'case-insensitive' is only supported for word matchers (not ${type})`, [...segs, 'case-insensitive']);
  }
  const encoding = ctx.str(raw, 'encoding', segs);
  if (encoding !== undefined && encoding !== 'hex') ctx.error(`unsupported encoding ${JSON.stringify(encoding)} (only 'hex')`, [...segs, 'encoding']);
  switch (type) {
    case 'word': {
      const words = requireList(ctx.strList(raw, 'words', segs), 'words');
      if (encoding === 'hex') {
        // hex words are byte strings: keep them exact by matching on bytes. A word that is not hex is kept as its
        // text, as nuclei does (hex.DecodeString fails and the word stays as written).
        m.binary = words.map((w) => Uint8Array.from(isHex(w) && w !== '' ? Buffer.from(w, 'hex') : Buffer.from(w, 'utf8')));
      } else m.words.push(...words);
      if (m.caseInsensitive) m.words = m.words.map((w) => w.toLowerCase());
      break;
    }
    case 'regex': {
      const list = requireList(ctx.strList(raw, 'regex', segs), 'regex');
      list.forEach((src, i) => {
        const re = compileGoRegex(src);
        m.regexSource.push(src);
        if (re.regex) m.regex.push(re.regex);
        else {
          ctx.warn(`regex ${JSON.stringify(src)} cannot be used: ${re.error}`, [...segs, 'regex', i]);
          unsupported.push(`regex ${JSON.stringify(src)}: ${re.error}`);
        }
      });
      break;
    }
    case 'status':
      m.status = requireList(ctx.intList(raw, 'status', segs), 'status');
      break;
    case 'size':
      m.size = requireList(ctx.intList(raw, 'size', segs), 'size');
      break;
    case 'dsl': {
      const list = requireList(ctx.strList(raw, 'dsl', segs), 'dsl');
      list.forEach((src, i) => {
        const { compiled, unsupported: why } = compileDsl(ctx, src, [...segs, 'dsl', i]);
        m.dsl.push(compiled);
        if (why) unsupported.push(why);
      });
      break;
    }
    case 'binary': {
      const list = requireList(ctx.strList(raw, 'binary', segs), 'binary');
      list.forEach((hex, i) => {
        if (!isHex(hex)) ctx.error(`invalid hex value ${JSON.stringify(hex)}`, [...segs, 'binary', i]);
        else m.binary.push(Uint8Array.from(Buffer.from(hex, 'hex')));
      });
      break;
    }
    case 'xpath':
      m.xpath = checkedXPath(ctx, requireList(ctx.strList(raw, 'xpath', segs), 'xpath'), segs, unsupported);
      break;
  }
  if (unsupported.length) {
    m.unsupported = [...new Set(unsupported)].join('; ');
  }
  return m;
}

export function parseExtractor(ctx: Ctx, raw: unknown, segs: Seg[], index: number): Extractor | undefined {
  if (!isRecord(raw)) {
    ctx.error(`extractor must be a mapping, got ${typeName(raw)}`, segs);
    return undefined;
  }
  for (const key of Object.keys(raw)) {
    if (!EXTRACTOR_FIELDS.has(key)) ctx.warn(`unknown extractor field '${key}' ignored`, [...segs, key], true);
  }
  const typeRaw = raw.type;
  if (typeRaw === undefined || typeRaw === null || typeRaw === '') {
    ctx.error("missing required field 'type'", segs);
    return undefined;
  }
  if (typeof typeRaw !== 'string' || !EXTRACTOR_TYPES.includes(typeRaw.trim().toLowerCase() as ExtractorType)) {
    ctx.error(`unknown extractor type ${JSON.stringify(typeRaw)} (expected one of ${EXTRACTOR_TYPES.join(', ')})`, [...segs, 'type']);
    return undefined;
  }
  const type = typeRaw.trim().toLowerCase() as ExtractorType;
  const e: Extractor = {
    path: pathString(segs),
    index,
    type,
    name: ctx.str(raw, 'name', segs)?.trim() || undefined,
    part: (ctx.str(raw, 'part', segs) ?? 'body').trim() || 'body',
    internal: ctx.bool(raw, 'internal', segs) ?? false,
    group: ctx.int(raw, 'group', segs, 0) ?? 0,
    caseInsensitive: ctx.bool(raw, 'case-insensitive', segs) ?? false,
    regex: [],
    regexSource: [],
    kval: [],
    json: [],
    jsonSource: [],
    dsl: [],
  };
  if (e.caseInsensitive && type !== 'kval') {
    ctx.error(`'case-insensitive' is only supported for kval extractors (not ${type})`, [...segs, 'case-insensitive']);
  }
  if (e.internal && !e.name) ctx.warn('internal extractor without a name has no effect', segs);
  const unsupported: string[] = [];
  const requireList = (list: string[] | undefined, field: string): string[] => {
    const given = raw[field];
    if (list === undefined && (given === undefined || given === null)) ctx.error(`${type} extractor requires '${field}'`, segs);
    else if (list !== undefined && list.length === 0 && !(Array.isArray(given) && given.length > 0)) {
      ctx.error(`${type} extractor requires at least one '${field}' value`, [...segs, field]);
    }
    return list ?? [];
  };
  switch (type) {
    case 'regex':
      requireList(ctx.strList(raw, 'regex', segs), 'regex').forEach((src, i) => {
        const re = compileGoRegex(src);
        e.regexSource.push(src);
        if (re.regex) e.regex.push(re.regex);
        else {
          ctx.warn(`regex ${JSON.stringify(src)} cannot be used: ${re.error}; this extractor is skipped`, [...segs, 'regex', i]);
          unsupported.push(`regex ${JSON.stringify(src)}: ${re.error}`);
        }
      });
      break;
    case 'kval':
      // nuclei exposes headers as lower-case names with '-' replaced by '_'; accept either spelling
      e.kval = requireList(ctx.strList(raw, 'kval', segs), 'kval').map((k) => k.trim().toLowerCase().replace(/-/g, '_'));
      break;
    case 'json':
      requireList(ctx.strList(raw, 'json', segs), 'json').forEach((src, i) => {
        e.jsonSource.push(src);
        try {
          e.json.push(compileJq(src));
        } catch (err) {
          ctx.warn(`jq expression ${JSON.stringify(src)} is not supported (${(err as Error).message}); this extractor is skipped`, [...segs, 'json', i]);
          unsupported.push(`jq ${JSON.stringify(src)}`);
        }
      });
      break;
    case 'xpath':
      e.xpath = checkedXPath(ctx, requireList(ctx.strList(raw, 'xpath', segs), 'xpath'), segs, unsupported);
      e.attribute = ctx.str(raw, 'attribute', segs)?.trim() || undefined;
      break;
    case 'dsl':
      requireList(ctx.strList(raw, 'dsl', segs), 'dsl').forEach((src, i) => {
        const { compiled, unsupported: why } = compileDsl(ctx, src, [...segs, 'dsl', i]);
        e.dsl.push(compiled);
        if (why) unsupported.push(why);
      });
      break;
  }
  if (unsupported.length) e.unsupported = [...new Set(unsupported)].join('; ');
  return e;
}

/** XPath queries that parse; one that does not is a warning and makes the operator unsupported (as a bad regex). */
function checkedXPath(ctx: Ctx, queries: string[], segs: Seg[], unsupported: string[]): string[] {
  queries.forEach((query, i) => {
    const problem = xpathProblem(query);
    if (!problem) return;
    ctx.warn(`xpath ${JSON.stringify(query)} cannot be used: ${problem}; this operator is skipped`, [...segs, 'xpath', i]);
    unsupported.push(`xpath ${JSON.stringify(query)}: ${problem}`);
  });
  return queries;
}

/**
 * A block's `matchers` and `extractors` lists, whatever its protocol. `wordlessWordMatchers` (dns, ssl) accepts a
 * word matcher without words, which never matches in nuclei (MatchWords loops over nothing); some templates have one.
 */
export function parseOperatorLists(
  ctx: Ctx,
  raw: Record<string, unknown>,
  segs: Seg[],
  options: { wordlessWordMatchers?: boolean } = {},
): { matchers: Matcher[]; extractors: Extractor[] } {
  const matchers: Matcher[] = [];
  if (raw.matchers !== undefined && raw.matchers !== null) {
    if (!Array.isArray(raw.matchers)) ctx.error(`'matchers' must be a list, got ${typeName(raw.matchers)}`, [...segs, 'matchers']);
    else
      raw.matchers.forEach((mRaw, i) => {
        const wordless = options.wordlessWordMatchers === true && isRecord(mRaw) && mRaw.type === 'word' && (mRaw.words === undefined || mRaw.words === null);
        const m = parseMatcher(ctx, wordless ? { ...mRaw, words: [''] } : mRaw, [...segs, 'matchers', i], i);
        if (m && wordless) m.words = [];
        if (m) matchers.push(m);
      });
  }
  const extractors: Extractor[] = [];
  if (raw.extractors !== undefined && raw.extractors !== null) {
    if (!Array.isArray(raw.extractors)) ctx.error(`'extractors' must be a list, got ${typeName(raw.extractors)}`, [...segs, 'extractors']);
    else
      raw.extractors.forEach((eRaw, i) => {
        const e = parseExtractor(ctx, eRaw, [...segs, 'extractors', i], i);
        if (e) extractors.push(e);
      });
  }
  return { matchers, extractors };
}
