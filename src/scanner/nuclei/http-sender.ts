/**
 * Default HttpSender over node:http / node:https.
 *
 * Scope: the caller injects a `lookup` (e.g. a scope guard's guardedLookup). It runs at connect time for every
 * connection, redirects included. Node skips `lookup` for IP-literal hosts, so for those this sender calls the
 * same `lookup` itself before connecting: a guard that refuses the address refuses the request.
 *
 * Paths are sent as written (no dot-segment resolution). Bodies are bounded (`maxBodyBytes`), gzip / deflate /
 * brotli bodies are decompressed within the same bound, and invalid UTF-8 is kept via the surrogateescape
 * convention of bytes.ts so binary bodies (favicons) hash correctly.
 */
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import zlib from 'node:zlib';
import { decodeBytes, encodeString } from './bytes.js';
import type { HttpSender, HttpSendRequest, HttpSendResponse } from './types.js';
import { goEscapedPath } from './go-path.js';
import { sendUnsafe, type RawAnswer } from './unsafe-sender.js';
import { canonicalHeaderKey, safeRequestPath, splitUrl, type SplitUrl } from './url-util.js';

export interface NodeHttpSenderOptions {
  /** DNS lookup used for every connection (inject the scope guard here). Also called for IP literals. */
  lookup?: net.LookupFunction;
  /** Verify TLS certificates. Default false (scanners talk to self-signed hosts). */
  rejectUnauthorized?: boolean;
  /** Maximum body bytes kept (after decompression). Default 4 MiB. */
  maxBodyBytes?: number;
  /** Maximum characters of the raw request/response kept for reports. Default 64 KiB. */
  maxRawBytes?: number;
  /** Reuse connections. Default false. */
  keepAlive?: boolean;
}

export interface NodeHttpSender extends HttpSender {
  /** Close pooled connections (only relevant with keepAlive). */
  destroy(): void;
}

interface OnceResult extends RawAnswer {
  rawRequest: string;
}

const REDIRECT_CODES = new Set([301, 302, 303, 307, 308]);

function lookupOnce(lookup: net.LookupFunction, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    try {
      lookup(host, { all: true }, (err) => (err ? reject(err) : resolve()));
    } catch (err) {
      reject(err as Error);
    }
  });
}

function decompressBounded(body: Buffer, encoding: string, limit: number): Promise<{ body: Buffer; truncated: boolean } | undefined> {
  const enc = encoding.trim().toLowerCase();
  let stream: zlib.Gunzip | zlib.Inflate | zlib.InflateRaw | zlib.BrotliDecompress;
  const flush = { finishFlush: zlib.constants.Z_SYNC_FLUSH };
  if (enc === 'gzip' || enc === 'x-gzip') stream = zlib.createGunzip(flush);
  else if (enc === 'deflate') stream = body[0] === 0x78 ? zlib.createInflate(flush) : zlib.createInflateRaw(flush);
  else if (enc === 'br') stream = zlib.createBrotliDecompress();
  else return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let truncated = false;
    let done = false;
    const finish = (ok: boolean) => {
      if (done) return;
      done = true;
      resolve(ok || size > 0 ? { body: Buffer.concat(chunks), truncated } : undefined);
    };
    stream.on('data', (chunk: Buffer) => {
      if (done) return;
      const room = limit - size;
      if (chunk.length >= room) {
        chunks.push(chunk.subarray(0, room));
        size += room;
        truncated = true;
        stream.destroy();
        finish(true);
        return;
      }
      chunks.push(chunk);
      size += chunk.length;
    });
    stream.on('end', () => finish(true));
    stream.on('error', () => finish(false));
    stream.on('close', () => finish(size > 0));
    stream.end(body);
  });
}

/** The path as Go's client writes it (see go-path.ts); the query as written, bytes Node refuses escaped. */
function wirePath(pathAndQuery: string): string {
  const q = pathAndQuery.indexOf('?');
  if (q === -1) return goEscapedPath(pathAndQuery);
  return goEscapedPath(pathAndQuery.slice(0, q)) + safeRequestPath(pathAndQuery.slice(q));
}

