/** Payloads on dns blocks (dkim-record-detect style): one question per value, stop-at-first-match, the cap. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDnsResolver } from '../../src/scanner/nuclei/dns-resolver.js';
import { type DnsResolver, parseTemplate, REQUEST_CAP_WARNING, runDnsTemplatesDetailed } from '../../src/scanner/nuclei/index.js';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.js';

let server: TestDnsServer;
let resolver: DnsResolver & { close(): void };
const asked: string[] = [];
const counting: DnsResolver = {
  exchange: (question) => {
    asked.push(question.name);
    return resolver.exchange(question);
  },
};

beforeAll(async () => {
  server = await startDnsServer({
    zones: [{ origin: 'example.test', records: [{ name: 's1._domainkey', type: 'TXT', data: 'v=DKIM1; k=rsa; p=MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQC' }] }],
  });
  resolver = createDnsResolver({ servers: [server.server], timeoutMs: 1_000 });
});

afterAll(async () => {
  resolver.close();
  await server.stop();
});

const dkim = (extra = '') => {
  const { template, errors } = parseTemplate(`id: dkim-detect
info:
  name: DKIM
  author: test
  severity: info
dns:
  - name: "{{selector}}._domainkey.{{FQDN}}"
    type: TXT
    payloads:
      selector: [default, google, s1, s2, k1]
${extra}    matchers:
      - type: word
        words: ["v=DKIM1"]
`);
  expect(errors).toEqual([]);
  return template!;
};

describe('dns payloads', () => {
  it('ask once per value and report the selector that has a record', async () => {
    asked.length = 0;
    const out = await runDnsTemplatesDetailed([dkim()], { host: 'example.test' }, { resolver: counting });
    expect(asked).toEqual(['default', 'google', 's1', 's2', 'k1'].map((s) => `${s}._domainkey.example.test`));
    expect(out.results.map((r) => r.matchedUrl)).toEqual(['s1._domainkey.example.test']);
  });

  it('stop at the first match, and at the request cap (with a warning, no finding it did not see)', async () => {
    asked.length = 0;
    const stopped = await runDnsTemplatesDetailed([dkim('    stop-at-first-match: true\n')], { host: 'example.test' }, { resolver: counting });
    expect(asked).toHaveLength(3);
    expect(stopped.results).toHaveLength(1);
    asked.length = 0;
    const capped = await runDnsTemplatesDetailed([dkim()], { host: 'example.test' }, { resolver: counting, maxRequestsPerTemplate: 2 });
    expect(asked).toHaveLength(2);
    expect(capped.results).toEqual([]);
    expect(capped.warnings.some((w) => w.message.startsWith(REQUEST_CAP_WARNING))).toBe(true);
  });
});
