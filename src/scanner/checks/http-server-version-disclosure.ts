/**
 * Software versions in response headers. Passive. A version lets an attacker match the server to
 * known CVEs without probing; a product name alone (Server: nginx) is not flagged.
 */
import { headerBlock } from './evidence.js';
import type { WebCheck } from './check.js';

/** Headers that conventionally carry product/version strings. */
const DISCLOSING_HEADERS = ['server', 'x-powered-by', 'x-aspnet-version', 'x-aspnetmvc-version', 'x-generator'];
const VERSION_PATTERN = /\b\d+(?:\.\d+)+[a-z0-9-]*/i;

export const httpServerVersionDisclosure: WebCheck = {
  id: 'http-server-version-disclosure',
  name: 'Server software version disclosed',
  severity: 'low',
  appliesTo: 'web',
  description:
    'A response header reveals the exact version of the server software or framework, letting attackers look up vulnerabilities that apply to it without any probing.',
  remediation:
    'Remove version details from the header (nginx: server_tokens off; Apache: ServerTokens Prod; PHP: expose_php = Off; Express: app.disable("x-powered-by")) and keep the software patched.',
  async run({ web }) {
    const results = [];
    for (const header of DISCLOSING_HEADERS) {
      const value = web.headers[header];
      const version = value === undefined ? null : VERSION_PATTERN.exec(value);
      if (!value || !version) continue;
      results.push({
        matcher: `header:${header}`,
        evidence: {
          url: web.finalUrl,
          response: headerBlock(`HTTP ${web.status}`, { [header]: value }),
          extracted: { header, value, version: version[0] },
        },
      });
    }
    return results;
  },
};
