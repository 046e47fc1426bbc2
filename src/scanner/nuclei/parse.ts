/**
 * Parse and validate nuclei templates (YAML), keeping only what the native engine can run: HTTP requests.
 *
 * - Hard problems (broken YAML, missing/invalid id, name or severity, unknown matcher/extractor types, missing
 *   required fields, wrong field types, DSL syntax errors, templates with no HTTP part) are `errors`; no template
 *   is returned then.
 * - Features the engine does not implement are `warnings` with their path, and are skipped at run time:
 *   a request block using payloads/attack modes, race, pipeline, unsafe raw requests, fuzzing, signatures,
 *   digest auth, self-contained requests or interactsh (OAST) is not sent; an xpath matcher, an untranslatable
 *   regex or a DSL expression calling an unknown helper makes its matcher "unsupported", and a request block with
 *   an unsupported matcher never matches (see engine.ts: we prefer a missed finding to a false one); xpath / jq
 *   extractors we cannot run are skipped.
 */
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node as YamlNode } from 'yaml';
import { findMarkers, parseDsl } from './dsl/index.js';
import { compileGoRegex } from './goregex.js';
import { compileJq } from './jq.js';
import {
  SEVERITIES,
  type CompiledDsl,
  type Condition,
  type Extractor,
  type ExtractorType,
  type HttpRequestBlock,
  type Matcher,
  type MatcherType,
  type NucleiTemplate,
  type ParseResult,
  type Severity,
  type TemplateClassification,
  type TemplateInfo,
  type TemplateIssue,
} from './types.js';

export type { ParseResult, TemplateIssue } from './types.js';

const TEMPLATE_ID_RE = /^([a-zA-Z0-9]+[-_])*[a-zA-Z0-9]+$/;
const MAX_TEMPLATE_BYTES = 2 * 1024 * 1024;

const OTHER_PROTOCOLS = ['dns', 'file', 'network', 'tcp', 'headless', 'ssl', 'websocket', 'whois', 'code', 'javascript', 'workflows'] as const;

const KNOWN_TOP_LEVEL = new Set<string>([
  'id',
  'info',
  'variables',
  'constants',
  'http',
  'requests',
  'flow',
  'self-contained',
  'stop-at-first-match',
  'signature',
  ...OTHER_PROTOCOLS,
]);

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH', 'PURGE', 'DEBUG']);

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

/** Fields of an http block and how the engine treats them. */
const BLOCK_FIELDS_SUPPORTED = new Set([
  'id',
  'name',
  'method',
  'path',
  'raw',
  'headers',
  'body',
  'redirects',
  'host-redirects',
  'max-redirects',
  'stop-at-first-match',
  'matchers',
  'extractors',
  'matchers-condition',
  'req-condition',
  'cookie-reuse',
  'disable-cookie',
  'read-all',
  'skip-variables-check',
  'disable-path-automerge',
  'max-size',
  'iterate-all',
  'threads',
  'attack',
]);

/** Fields that make the block impossible to run faithfully: the block is skipped with a warning. */
const BLOCK_FIELDS_SKIP: Record<string, string> = {
  payloads: 'payloads / attack modes are not supported',
  fuzzing: 'fuzzing rules are not supported',
  race: 'race-condition requests are not supported',
  race_count: 'race-condition requests are not supported',
  'race-count': 'race-condition requests are not supported',
  pipeline: 'HTTP pipelining is not supported',
  'pipeline-concurrent-connections': 'HTTP pipelining is not supported',
  'pipeline-requests-per-connection': 'HTTP pipelining is not supported',
  unsafe: 'unsafe (rawhttp) requests are not supported',
  signature: 'request signatures (e.g. AWS) are not supported',
  'digest-username': 'digest authentication is not supported',
  'digest-password': 'digest authentication is not supported',
  'self-contained': 'self-contained requests (not sent to the target) are not supported',
  analyzer: 'analyzers are not supported',
  'global-matchers': 'global matchers are not supported',
};

