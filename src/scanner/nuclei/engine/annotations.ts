/**
 * Raw-request annotations (nuclei pkg/protocols/http/request_annotations.go): lines such as `@Host: ...`
 * anywhere in the rendered raw request, matched case-sensitively as nuclei's `(?m)^@Host:\s*(.+)\s*$`.
 *  - `@Host: [http(s)://]host[:port]` sends the request to that host (and scheme); without a port the
 *    request's own explicit port is kept. The Host header stays as written in the request.
 *  - `@tls-sni: name` (or `request.host`, the Host header's value) is the TLS server name.
 *  - `@timeout: 10s` (a Go duration) replaces the request timeout, at most 5 minutes as nuclei.
 * `@once` and `interactsh-url` SNI are not handled here.
 */
import { splitUrl } from '../url-util.js';

export const MAX_ANNOTATION_TIMEOUT_MS = 5 * 60_000;

export interface RawAnnotations {
  host?: string;
  sni?: string;
  timeoutMs?: number;
}

function annotation(text: string, name: string): string | undefined {
  const m = new RegExp(`^@${name}:[ \\t]*(.+?)[ \\t\\r]*$`, 'm').exec(text);
  return m ? m[1].trim() : undefined;
}

const GO_DURATION_UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Go's time.ParseDuration in milliseconds (undefined when invalid or negative). */
export function parseGoDuration(text: string): number | undefined {
  const s = text.trim();
  if (s === '0') return 0;
  if (!/^(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|ms|s|m|h)(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|ms|s|m|h))*$/.test(s)) return undefined;
  let total = 0;
  for (const m of s.matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/g)) total += Number(m[1]) * GO_DURATION_UNITS[m[2]];
  return total;
}

export function parseAnnotations(rawRequest: string): RawAnnotations {
  const out: RawAnnotations = {};
  const host = annotation(rawRequest, 'Host');
  if (host) out.host = host;
  const sni = annotation(rawRequest, 'tls-sni');
  if (sni) out.sni = sni.replace(/^https?:\/\//i, '');
  const timeout = annotation(rawRequest, 'timeout');
  if (timeout !== undefined) {
    const ms = parseGoDuration(timeout);
    if (ms !== undefined && ms > 0) out.timeoutMs = Math.min(ms, MAX_ANNOTATION_TIMEOUT_MS);
  }
  return out;
}

/** The request URL with `@Host` applied: scheme from an `http(s)://` prefix, host[:port] replaced. */
export function applyHostAnnotation(url: string, host: string): string | undefined {
  const current = splitUrl(url);
  if (!current) return undefined;
  let scheme: string = current.scheme;
  let value = host;
  const prefix = /^(https?):\/\//i.exec(value);
  if (prefix) {
    scheme = prefix[1].toLowerCase();
    value = value.slice(prefix[0].length);
  }
  value = value.replace(/\/.*$/, '');
  // host:port as Go's net.SplitHostPort + a valid port; else the request's explicit port is kept
  const hostPort = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(value);
  const authority = hostPort && Number(hostPort[2]) <= 65535 ? value : current.explicitPort ? `${value}:${current.port}` : value;
  return splitUrl(`${scheme}://${authority}${current.pathAndQuery}`) ? `${scheme}://${authority}${current.pathAndQuery}` : undefined;
}
