import http from 'node:http';
import https from 'node:https';
import type { ScopeGuard } from '../../scanner/scope.js';

/** What the MCP SDK's client transports call (their FetchLike). */
export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

export interface GuardedFetchOptions {
  guard: ScopeGuard;
  /** Aborts every request (and response stream) made through this fetch. */
  signal?: AbortSignal;
  /** A response body larger than this fails its stream: a hostile server cannot fill our memory. */
  maxResponseBytes: number;
}

const NULL_BODY_STATUSES = new Set([204, 205, 304]);

/**
 * A fetch over node:http(s) that dials only addresses the scope guard allows, checked at connect time against
 * what DNS really returned (so a name that re-resolves to 127.0.0.1 after the save-time check is still refused).
 * Redirects are not followed here (the SDK follows same-origin ones by calling this again, checked again).
 */
export function createGuardedFetch(options: GuardedFetchOptions): FetchLike {
  return async (input, init = {}) => {
    const url = new URL(String(input instanceof Request ? input.url : input));
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`Refusing to fetch ${url.protocol} URLs`);
    // Throws ScopeError now for a blocked IP literal; a name is checked by the guard's lookup when the socket connects.
    const connect = options.guard.connectOptions(url.hostname);
    const signals = [init.signal, options.signal].filter((signal): signal is AbortSignal => Boolean(signal));
    const signal = signals.length ? AbortSignal.any(signals) : undefined;
    signal?.throwIfAborted();
    const headers = new Headers(init.headers);
    const body = await requestBody(init.body);
    if (body && !headers.has('content-length')) headers.set('content-length', String(body.length));
    const client = url.protocol === 'https:' ? https : http;

    return new Promise<Response>((resolve, reject) => {
      const request = client.request(
        {
          ...connect,
          port: url.port || undefined,
          path: `${url.pathname}${url.search}`,
          method: init.method ?? 'GET',
          headers: { ...Object.fromEntries(headers), host: url.host },
          signal,
          // SNI and certificate checks against the name, not the address we dialled.
          ...(url.protocol === 'https:' ? { servername: connect.lookup ? url.hostname : undefined } : {}),
        },
        (incoming) => {
          const status = incoming.statusCode ?? 0;
          // A web Response cannot carry 1xx (e.g. an upgrade) or a made-up status.
          if (status < 200 || status > 599) {
            request.destroy();
            return reject(new Error(`Unexpected HTTP status ${status}`));
          }
          const responseHeaders = new Headers();
          for (const [name, value] of Object.entries(incoming.headers)) {
            if (value === undefined) continue;
            for (const item of Array.isArray(value) ? value : [value]) responseHeaders.append(name, item);
          }
          if (NULL_BODY_STATUSES.has(status) || init.method === 'HEAD') {
            incoming.resume();
            return resolve(new Response(null, { status, statusText: incoming.statusMessage, headers: responseHeaders }));
          }
          resolve(
            new Response(
              bodyStream(incoming, () => request.destroy(), options.maxResponseBytes),
              { status, statusText: incoming.statusMessage, headers: responseHeaders },
            ),
          );
        },
      );
      request.once('error', reject);
      request.end(body);
    });
  };
}

async function requestBody(body: RequestInit['body']): Promise<Buffer | undefined> {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  return Buffer.from(await new Response(body).arrayBuffer());
}

/**
 * The response body as a web stream, by hand rather than Readable.toWeb: a reader that cancels (the SDK closing
 * an SSE stream) must never meet a late chunk on a closed controller (an uncaught error in Node 20).
 */
function bodyStream(incoming: http.IncomingMessage, abort: () => void, maxBytes: number): ReadableStream<Uint8Array> {
  let finished = false;
  let received = 0;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const finish = (error?: Error) => {
        if (finished) return;
        finished = true;
        if (error) controller.error(error);
        else controller.close();
      };
      incoming.on('data', (chunk: Buffer) => {
        if (finished) return;
        received += chunk.length;
        if (received > maxBytes) {
          finish(new Error(`The response is larger than ${maxBytes} bytes`));
          return abort();
        }
        controller.enqueue(new Uint8Array(chunk));
        if ((controller.desiredSize ?? 1) <= 0) incoming.pause();
      });
      incoming.once('end', () => finish());
      incoming.once('error', (error) => finish(error));
      incoming.once('close', () => finish(incoming.complete ? undefined : new Error('The connection closed before the response ended')));
    },
    pull() {
      incoming.resume();
    },
    cancel() {
      finished = true;
      abort();
    },
  });
}