/** Variables the engine provides from the target URL. */
export const TARGET_VARIABLES = ['BaseURL', 'RootURL', 'Hostname', 'Host', 'Port', 'Path', 'File', 'Scheme', 'Query', 'Input', 'FQDN'];

type Seg = string | number;

function pathString(segs: Seg[]): string {
  let out = '';
  for (const s of segs) {
    if (typeof s === 'number') out += `[${s}]`;
    else out += out ? `.${s}` : s;
  }
  return out;
}

function typeName(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return 'list';
  return typeof v === 'object' ? 'mapping' : typeof v;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function isHex(s: string): boolean {
  return s.length % 2 === 0 && /^[0-9a-fA-F]*$/.test(s);
}

class Ctx {
  readonly errors: TemplateIssue[] = [];
  readonly warnings: TemplateIssue[] = [];

  constructor(
    private readonly root: YamlNode | null,
    private readonly lines: LineCounter,
  ) {}

  private locate(segs: Seg[], atKey: boolean): { line?: number; column?: number } {
    let node: unknown = this.root;
    let best: unknown = this.root;
    for (let i = 0; i < segs.length; i++) {
      const seg = segs[i];
      const last = i === segs.length - 1;
      if (isMap(node)) {
        const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(seg));
        if (!pair) break;
        node = last && atKey ? pair.key : (pair.value ?? pair.key);
      } else if (isSeq(node) && typeof seg === 'number') {
        node = node.items[seg];
      } else break;
      if (node) best = node;
      else break;
    }
    const range = (best as { range?: [number, number, number] } | null)?.range;
    if (!range) return {};
    const pos = this.lines.linePos(range[0]);
    return { line: pos.line, column: pos.col };
  }

  error(message: string, segs: Seg[], atKey = false) {
    this.errors.push({ message, path: pathString(segs), ...this.locate(segs, atKey) });
  }

  warn(message: string, segs: Seg[], atKey = false) {
    this.warnings.push({ message, path: pathString(segs), ...this.locate(segs, atKey) });
  }

  /* ---- typed readers ------------------------------------------------------------------------------------- */

  str(obj: Record<string, unknown>, key: string, segs: Seg[]): string | undefined {
    const v = obj[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'string') return v;
    if (typeof v === 'number' || typeof v === 'boolean') return String(v);
    this.error(`'${key}' must be a string, got ${typeName(v)}`, [...segs, key]);
    return undefined;
  }

  bool(obj: Record<string, unknown>, key: string, segs: Seg[]): boolean | undefined {
    const v = obj[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'boolean') return v;
    if (v === 'true' || v === 'false') return v === 'true';
    this.error(`'${key}' must be a boolean, got ${typeName(v)}`, [...segs, key]);
    return undefined;
  }

  int(obj: Record<string, unknown>, key: string, segs: Seg[], min = 0): number | undefined {
    const v = obj[key];
    if (v === undefined || v === null) return undefined;
    const n = typeof v === 'string' && /^-?\d+$/.test(v.trim()) ? Number(v) : v;
    if (typeof n === 'number' && Number.isInteger(n) && n >= min) return n;
    this.error(`'${key}' must be an integer >= ${min}, got ${JSON.stringify(v)}`, [...segs, key]);
    return undefined;
  }

  /** A list of strings; a single string is accepted as a one-element list when `allowSingle`. */
  strList(obj: Record<string, unknown>, key: string, segs: Seg[], allowSingle = false): string[] | undefined {
    const v = obj[key];
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v)) {
      if (allowSingle && (typeof v === 'string' || typeof v === 'number')) return [String(v)];
      this.error(`'${key}' must be a list, got ${typeName(v)}`, [...segs, key]);
      return undefined;
    }
    const out: string[] = [];
    v.forEach((item, i) => {
      if (typeof item === 'string' || typeof item === 'number' || typeof item === 'boolean') out.push(String(item));
      else this.error(`'${key}' entries must be strings, got ${typeName(item)}`, [...segs, key, i]);
    });
    return out;
  }

  intList(obj: Record<string, unknown>, key: string, segs: Seg[]): number[] | undefined {
    const v = obj[key];
    if (v === undefined || v === null) return undefined;
    const list = Array.isArray(v) ? v : [v];
    const out: number[] = [];
    list.forEach((item, i) => {
      const n = typeof item === 'string' && /^\d+$/.test(item.trim()) ? Number(item) : item;
      if (typeof n === 'number' && Number.isInteger(n)) out.push(n);
      else this.error(`'${key}' entries must be integers, got ${JSON.stringify(item)}`, Array.isArray(v) ? [...segs, key, i] : [...segs, key]);
    });
    return out;
  }

  condition(obj: Record<string, unknown>, key: string, segs: Seg[]): Condition {
    const v = obj[key];
    if (v === undefined || v === null || v === '') return 'or';
    if (typeof v === 'string' && (v.toLowerCase() === 'and' || v.toLowerCase() === 'or')) return v.toLowerCase() as Condition;
    this.error(`'${key}' must be 'and' or 'or', got ${JSON.stringify(v)}`, [...segs, key]);
    return 'or';
  }
}

