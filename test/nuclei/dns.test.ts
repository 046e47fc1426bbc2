/** The dns protocol against a real DNS server on loopback (test/support/dns-server.ts), through the discovery DNS client. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDnsResolver } from '../../src/scanner/nuclei/dns-resolver.js';
import { type DnsResolver, type NucleiTemplate, parseTemplate, runDnsTemplatesDetailed } from '../../src/scanner/nuclei/index.js';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.js';

let server: TestDnsServer;
let resolver: DnsResolver & { close(): void };

beforeAll(async () => {
  server = await startDnsServer({
    zones: [
      {
        origin: 'example.test',
        records: [
          { name: '@', type: 'A', data: '192.0.2.1' },
          { name: '@', type: 'MX', data: { preference: 10, exchange: 'mail.example.test' } },
          { name: '@', type: 'TXT', data: 'v=spf1 include:_spf.example.net ~all' },
          { name: '@', type: 'TXT', data: 'google-site-verification=abc' },
          { name: '_dmarc', type: 'TXT', data: 'v=DMARC1; p=none' },
          { name: 'www', type: 'A', data: '192.0.2.1' },
          { name: 'www', type: 'A', data: '192.0.2.2' },
          { name: 'dangling', type: 'CNAME', data: 'gone.example.test' },
          { name: 'alias', type: 'CNAME', data: 'www.example.test' },
          { name: 'app', type: 'CNAME', data: 'myapp.azurewebsites.net' },
          { name: 'claimed', type: 'CNAME', data: 'taken.azurewebsites.net' },
          { name: 'nospf', type: 'TXT', data: 'hello' },
        ],
      },
      { origin: '2.0.192.in-addr.arpa', records: [{ name: '1', type: 'PTR', data: 'host.example.test' }] },
      { origin: 'azurewebsites.net', records: [{ name: 'taken', type: 'A', data: '192.0.2.50' }] },
    ],
    override: (q) => (q.name === 'broken.example.test' ? 'SERVFAIL' : undefined),
  });
  resolver = createDnsResolver({ servers: [server.server], timeoutMs: 1_000 });
});

afterAll(async () => {
  resolver.close();
  await server.stop();
});

function template(text: string): NucleiTemplate {
  const { template: t, errors } = parseTemplate(text);
  expect(errors).toEqual([]);
  return t!;
}

const header = (id: string) => `id: ${id}\ninfo:\n  name: ${id}\n  author: test\n  severity: info\n`;

// detect-dangling-cname.yaml from the public template library (trimmed)
const danglingCname = template(`${header('detect-dangling-cname')}
dns:
  - name: "{{FQDN}}"
    type: A
    matchers-condition: and
    matchers:
      - type: word
        words:
          - "NXDOMAIN"
      - type: regex
        part: answer
        regex:
          - "IN\\tCNAME\\t(.+)$"
    extractors:
      - type: dsl
        dsl:
          - cname
`);

// spf-record-detect.yaml
const spf = template(`${header('spf-record-detect')}
dns:
  - name: "{{FQDN}}"
    type: TXT
    matchers:
      - type: word
        words:
          - "v=spf1"
    extractors:
      - type: regex
        regex:
          - "v=spf1(.+)"
`);

// servfail-refused-hosts.yaml
const servfail = template(`${header('servfail-refused-hosts')}
dns:
  - name: "{{FQDN}}"
    type: A
    matchers:
      - type: word
        words:
          - "SERVFAIL"
          - "REFUSED"
`);

const run = (templates: NucleiTemplate[], host: string) => runDnsTemplatesDetailed(templates, { host }, { resolver, timeoutMs: 1_000 });

describe('dns protocol', () => {
  it('finds a dangling CNAME (NXDOMAIN with an alias) and extracts its target', async () => {
    const { results } = await run([danglingCname], 'dangling.example.test');
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ templateId: 'detect-dangling-cname', matchedUrl: 'dangling.example.test', extractedResults: ['gone.example.test'] });
    expect(results[0].response).toContain('status: NXDOMAIN');
    expect(results[0].request).toContain(';dangling.example.test.\tIN\t A');
  });

  it('does not report an alias that resolves', async () => {
    const { results } = await run([danglingCname], 'alias.example.test');
    expect(results).toEqual([]);
  });

  it('azure-takeover-detection: an alias to an unclaimed azurewebsites.net name, not a claimed one nor another dangling alias', async () => {
    // azure-takeover-detection.yaml (trimmed to the services used here)
    const azure = template(`${header('azure-takeover-detection')}
dns:
  - name: "{{FQDN}}"
    type: A
    matchers-condition: and
    matchers:
      - type: word
        words:
          - NXDOMAIN
      - type: dsl
        dsl:
          - 'contains(cname, "azure-api.net")'
          - 'contains(cname, "azurewebsites.net")'
    extractors:
      - type: dsl
        dsl:
          - cname
`);
    const hit = await run([azure], 'app.example.test');
    expect(hit.results.map((r) => r.extractedResults)).toEqual([['myapp.azurewebsites.net']]);
    expect((await run([azure], 'claimed.example.test')).results).toEqual([]);
    expect((await run([azure], 'dangling.example.test')).results).toEqual([]);
  });

  it('extracts an SPF record from TXT answers, and nothing where there is none', async () => {
    const hit = await run([spf], 'example.test');
    expect(hit.results).toHaveLength(1);
    expect(hit.results[0].extractedResults).toEqual(['v=spf1 include:_spf.example.net ~all"']);
    const miss = await run([spf], 'nospf.example.test');
    expect(miss.results).toEqual([]);
  });

  it('matches on the rcode of a failing server, not on a healthy one', async () => {
    expect((await run([servfail], 'broken.example.test')).results).toHaveLength(1);
    expect((await run([servfail], 'www.example.test')).results).toEqual([]);
  });

  it('builds nuclei DSL fields: rcode, answer, per-type keys, question', async () => {
    const t = template(`${header('dsl-fields')}
dns:
  - name: "{{FQDN}}"
    type: A
    matchers:
      - type: dsl
        dsl:
          - 'rcode == 0 && len(a) == 2 && contains(question, "www.example.test.")'
    extractors:
      - type: dsl
        dsl:
          - 'a'
`);
    const hit = await run([t], 'www.example.test');
    expect(hit.results).toHaveLength(1);
    expect(hit.results[0].extractedResults).toEqual(['[192.0.2.1 192.0.2.2]']);
    const miss = await run([t], 'example.test');
    expect(miss.results).toEqual([]);
  });

  it('renders MX answers as miekg does and extracts the exchange', async () => {
    const t = template(`${header('mx-fingerprint')}
dns:
  - name: "{{FQDN}}"
    type: MX
    matchers:
      - type: regex
        part: answer
        regex:
          - "IN\\tMX\\t(.+)$"
    extractors:
      - type: regex
        group: 1
        regex:
          - "IN\\tMX\\t(.+)"
`);
    const hit = await run([t], 'example.test');
    expect(hit.results.map((r) => r.extractedResults)).toEqual([['10 mail.example.test.']]);
    expect((await run([t], 'www.example.test')).results).toEqual([]);
  });

  it('asks sub-names built from {{FQDN}} (trailing dot handled)', async () => {
    const t = template(`${header('dmarc-detect')}
dns:
  - name: "_dmarc.{{FQDN}}"
    type: TXT
    matchers:
      - type: word
        words:
          - "v=DMARC1"
`);
    const hit = await run([t], 'example.test');
    expect(hit.results).toHaveLength(1);
    expect(hit.results[0].matchedUrl).toBe('_dmarc.example.test');
    expect((await run([t], 'www.example.test')).results).toEqual([]);
  });

  it('uses an IP input only for PTR questions', async () => {
    const t = template(`${header('ptr-fingerprint')}
dns:
  - name: "{{FQDN}}"
    type: PTR
    extractors:
      - type: regex
        group: 1
        regex:
          - "IN\\tPTR\\t(.+)"
`);
    const hit = await run([t], '192.0.2.1');
    expect(hit.results[0].extractedResults).toEqual(['host.example.test.']);
    const a = await run([danglingCname], '192.0.2.1');
    expect(a.results).toEqual([]);
    expect(a.warnings.map((w) => w.message)).toContain('cannot use an IP address as DNS input (only PTR questions take one)');
  });

  it('feeds an internal extractor of one block into the next block, and exposes <id>_<field>', async () => {
    const t = template(`${header('follow-alias')}
dns:
  - id: first
    name: "{{FQDN}}"
    type: CNAME
    extractors:
      - type: regex
        name: target
        internal: true
        group: 1
        regex:
          - 'IN\\tCNAME\\t(.+)\\.'
  - name: "{{target}}"
    type: A
    matchers:
      - type: dsl
        dsl:
          - 'contains(first_answer, "CNAME") && len(a) == 2'
    extractors:
      - type: dsl
        dsl:
          - 'target'
`);
    const hit = await run([t], 'alias.example.test');
    expect(hit.results.map((r) => [r.matchedUrl, r.extractedResults])).toEqual([['www.example.test', ['www.example.test']]]);
    // no alias: nothing extracted, so the second question cannot be asked
    const miss = await run([t], 'www.example.test');
    expect(miss.results).toEqual([]);
    expect(miss.warnings.map((w) => w.message)).toContain('request not sent: unresolved {{target}}');
  });

  it('stops after the first matching block with stop-at-first-match', async () => {
    const t = template(`${header('stop')}
stop-at-first-match: true
dns:
  - name: "{{FQDN}}"
    type: A
    matchers: [{ type: word, part: answer, words: ["IN\tA\t"] }]
  - name: "{{FQDN}}"
    type: MX
    matchers: [{ type: word, part: answer, words: ["IN\tMX\t"] }]
`);
    const stopped = await run([t], 'example.test');
    expect(stopped.results).toHaveLength(1);
    expect(stopped.stats.requestsSent).toBe(1);
    const noA = await run([t], 'nospf.example.test');
    expect(noA.stats.requestsSent).toBe(2);
  });

  it('reports a resolver failure as a warning, never as a match', async () => {
    const dead: DnsResolver = {
      exchange: async () => {
        throw new Error('no answer');
      },
    };
    const negative = template(`${header('negative')}
dns:
  - name: "{{FQDN}}"
    type: A
    matchers:
      - type: word
        negative: true
        words:
          - "NOERROR"
`);
    const out = await runDnsTemplatesDetailed([negative], { host: 'example.test' }, { resolver: dead });
    expect(out.results).toEqual([]);
    expect(out.stats.requestsFailed).toBe(1);
    expect(out.warnings[0].message).toContain('no answer');
  });

  it('passes class, recursion and the AD bit for TXT to the resolver', async () => {
    const seen: unknown[] = [];
    const spy: DnsResolver = {
      exchange: async (q) => {
        seen.push({ name: q.name, type: q.type, class: q.class, rd: q.recursionDesired, ad: q.authenticatedData, retries: q.retries });
        return resolver.exchange(q);
      },
    };
    const t = template(`${header('flags')}
dns:
  - name: "{{FQDN}}"
    type: TXT
    class: inet
    recursion: false
    retries: 2
    matchers:
      - type: word
        words:
          - "v=spf1"
`);
    const out = await runDnsTemplatesDetailed([t], { host: 'example.test' }, { resolver: spy });
    expect(seen).toEqual([{ name: 'example.test', type: 'TXT', class: 'IN', rd: false, ad: true, retries: 2 }]);
    expect(out.results).toHaveLength(1);
    expect(out.results[0].request).toMatch(/;; flags: ad; QUERY: 1, ANSWER: 0, AUTHORITY: 0, ADDITIONAL: 1/);
  });
});
