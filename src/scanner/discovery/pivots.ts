/**
 * Pivots: host names a scan already saw without looking for them — certificate SANs, CNAME
 * targets, and the hosts web pages link or redirect to. The caller decides what is in scope.
 *
 * Everything here reads untrusted text (page bodies, headers): every pattern is linear-time
 * (no nested quantifiers, bounded repetitions) and every value is bounded before it is parsed.
 */
import net from 'node:net';
import { certificateAssetKey, hostAssetKey, webAssetKey } from '../asset-keys.js';
import { normalizeHostName } from '../dns.js';
import type { CertificateObservation, HostObservation, WebObservation } from '../types.js';
import type { NameOrigin } from './types.js';

export interface PivotInput {
  hosts?: readonly HostObservation[];
  web?: readonly WebObservation[];
  certificates?: readonly CertificateObservation[];
}

export interface PivotName {
  name: string;
  origin: NameOrigin;
}

/** Longest URL (attribute value, header token) we look at; longer ones are skipped, not cut. */
const MAX_URL_CHARS = 2048;
/** href=, src=, action= with a double-quoted, single-quoted or bare value; values are bounded so an unclosed quote costs at most MAX_URL_CHARS. */
const URL_ATTRIBUTE = /\b(?:href|src|action)[ \t\r\n]{0,16}=[ \t\r\n]{0,16}(?:"([^"]{0,2048})"|'([^']{0,2048})'|([^\s"'<>`=]{1,2048}))/gi;
const LINK_HEADER_URL = /<([^<>]{1,2048})>/g;

export function pivotNames(input: PivotInput): PivotName[] {
  const out: PivotName[] = [];
  const seen = new Set<string>();
  const add = (candidate: string | null | undefined, origin: NameOrigin) => {
    const name = hostName(candidate);
    if (name === null) return;
    const key = `${name}\u0000${origin.source}\u0000${origin.from ?? ''}`;
    if (seen.has(key)) return;
    seen.add(key);
    out.push({ name, origin });
  };

  for (const cert of input.certificates ?? []) {
    const origin: NameOrigin = { source: 'certificate', from: certificateAssetKey(cert) };
    for (const san of cert.sans) add(san, origin);
    if (cert.subjectCN) add(cert.subjectCN, origin);
  }

  for (const host of input.hosts ?? []) {
    const origin: NameOrigin = { source: 'cname', from: hostAssetKey(host) };
    for (const target of host.cname) add(target, origin);
  }

  for (const web of input.web ?? []) {
    const origin: NameOrigin = { source: 'link', from: webAssetKey(web) };
    // A page pointing at its own host teaches nothing.
    const self = hostName(web.host);
    for (const url of webUrls(web)) {
      if (hostName(url) !== self) add(url, origin);
    }
  }
  return out;
}

/** Absolute URLs (or bare host tokens from CSP) a page points at: redirects, final URL, attributes, headers. */
function* webUrls(web: WebObservation): Generator<string> {
  for (const hop of web.redirectChain) {
    yield* hostOfUrl(hop.location, hop.url);
  }
  yield* hostOfUrl(web.finalUrl, undefined);
  for (const match of web.bodyExcerpt.matchAll(URL_ATTRIBUTE)) {
    yield* hostOfUrl(decodeEntities(match[1] ?? match[2] ?? match[3] ?? ''), undefined);
  }
  const headers = web.headers ?? {};
  if (headers.location) yield* hostOfUrl(headers.location, web.finalUrl);
  if (headers.link) {
    for (const match of headers.link.matchAll(LINK_HEADER_URL)) yield* hostOfUrl(match[1]!, web.finalUrl);
  }
  for (const header of ['content-security-policy', 'content-security-policy-report-only']) {
    const policy = headers[header];
    if (policy) yield* cspHosts(policy);
  }
}

/**
 * The host of an absolute (`https://h/...`) or protocol-relative (`//h/...`) URL. Relative paths
 * name the page's own host and are skipped; with `base` (redirects, Location) they resolve against it.
 */
function* hostOfUrl(value: string, base: string | undefined): Generator<string> {
  const text = value.trim();
  if (!text || text.length > MAX_URL_CHARS) return;
  const absolute = /^https?:\/\//i.test(text) || text.startsWith('//');
  if (!absolute && base === undefined) return;
  try {
    const url = new URL(text.startsWith('//') ? `https:${text}` : text, base);
    if (url.protocol === 'http:' || url.protocol === 'https:' || url.protocol === 'ws:' || url.protocol === 'wss:') yield url.hostname;
  } catch {
    // Not a URL: nothing to learn from it.
  }
}

/** Host sources of a CSP (`https://*.cdn.example.com:443`, `api.example.com`); keywords, schemes and nonces are skipped. */
function* cspHosts(policy: string): Generator<string> {
  for (const directive of policy.slice(0, 16 * MAX_URL_CHARS).split(';')) {
    const tokens = directive.trim().split(/\s+/);
    // The first token is the directive name (script-src, report-uri ...).
    for (const token of tokens.slice(1)) {
      if (token.startsWith("'") || token.length > MAX_URL_CHARS) continue;
      let rest = token.replace(/^[a-z][a-z0-9+.-]{0,20}:\/\//i, '');
      if (rest.includes(':') && !/^[^:/]+:(\d{1,5}|\*)(\/|$)/.test(rest)) continue; // a scheme source like data: or blob:
      rest = rest.replace(/[/:].*$/, '');
      yield rest;
    }
  }
}

/** Minimal entity decoding for attribute values: hosts never hold entities, but `&amp;` may precede them in a URL. */
function decodeEntities(value: string): string {
  return value.includes('&')
    ? value
        .replace(/&amp;/gi, '&')
        .replace(/&#x2f;/gi, '/')
        .replace(/&#47;/g, '/')
        .replace(/&colon;/gi, ':')
    : value;
}

/** A DNS host name (lower-case, `*.` stripped) or null for IP literals, invalid and single-label names. */
function hostName(candidate: string | null | undefined): string | null {
  if (!candidate) return null;
  let text = candidate.trim();
  if (text.startsWith('*.')) text = text.slice(2);
  if (!text || text.length > 255) return null;
  let host: string;
  try {
    host = normalizeHostName(text);
  } catch {
    return null;
  }
  if (net.isIP(host) || !host.includes('.')) return null;
  // Certificates and links may name top-level-only wildcards or numeric junk; a name needs a non-numeric top label.
  const top = host.slice(host.lastIndexOf('.') + 1);
  if (/^\d+$/.test(top)) return null;
  return host;
}