/** Comma-separated string or list → trimmed, non-empty strings. */
function stringOrList(v: unknown): string[] {
  if (v === undefined || v === null) return [];
  if (Array.isArray(v)) return v.map((x) => String(x).trim()).filter(Boolean);
  return String(v)
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
}

function parseInfo(ctx: Ctx, raw: unknown): TemplateInfo | undefined {
  if (!isRecord(raw)) {
    ctx.error(raw === undefined ? "missing required field 'info'" : `'info' must be a mapping, got ${typeName(raw)}`, raw === undefined ? [] : ['info']);
    return undefined;
  }
  const name = ctx.str(raw, 'name', ['info']);
  if (!name?.trim()) ctx.error("missing required field 'info.name'", ['info']);
  const authors = stringOrList(raw.author);
  if (authors.length === 0) ctx.warn("missing field 'info.author'", ['info']);
  let severity: Severity = 'unknown';
  const sevRaw = raw.severity;
  if (sevRaw === undefined || sevRaw === null || sevRaw === '') {
    ctx.error("missing required field 'info.severity'", ['info']);
  } else if (typeof sevRaw !== 'string' || !SEVERITIES.includes(sevRaw.trim().toLowerCase() as Severity)) {
    ctx.error(`invalid severity ${JSON.stringify(sevRaw)} (expected one of ${SEVERITIES.join(', ')})`, ['info', 'severity']);
  } else {
    severity = sevRaw.trim().toLowerCase() as Severity;
  }
  const classification: TemplateClassification = {};
  if (raw.classification !== undefined && raw.classification !== null) {
    if (!isRecord(raw.classification)) {
      ctx.warn("'info.classification' must be a mapping; ignored", ['info', 'classification']);
    } else {
      const c = raw.classification;
      const cve = stringOrList(c['cve-id']).map((x) => x.toUpperCase());
      const cwe = stringOrList(c['cwe-id']).map((x) => x.toUpperCase());
      if (cve.length) classification.cveId = cve;
      if (cwe.length) classification.cweId = cwe;
      if (typeof c['cvss-metrics'] === 'string' && c['cvss-metrics']) classification.cvssMetrics = c['cvss-metrics'];
      const score = typeof c['cvss-score'] === 'string' ? Number(c['cvss-score']) : c['cvss-score'];
      if (typeof score === 'number' && Number.isFinite(score)) classification.cvssScore = score;
      else if (c['cvss-score'] !== undefined && c['cvss-score'] !== null)
        ctx.warn("'cvss-score' must be a number; ignored", ['info', 'classification', 'cvss-score']);
      const epss = typeof c['epss-score'] === 'string' ? Number(c['epss-score']) : c['epss-score'];
      if (typeof epss === 'number' && Number.isFinite(epss)) classification.epssScore = epss;
      if (typeof c.cpe === 'string' && c.cpe) classification.cpe = c.cpe;
    }
  }
  const reference =
    raw.reference === undefined || raw.reference === null ? [] : Array.isArray(raw.reference) ? raw.reference.map(String) : [String(raw.reference)];
  return {
    name: (name ?? '').trim(),
    author: authors,
    severity,
    description: typeof raw.description === 'string' ? raw.description.trim() || undefined : undefined,
    remediation: typeof raw.remediation === 'string' ? raw.remediation.trim() || undefined : undefined,
    reference: reference.map((r) => r.trim()).filter(Boolean),
    tags: stringOrList(raw.tags),
    classification,
    metadata: isRecord(raw.metadata) ? raw.metadata : {},
  };
}

