/**
 * Certificate transparency: names that appeared in publicly logged certificates, from a
 * crt.sh-compatible endpoint (`GET <url>?q=%.<domain>&output=json`).
 *
 * A CT source is a third party that may be slow, down or huge: the request has a deadline, the
 * body is bounded while it streams, and every failure is a CtSourceError the orchestrator records
 * as a soft error (discovery carries on without CT).
 */
import net from 'node:net';
import { normalizeHostName } from '../dns.js';
import { isSubdomainOrSelf } from './scope.js';

export const DEFAULT_CT_TIMEOUT_MS = 15_000;
export const DEFAULT_CT_MAX_BYTES = 20 * 1024 * 1024;

export interface FetchCtNamesOptions {
  /** crt.sh-compatible endpoint; empty: CT is skipped (no request, no names). */
  url: string | undefined;
  timeoutMs?: number;
  maxBytes?: number;
  fetch?: typeof globalThis.fetch;
  signal?: AbortSignal;
}

export class CtSourceError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CtSourceError';
  }
}

/** Names equal to or under `domain` that CT logs know, lower-case, no wildcards, sorted. */
export async function fetchCtNames(domain: string, options: FetchCtNamesOptions): Promise<string[]> {
  if (!options.url?.trim()) return [];
  const root = normalizeHostName(domain);
  const timeoutMs = options.timeoutMs ?? DEFAULT_CT_TIMEOUT_MS;
  const maxBytes = options.maxBytes ?? DEFAULT_CT_MAX_BYTES;
  const doFetch = options.fetch ?? globalThis.fetch;

  let url: URL;
  try {
    url = new URL(options.url.trim());
  } catch (err) {
    throw new CtSourceError(`CT source URL "${options.url}" is not a valid URL`, { cause: err });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CtSourceError(`CT source URL "${options.url}" must be http or https`);
  // URLSearchParams encodes `%` as `%25`: crt.sh reads `q=%25.example.com` as the LIKE pattern `%.example.com`.
  url.searchParams.set('q', `%.${root}`);
  url.searchParams.set('output', 'json');
  const where = `${url.origin}${url.pathname}`;

  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  const failure = (err: unknown): CtSourceError => {
    if (err instanceof CtSourceError) return err;
    if (timeout.aborted) return new CtSourceError(`CT source ${where} did not answer within ${timeoutMs} ms`, { cause: err });
    if (options.signal?.aborted) return new CtSourceError(`CT request to ${where} was cancelled`, { cause: err });
    return new CtSourceError(`CT source ${where} failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  };

  let text: string;
  try {
    const response = await doFetch(url, { signal, headers: { accept: 'application/json' }, redirect: 'follow' });
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => {});
      throw new CtSourceError(`CT source ${where} answered HTTP ${response.status}`);
    }
    const declared = Number(response.headers.get('content-length'));
    if (Number.isFinite(declared) && declared > maxBytes) {
      await response.body?.cancel().catch(() => {});
      throw new CtSourceError(`CT source ${where} answer is ${declared} bytes, more than the ${maxBytes} allowed`);
    }
    text = await readBounded(response, maxBytes, where);
  } catch (err) {
    throw failure(err);
  }

  let entries: unknown;
  try {
    entries = JSON.parse(text);
  } catch (err) {
    throw new CtSourceError(`CT source ${where} answered something that is not JSON`, { cause: err });
  }
  if (!Array.isArray(entries)) throw new CtSourceError(`CT source ${where} answered JSON that is not an array of certificate entries`);
  return namesFromEntries(entries, root);
}

/** Reads the body as UTF-8, stopping (and failing) as soon as it exceeds maxBytes. */
async function readBounded(response: Response, maxBytes: number, where: string): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const parts: string[] = [];
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    if (bytes > maxBytes) {
      await reader.cancel().catch(() => {});
      throw new CtSourceError(`CT source ${where} answer is larger than the ${maxBytes} bytes allowed`);
    }
    parts.push(decoder.decode(value, { stream: true }));
  }
  parts.push(decoder.decode());
  return parts.join('');
}

function namesFromEntries(entries: unknown[], root: string): string[] {
  const names = new Set<string>();
  const add = (value: unknown) => {
    if (typeof value !== 'string') return;
    // name_value holds one name per line (a certificate's SANs); common_name holds one.
    for (const raw of value.split(/\r?\n/)) {
      const name = ctName(raw);
      if (name !== null && isSubdomainOrSelf(name, root)) names.add(name);
    }
  };
  for (const entry of entries) {
    if (typeof entry !== 'object' || entry === null) continue;
    const record = entry as Record<string, unknown>;
    add(record.name_value);
    add(record.common_name);
  }
  return [...names].sort();
}

function ctName(raw: string): string | null {
  let text = raw.trim();
  while (text.startsWith('*.')) text = text.slice(2);
  if (!text || text.includes('*') || text.includes('@')) return null;
  try {
    const name = normalizeHostName(text);
    return net.isIP(name) ? null : name;
  } catch {
    return null;
  }
}
