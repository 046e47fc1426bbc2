/**
 * nuclei `unsafe: true` requests (rawhttp): the rendered raw request goes out byte for byte over a plain or TLS
 * socket, and the answer is read as HTTP/1.x: status line, header lines (LF or CRLF), then a body framed by
 * `Transfer-Encoding: chunked`, `Content-Length`, or the end of the connection; bounded in bytes and time.
 *
 * Scope: the same injected `lookup` as the ordinary sender runs at connect time (and is called for IP literals,
 * which Node does not look up), so the scan's scope guard judges every unsafe connection too.
 */
import net from 'node:net';
import tls from 'node:tls';
import type { SplitUrl } from './url-util.js';
import { lookupOnce } from './lookup-once.js';

export interface RawAnswer {
  status: number;
  statusText: string;
  httpVersion: string;
  headers: Record<string, string | string[]>;
  rawHeaders: Array<[string, string]>;
  body: Buffer;
  truncated: boolean;
}

export interface UnsafeSendOptions {
  lookup?: net.LookupFunction;
  rejectUnauthorized: boolean;
  deadline: number;
  bodyLimit: number;
  /** Header bytes accepted before the answer counts as malformed. */
  maxHeaderBytes?: number;
  signal?: AbortSignal;
  sni?: string;
  /** The request method: a HEAD answer has no body. */
  method: string;
}

/** Writes `bytes` to the target's host and port and reads one HTTP/1.x answer. */
export async function sendUnsafe(target: SplitUrl, bytes: Buffer, options: UnsafeSendOptions): Promise<RawAnswer> {
  const hostIsIp = net.isIP(target.hostname) !== 0;
  if (hostIsIp && options.lookup) await lookupOnce(options.lookup, target.hostname);
  const remaining = Math.max(1, options.deadline - Date.now());
  return new Promise<RawAnswer>((resolve, reject) => {
    const base = { host: target.hostname, port: target.port, lookup: options.lookup };
    const servername = options.sni && net.isIP(options.sni) === 0 ? options.sni : hostIsIp ? undefined : target.hostname;
    const socket =
      target.scheme === 'https'
        ? tls.connect({ ...base, servername, rejectUnauthorized: options.rejectUnauthorized, ALPNProtocols: ['http/1.1'] })
        : net.connect(base);
    const reader = new AnswerReader(options.bodyLimit, options.maxHeaderBytes ?? 64 * 1024, options.method.toUpperCase() === 'HEAD');
    let settled = false;
    const done = (err?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      socket.destroy();
      if (err) return reject(err);
      const answer = reader.answer();
      if (!answer) return reject(new Error('connection closed without an HTTP answer'));
      resolve(answer);
    };
    const timer = setTimeout(() => done(reader.hasHead() ? undefined : new Error(`request timed out after ${Math.round(remaining)} ms`)), remaining);
    const onAbort = () => done(new Error('aborted'));
    options.signal?.addEventListener('abort', onAbort, { once: true });
    socket.once(target.scheme === 'https' ? 'secureConnect' : 'connect', () => socket.write(bytes));
    socket.on('data', (chunk: Buffer) => {
      try {
        if (reader.push(chunk)) done();
      } catch (err) {
        done(err as Error);
      }
    });
    socket.on('end', () => done());
    socket.on('close', () => done());
    socket.on('error', (err) => done(reader.hasHead() ? undefined : err));
  });
}

/** Incremental HTTP/1.x answer parser: push bytes until it says the answer is complete. */
class AnswerReader {
  private buffer: Buffer = Buffer.alloc(0);
  private head?: Omit<RawAnswer, 'body' | 'truncated'>;
  private bodyStart = 0;
  private framing: { kind: 'length'; length: number } | { kind: 'chunked' } | { kind: 'close' } | { kind: 'none' } = { kind: 'close' };
  private body: Buffer = Buffer.alloc(0);
  private truncated = false;

  constructor(
    private readonly bodyLimit: number,
    private readonly maxHeaderBytes: number,
    private readonly headRequest: boolean,
  ) {}

  hasHead(): boolean {
    return this.head !== undefined;
  }

