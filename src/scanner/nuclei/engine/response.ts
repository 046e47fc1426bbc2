import { byteLength } from '../bytes.js';
import type { DslValue } from '../dsl/index.js';
import type { HttpSendResponse } from '../types.js';
import { canonicalHeaderKey } from '../url-util.js';

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

export function parseSetCookies(resp: HttpSendResponse): Array<[string, string]> {
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
/** `host` is the target's input (the request's URL in a self-contained run, which has none). */
export function responseData(resp: HttpSendResponse, requestUrl: string, host: string, templateId: string): Record<string, DslValue> {
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
    host,
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
