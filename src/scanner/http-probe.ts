/**
 * HTTP step: is there a web server on this port, and what does it serve?
 *
 * GETs `/` over HTTPS and/or HTTP, follows a bounded number of redirects (each target re-checked
 * against the scope guard, because a redirect is the classic way to bounce a scanner into an
 * internal network), and records what an operator wants to see: final URL, status, title,
 * headers, a body excerpt and the technologies in use.
 */
import { createHash } from 'node:crypto';
import net from 'node:net';
import { HttpRequestError, httpRequest, type HttpResponse } from './http-request.js';
import type { HostRateLimiter } from './rate-limit.js';
import { isScopeError, type ScopeGuard } from './scope.js';
import { detectTechnologies } from './technologies.js';
import type { RedirectHop, WebObservation } from './types.js';

export { httpRequest, HttpRequestError, SCANNER_USER_AGENT, type HttpRequestOptions, type HttpResponse } from './http-request.js';

export const DEFAULT_HTTP_PROBE = {
  timeoutMs: 10_000,
  maxRedirects: 5,
  /** Read this much of each body: enough for script tags and generator metas deep in a page. */
  maxBodyBytes: 128 * 1024,
  /** Stored excerpt of the final body. */
  excerptChars: 4_096,
} as const;

/** Response headers worth keeping on the observation: security posture, software disclosure, CDN, caching. */
const KEPT_HEADERS = [
  'server',
  'x-powered-by',
  'x-aspnet-version',
  'x-aspnetmvc-version',
  'x-generator',
  'content-type',
  'content-length',
  'location',
  'strict-transport-security',
  'content-security-policy',
  'content-security-policy-report-only',
  'x-frame-options',
  'x-content-type-options',
  'referrer-policy',
  'permissions-policy',
  'cross-origin-opener-policy',
  'cross-origin-resource-policy',
  'access-control-allow-origin',
  'set-cookie',
  'www-authenticate',
  'via',
  'cf-ray',
  'x-amz-cf-id',
  'x-vercel-id',
  'x-drupal-cache',
  'cache-control',
];

export interface ProbeHttpOptions {
  /** Name for the Host header, SNI and same-host redirect decisions (may equal the address). */
  host: string;
  /** IP to dial. */
  address: string;
  port: number;
  /** `auto`: try a TLS handshake first and fall back to plain HTTP if the port does not speak TLS. */
  tls?: 'auto' | boolean;
  /** Per request (each redirect hop gets its own). */
  timeoutMs?: number;
  maxRedirects?: number;
  maxBodyBytes?: number;
  guard: ScopeGuard;
  limiter?: HostRateLimiter;
}

/** Probes one port; throws if it does not answer HTTP(S) (the last attempt's error) or if the address is out of scope. */
export async function probeHttp(options: ProbeHttpOptions): Promise<WebObservation> {
  options.guard.assertAddressAllowed(options.address);
  const schemes: Array<'https' | 'http'> = options.tls === true ? ['https'] : options.tls === false ? ['http'] : ['https', 'http'];
  let lastError: unknown;
  for (const scheme of schemes) {
    try {
      return await probeScheme(scheme, options);
    } catch (err) {
      if (isScopeError(err)) throw err;
      lastError = err;
      // The port completed a TLS handshake, so it is a TLS port with a broken HTTP layer: plain HTTP will not help.
      if (err instanceof HttpRequestError && err.tlsEstablished) break;
    }
  }
  throw lastError;
}