function headerLines(raw: Array<[string, string]>): string {
  return raw.map(([k, v]) => `${k}: ${v}\r\n`).join('');
}

function cut(s: string, max: number): string {
  return s.length > max ? `${s.slice(0, max)}\n…[truncated]` : s;
}

export function createNodeHttpSender(options: NodeHttpSenderOptions = {}): NodeHttpSender {
  const maxBody = options.maxBodyBytes ?? 4 * 1024 * 1024;
  const maxRaw = options.maxRawBytes ?? 64 * 1024;
  const rejectUnauthorized = options.rejectUnauthorized ?? false;
  const httpAgent = options.keepAlive ? new http.Agent({ keepAlive: true, maxSockets: 16 }) : undefined;
  const httpsAgent = options.keepAlive ? new https.Agent({ keepAlive: true, maxSockets: 16, rejectUnauthorized }) : undefined;

  async function once(
    target: SplitUrl,
    method: string,
    headers: Record<string, string>,
    body: Buffer | undefined,
    deadline: number,
    bodyLimit: number,
    signal?: AbortSignal,
    sni?: string,
  ): Promise<OnceResult> {
    const hostIsIp = net.isIP(target.hostname) !== 0;
    if (hostIsIp && options.lookup) await lookupOnce(options.lookup, target.hostname);
    const path = wirePath(target.pathAndQuery);
    const lib = target.scheme === 'https' ? https : http;
    // header values go out as bytes: UTF-8 (and escaped raw bytes) mapped to latin1 code units, which Node writes as-is
    const outHeaders: Record<string, string> = {};
    for (const [k, v] of Object.entries(headers)) outHeaders[k] = /^[\x00-\x7f]*$/.test(v) ? v : encodeString(v).toString('latin1');
    const hostHeader = Object.keys(outHeaders).find((k) => k.toLowerCase() === 'host');
    const hostValue = hostHeader ? outHeaders[hostHeader] : target.explicitPort ? target.authority : target.authority.replace(/:\d+$/, '');
    const requestLine = `${method} ${path} HTTP/1.1\r\n`;
    const dumpHeaders: Array<[string, string]> = [['Host', hostValue]];
    for (const [k, v] of Object.entries(outHeaders)) if (k.toLowerCase() !== 'host') dumpHeaders.push([k, v]);
    const rawRequest = cut(`${requestLine}${headerLines(dumpHeaders)}\r\n${body ? decodeBytes(body) : ''}`, maxRaw);

    return new Promise<OnceResult>((resolve, reject) => {
      const remaining = Math.max(1, deadline - Date.now());
      let settled = false;
      const fail = (err: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        reject(err);
      };
      const req = lib.request({
        method,
        host: target.hostname,
        port: target.port,
        path,
        headers: outHeaders,
        setHost: !hostHeader,
        lookup: options.lookup,
        agent: target.scheme === 'https' ? (httpsAgent ?? false) : (httpAgent ?? false),
        rejectUnauthorized,
        // TLS carries no IP address as server name (Go and Node leave it out)
        servername: sni && net.isIP(sni) === 0 ? sni : hostIsIp ? undefined : target.hostname,
      } as https.RequestOptions);
      const timer = setTimeout(() => {
        const err = new Error(`request timed out after ${Math.round(remaining)} ms`);
        req.destroy(err);
        fail(err);
      }, remaining);
      const onAbort = () => {
        const err = new Error('aborted');
        req.destroy(err);
        fail(err);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      req.on('error', (err) => fail(err));
      // CONNECT and protocol upgrades hand over the socket instead of a response: report the status, no body
      const handover = (res: http.IncomingMessage, socket: import('node:stream').Duplex) => {
        socket.destroy();
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        resolve({ ...responseHead(res), body: Buffer.alloc(0), truncated: false, rawRequest });
      };
      req.on('connect', handover);
      req.on('upgrade', handover);
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        let truncated = false;
        const finish = () => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          resolve({ ...responseHead(res), body: Buffer.concat(chunks), truncated, rawRequest });
        };
        res.on('data', (chunk: Buffer) => {
          if (truncated) return;
          const room = bodyLimit - size;
          if (chunk.length >= room) {
            chunks.push(chunk.subarray(0, room));
            size += room;
            truncated = true;
            finish();
            res.destroy();
            return;
          }
          chunks.push(chunk);
          size += chunk.length;
        });
        res.on('end', finish);
        res.on('aborted', finish);
        res.on('close', finish);
        res.on('error', (err) => (size > 0 ? finish() : fail(err)));
      });
      if (body?.length) req.end(body);
      else req.end();
    });
  }

  const send = async (request: HttpSendRequest): Promise<HttpSendResponse> => {
    const started = Date.now();
    const deadline = started + Math.max(1, request.timeoutMs);
    const bodyLimit = Math.min(maxBody, request.maxBodyBytes ?? maxBody);
    let target = splitUrl(request.url);
    if (!target) throw new Error(`invalid URL: ${request.url}`);
    const first = target;
    let method = request.method;
    let headers = { ...request.headers };
    let body: Buffer | undefined = request.body !== undefined ? encodeString(request.body) : undefined;
    let currentUrl = request.url;
    let firstRawRequest: string | undefined;
    const chain: HttpSendResponse[] = [];
    let hops = 0;
    for (;;) {
      const res =
        request.unsafeRaw !== undefined
          ? await unsafeOnce(target, request, deadline, bodyLimit)
          : await once(target, method, headers, body, deadline, bodyLimit, request.signal, request.sni);
      firstRawRequest ??= res.rawRequest;
      const location = res.headers.location;
      const loc = Array.isArray(location) ? location[0] : location;
      // unsafe requests are sent once, as written: their redirects are not followed
      if (request.unsafeRaw === undefined && request.followRedirects && REDIRECT_CODES.has(res.status) && loc && hops < request.maxRedirects) {
        let next: string;
        try {
          next = new URL(loc, `${target.scheme}://${target.authority}${target.pathAndQuery}`).toString();
        } catch {
          next = '';
        }
        const nextTarget = next ? splitUrl(next) : undefined;
        const sameHost = nextTarget !== undefined && nextTarget.hostname.toLowerCase() === first.hostname.toLowerCase() && nextTarget.port === first.port;
        if (nextTarget && (!request.sameHostRedirectsOnly || sameHost)) {
          hops++;
          const hostChanged = nextTarget.hostname.toLowerCase() !== target.hostname.toLowerCase() || nextTarget.port !== target.port;
          const nextHeaders: Record<string, string> = {};
          const dropBody = res.status === 303 ? method !== 'HEAD' : (res.status === 301 || res.status === 302) && method !== 'GET' && method !== 'HEAD';
          for (const [k, v] of Object.entries(headers)) {
            const lk = k.toLowerCase();
            if (lk === 'host') continue;
            if (dropBody && (lk === 'content-length' || lk === 'content-type' || lk === 'transfer-encoding')) continue;
            if (hostChanged && (lk === 'authorization' || lk === 'cookie' || lk === 'www-authenticate')) continue;
            nextHeaders[k] = v;
          }
          // like a browser / Go's cookie jar: cookies set by a redirect response go with the next hop on the same host
          const setCookie = res.headers['set-cookie'];
          const newCookies = (Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : [])
            .map((c) => c.split(';')[0].trim())
            .filter((c) => c.includes('=') && !c.startsWith('='));
          if (newCookies.length && !hostChanged) {
            const key = Object.keys(nextHeaders).find((k) => k.toLowerCase() === 'cookie');
            const jar = new Map<string, string>();
            for (const part of (key ? nextHeaders[key] : '').split(';')) {
              const eq = part.indexOf('=');
              if (eq > 0) jar.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
            }
            for (const c of newCookies) {
              const eq = c.indexOf('=');
              jar.set(c.slice(0, eq), c.slice(eq + 1));
            }
            if (key) delete nextHeaders[key];
            nextHeaders.Cookie = [...jar].map(([n, v]) => `${n}=${v}`).join('; ');
          }
          if (dropBody) {
            method = method === 'HEAD' ? 'HEAD' : 'GET';
            body = undefined;
          }
          // nuclei matches every response of the chain; a redirect's body is not read (Go's client closes it)
          chain.push({
            ...headOnly(res, maxRaw),
            durationMs: Date.now() - started,
            rawRequest: firstRawRequest ?? res.rawRequest,
            finalUrl: currentUrl,
          });
          headers = nextHeaders;
          target = nextTarget;
          currentUrl = next;
          continue;
        }
      }
      // decompress
      let bodyBuf = res.body;
      let truncated = res.truncated;
      const enc = res.headers['content-encoding'];
      const encoding = Array.isArray(enc) ? enc[enc.length - 1] : enc;
      if (encoding && bodyBuf.length) {
        const out = await decompressBounded(bodyBuf, encoding, bodyLimit);
        if (out) {
          bodyBuf = out.body;
          truncated = truncated || out.truncated;
        }
      }
      const bodyText = decodeBytes(bodyBuf);
      return {
        status: res.status,
        statusText: res.statusText,
        httpVersion: res.httpVersion,
        headers: res.headers,
        rawHeaders: res.rawHeaders,
        body: bodyText,
        bodyTruncated: truncated,
        durationMs: Date.now() - started,
        rawRequest: firstRawRequest ?? res.rawRequest,
        rawResponse: cut(`${rawHead(res)}${bodyText}`, maxRaw),
        finalUrl: currentUrl,
        ...(chain.length ? { redirectChain: chain } : {}),
      };
    }
  };

  /** An `unsafe` request: its bytes as written over a socket, the scope guard's lookup at connect time. */
  async function unsafeOnce(target: SplitUrl, request: HttpSendRequest, deadline: number, bodyLimit: number): Promise<OnceResult> {
    const bytes = encodeString(request.unsafeRaw ?? '');
    const answer = await sendUnsafe(target, bytes, {
      lookup: options.lookup,
      rejectUnauthorized,
      deadline,
      bodyLimit,
      signal: request.signal,
      sni: request.sni,
      method: request.method,
    });
    return { ...answer, rawRequest: cut(decodeBytes(bytes), maxRaw) };
  }

  const sender = send as NodeHttpSender;
  sender.destroy = () => {
    httpAgent?.destroy();
    httpsAgent?.destroy();
  };
  return sender;
}

