/**
 * Runs parsed nuclei HTTP templates against one target through an injected HttpSender.
 *
 * Execution follows nuclei v3's HTTP protocol:
 *  - blocks run in order; inside a block every `path` / `raw` entry is one request, in order
 *  - `{{...}}` markers are rendered from the target variables (BaseURL, RootURL, Hostname, Host, Port, Path, File,
 *    Scheme, Query, Input, FQDN), template `variables` / `constants`, values of internal extractors from earlier
 *    requests, and `randstr`; a request left with unresolved variables is not sent (nor are the block's later ones)
 *  - each response is an event: extractors run first (their values are visible to the matchers by name), then
 *    matchers with `matchers-condition`; results are built like nuclei's MakeDefaultResultEvent: one result per
 *    matched named matcher when the condition is `or`, otherwise one per named extractor, otherwise one
 *  - matchers or extractors using `status_code_1`, `body_2`... (req-condition) see the indexed values of all
 *    earlier responses of the block; a block's `id` exposes its values to later blocks as `<id>_<name>`
 *  - cookies set by responses are sent with the template's later requests (unless `disable-cookie`)
 *
 * Safety choices (documented behaviour, not nuclei's):
 *  - a block containing a matcher we cannot evaluate (xpath, a regex RE2 refuses, unknown DSL helper, interactsh)
 *    never matches: guessing could produce false positives; the parser already warned, the run warns again
 *  - network errors produce no event (no matcher runs on an empty response)
 *  - requests to another origin than the target (absolute URLs in templates) are skipped unless allowed
 */
import { randomInt } from 'node:crypto';
import { byteLength, encodeString, excerpt } from './bytes.js';
import { dslToString, evaluateDsl, parseDsl, renderMarkers, scopeOf, type DslRecord, type DslScope, type DslValue } from './dsl/index.js';
import { findAll } from './goregex.js';
import { runJq } from './jq.js';
import type {
  Extractor,
  HttpRequestBlock,
  HttpSendRequest,
  HttpSendResponse,
  Matcher,
  NucleiTemplate,
  RunDeps,
  RunOutput,
  RunStats,
  RunWarning,
  ScanTarget,
  TemplateResult,
} from './types.js';
import { canonicalHeaderKey, mergePaths, originKey, splitUrl, type SplitUrl } from './url-util.js';

const DEFAULT_USER_AGENT = 'Mozilla/5.0 (compatible; Perimeter-Nuclei/1.0)';
const REQUEST_EXCERPT = 4 * 1024;
const RESPONSE_EXCERPT = 8 * 1024;

export function createRunStats(): RunStats {
  return { requestsSent: 0, requestsSaved: 0, requestsFailed: 0, templatesRun: 0, templatesSkipped: 0 };
}

/* ------------------------------------------------------------------------------------------------------------ */
/* Target variables                                                                                             */
/* ------------------------------------------------------------------------------------------------------------ */

interface TargetInfo {
  input: string;
  url: SplitUrl;
  /** Path of the input URL as written ('' when none). */
  path: string;
  /** Query string of the input URL without '?'. */
  query: string;
}

function parseTarget(baseUrl: string): TargetInfo {
  const url = splitUrl(baseUrl);
  if (!url) throw new Error(`invalid target URL ${JSON.stringify(baseUrl)} (expected http(s)://host[:port][/path])`);
  const m = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/?#]*([^?#]*)(?:\?([^#]*))?/.exec(baseUrl.trim());
  return { input: baseUrl.trim(), url, path: m?.[1] ?? '', query: m?.[2] ?? '' };
}

function goDir(p: string): string {
  if (p === '') return '';
  const idx = p.lastIndexOf('/');
  if (idx === -1) return '';
  const dir = p.slice(0, idx);
  return dir === '' ? '/' : dir;
}

function goBase(p: string): string {
  if (p === '') return '';
  const trimmed = p.replace(/\/+$/, '');
  if (trimmed === '') return '/';
  return trimmed.slice(trimmed.lastIndexOf('/') + 1);
}

function targetVariables(t: TargetInfo, removeTrailingSlash: boolean): Record<string, string> {
  let path = t.path;
  if (removeTrailingSlash) path = path.replace(/\/$/, '');
  const root = `${t.url.scheme}://${t.url.authority}`;
  return {
    BaseURL: `${root}${path}`,
    RootURL: root,
    Hostname: t.url.authority,
    Host: t.url.hostname,
    Port: String(t.url.port),
    Path: goDir(path),
    File: goBase(path),
    Scheme: t.url.scheme,
    Query: t.query ? `?${t.query}` : '',
    Input: t.input,
    FQDN: t.url.hostname,
  };
}