async function probeScheme(scheme: 'https' | 'http', options: ProbeHttpOptions): Promise<WebObservation> {
  const maxRedirects = options.maxRedirects ?? DEFAULT_HTTP_PROBE.maxRedirects;
  const startUrl = new URL(`${scheme}://${urlHost(options.host)}:${options.port}/`);
  const started = Date.now();
  const redirectChain: RedirectHop[] = [];
  let redirectStopped: WebObservation['redirectStopped'];
  let current = startUrl;
  let response = await fetchOnce(current, options.address, options);

  // Follow redirects until a non-redirect, the hop limit, or a target we may not or cannot reach.
  while (isRedirect(response.status) && response.headers.location) {
    let next: URL;
    try {
      next = new URL(response.headers.location, current);
    } catch {
      redirectStopped = { url: response.headers.location, reason: 'invalid Location header' };
      break;
    }
    if (next.protocol !== 'http:' && next.protocol !== 'https:') {
      redirectStopped = { url: next.href, reason: `unsupported scheme ${next.protocol}` };
      break;
    }
    if (redirectChain.length >= maxRedirects) {
      redirectStopped = { url: next.href, reason: `redirect limit of ${maxRedirects} reached` };
      break;
    }
    const nextHost = next.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
    // Same host: keep dialling the address we already checked. Another host: resolve it afresh (by name).
    const sameHost = nextHost === options.host.toLowerCase() || nextHost === options.address;
    if (!sameHost) {
      // Ask before dialling, so a refused target is never contacted; the connect itself is guarded again.
      try {
        await options.guard.resolveHost(nextHost);
      } catch (err) {
        redirectStopped = { url: next.href, reason: isScopeError(err) ? (err as Error).message : `cannot resolve ${nextHost}: ${(err as Error).message}` };
        break;
      }
    }
    redirectChain.push({ url: current.href, status: response.status, location: next.href });
    try {
      const nextResponse = await fetchOnce(next, sameHost ? options.address : undefined, options);
      current = next;
      response = nextResponse;
    } catch (err) {
      redirectChain.pop();
      redirectStopped = { url: next.href, reason: (err as Error).message };
      break;
    }
  }
  return toObservation(scheme, startUrl, response, redirectChain, redirectStopped, options, Date.now() - started);
}

function fetchOnce(url: URL, address: string | undefined, options: ProbeHttpOptions): Promise<HttpResponse> {
  return httpRequest({
    url: url.href,
    address,
    timeoutMs: options.timeoutMs ?? DEFAULT_HTTP_PROBE.timeoutMs,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_HTTP_PROBE.maxBodyBytes,
    guard: options.guard,
    limiter: options.limiter,
  });
}

function toObservation(
  scheme: 'https' | 'http',
  startUrl: URL,
  response: HttpResponse,
  redirectChain: RedirectHop[],
  redirectStopped: WebObservation['redirectStopped'],
  options: ProbeHttpOptions,
  responseTimeMs: number,
): WebObservation {
  const headers: Record<string, string> = {};
  for (const name of KEPT_HEADERS) if (response.headers[name] !== undefined) headers[name] = response.headers[name];
  if (headers['set-cookie']) headers['set-cookie'] = redactCookieValues(headers['set-cookie']);
  const observation: WebObservation = {
    kind: 'web',
    host: options.host.toLowerCase(),
    address: options.address,
    port: options.port,
    scheme,
    url: startUrl.href,
    finalUrl: response.url,
    status: response.status,
    statusText: response.statusText,
    headers,
    bodyExcerpt: response.body.slice(0, DEFAULT_HTTP_PROBE.excerptChars),
    bodyBytesRead: response.bodyBuffer.length,
    bodyTruncated: response.truncated,
    bodySha256: createHash('sha256').update(response.bodyBuffer).digest('hex'),
    redirectChain,
    technologies: detectTechnologies({ headers: response.headers, body: response.body }),
    responseTimeMs,
  };
  const title = extractTitle(response.body);
  if (title) observation.title = title;
  if (response.headers.server) observation.server = response.headers.server;
  if (response.headers['content-type']) observation.contentType = response.headers['content-type'];
  if (redirectStopped) observation.redirectStopped = redirectStopped;
  if (response.tls) observation.tls = response.tls;
  return observation;
}

/**
 * Keeps cookie names and attributes (Secure, HttpOnly, SameSite matter to checks) but not values:
 * a target's session tokens have no business in our database.
 */
function redactCookieValues(setCookie: string): string {
  return setCookie
    .split('\n')
    .map((line) => line.replace(/^([^=;]*)=[^;]*/, '$1=<redacted>'))
    .join('\n');
}

export function extractTitle(html: string): string | undefined {
  const match = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html);
  if (!match) return undefined;
  const title = decodeEntities(match[1]).replace(/\s+/g, ' ').trim();
  return title ? title.slice(0, 256) : undefined;
}

const NAMED_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, entity: string) => {
    if (entity[0] === '#') {
      const code = entity[1].toLowerCase() === 'x' ? parseInt(entity.slice(2), 16) : parseInt(entity.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return NAMED_ENTITIES[entity.toLowerCase()] ?? whole;
  });
}

function isRedirect(status: number): boolean {
  return status === 301 || status === 302 || status === 303 || status === 307 || status === 308;
}

function urlHost(host: string): string {
  return net.isIPv6(host) ? `[${host}]` : host;
}
