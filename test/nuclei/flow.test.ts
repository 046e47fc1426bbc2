/** Templates with `flow:` (engine/flow.ts) against loopback HTTP and DNS servers. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDnsResolver } from '../../src/scanner/nuclei/dns-resolver.js';
import { runFlowTemplatesDetailed } from '../../src/scanner/nuclei/engine/flow.js';
import {
  createNodeHttpSender,
  type DnsResolver,
  type NucleiTemplate,
  parseTemplate,
  runDnsTemplatesDetailed,
  runTemplatesDetailed,
  runTemplateTask,
} from '../../src/scanner/nuclei/index.js';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.js';
import { startServer, type TestServer } from './server.js';

let web: TestServer;
let dns: TestDnsServer;
let resolver: DnsResolver & { close(): void };
const send = createNodeHttpSender();

beforeAll(async () => {
  web = await startServer({
    '/wp-login.php': (_req, res) => res.end('<html>WordPress <a href="/wp-content/x">login</a></html>'),
    '/users': (_req, res) => res.end('user:alice\nuser:bob\nuser:carol\n'),
    '/profile': (req, res) => {
      const name = new URL(req.url ?? '/', 'http://x').searchParams.get('name') ?? '';
      res.end(name === 'bob' ? 'profile of bob: ADMIN' : `profile of ${name}`);
    },
    '/vhost': (req, res) => res.end(`vhost=${req.headers.host}`),
    '/big': (_req, res) => res.end('b'.repeat(900 * 1024)),
  });
  dns = await startDnsServer({
    zones: [{ origin: 'flow.test', records: [{ name: '@', type: 'CNAME', data: 'app.flow-cdn.test' }] }],
  });
  resolver = createDnsResolver({ servers: [dns.server], timeoutMs: 1_000 });
});

afterAll(async () => {
  resolver.close();
  await dns.stop();
  await web.close();
});

function template(text: string): NucleiTemplate {
  const { template: t, errors, warnings } = parseTemplate(text);
  expect(errors).toEqual([]);
  expect(warnings.filter((w) => w.path === 'flow')).toEqual([]);
  expect(t!.skip).toBeUndefined();
  return t!;
}

const header = (id: string, flow: string) => `id: ${id}\ninfo:\n  name: ${id}\n  author: test\n  severity: high\nflow: ${flow}\n`;

const wordpressCheck = (path: string, word: string) => `
  - method: GET
    path:
      - "{{BaseURL}}${path}"
    matchers:
      - type: word
        internal: true
        words:
          - "${word}"
`;

const secondRequest = `
  - method: GET
    path:
      - "{{BaseURL}}/profile?name=bob"
    matchers:
      - type: word
        words:
          - "ADMIN"
`;

describe('flow: http(1) && http(2)', () => {
  it('sends the second request when the first matched, and reports only the second (internal matchers gate)', async () => {
    const tpl = template(`${header('flow-and', 'http(1) && http(2)')}http:${wordpressCheck('/wp-login.php', 'WordPress')}${secondRequest}`);
    const before = web.hits('/profile');
    const out = await runTemplatesDetailed([tpl], { baseUrl: web.baseUrl }, { send });
    expect(web.hits('/profile')).toBe(before + 1);
    expect(out.warnings).toEqual([]);
    expect(out.results).toHaveLength(1);
    expect(out.results[0].matchedUrl).toBe(`${web.baseUrl}/profile?name=bob`);
  });

  it('runs in the template worker threads of a scan (the sandbox loads there)', async () => {
    const tpl = template(`${header('flow-worker', 'http(1) && http(2)')}http:${wordpressCheck('/wp-login.php', 'WordPress')}${secondRequest}`);
    const outcome = await runTemplateTask({ template: tpl, baseUrl: web.baseUrl, send, budgetMs: 20_000 });
    expect(outcome).toMatchObject({ status: 'done', results: [{ templateId: 'flow-worker', matchedUrl: `${web.baseUrl}/profile?name=bob` }] });
  });

  it('does not send the second request when the first did not match', async () => {
    const tpl = template(`${header('flow-and-miss', 'http(1) && http(2)')}http:${wordpressCheck('/wp-login.php', 'Joomla')}${secondRequest}`);
    const before = web.hits('/profile');
    const out = await runTemplatesDetailed([tpl], { baseUrl: web.baseUrl }, { send });
    expect(web.hits('/profile')).toBe(before);
    expect(out.results).toEqual([]);
  });

  it('calls blocks by id, and || runs the second block only when the first failed', async () => {
    const flow = `|\n  if (!http("probe")) { set("who", "nobody") } else { http("admin") }\n  http("missing") || log("fallback")`;
    const tpl = template(`${header('flow-ids', flow)}http:
  - id: probe
${wordpressCheck('/wp-login.php', 'WordPress').replace(/^\n {2}- /, '    ')}
  - id: admin
${secondRequest.replace(/^\n {2}- /, '    ')}
  - id: missing
    method: GET
    path:
      - "{{BaseURL}}/nothing-here"
    matchers:
      - type: status
        status: [200]
`);
    const logs: string[] = [];
    const out = await runFlowTemplatesDetailed([tpl], { baseUrl: web.baseUrl }, { send, onLog: (_id, text) => logs.push(text) });
    expect(out.results.map((r) => r.matchedUrl)).toEqual([`${web.baseUrl}/profile?name=bob`]);
    expect(logs).toEqual(['fallback']);
  });
});

describe('flow: loops over extracted values', () => {
  it('runs a block once per value of an internal extractor, with set() feeding the request', async () => {
    const flow = `|\n  http(1)\n  for (let name of iterate(template["user"])) {\n    set("name", name)\n    http(2)\n  }`;
    const tpl = template(`${header('flow-loop', flow)}http:
  - method: GET
    path:
      - "{{BaseURL}}/users"
    extractors:
      - type: regex
        name: user
        internal: true
        group: 1
        regex:
          - "user:([a-z]+)"
  - method: GET
    path:
      - "{{BaseURL}}/profile?name={{name}}"
    matchers:
      - type: word
        words:
          - "ADMIN"
`);
    const before = web.log.length;
    const out = await runFlowTemplatesDetailed([tpl], { baseUrl: web.baseUrl }, { send });
    const profiles = web.log.slice(before).filter((r) => r.url.startsWith('/profile'));
    expect(profiles.map((r) => r.url)).toEqual(['/profile?name=alice', '/profile?name=bob', '/profile?name=carol']);
    expect(out.results.map((r) => r.matchedUrl)).toEqual([`${web.baseUrl}/profile?name=bob`]);
  });
});

describe('flow: dns() then http() with values from the template context', () => {
  it('passes the dns answer to the http request through template["dns_cname"] and Dedupe', async () => {
    const flow = `|\n  dns()\n  let d = new Dedupe(); d.Add(template["cname"], template["cname"])\n  for (let v of d.Values()) { set("vhost", v); http() }`;
    const tpl = template(`${header('flow-dns', flow)}dns:
  - name: "{{FQDN}}"
    type: CNAME
    extractors:
      - type: regex
        name: cname
        internal: true
        group: 1
        regex:
          - "IN\\tCNAME\\t(.+)\\\\."
http:
  - raw:
      - |
        GET /vhost HTTP/1.1
        Host: {{vhost}}

    matchers:
      - type: word
        words:
          - "vhost=app.flow-cdn.test"
`);
    const out = await runFlowTemplatesDetailed([tpl], { baseUrl: web.baseUrl, host: 'flow.test' }, { send, resolver, allowOffTargetRequests: true });
    expect(out.warnings).toEqual([]);
    expect(out.results).toHaveLength(1);
    expect(out.results[0].response).toContain('vhost=app.flow-cdn.test');
  });

  it('runs a dns-only flow through the dns runner of a scan: the second question only after the first matched', async () => {
    const question = (name: string, type: string, word: string) => `
  - name: "${name}"
    type: ${type}
    matchers:
      - type: word
        words:
          - "${word}"
`;
    const hit = template(
      `${header('flow-dns-chain', 'dns(1) && dns(2)')}dns:${question('{{FQDN}}', 'CNAME', 'flow-cdn.test')}${question('second.{{FQDN}}', 'A', 'never')}`,
    );
    const miss = template(
      `${header('flow-dns-gate', 'dns(1) && dns(2)')}dns:${question('{{FQDN}}', 'CNAME', 'elsewhere.test')}${question('gated.{{FQDN}}', 'A', 'never')}`,
    );
    const before = dns.queryLog().length;
    const out = await runDnsTemplatesDetailed([hit, miss], { host: 'flow.test' }, { resolver });
    const asked = dns
      .queryLog()
      .slice(before)
      .map((q) => q.name);
    expect(asked).toContain('second.flow.test');
    expect(asked).not.toContain('gated.flow.test');
    expect(out.results.map((r) => r.templateId)).toEqual(['flow-dns-chain']);
  });

  it('dns() without a resolver returns false with a warning, and the http block is not reached', async () => {
    const tpl = template(`${header('flow-dns-missing', 'dns() && http()')}dns:
  - name: "{{FQDN}}"
    type: A
http:${secondRequest}`);
    const before = web.hits('/profile');
    const out = await runFlowTemplatesDetailed([tpl], { baseUrl: web.baseUrl, host: 'flow.test' }, { send });
    expect(web.hits('/profile')).toBe(before);
    expect(out.results).toEqual([]);
    expect(out.warnings.map((w) => w.message)).toEqual([expect.stringContaining('flow called dns()')]);
  });
});

describe('flow: sandbox bounds', () => {
  it('ends an endless loop at the CPU budget with a clear error instead of hanging', async () => {
    const tpl = template(`${header('flow-forever', 'while(true){}')}http:${secondRequest}`);
    const out = await runFlowTemplatesDetailed([tpl], { baseUrl: web.baseUrl }, { send, limits: { cpuMs: 200 } });
    expect(out.results).toEqual([]);
    expect(out.warnings.map((w) => w.message)).toEqual(['template failed: flow script stopped: it ran past its CPU budget of 200 ms (an endless loop?)']);
  });

  it('stops a script that allocates past its memory limit', async () => {
    const flow = `|\n  var a = []; while (true) { a.push("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" + a.length) }`;
    const tpl = template(`${header('flow-memory', flow)}http:${secondRequest}`);
    const out = await runFlowTemplatesDetailed([tpl], { baseUrl: web.baseUrl }, { send, limits: { cpuMs: 60_000, memoryBytes: 4 * 1024 * 1024 } });
    expect(out.warnings.map((w) => w.message)).toEqual(['template failed: flow script stopped: it used more than its memory limit of 4 MiB']);
  });

  it('copes with large responses in the template context (the script sees long strings cut)', async () => {
    const big = (id: string) => `
  - id: ${id}
    method: GET
    path:
      - "{{BaseURL}}/big"
    matchers:
      - type: status
        internal: true
        status: [200]
`;
    const flow = `|
  http(1) && http(2) && http(3) && http(4)
  set("name", "len" + template["b4_body"].length)
  http(5)`;
    const tpl = template(`${header('flow-big', flow)}http:${big('b1')}${big('b2')}${big('b3')}${big('b4')}
  - method: GET
    path:
      - "{{BaseURL}}/profile?name={{name}}"
    matchers:
      - type: word
        words:
          - "profile of len65536"
`);
    const out = await runFlowTemplatesDetailed([tpl], { baseUrl: web.baseUrl }, { send });
    expect(out.warnings).toEqual([]);
    expect(out.results.map((r) => r.matchedUrl)).toEqual([`${web.baseUrl}/profile?name=len65536`]);
  });

  it('reports a syntax error and keeps results reported before a runtime error', async () => {
    const broken = template(`${header('flow-syntax', '"http(1) &&"')}http:${secondRequest}`);
    const throwing = template(`${header('flow-throw', '|\n  http(1)\n  undefinedFunction()')}http:${secondRequest}`);
    const out = await runFlowTemplatesDetailed([broken, throwing], { baseUrl: web.baseUrl }, { send });
    expect(out.warnings.map((w) => `${w.templateId}: ${w.message}`)).toEqual([
      expect.stringMatching(/^flow-syntax: template failed: flow script error: SyntaxError/),
      expect.stringMatching(/^flow-throw: template failed: flow script error: ReferenceError: .*undefinedFunction/),
    ]);
    expect(out.results.map((r) => r.templateId)).toEqual(['flow-throw']);
  });

  it('has no host objects: require, process and fetch are not defined', async () => {
    const flow = `|\n  set("kinds", [typeof require, typeof process, typeof fetch, typeof setTimeout].join(","))\n  http(1)`;
    const tpl = template(`${header('flow-globals', flow)}http:
  - method: GET
    path:
      - "{{BaseURL}}/profile?name={{kinds}}"
    matchers:
      - type: word
        words:
          - "profile of undefined,undefined,undefined,undefined"
`);
    const out = await runFlowTemplatesDetailed([tpl], { baseUrl: web.baseUrl }, { send });
    expect(out.results).toHaveLength(1);
  });
});

describe('flow: parse', () => {
  it('skips a template whose flow calls a protocol the engine cannot run, with a warning', () => {
    const { template: t, warnings } = parseTemplate(`${header('flow-js', 'javascript() && http(1)')}http:${secondRequest}`);
    expect(t!.skip).toMatch(/flow calls javascript\(\)/);
    expect(warnings.map((w) => [w.path, w.message])).toContainEqual(['flow', expect.stringMatching(/javascript\(\).*will not run/)]);
  });

  it('warns about calls to blocks that do not exist', () => {
    const { template: t, warnings } = parseTemplate(`${header('flow-index', 'http(1) && http(3) && http("nope")')}http:${secondRequest}`);
    expect(t!.skip).toBeUndefined();
    expect(warnings.filter((w) => w.path === 'flow').map((w) => w.message)).toEqual([
      expect.stringContaining('http(3)'),
      expect.stringContaining('http("nope")'),
    ]);
  });
});