/** Compile a DSL expression for a matcher/extractor. Returns the unsupported reason, if any. */
function compileDsl(ctx: Ctx, source: string, segs: Seg[]): { compiled: CompiledDsl; unsupported?: string } {
  const hasMarkers = source.includes('{{');
  const parsed = parseDsl(source);
  const compiled: CompiledDsl = { source, ast: parsed.ast, hasMarkers };
  if (!parsed.ast) {
    if (hasMarkers) {
      // rendered at run time first; only check the helpers used inside the markers
      const unknown = markerUnknownFunctions(source);
      if (unknown.length) {
        const reason = `unknown helper function${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}`;
        ctx.warn(`${reason}; this matcher cannot be evaluated`, segs);
        return { compiled, unsupported: reason };
      }
      return { compiled };
    }
    ctx.error(`invalid DSL expression ${JSON.stringify(source)}: ${parsed.error}`, segs);
    return { compiled, unsupported: 'invalid expression' };
  }
  if (parsed.unknownFunctions.length) {
    const reason = `unknown helper function${parsed.unknownFunctions.length > 1 ? 's' : ''} ${parsed.unknownFunctions.join(', ')}`;
    ctx.warn(`${reason} in ${JSON.stringify(source)}; it cannot be evaluated`, segs);
    return { compiled, unsupported: reason };
  }
  if (parsed.badArity.length) {
    const reason = `wrong number of arguments: ${parsed.badArity.join(', ')}`;
    ctx.warn(`${reason} in ${JSON.stringify(source)}; it cannot be evaluated`, segs);
    return { compiled, unsupported: reason };
  }
  return { compiled };
}

function markerUnknownFunctions(text: string): string[] {
  const out = new Set<string>();
  for (const m of findMarkers(text)) {
    const parsed = parseDsl(m.inner.trim());
    for (const f of parsed.unknownFunctions) out.add(f);
    if (m.inner.includes('{{')) for (const f of markerUnknownFunctions(m.inner)) out.add(f);
  }
  return [...out];
}

function markerVariables(text: string): string[] {
  const out = new Set<string>();
  for (const m of findMarkers(text)) {
    const inner = m.inner.trim();
    if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(inner)) {
      out.add(inner);
      continue;
    }
    const parsed = parseDsl(inner);
    for (const v of parsed.variables) out.add(v);
    if (m.inner.includes('{{')) for (const v of markerVariables(m.inner)) out.add(v);
  }
  return [...out];
}

const REQ_CONDITION_RE = /_\d+/;

function parseMatcher(ctx: Ctx, raw: unknown, segs: Seg[], index: number): Matcher | undefined {
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
      words.forEach((w, i) => {
        if (encoding === 'hex') {
          if (!isHex(w)) ctx.error(`invalid hex word ${JSON.stringify(w)}`, [...segs, 'words', i]);
          else m.words.push(Buffer.from(w, 'hex').toString('latin1'));
        } else m.words.push(w);
      });
      if (encoding === 'hex') {
        // hex words are byte strings: keep them exact by matching on bytes
        m.binary = m.words.map((w) => Uint8Array.from(Buffer.from(w, 'latin1')));
        m.words = [];
      }
      if (m.caseInsensitive) m.words = m.words.map((w) => w.toLowerCase());
      if (m.words.some((w) => /interactsh/i.test(w))) unsupported.push('interactsh (OAST) is not supported');
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
        if (/interactsh_/.test(src)) {
          unsupported.push('interactsh (OAST) is not supported');
        }
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
      requireList(ctx.strList(raw, 'xpath', segs), 'xpath');
      unsupported.push('xpath matchers are not supported');
      ctx.warn('xpath matchers are not supported; this matcher cannot be evaluated', [...segs, 'type']);
      break;
  }
  if (/^interactsh/.test(m.part)) {
    unsupported.push('interactsh (OAST) is not supported');
  }
  if (unsupported.length) {
    m.unsupported = [...new Set(unsupported)].join('; ');
    if (m.unsupported.includes('interactsh')) ctx.warn('interactsh (OAST) matchers are not supported; this matcher cannot be evaluated', segs);
  }
  return m;
}