/* ------------------------------------------------------------------------------------------------------------ */
/* Response → DSL data                                                                                          */
/* ------------------------------------------------------------------------------------------------------------ */

function headerEntries(resp: HttpSendResponse): Array<[string, string]> {
  if (resp.rawHeaders?.length) return resp.rawHeaders;
  const out: Array<[string, string]> = [];
  for (const [k, v] of Object.entries(resp.headers)) {
    if (Array.isArray(v)) for (const x of v) out.push([k, x]);
    else out.push([k, v]);
  }
  return out;
}

function headerDump(resp: HttpSendResponse): string {
  const entries = headerEntries(resp)
    .map(([k, v]) => [canonicalHeaderKey(k), v] as [string, string])
    // Go's Header.Write sorts keys (stable for repeated keys)
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const version = resp.httpVersion ?? '1.1';
  const statusText = resp.statusText ?? '';
  let out = `HTTP/${version} ${resp.status}${statusText ? ` ${statusText}` : ''}\r\n`;
  for (const [k, v] of entries) out += `${k}: ${v}\r\n`;
  return `${out}\r\n`;
}

function parseSetCookies(resp: HttpSendResponse): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const [k, v] of headerEntries(resp)) {
    if (k.toLowerCase() !== 'set-cookie') continue;
    const first = v.split(';')[0];
    const eq = first.indexOf('=');
    if (eq <= 0) continue;
    out.push([first.slice(0, eq).trim(), first.slice(eq + 1).trim()]);
  }
  return out;
}

/** nuclei's responseToDSLMap. */
function responseData(resp: HttpSendResponse, requestUrl: string, target: TargetInfo, templateId: string): Record<string, DslValue> {
  // null prototype: header / cookie names come from the server
  const data: Record<string, DslValue> = Object.create(null) as Record<string, DslValue>;
  for (const [name, value] of parseSetCookies(resp)) data[name.toLowerCase()] = value;
  const grouped = new Map<string, string[]>();
  for (const [k, v] of headerEntries(resp)) {
    const key = k.trim().replace(/-/g, '_').toLowerCase();
    const list = grouped.get(key) ?? [];
    list.push(v);
    grouped.set(key, list);
  }
  for (const [k, v] of grouped) data[k] = v.join(' ');
  const headers = headerDump(resp);
  const contentLengthHeader = grouped.get('content_length')?.[0];
  const encoded = grouped.has('content_encoding');
  const cl = contentLengthHeader !== undefined && /^\d+$/.test(contentLengthHeader.trim()) && !encoded ? Number(contentLengthHeader) : byteLength(resp.body);
  Object.assign(data, {
    host: target.input,
    type: 'http',
    matched: resp.finalUrl || requestUrl,
    request: resp.rawRequest,
    response: headers + resp.body,
    status_code: resp.status,
    body: resp.body,
    all_headers: headers,
    header: headers,
    duration: resp.durationMs / 1000,
    timeout: false,
    'template-id': templateId,
    content_length: cl,
  });
  return data;
}

/* ------------------------------------------------------------------------------------------------------------ */
/* Operators                                                                                                    */
/* ------------------------------------------------------------------------------------------------------------ */

interface OperatorResult {
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

class MutableScope implements DslScope {
  readonly local = new Map<string, DslValue>();
  constructor(private readonly base: DslScope) {}
  get(name: string): DslValue | undefined {
    const v = this.local.get(name);
    return v !== undefined ? v : this.base.get(name);
  }
}

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

function matchOne(m: Matcher, scope: DslScope): boolean {
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
  const item = matchPart(m.part, scope);
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
    default:
      return false;
  }
}

function* lazy(fns: Array<() => boolean>): Generator<boolean> {
  for (const fn of fns) yield fn();
}