  /** True when the answer is complete (or its body reached the limit). */
  push(chunk: Buffer): boolean {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    if (!this.head) {
      const end = headEnd(this.buffer);
      if (end === undefined) {
        if (this.buffer.length > this.maxHeaderBytes) throw new Error('answer headers too large');
        return false;
      }
      this.parseHead(this.buffer.subarray(0, end.at).toString('latin1'));
      this.bodyStart = end.at + end.length;
    }
    return this.bodyDone();
  }

  private parseHead(text: string) {
    const lines = text.split(/\r?\n/);
    const m = /^HTTP\/(\d+(?:\.\d+)?)\s+(\d{3})(?:\s+(.*))?$/.exec(lines[0] ?? '');
    if (!m) throw new Error(`malformed HTTP answer: ${JSON.stringify((lines[0] ?? '').slice(0, 80))}`);
    const rawHeaders: Array<[string, string]> = [];
    const headers: Record<string, string | string[]> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      const name = line.slice(0, colon).trim();
      const value = line.slice(colon + 1).trim();
      rawHeaders.push([name, value]);
      const key = name.toLowerCase();
      const prior = headers[key];
      if (prior === undefined) headers[key] = key === 'set-cookie' ? [value] : value;
      else if (Array.isArray(prior)) prior.push(value);
      else headers[key] = `${prior}, ${value}`;
    }
    const status = Number(m[2]);
    this.head = { status, statusText: m[3]?.trim() ?? '', httpVersion: m[1], headers, rawHeaders };
    const te = String(headers['transfer-encoding'] ?? '').toLowerCase();
    const cl = String(headers['content-length'] ?? '');
    if (this.headRequest || (status >= 100 && status < 200) || status === 204 || status === 304) this.framing = { kind: 'none' };
    else if (te.includes('chunked')) this.framing = { kind: 'chunked' };
    else if (/^\d+$/.test(cl.trim())) this.framing = { kind: 'length', length: Number(cl.trim()) };
  }

  private bodyDone(): boolean {
    const raw = this.buffer.subarray(this.bodyStart);
    switch (this.framing.kind) {
      case 'none':
        return true;
      case 'length':
        this.setBody(raw.subarray(0, this.framing.length));
        return this.truncated || raw.length >= this.framing.length;
      case 'close':
        this.setBody(raw);
        return this.truncated;
      case 'chunked': {
        const { data, complete } = dechunk(raw);
        this.setBody(data);
        return this.truncated || complete;
      }
    }
  }

  private setBody(data: Buffer) {
    if (data.length > this.bodyLimit) {
      this.body = data.subarray(0, this.bodyLimit);
      this.truncated = true;
    } else this.body = data;
  }

  answer(): RawAnswer | undefined {
    if (!this.head) return undefined;
    return { ...this.head, body: Buffer.from(this.body), truncated: this.truncated };
  }
}

function headEnd(buffer: Buffer): { at: number; length: number } | undefined {
  const crlf = buffer.indexOf('\r\n\r\n');
  const lf = buffer.indexOf('\n\n');
  if (crlf === -1 && lf === -1) return undefined;
  if (lf !== -1 && (crlf === -1 || lf < crlf)) return { at: lf, length: 2 };
  return { at: crlf, length: 4 };
}

/** Decodes what has arrived of a chunked body; `complete` once the last (zero) chunk was seen. */
function dechunk(raw: Buffer): { data: Buffer; complete: boolean } {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = raw.indexOf('\n', at);
    if (eol === -1) return { data: Buffer.concat(parts), complete: false };
    const size = Number.parseInt(raw.subarray(at, eol).toString('latin1').split(';')[0].trim(), 16);
    if (Number.isNaN(size)) return { data: Buffer.concat(parts), complete: true };
    if (size === 0) return { data: Buffer.concat(parts), complete: true };
    const start = eol + 1;
    parts.push(raw.subarray(start, Math.min(start + size, raw.length)));
    if (start + size > raw.length) return { data: Buffer.concat(parts), complete: false };
    at = start + size;
    if (raw[at] === 0x0d) at++;
    if (raw[at] === 0x0a) at++;
  }
}
