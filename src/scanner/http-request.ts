/**
 * One HTTP(S) request, the way the scanner needs it: scope-guarded connect, bounded body,
 * hard deadline, no connection reuse, no redirect following, certificate errors ignored.
 *
 * Shared by the HTTP probe, the built-in checks and (later) the template engine, so all of them
 * get the same safety properties without re-implementing them.
 */
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { HostRateLimiter } from './rate-limit.js';
import type { ScopeGuard } from './scope.js';

export const SCANNER_USER_AGENT = 'Perimeter-Scanner/0.1 (+attack-surface-management)';
export const DEFAULT_HTTP_TIMEOUT_MS = 10_000;
/** Bodies beyond this are cut off: a scanner must never be made to download a 10 GB file. */
export const DEFAULT_MAX_BODY_BYTES = 128 * 1024;

export interface HttpRequestOptions {
  /** Absolute http:// or https:// URL. */
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /**
   * Dial this IP instead of resolving the URL's host (pins the address a scan already checked).
   * The Host header and TLS SNI still come from the URL.
   */
  address?: string;
  /** Deadline for the whole exchange, connect to last body byte. */
  timeoutMs?: number;
  maxBodyBytes?: number;
  guard: ScopeGuard;
  limiter?: HostRateLimiter;
}

export interface HttpResponse {
  url: string;
  status: number;
  statusText: string;
  httpVersion: string;
  /** Lower-case names; repeated headers joined with ", ", Set-Cookie lines joined with "\n". */
  headers: Record<string, string>;
  /** Node's flat [name, value, name, value, ...] list, original case and order (for raw matchers). */
  rawHeaders: string[];
  /** The body read so far as UTF-8 (invalid bytes replaced). */
  body: string;
  bodyBuffer: Buffer;
  /** True when the body was longer than maxBodyBytes and the rest was not read. */
  truncated: boolean;
  remoteAddress?: string;
  tls?: { protocol: string | null; cipher: string | null };
  durationMs: number;
}

/** A request that failed; `tlsEstablished` tells whether the port spoke TLS before things went wrong. */
export class HttpRequestError extends Error {
  readonly code: string;
  constructor(
    message: string,
    code: string | undefined,
    readonly tlsEstablished: boolean,
    cause: unknown,
  ) {
    super(message, { cause });
    this.name = 'HttpRequestError';
    this.code = code ?? 'HTTP_REQUEST_FAILED';
  }
}

export function httpRequest(options: HttpRequestOptions): Promise<HttpResponse> {
  const url = new URL(options.url);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`Unsupported URL scheme in ${options.url}; only http and https`);
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const target = options.address ?? hostname;
  // Throws ScopeError now for a blocked literal; a name is checked by guardedLookup when the socket connects.
  const connect = options.guard.connectOptions(target);
  const send = () => sendRequest(url, hostname, connect, options);
  return options.limiter ? options.limiter.run(connect.host, send) : send();
}

function sendRequest(url: URL, hostname: string, connect: { host: string; lookup?: net.LookupFunction }, options: HttpRequestOptions): Promise<HttpResponse> {
  const isHttps = url.protocol === 'https:';
  const timeoutMs = options.timeoutMs ?? DEFAULT_HTTP_TIMEOUT_MS;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const started = Date.now();
  const headers: Record<string, string> = {
    host: url.host,
    'user-agent': SCANNER_USER_AGENT,
    accept: '*/*',
    // Raw bytes only: decompressing would let a small response expand past the body bound.
    'accept-encoding': 'identity',
    connection: 'close',
  };
  for (const [name, value] of Object.entries(options.headers ?? {})) headers[name.toLowerCase()] = value;
  const body = typeof options.body === 'string' ? Buffer.from(options.body) : options.body;
  if (body && headers['content-length'] === undefined) headers['content-length'] = String(body.length);

  const requestOptions: https.RequestOptions = {
    ...connect,
    port: Number(url.port) || (isHttps ? 443 : 80),
    method: (options.method ?? 'GET').toUpperCase(),
    path: `${url.pathname}${url.search}`,
    headers,
    setHost: false,
    // A fresh socket per request: a pooled one could have been opened under a different scope decision.
    agent: false,
    // We are inspecting servers, not trusting them: self-signed and expired certificates must not stop a probe.
    rejectUnauthorized: false,
    servername: isHttps && !net.isIP(hostname) ? hostname : undefined,
  };

  return new Promise<HttpResponse>((resolve, reject) => {
    let settled = false;
    let tlsEstablished = false;
    let tlsInfo: HttpResponse['tls'];
    const fail = (err: Error & { code?: string }): void => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      request.destroy();
      // ScopeError passes through untouched so callers can tell "refused" from "failed".
      if ((err as { code?: string }).code === 'SCOPE_BLOCKED') {
        reject(err);
        return;
      }
      reject(new HttpRequestError(`${requestOptions.method} ${url.href} failed: ${err.message}`, err.code, tlsEstablished, err));
    };

    const request = (isHttps ? https : http).request(requestOptions);
    const deadline = setTimeout(() => fail(Object.assign(new Error(`no complete response within ${timeoutMs} ms`), { code: 'ETIMEDOUT' })), timeoutMs);
    request.on('socket', (socket) => {
      if (!isHttps) return;
      socket.once('secureConnect', () => {
        tlsEstablished = true;
        const tlsSocket = socket as TLSSocket;
        tlsInfo = { protocol: tlsSocket.getProtocol(), cipher: tlsSocket.getCipher()?.name ?? null };
      });
    });
    request.on('error', fail);
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      let truncated = false;
      const complete = (): void => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        const bodyBuffer = Buffer.concat(chunks, bytes);
        resolve({
          url: url.href,
          status: response.statusCode ?? 0,
          statusText: response.statusMessage ?? '',
          httpVersion: response.httpVersion,
          headers: flattenHeaders(response.headers),
          rawHeaders: response.rawHeaders,
          body: bodyBuffer.toString('utf8'),
          bodyBuffer,
          truncated,
          remoteAddress: response.socket?.remoteAddress,
          tls: tlsInfo,
          durationMs: Date.now() - started,
        });
        request.destroy(); // also drops whatever of the body we chose not to read
      };
      response.on('data', (chunk: Buffer) => {
        if (bytes + chunk.length > maxBodyBytes) {
          chunks.push(chunk.subarray(0, maxBodyBytes - bytes));
          bytes = maxBodyBytes;
          truncated = true;
          return complete();
        }
        chunks.push(chunk);
        bytes += chunk.length;
      });
      response.on('end', complete);
      // A server that closes mid-body still gave us a response: keep what arrived, marked incomplete.
      response.on('error', () => {
        truncated = true;
        complete();
      });
    });
    request.end(body);
  });
}

function flattenHeaders(headers: http.IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    flat[name] = Array.isArray(value) ? value.join(name === 'set-cookie' ? '\n' : ', ') : value;
  }
  return flat;
}
