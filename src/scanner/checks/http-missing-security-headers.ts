/**
 * Missing browser security headers. Passive: judged on the headers the probe already recorded for
 * the endpoint's final response, so it costs no extra request. One finding per endpoint that lists
 * what is missing, rather than one per header, so a fix shows up as one finding resolved.
 */
import { headerBlock } from './evidence.js';
import type { WebCheck } from './check.js';

export const httpMissingSecurityHeaders: WebCheck = {
  id: 'http-missing-security-headers',
  name: 'Missing HTTP security headers',
  severity: 'low',
  appliesTo: 'web',
  description:
    'The response lacks headers that make browsers enforce HTTPS (Strict-Transport-Security), restrict script sources (Content-Security-Policy), prevent framing/clickjacking (X-Frame-Options or CSP frame-ancestors) and stop MIME sniffing (X-Content-Type-Options: nosniff).',
  remediation: 'Set the listed headers on every response, typically in the reverse proxy or web framework (e.g. helmet for Express, add_header in nginx).',
  async run({ web }) {
    const missing = missingSecurityHeaders(web.headers, new URL(web.finalUrl).protocol === 'https:');
    if (missing.length === 0) return [];
    return [
      {
        matcher: 'missing-security-headers',
        evidence: {
          url: web.finalUrl,
          response: headerBlock(`HTTP ${web.status} ${web.statusText ?? ''}`.trim(), web.headers),
          extracted: { missing },
        },
      },
    ];
  },
};

/** Lower-case names of the security headers absent (or ineffective) in `headers`. */
export function missingSecurityHeaders(headers: Record<string, string>, isHttps: boolean): string[] {
  const missing: string[] = [];
  const csp = headers['content-security-policy'];
  // HSTS is only honoured over HTTPS, so it is only expected there.
  if (isHttps && !/max-age\s*=\s*[1-9]/i.test(headers['strict-transport-security'] ?? '')) missing.push('strict-transport-security');
  if (!csp) missing.push('content-security-policy');
  if (!headers['x-frame-options'] && !/frame-ancestors/i.test(csp ?? '')) missing.push('x-frame-options');
  if ((headers['x-content-type-options'] ?? '').trim().toLowerCase() !== 'nosniff') missing.push('x-content-type-options');
  return missing;
}