function parseExtractor(ctx: Ctx, raw: unknown, segs: Seg[], index: number): Extractor | undefined {
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
      requireList(ctx.strList(raw, 'xpath', segs), 'xpath');
      ctx.warn('xpath extractors are not supported; this extractor is skipped', [...segs, 'type']);
      unsupported.push('xpath extractors are not supported');
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

/** All strings in a value (for interactsh / marker scans). */
function _collectStrings(v: unknown, out: string[] = []): string[] {
  if (typeof v === 'string') out.push(v);
  else if (Array.isArray(v)) {
    v.forEach((x) => {
      _collectStrings(x, out);
    });
  } else if (isRecord(v)) {
    for (const x of Object.values(v)) _collectStrings(x, out);
  }
  return out;
}

function parseBlock(
  ctx: Ctx,
  raw: unknown,
  segs: Seg[],
  index: number,
  knownVars: Set<string>,
  templateStopAtFirstMatch: boolean,
): HttpRequestBlock | undefined {
  if (!isRecord(raw)) {
    ctx.error(`request must be a mapping, got ${typeName(raw)}`, segs);
    return undefined;
  }
  const skipReasons: string[] = [];
  for (const key of Object.keys(raw)) {
    if (BLOCK_FIELDS_SKIP[key] !== undefined) {
      const v = raw[key];
      if (v === false || v === null || v === undefined || v === 0) continue;
      skipReasons.push(BLOCK_FIELDS_SKIP[key]);
      ctx.warn(`${BLOCK_FIELDS_SKIP[key]}; this request block is skipped`, [...segs, key], true);
    } else if (!BLOCK_FIELDS_SUPPORTED.has(key)) {
      ctx.warn(`unknown request field '${key}' ignored`, [...segs, key], true);
    }
  }
  if (raw.attack !== undefined && raw.payloads === undefined) ctx.warn("'attack' without 'payloads' is ignored", [...segs, 'attack'], true);
  if (raw.threads !== undefined) ctx.warn("'threads' is ignored (requests are sent sequentially)", [...segs, 'threads'], true);
  if (raw['iterate-all'] === true) ctx.warn("'iterate-all' is not supported; only the first extracted value is used", [...segs, 'iterate-all'], true);

  let method = 'GET';
  const methodRaw = ctx.str(raw, 'method', segs);
  if (methodRaw !== undefined) {
    const upper = methodRaw.trim().toUpperCase();
    if (!METHODS.has(upper)) ctx.error(`unsupported HTTP method ${JSON.stringify(methodRaw)}`, [...segs, 'method']);
    else method = upper;
  }
  const paths = ctx.strList(raw, 'path', segs, true) ?? [];
  const rawReqs = ctx.strList(raw, 'raw', segs, true) ?? [];
  if (paths.length === 0 && rawReqs.length === 0) {
    ctx.error("a request needs 'path' or 'raw'", segs);
  }
  if (paths.length && rawReqs.length) ctx.warn("both 'path' and 'raw' given; 'raw' is used", [...segs, 'path'], true);
  rawReqs.forEach((r, i) => {
    const firstLine = r.split('\n').find((l) => l.trim() !== '' && !l.trim().startsWith('@'));
    if (!firstLine || firstLine.trim().split(/\s+/).length < 2) {
      ctx.error('malformed raw request: the first line must be "METHOD /path HTTP/1.1"', [...segs, 'raw', i]);
    }
  });

  const headers: Record<string, string> = {};
  if (raw.headers !== undefined && raw.headers !== null) {
    if (!isRecord(raw.headers)) ctx.error(`'headers' must be a mapping, got ${typeName(raw.headers)}`, [...segs, 'headers']);
    else {
      for (const [k, v] of Object.entries(raw.headers)) {
        if (v === null || v === undefined) headers[k] = '';
        else if (typeof v === 'object') ctx.error(`header '${k}' must be a string`, [...segs, 'headers', k]);
        else headers[k] = String(v);
      }
    }
  }
  const body = ctx.str(raw, 'body', segs);
  const redirects = ctx.bool(raw, 'redirects', segs) ?? false;
  const hostRedirects = ctx.bool(raw, 'host-redirects', segs) ?? false;
  const maxRedirects = ctx.int(raw, 'max-redirects', segs, 0);
  const stopAtFirstMatch = ctx.bool(raw, 'stop-at-first-match', segs) ?? templateStopAtFirstMatch;
  const matchersCondition = ctx.condition(raw, 'matchers-condition', segs);
  const reqConditionFlag = ctx.bool(raw, 'req-condition', segs) ?? false;
  ctx.bool(raw, 'cookie-reuse', segs);
  const disableCookie = ctx.bool(raw, 'disable-cookie', segs) ?? false;
  const disablePathAutomerge = ctx.bool(raw, 'disable-path-automerge', segs) ?? false;
  const skipVariablesCheck = ctx.bool(raw, 'skip-variables-check', segs) ?? false;
  const maxSize = ctx.int(raw, 'max-size', segs, 1);
  const id = ctx.str(raw, 'id', segs)?.trim() || undefined;

  const matchers: Matcher[] = [];
  if (raw.matchers !== undefined && raw.matchers !== null) {
    if (!Array.isArray(raw.matchers)) ctx.error(`'matchers' must be a list, got ${typeName(raw.matchers)}`, [...segs, 'matchers']);
    else
      raw.matchers.forEach((mRaw, i) => {
        const m = parseMatcher(ctx, mRaw, [...segs, 'matchers', i], i);
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
  if (matchers.length === 0 && extractors.length === 0) {
    ctx.warn('request has no matchers or extractors; it can never produce a finding', segs);
  }

  // interactsh / OAST anywhere in what we would send
  const requestTexts = [...paths, ...rawReqs, ...Object.values(headers), body ?? ''];
  if (requestTexts.some((s) => /\{\{\s*interactsh-url\s*\}\}|interactsh/i.test(s))) {
    skipReasons.push('interactsh (OAST) is not supported');
    ctx.warn('interactsh (OAST) placeholders are not supported; this request block is skipped', segs);
  }
  // '§' payload markers
  if (requestTexts.some((s) => /§[^§\s]+§/.test(s)) && !skipReasons.some((r) => r.startsWith('payloads'))) {
    skipReasons.push('payload markers (§name§) are not supported');
    ctx.warn('payload markers (§name§) are not supported; this request block is skipped', segs);
  }
  // helper functions used in the request
  const unknownFns = new Set<string>();
  for (const text of requestTexts) for (const f of markerUnknownFunctions(text)) unknownFns.add(f);
  if (unknownFns.size) {
    const reason = `unknown helper function${unknownFns.size > 1 ? 's' : ''} ${[...unknownFns].join(', ')}`;
    skipReasons.push(reason);
    ctx.warn(`${reason} used in the request; this request block is skipped`, segs);
  }
  // variables nobody provides: nuclei would refuse to send such a request
  const extractorNames = new Set(extractors.filter((e) => e.name).map((e) => e.name!));
  const unknownVars = new Set<string>();
  for (const text of requestTexts) {
    for (const v of markerVariables(text)) {
      if (knownVars.has(v) || extractorNames.has(v) || /^randstr(_\d+)?$/.test(v) || v === 'interactsh-url') continue;
      unknownVars.add(v);
    }
  }
  if (unknownVars.size && !skipReasons.length) {
    ctx.warn(
      `unknown variable${unknownVars.size > 1 ? 's' : ''} ${[...unknownVars].map((v) => `{{${v}}}`).join(', ')}; requests using ${unknownVars.size > 1 ? 'them' : 'it'} are skipped unless an earlier request extracts ${unknownVars.size > 1 ? 'them' : 'it'}`,
      segs,
    );
  }

  const reqCondition =
    reqConditionFlag ||
    matchers.some((m) => m.dsl.some((d) => REQ_CONDITION_RE.test(d.source)) || REQ_CONDITION_RE.test(m.part)) ||
    extractors.some((e) => e.dsl.some((d) => REQ_CONDITION_RE.test(d.source)) || REQ_CONDITION_RE.test(e.part));

  return {
    path: pathString(segs),
    index,
    id,
    method,
    paths: rawReqs.length ? [] : paths,
    raw: rawReqs,
    headers,
    body,
    redirects: redirects || hostRedirects,
    hostRedirects,
    maxRedirects: maxRedirects ?? 10,
    stopAtFirstMatch,
    matchersCondition,
    matchers,
    extractors,
    reqCondition,
    disableCookie,
    disablePathAutomerge,
    skipVariablesCheck,
    maxSize,
    skip: skipReasons.length ? [...new Set(skipReasons)].join('; ') : undefined,
  };
}

/**
 * Parse a nuclei template. Returns the compiled template when there are no errors, plus every error and warning
 * with its path (e.g. `http[0].matchers[1].type`) and 1-based line/column.
 */
export function parseTemplate(text: string): ParseResult {
  const lines = new LineCounter();
  if (Buffer.byteLength(text, 'utf8') > MAX_TEMPLATE_BYTES) {
    return { errors: [{ message: `template is larger than ${MAX_TEMPLATE_BYTES} bytes`, path: '' }], warnings: [] };
  }
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false });
  const ctx = new Ctx(doc.contents as YamlNode | null, lines);
  const position = (e: {
    pos: [number, number];
    linePos?: [{ line: number; col: number }] | [{ line: number; col: number }, { line: number; col: number }];
  }) => {
    const p = e.linePos?.[0] ?? lines.linePos(e.pos[0]);
    return { line: p.line, column: p.col };
  };
  for (const err of doc.errors) {
    ctx.errors.push({ message: `YAML syntax error: ${err.message.split('\n')[0]}`, path: '', ...position(err) });
  }
  for (const w of doc.warnings) {
    ctx.warnings.push({ message: `YAML: ${w.message.split('\n')[0]}`, path: '', ...position(w) });
  }
  if (ctx.errors.length) return { errors: ctx.errors, warnings: ctx.warnings };

  let root: unknown;
  try {
    root = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    return { errors: [{ message: `YAML error: ${(err as Error).message}`, path: '' }], warnings: ctx.warnings };
  }
  if (!isRecord(root)) {
    ctx.error(`a template must be a YAML mapping, got ${typeName(root)}`, []);
    return { errors: ctx.errors, warnings: ctx.warnings };
  }

  for (const key of Object.keys(root)) {
    if (!KNOWN_TOP_LEVEL.has(key)) ctx.warn(`unknown top-level field '${key}' ignored`, [key], true);
  }

  // id
  const idRaw = root.id;
  let id = '';
  if (idRaw === undefined || idRaw === null || idRaw === '') ctx.error("missing required field 'id'", []);
  else if (typeof idRaw !== 'string' && typeof idRaw !== 'number') ctx.error(`'id' must be a string, got ${typeName(idRaw)}`, ['id']);
  else if (!TEMPLATE_ID_RE.test(String(idRaw))) {
    ctx.error(`invalid id ${JSON.stringify(String(idRaw))}: use letters and digits separated by single '-' or '_'`, ['id']);
  } else id = String(idRaw);

  const info = parseInfo(ctx, root.info);

  // protocols
  const protocolKey: 'http' | 'requests' = root.http !== undefined ? 'http' : 'requests';
  const httpRaw = root.http ?? root.requests;
  if (root.http !== undefined && root.requests !== undefined) ctx.warn("both 'http' and legacy 'requests' given; 'requests' is ignored", ['requests'], true);
  else if (root.requests !== undefined) ctx.warn("'requests' is deprecated; use 'http'", ['requests'], true);
  const others = OTHER_PROTOCOLS.filter((p) => root[p] !== undefined && root[p] !== null);
  for (const p of others) {
    if (httpRaw === undefined) ctx.error(`protocol ${p} is not supported`, [p], true);
    else ctx.warn(`protocol ${p} is not supported; only the http requests of this template run`, [p], true);
  }
  if (httpRaw === undefined && others.length === 0) ctx.error('template has no http requests (the only supported protocol)', []);

  let skip: string | undefined;
  if (root.flow !== undefined && root.flow !== null && root.flow !== '') {
    skip = 'flow (JavaScript orchestration) is not supported';
    ctx.warn(`${skip}; the template will not run`, ['flow'], true);
  }
  if (root['self-contained'] === true) {
    skip = 'self-contained templates are not supported';
    ctx.warn(`${skip}; the template will not run`, ['self-contained'], true);
  }
  if (root.signature !== undefined) ctx.warn("'signature' is not supported; ignored", ['signature'], true);
  const templateStop = root['stop-at-first-match'] === true;

  // variables / constants
  const variables: Array<[string, string]> = [];
  const knownVars = new Set<string>(TARGET_VARIABLES);
  if (root.variables !== undefined && root.variables !== null) {
    if (!isRecord(root.variables)) ctx.error(`'variables' must be a mapping, got ${typeName(root.variables)}`, ['variables']);
    else
      for (const [k, v] of Object.entries(root.variables)) {
        if (v !== null && typeof v === 'object') {
          ctx.error(`variable '${k}' must be a scalar`, ['variables', k]);
          continue;
        }
        const value = v === null || v === undefined ? '' : String(v);
        const unknown = markerUnknownFunctions(value);
        if (unknown.length)
          ctx.warn(`unknown helper function${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; requests using this variable are skipped`, ['variables', k]);
        if (/interactsh/i.test(value)) ctx.warn('interactsh (OAST) is not supported; requests using this variable are skipped', ['variables', k]);
        variables.push([k, value]);
        knownVars.add(k);
      }
  }
  const constants: Record<string, string> = {};
  if (root.constants !== undefined && root.constants !== null) {
    if (!isRecord(root.constants)) ctx.error(`'constants' must be a mapping, got ${typeName(root.constants)}`, ['constants']);
    else
      for (const [k, v] of Object.entries(root.constants)) {
        constants[k] = v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
        knownVars.add(k);
      }
  }

  // http blocks
  const requests: HttpRequestBlock[] = [];
  if (httpRaw !== undefined) {
    if (!Array.isArray(httpRaw)) ctx.error(`'${protocolKey}' must be a list of requests, got ${typeName(httpRaw)}`, [protocolKey]);
    else {
      // names extracted in any block can feed any later block
      for (const b of httpRaw) {
        if (isRecord(b) && Array.isArray(b.extractors)) {
          for (const e of b.extractors) if (isRecord(e) && typeof e.name === 'string') knownVars.add(e.name);
        }
      }
      httpRaw.forEach((b, i) => {
        const block = parseBlock(ctx, b, [protocolKey, i], i, knownVars, templateStop);
        if (block) requests.push(block);
      });
      if (httpRaw.length === 0) ctx.error(`'${protocolKey}' has no requests`, [protocolKey]);
    }
  }

  if (ctx.errors.length || !info) return { errors: ctx.errors, warnings: ctx.warnings };
  const template: NucleiTemplate = {
    id,
    info,
    variables,
    constants,
    requests,
    protocolKey,
    stopAtFirstMatch: templateStop,
    skip,
    warnings: ctx.warnings,
  };
  return { template, errors: ctx.errors, warnings: ctx.warnings };
}
