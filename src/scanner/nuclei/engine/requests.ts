import { byteLength } from '../bytes.js';
import { renderMarkers, scopeOf, type DslScope } from '../dsl/index.js';
import type { HttpRequestBlock } from '../types.js';
import { mergePaths, originKey, splitUrl } from '../url-util.js';
import { type TargetInfo, layersWithTarget } from './target.js';
import { applyHostAnnotation, parseAnnotations } from './annotations.js';
import { targetWithPathPort } from './port-override.js';

export interface BuiltRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** TLS server name from `@tls-sni`. */
  sni?: string;
  /** Request timeout from `@timeout`. */
  timeoutMs?: number;
  /** `unsafe: true`: the bytes to write as they are. */
  unsafeRaw?: string;
}

export type BuildOutcome = { ok: true; request: BuiltRequest } | { ok: false; reason: string; unresolved?: boolean };

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

export function buildPathRequest(
  block: HttpRequestBlock,
  entry: string,
  inputTarget: TargetInfo | undefined,
  layers: DslScope,
  userAgent: string,
  cookies: Map<string, string>,
): BuildOutcome {
  // no target (a self-contained request): the entry is the whole URL, target variables stay unresolved (nuclei)
  const { target, path: pathTemplate } = inputTarget ? targetWithPathPort(inputTarget, entry) : { target: undefined, path: entry };
  const stripSlash = /\{\{\s*BaseURL\s*\}\}\//.test(pathTemplate);
  const scope = scopeOf(layersWithTarget(layers, target, stripSlash));
  const rendered = renderOrFail(pathTemplate, scope, 'path', block.skipVariablesCheck);
  if (!rendered.ok) return rendered;
  let url = rendered.text.trim();
  const split = splitUrl(url);
  if (!split) return { ok: false, reason: `path ${JSON.stringify(url)} is not an absolute http(s) URL` };
  url = `${split.scheme}://${split.authority}${split.pathAndQuery}`;
  if (target?.query && originKey(split) === originKey(target.url)) {
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

export function buildRawRequest(
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
  while (li < lines.length && (lines[li].trim() === '' || lines[li].trim().startsWith('@'))) li++;
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
  const relativeAsWritten = relative;
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
  let url = `${target.url.scheme}://${target.url.authority}${pathQuery}`;
  const annotations = parseAnnotations(text);
  if (annotations.host) {
    const moved = applyHostAnnotation(url, annotations.host);
    if (!moved) return { ok: false, reason: `invalid @Host annotation ${JSON.stringify(annotations.host)}` };
    url = moved;
  }
  for (const [k, v] of Object.entries(block.headers)) {
    const r = renderOrFail(v, scope, `header ${k}`, block.skipVariablesCheck);
    if (!r.ok) return r;
    deleteHeader(headers, k);
    headers[k] = r.text;
  }
  const hasBody = body !== '';
  finishHeaders(block, headers, hasBody ? body : undefined, method, userAgent, true, cookies);
  const request: BuiltRequest = { method, url, headers, body: hasBody ? body : undefined };
  if (annotations.sni) request.sni = annotations.sni === 'request.host' ? requestHost(headers, url) : annotations.sni;
  if (annotations.timeoutMs) request.timeoutMs = annotations.timeoutMs;
  if (block.unsafe) request.unsafeRaw = unsafeBytes(rendered.text, rawPath, relativeAsWritten, pathQuery, target);
  return { ok: true, request };
}

/**
 * nuclei raw.Parse with `unsafe`: the rendered request as written, leading annotations dropped, its path (first
 * occurrence) replaced by the merged one; a path not starting with `/` on a target without path stays as written.
 */
function unsafeBytes(text: string, rawPath: string, relative: string, merged: string, target: TargetInfo): string {
  const lines = text.split('\n');
  let first = 0;
  while (first < lines.length && lines[first].startsWith('@')) first++;
  let bytes = lines.slice(first).join('\n');
  if (rawPath === '') return bytes;
  if (rawPath !== relative) bytes = bytes.replace(rawPath, () => relative);
  let path = merged;
  if ((target.path === '' || target.path === '/') && !relative.startsWith('/')) {
    path = target.query ? `${relative}${relative.includes('?') ? '&' : '?'}${target.query}` : relative;
  }
  return bytes.replace(relative, () => path);
}

/** Go's req.Host: the Host header as written, else the URL's host (port dropped: a server name has none). */
function requestHost(headers: Record<string, string>, url: string): string | undefined {
  const key = Object.keys(headers).find((k) => k.toLowerCase() === 'host');
  const value = key ? headers[key] : splitUrl(url)?.authority;
  return value?.replace(/^\[(.*)\](?::\d+)?$/, '$1').replace(/^([^:]+):\d+$/, '$1') || undefined;
}