/** Status line and header lines as received, then the blank line. */
function rawHead(res: Pick<OnceResult, 'httpVersion' | 'status' | 'statusText' | 'rawHeaders'>): string {
  const statusLine = `HTTP/${res.httpVersion} ${res.status} ${res.statusText}`.trimEnd();
  return `${statusLine}\r\n${res.rawHeaders.map(([k, v]) => `${canonicalHeaderKey(k)}: ${v}\r\n`).join('')}\r\n`;
}

/** A redirect response of a chain: status and headers, no body. */
function headOnly(res: OnceResult, maxRaw: number): Omit<HttpSendResponse, 'durationMs' | 'rawRequest' | 'finalUrl'> {
  return {
    status: res.status,
    statusText: res.statusText,
    httpVersion: res.httpVersion,
    headers: res.headers,
    rawHeaders: res.rawHeaders,
    body: '',
    rawResponse: cut(rawHead(res), maxRaw),
  };
}

/** Status line and headers of a response, as the engine reads them (raw pairs kept in wire order). */
function responseHead(res: http.IncomingMessage) {
  const rawHeaders: Array<[string, string]> = [];
  for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) rawHeaders.push([res.rawHeaders[i], res.rawHeaders[i + 1]]);
  const headers: Record<string, string | string[]> = {};
  for (const [key, value] of Object.entries(res.headers)) if (value !== undefined) headers[key] = value;
  return { status: res.statusCode ?? 0, statusText: res.statusMessage ?? '', httpVersion: res.httpVersion ?? '1.1', headers, rawHeaders };
}