function extractOne(e: Extractor, scope: DslScope): string[] {
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
      const item = matchPart(e.part, scope);
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
      const item = matchPart(e.part, scope);
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
function executeOperators(block: HttpRequestBlock, scope: MutableScope, blockUnsupported: boolean): OperatorResult | undefined {
  const result: OperatorResult = { matched: false, matches: [], extracts: new Map(), outputExtracts: [], dynamicValues: new Map() };
  const outputSeen = new Set<string>();
  let allInternal = true;
  for (const e of block.extractors) {
    if (!e.internal) allInternal = false;
    if (e.unsupported) continue;
    const values = extractOne(e, scope);
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
      if (matchOne(m, scope)) {
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

/* ------------------------------------------------------------------------------------------------------------ */
/* Request building                                                                                             */
/* ------------------------------------------------------------------------------------------------------------ */

interface BuiltRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

type BuildOutcome = { ok: true; request: BuiltRequest } | { ok: false; reason: string; unresolved?: boolean };

function setHeaderIfMissing(headers: Record<string, string>, name: string, value: string) {
  if (!Object.keys(headers).some((k) => k.toLowerCase() === name.toLowerCase())) headers[name] = value;
}

function deleteHeader(headers: Record<string, string>, name: string) {
  for (const k of Object.keys(headers)) if (k.toLowerCase() === name.toLowerCase()) delete headers[k];
}

function renderOrFail(
  text: string,
  scope: DslScope,
  what: string,
  skipCheck: boolean,
): { ok: true; text: string } | { ok: false; reason: string; unresolved?: boolean } {
  const r = renderMarkers(text, scope);
  if (r.unresolved.length && !skipCheck) {
    return {
      ok: false,
      reason: `unresolved variable${r.unresolved.length > 1 ? 's' : ''} ${r.unresolved.map((v) => `{{${v}}}`).join(', ')} in ${what}`,
      unresolved: true,
    };
  }
  if (r.errors.length && !skipCheck) return { ok: false, reason: `could not evaluate ${what}: ${r.errors[0]}`, unresolved: true };
  return { ok: true, text: r.text };
}

function finishHeaders(
  block: HttpRequestBlock,
  headers: Record<string, string>,
  body: string | undefined,
  method: string,
  userAgent: string,
  isRaw: boolean,
  cookies: Map<string, string>,
) {
  setHeaderIfMissing(headers, 'User-Agent', userAgent);
  if (!isRaw) {
    setHeaderIfMissing(headers, 'Accept', '*/*');
    setHeaderIfMissing(headers, 'Accept-Language', 'en');
  }
  deleteHeader(headers, 'Content-Length');
  deleteHeader(headers, 'Transfer-Encoding');
  const len = body !== undefined ? byteLength(body) : 0;
  if (len > 0 || (body !== undefined && method !== 'GET' && method !== 'HEAD') || ['POST', 'PUT', 'PATCH'].includes(method)) {
    headers['Content-Length'] = String(len);
  }
  if (!block.disableCookie && cookies.size) {
    const jar = [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const existing = Object.keys(headers).find((k) => k.toLowerCase() === 'cookie');
    if (existing) headers[existing] = `${headers[existing].replace(/;\s*$/, '')}; ${jar}`;
    else headers.Cookie = jar;
  }
}

function buildPathRequest(
  block: HttpRequestBlock,
  pathTemplate: string,
  target: TargetInfo,
  layers: DslScope,
  userAgent: string,
  cookies: Map<string, string>,
): BuildOutcome {
  const stripSlash = /\{\{\s*BaseURL\s*\}\}\//.test(pathTemplate);
  const scope = scopeOf(layersWithTarget(layers, target, stripSlash));
  const rendered = renderOrFail(pathTemplate, scope, 'path', block.skipVariablesCheck);
  if (!rendered.ok) return rendered;
  let url = rendered.text.trim();
  const split = splitUrl(url);
  if (!split) return { ok: false, reason: `path ${JSON.stringify(url)} is not an absolute http(s) URL` };
  url = `${split.scheme}://${split.authority}${split.pathAndQuery}`;
  if (target.query && originKey(split) === originKey(target.url)) {
    url += split.pathAndQuery.includes('?') ? `&${target.query}` : `?${target.query}`;
  }
  const method = renderOrFail(block.method, scope, 'method', block.skipVariablesCheck);
  if (!method.ok) return method;
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(block.headers)) {
    const r = renderOrFail(v, scope, `header ${k}`, block.skipVariablesCheck);
    if (!r.ok) return r;
    headers[k] = r.text;
  }
  let body: string | undefined;
  if (block.body !== undefined) {
    const r = renderOrFail(block.body, scope, 'body', block.skipVariablesCheck);
    if (!r.ok) return r;
    body = r.text;
  }
  const m = method.text.trim().toUpperCase() || 'GET';
  finishHeaders(block, headers, body, m, userAgent, false, cookies);
  return { ok: true, request: { method: m, url, headers, body } };
}

function buildRawRequest(
  block: HttpRequestBlock,
  rawTemplate: string,
  target: TargetInfo,
  layers: DslScope,
  userAgent: string,
  cookies: Map<string, string>,
): BuildOutcome {
  const scope = scopeOf(layersWithTarget(layers, target, false));
  const rendered = renderOrFail(rawTemplate, scope, 'raw request', block.skipVariablesCheck);
  if (!rendered.ok) return rendered;
  const text = rendered.text.replace(/^\s*\n/, '');
  const lines = text.split('\n');
  let li = 0;
  while (li < lines.length && (lines[li].trim() === '' || lines[li].trim().startsWith('@'))) {
    const ann = lines[li].trim();
    if (/^@host\s*:/i.test(ann)) return { ok: false, reason: '@Host annotations (requests to another host) are not supported' };
    li++;
  }
  const requestLine = (lines[li] ?? '').trim();
  let parts = requestLine.split(/\s+/);
  if (parts.length === 2 && parts[1].includes('HTTP')) parts = [parts[0], '', parts[1]];
  if (parts.length < 3) return { ok: false, reason: `malformed raw request line ${JSON.stringify(requestLine)}` };
  const method = parts[0].toUpperCase();
  const rawPath = parts.slice(1, parts.length - 1).join(' ');
  li++;
  const headers: Record<string, string> = {};
  let multipart = false;
  for (; li < lines.length; li++) {
    const line = lines[li].trim();
    if (line === '') {
      li++;
      break;
    }
    const idx = line.indexOf(':');
    const key = (idx === -1 ? line : line.slice(0, idx)).trim();
    const value = idx === -1 ? '' : line.slice(idx + 1).trim();
    if (!key) continue;
    if (/^content-type$/i.test(key) && value.includes('multipart/')) multipart = true;
    headers[key] = value;
  }
  let body = lines.slice(li).join('\n');
  if (li >= lines.length) body = '';
  if (!multipart) body = body.replace(/\r?\n$/, '');

  // path automerge with the target path (nuclei raw.Parse)
  let pathQuery: string;
  let relative = rawPath;
  if (/^https?:\/\//i.test(rawPath)) {
    const abs = splitUrl(rawPath);
    if (!abs) return { ok: false, reason: `invalid URL in raw request ${JSON.stringify(rawPath)}` };
    relative = abs.pathAndQuery;
  }
  if (relative === '') {
    pathQuery = (target.path || '/') + (target.query ? `?${target.query}` : '');
  } else {
    if (relative === '/') relative = '';
    const q = relative.indexOf('?');
    const relPath = q === -1 ? relative : relative.slice(0, q);
    const relQuery = q === -1 ? '' : relative.slice(q + 1);
    const basePath = block.disablePathAutomerge ? '' : target.path;
    let merged = mergePaths(basePath, relPath);
    if (!merged.startsWith('/')) merged = `/${merged}`;
    const query = [block.disablePathAutomerge ? '' : target.query, relQuery].filter(Boolean).join('&');
    pathQuery = merged + (query ? `?${query}` : '');
  }
  const url = `${target.url.scheme}://${target.url.authority}${pathQuery}`;
  for (const [k, v] of Object.entries(block.headers)) {
    const r = renderOrFail(v, scope, `header ${k}`, block.skipVariablesCheck);
    if (!r.ok) return r;
    deleteHeader(headers, k);
    headers[k] = r.text;
  }
  const hasBody = body !== '';
  finishHeaders(block, headers, hasBody ? body : undefined, method, userAgent, true, cookies);
  return { ok: true, request: { method, url, headers, body: hasBody ? body : undefined } };
}

const targetScopeCache = new WeakMap<TargetInfo, { strip: DslRecord; keep: DslRecord }>();

function layersWithTarget(layers: DslScope, target: TargetInfo, strip: boolean): DslScope {
  let cached = targetScopeCache.get(target);
  if (!cached) {
    cached = { strip: targetVariables(target, true), keep: targetVariables(target, false) };
    targetScopeCache.set(target, cached);
  }
  const vars = strip ? cached.strip : cached.keep;
  return {
    get(name: string) {
      const v = layers.get(name);
      if (v !== undefined) return v;
      return Object.hasOwn(vars, name) ? vars[name] : undefined;
    },
  };
}

/* ------------------------------------------------------------------------------------------------------------ */
/* Clustering cache                                                                                             */
/* ------------------------------------------------------------------------------------------------------------ */

interface CacheEntry {
  owner: string;
  promise: Promise<HttpSendResponse>;
}

function clusterKey(req: HttpSendRequest): string {
  const headers = Object.entries(req.headers)
    .map(([k, v]) => [k.toLowerCase(), v])
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return JSON.stringify([
    req.method,
    req.url,
    headers,
    req.body ?? null,
    req.followRedirects,
    req.maxRedirects,
    req.sameHostRedirectsOnly ?? false,
    req.maxBodyBytes ?? null,
  ]);
}

/* ------------------------------------------------------------------------------------------------------------ */
/* Template execution                                                                                           */
/* ------------------------------------------------------------------------------------------------------------ */

const RANDSTR_CHARS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

interface RunContext {
  target: TargetInfo;
  deps: RunDeps;
  stats: RunStats;
  warnings: RunWarning[];
  cache?: Map<string, CacheEntry>;
  userAgent: string;
  timeoutMs: number;
  maxRequests: number;
}

class TemplateRun {
  private readonly results: TemplateResult[] = [];
  private readonly resultKeys = new Set<string>();
  /** Values of internal extractors, template-wide (latest extraction wins). */
  private readonly dynamic = new Map<string, string[]>();
  /** `<blockId>_<name>` values of earlier blocks. */
  private readonly previous: Record<string, DslValue> = Object.create(null) as Record<string, DslValue>;
  private readonly cookies = new Map<string, string>();
  private readonly randstr = new Map<string, string>();
  private readonly vars: Record<string, string> = {};
  private readonly pendingVars = new Set<string>();
  private requestCount = 0;

  constructor(
    private readonly tpl: NucleiTemplate,
    private readonly ctx: RunContext,
  ) {
    for (const [name] of tpl.variables) this.pendingVars.add(name);
  }

  private warn(message: string, path?: string) {
    const w: RunWarning = { templateId: this.tpl.id, path, message };
    this.ctx.warnings.push(w);
    this.ctx.deps.onWarning?.(w);
  }

  /** Scope with: dynamic values < target variables (added later) < template variables < constants < randstr. */
  private baseLayers(): DslScope {
    const dynamic: DslRecord = Object.create(null) as DslRecord;
    for (const [k, v] of this.dynamic) {
      dynamic[k] = v[0];
      if (v.length > 1) {
        v.forEach((x, i) => {
          dynamic[`${k}${i}`] = x;
        });
      }
    }
    const randstr: DslScope = {
      get: (name: string) => {
        if (!/^randstr(_\d+)?$/.test(name)) return undefined;
        let v = this.randstr.get(name);
        if (!v) {
          v = '';
          for (let i = 0; i < 27; i++) v += RANDSTR_CHARS[randomInt(RANDSTR_CHARS.length)];
          this.randstr.set(name, v);
        }
        return v;
      },
    };
    return scopeOf(this.previous, dynamic, this.vars, this.tpl.constants, randstr);
  }

  /** Evaluate template variables once each, as soon as everything they use is known (values stay stable). */
  private resolveVariables() {
    // repeat while progress is made: a variable may use one declared after it
    for (let progress = true; progress && this.pendingVars.size > 0; ) {
      progress = false;
      for (const [name, raw] of this.tpl.variables) {
        if (!this.pendingVars.has(name)) continue;
        const scope = layersWithTarget(this.baseLayers(), this.ctx.target, false);
        const r = renderMarkers(raw, scope);
        if (r.unresolved.length || r.errors.length) continue;
        this.vars[name] = r.text;
        this.pendingVars.delete(name);
        progress = true;
      }
    }
  }

  async run(): Promise<TemplateResult[]> {
    const tpl = this.tpl;
    if (tpl.skip) {
      this.ctx.stats.templatesSkipped++;
      this.warn(`template skipped: ${tpl.skip}`);
      return [];
    }
    this.ctx.stats.templatesRun++;
    let templateMatched = false;
    for (const block of tpl.requests) {
      if (this.ctx.deps.signal?.aborted) break;
      if (templateMatched && tpl.stopAtFirstMatch) break;
      if (block.skip) {
        this.warn(`request block skipped: ${block.skip}`, block.path);
        continue;
      }
      const matched = await this.runBlock(block);
      if (matched) templateMatched = true;
      if (this.requestCount >= this.ctx.maxRequests) break;
    }
    return this.results;
  }

  private async runBlock(block: HttpRequestBlock): Promise<boolean> {
    const unsupported = block.matchers.filter((m) => m.unsupported);
    if (unsupported.length) {
      this.warn(
        `${unsupported.map((m) => `${m.path}: ${m.unsupported}`).join('; ')} — this request block cannot match (its requests still run for extractors)`,
        block.path,
      );
    }
    const entries = block.raw.length ? block.raw : block.paths;
    const isRaw = block.raw.length > 0;
    const indexed: Record<string, DslValue> = Object.create(null) as Record<string, DslValue>;
    let blockMatched = false;
    for (let i = 0; i < entries.length; i++) {
      if (this.ctx.deps.signal?.aborted) break;
      if (this.requestCount >= this.ctx.maxRequests) {
        this.warn(`request limit of ${this.ctx.maxRequests} per template reached; remaining requests skipped`, block.path);
        break;
      }
      this.resolveVariables();
      const layers = this.baseLayers();
      const entryPath = `${block.path}.${isRaw ? 'raw' : 'path'}[${i}]`;
      const built = isRaw
        ? buildRawRequest(block, entries[i], this.ctx.target, layers, this.ctx.userAgent, this.cookies)
        : buildPathRequest(block, entries[i], this.ctx.target, layers, this.ctx.userAgent, this.cookies);
      if (!built.ok) {
        this.warn(`request not sent: ${built.reason}${built.unresolved ? '; skipping the rest of this block' : ''}`, entryPath);
        if (built.unresolved) break;
        continue;
      }
      const req = built.request;
      const split = splitUrl(req.url);
      if (!split || (!this.ctx.deps.allowOffTargetRequests && originKey(split) !== originKey(this.ctx.target.url))) {
        this.warn(`request to ${req.url} skipped: it does not go to the target ${this.ctx.target.input}`, entryPath);
        continue;
      }
      const sendReq: HttpSendRequest = {
        method: req.method,
        url: req.url,
        headers: req.headers,
        body: req.body,
        followRedirects: block.redirects,
        maxRedirects: block.redirects ? block.maxRedirects : 0,
        sameHostRedirectsOnly: block.hostRedirects || undefined,
        timeoutMs: this.ctx.timeoutMs,
        maxBodyBytes: block.maxSize,
        signal: this.ctx.deps.signal,
      };
      this.requestCount++;
      let resp: HttpSendResponse;
      try {
        resp = await this.send(sendReq);
      } catch (err) {
        this.ctx.stats.requestsFailed++;
        this.warn(`request ${req.method} ${req.url} failed: ${(err as Error).message}`, entryPath);
        continue;
      }
      if (!block.disableCookie) for (const [k, v] of parseSetCookies(resp)) this.cookies.set(k, v);

      const output = responseData(resp, req.url, this.ctx.target, this.tpl.id);
      if (block.reqCondition) {
        for (const [k, v] of Object.entries(output)) indexed[`${k}_${i + 1}`] = v;
      }
      const varLayer = layersWithTarget(layers, this.ctx.target, !isRaw && /\{\{\s*BaseURL\s*\}\}\//.test(entries[i]));
      const scope = new MutableScope(scopeOf(varLayer, indexed, output));
      const op = executeOperators(block, scope, unsupported.length > 0);
      if (block.id) {
        for (const [k, v] of Object.entries(output)) this.previous[`${block.id}_${k}`] = v;
        for (const [k, v] of scope.local) this.previous[`${block.id}_${k}`] = v;
      }
      if (!op) continue;
      for (const [k, v] of op.dynamicValues) this.dynamic.set(k, v);
      this.emit(block, op, resp, req);
      if (op.matched) {
        blockMatched = true;
        if (block.stopAtFirstMatch) break;
      }
    }
    return blockMatched;
  }

  private async send(req: HttpSendRequest): Promise<HttpSendResponse> {
    const cache = this.ctx.cache;
    if (!cache) {
      this.ctx.stats.requestsSent++;
      return this.ctx.deps.send(req);
    }
    const key = clusterKey(req);
    const hit = cache.get(key);
    if (hit && hit.owner !== this.tpl.id) {
      this.ctx.stats.requestsSaved++;
      return hit.promise;
    }
    this.ctx.stats.requestsSent++;
    const promise = this.ctx.deps.send(req);
    cache.set(key, { owner: this.tpl.id, promise });
    // a failed request is not cached for others
    promise.catch(() => {
      if (cache.get(key)?.promise === promise) cache.delete(key);
    });
    return promise;
  }

  /** nuclei MakeDefaultResultEvent. */
  private emit(block: HttpRequestBlock, op: OperatorResult, resp: HttpSendResponse, req: BuiltRequest) {
    if (op.dynamicValues.size && !op.matched) return;
    const extracted = op.extracts.size > 0 || op.outputExtracts.length > 0;
    if (extracted && block.matchers.length && !op.matched) return;
    if (!op.matched && !extracted) return;
    const base = (): TemplateResult => {
      const info = this.tpl.info;
      const c = info.classification;
      const classification: TemplateResult['classification'] = {};
      if (c.cveId?.length) classification.cveId = c.cveId;
      if (c.cweId?.length) classification.cweId = c.cweId;
      if (c.cvssMetrics) classification.cvssMetrics = c.cvssMetrics;
      if (c.cvssScore !== undefined) classification.cvssScore = c.cvssScore;
      return {
        templateId: this.tpl.id,
        templateName: info.name,
        severity: info.severity,
        extractedResults: [...op.outputExtracts],
        matchedUrl: resp.finalUrl || req.url,
        request: excerpt(resp.rawRequest, REQUEST_EXCERPT),
        response: excerpt(resp.rawResponse, RESPONSE_EXCERPT),
        classification,
        remediation: info.remediation,
        description: info.description,
        reference: info.reference.length ? info.reference : undefined,
        tags: info.tags.length ? info.tags : undefined,
        author: info.author.length ? info.author : undefined,
      };
    };
    const out: TemplateResult[] = [];
    if (op.matches.length) {
      for (const name of op.matches) out.push({ ...base(), matcherName: name });
    } else if (op.extracts.size) {
      for (const [name, values] of op.extracts) out.push({ ...base(), extractorName: name, extractedResults: values });
    } else {
      out.push(base());
    }
    for (const r of out) {
      const key = JSON.stringify([r.matcherName ?? '', r.extractorName ?? '', r.matchedUrl, r.extractedResults]);
      if (this.resultKeys.has(key)) continue;
      this.resultKeys.add(key);
      this.results.push(r);
    }
  }
}

/**
 * Run templates against a target and return findings plus run-time warnings and counters.
 * Templates run with bounded concurrency; results keep the order of `templates`.
 */
export async function runTemplatesDetailed(templates: NucleiTemplate[], target: ScanTarget, deps: RunDeps): Promise<RunOutput> {
  const t = parseTarget(target.baseUrl);
  const stats = deps.stats ?? createRunStats();
  const ctx: RunContext = {
    target: t,
    deps,
    stats,
    warnings: [],
    cache: deps.cluster ? new Map() : undefined,
    userAgent: deps.userAgent ?? DEFAULT_USER_AGENT,
    timeoutMs: deps.timeoutMs ?? 10_000,
    maxRequests: Math.max(1, deps.maxRequestsPerTemplate ?? 100),
  };
  const perTemplate: TemplateResult[][] = templates.map(() => []);
  let next = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= templates.length) return;
      if (deps.signal?.aborted) return;
      try {
        perTemplate[i] = await new TemplateRun(templates[i], ctx).run();
      } catch (err) {
        const w = { templateId: templates[i].id, message: `template failed: ${(err as Error).message}` };
        ctx.warnings.push(w);
        deps.onWarning?.(w);
      }
    }
  };
  const workers = Math.max(1, Math.min(deps.concurrency ?? 4, templates.length || 1));
  await Promise.all(Array.from({ length: workers }, worker));
  return { results: perTemplate.flat(), warnings: ctx.warnings, stats };
}

/** Run templates against a target; see runTemplatesDetailed for warnings and counters (or pass `deps.stats`). */
export async function runTemplates(templates: NucleiTemplate[], target: ScanTarget, deps: RunDeps): Promise<TemplateResult[]> {
  return (await runTemplatesDetailed(templates, target, deps)).results;
}
