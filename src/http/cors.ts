import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Env } from '../env.js';
import { AppError, errorBody } from '../errors.js';

/**
 * The one cross-origin policy, for every route (GraphQL, REST, auth, docs) and the websocket upgrade.
 *
 * Browsers attach the session cookie to cross-site requests, so which origins may act with it is decided here:
 * PUBLIC_URL's origin (default http://localhost:$PORT), the CORS_ORIGINS list, and a request whose Origin names the
 * very host it was sent to (same origin by definition: a page elsewhere cannot make the browser send our Host with
 * its Origin). Requests without an Origin (curl, servers, SDKs) are not browser requests and are unaffected.
 *
 * CORS headers only decide whether a page may READ the answer. A cross-site page can still SEND a "simple" request
 * (form-encoded, multipart or text/plain POST, GET) without asking first; that is why /graphql runs operations only
 * from application/json POSTs (which always need a preflight this policy answers) and queries from GET, and why
 * the REST handler accepts only JSON bodies. Beyond content types, a state-changing request (any method but
 * GET/HEAD/OPTIONS) that names a disallowed Origin is refused outright: browsers send Origin on every cross-origin
 * POST/PUT/PATCH/DELETE, so this stops cookie-carrying requests from other sites whatever their body (an empty
 * `fetch(url, { method: 'POST', mode: 'no-cors' })` has no content type to refuse). The websocket has no preflight
 * at all: its upgrade checks Origin here too.
 */
export interface CorsPolicy {
  /** Whether a browser page at `origin` may make credentialed requests; `host` is the request's Host header. */
  allows(origin: string, host: string | undefined): boolean;
  /**
   * Sets the CORS response headers for an allowed Origin, answers preflights (OPTIONS with
   * Access-Control-Request-Method) and refuses state-changing requests from a disallowed Origin (403).
   * Returns true when the request has been answered.
   */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const ALLOWED_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS';
/** Request headers our clients send: credentials, JSON bodies, the workspace, the tool and service keys. */
const ALLOWED_HEADERS = [
  'authorization',
  'content-type',
  'accept',
  'x-request-id',
  'x-workspace-id',
  'x-tool-api-key',
  'x-service-api-key',
  'graphql-client-name',
  'graphql-client-version',
].join(', ');
const EXPOSED_HEADERS = 'x-request-id, content-disposition, retry-after';
/** Browsers cap this anyway (Chromium: 2 h); saves a preflight per call. */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

export function publicOrigin(env: Pick<Env, 'PUBLIC_URL' | 'PORT'>): string {
  return new URL(env.PUBLIC_URL ?? `http://localhost:${env.PORT}`).origin;
}

function sameHost(origin: string, host: string | undefined): boolean {
  if (!host || !URL.canParse(origin)) return false;
  const url = new URL(origin);
  return /^https?:$/.test(url.protocol) && url.host.toLowerCase() === host.toLowerCase();
}

export function createCorsPolicy(env: Pick<Env, 'PUBLIC_URL' | 'PORT' | 'CORS_ORIGINS'>): CorsPolicy {
  const allowed = new Set([publicOrigin(env), ...env.CORS_ORIGINS]);
  const allows = (origin: string, host: string | undefined) => allowed.has(origin) || sameHost(origin, host);

  return {
    allows,
    handle(req, res) {
      // Caches must not hand one origin's answer (with or without CORS headers) to another.
      res.setHeader('vary', 'Origin');
      const origin = req.headers.origin;
      const preflight = req.method === 'OPTIONS' && typeof req.headers['access-control-request-method'] === 'string';
      if (!origin) return false;
      if (!allows(origin, req.headers.host)) {
        if (preflight) {
          // A disallowed origin's preflight gets no CORS headers: the browser never sends the real request.
          res.writeHead(204).end();
          return true;
        }
        if (SAFE_METHODS.has(req.method ?? 'GET')) return false;
        const body = errorBody(new AppError('FORBIDDEN', `Requests from ${origin} are not allowed: add it to CORS_ORIGINS`));
        res.writeHead(body.statusCode, { 'content-type': 'application/json; charset=utf-8' });
        res.end(JSON.stringify(body));
        return true;
      }
      res.setHeader('access-control-allow-origin', origin);
      res.setHeader('access-control-allow-credentials', 'true');
      res.setHeader('access-control-expose-headers', EXPOSED_HEADERS);
      if (!preflight) return false;
      res.writeHead(204, {
        'access-control-allow-methods': ALLOWED_METHODS,
        'access-control-allow-headers': ALLOWED_HEADERS,
        'access-control-max-age': String(PREFLIGHT_MAX_AGE_SECONDS),
      });
      res.end();
      return true;
    },
  };
}
