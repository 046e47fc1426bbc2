import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScopeGuard, LOOPBACK_NETWORKS, type HostObservation, type WebObservation } from '../../src/scanner/index.js';
import { createNodeHttpSender, parseTemplate, runTemplatesDetailed, type NucleiTemplate } from '../../src/scanner/nuclei/index.js';
import { runSelfContainedTemplates, selfContainedAsset, type ScanReach } from '../../src/scanner/nuclei/run-self-contained.js';
import { withUserVariables } from '../../src/scanner/nuclei/user-variables.js';
import { listen, type Started } from '../scanner/helpers.js';

/**
 * Self-contained templates (nuclei `self-contained: true`): they load without warnings, carry their own URLs, run
 * once with no target, and reach only the scan's hosts, through the scope guard. Two loopback servers: the scan's
 * host on 127.0.0.1 and one on 127.0.0.2 that is no host of the scan (it counts what reaches it).
 */

const TOKEN = 'sc-token-5d21';
let inScan: Started;
let outside: Started;
const hits: string[] = [];
const outsideHits: string[] = [];

beforeAll(async () => {
  inScan = await listen(
    http.createServer((req, res) => {
      hits.push(req.url ?? '');
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/api/user' && url.searchParams.get('access_token') === TOKEN) return res.writeHead(200).end('{"login":"alice"}');
      if (url.pathname === '/raw-login' && req.headers.host === `127.0.0.1:${inScan.port}`) return res.writeHead(200).end('raw ok');
      if (url.pathname === '/hop') return res.writeHead(302, { location: `http://127.0.0.2:${outside.port}/stolen` }).end();
      res.writeHead(401).end('{"error":"bad token"}');
    }),
  );
  outside = await listen(
    http.createServer((req, res) => {
      outsideHits.push(req.url ?? '');
      res.writeHead(200).end('{"login":"alice"} raw ok');
    }),
    '127.0.0.2',
  );
});

afterAll(async () => {
  await inScan?.close();
  await outside?.close();
});

function parsed(text: string) {
  const result = parseTemplate(text);
  expect(result.errors).toEqual([]);
  return result;
}

const apiTemplate = (id: string, url: string, extra = '') => `id: ${id}
info:
  name: ${id}
  author: tests
  severity: info
self-contained: true
${extra}http:
  - method: GET
    path:
      - "${url}"
    matchers:
      - type: word
        words: ['"login"']
`;

const guard = createScopeGuard({ allowedNetworks: LOOPBACK_NETWORKS });
const literal = (address: string): HostObservation => ({
  kind: 'host',
  host: address,
  addresses: [address],
  a: [address],
  aaaa: [],
  cname: [],
  resolvedVia: 'literal',
  outOfScope: [],
});
const reach = (): ScanReach => ({ web: [], hosts: [literal('127.0.0.1')], services: [], targetHost: '127.0.0.1' });
const withToken = (template: NucleiTemplate) => ({ template: withUserVariables(template, { token: TOKEN }) });

describe('self-contained templates', { timeout: 60_000 }, () => {
  it('load without warnings; their blocks are self-contained', () => {
    const { template, warnings } = parsed(apiTemplate('sc-api', 'http://127.0.0.1:1/api/user?v={{randstr}}'));
    expect(warnings).toEqual([]);
    expect(template).toMatchObject({ selfContained: true, requests: [{ selfContained: true }] });
    expect(template!.requests[0].skip).toBeUndefined();
  });

  it('warn when a self-contained request uses target variables (nuclei leaves them unresolved)', () => {
    const { warnings } = parsed(apiTemplate('sc-base', '{{BaseURL}}/api/user'));
    expect(warnings.map((w) => w.message)).toEqual([
      'a self-contained request has no target: {{BaseURL}} stays unresolved and the request is not sent (give it a full URL)',
    ]);
  });

  it('run with no target: a {{BaseURL}} request is not sent and says why', async () => {
    const { template } = parsed(apiTemplate('sc-base', '{{BaseURL}}/api/user'));
    const sent: string[] = [];
    const send = async (request: { url: string }) => {
      sent.push(request.url);
      throw new Error('unexpected');
    };
    const out = await runTemplatesDetailed([template!], {}, { send });
    expect(sent).toEqual([]);
    expect(out.warnings.map((w) => w.message)).toEqual([
      'request not sent: unresolved variable {{BaseURL}} in path (a self-contained request has no target); skipping the rest of this block',
    ]);
  });

  it('runs once with its own URL and the user token, and matches once', async () => {
    hits.length = 0;
    const url = `http://127.0.0.1:${inScan.port}/api/user?access_token={{token}}`;
    const { template } = parsed(apiTemplate('sc-match', url));
    const out = await runSelfContainedTemplates([withToken(template!)], reach(), { guard });
    expect(hits).toEqual([`/api/user?access_token=${TOKEN}`]);
    expect(out.errors).toEqual([]);
    expect(out.checkIds).toEqual(['sc-match']);
    expect(out.findings).toHaveLength(1);
    expect(out.findings[0]).toMatchObject({ checkId: 'sc-match', asset: { type: 'host', key: 'host:127.0.0.1' } });
    expect(out.summary).toMatchObject({ templates: 1, requestsSent: 1 });
  });

  it('attaches the finding to the web endpoint the scan probed at that origin', async () => {
    const web = { kind: 'web', host: '127.0.0.1', address: '127.0.0.1', port: inScan.port, scheme: 'http' } as WebObservation;
    const { template } = parsed(apiTemplate('sc-web', `http://127.0.0.1:${inScan.port}/api/user?access_token={{token}}`));
    const out = await runSelfContainedTemplates([withToken(template!)], { ...reach(), web: [web] }, { guard });
    expect(out.findings.map((f) => f.asset.key)).toEqual([`web:http://127.0.0.1:${inScan.port}`]);
  });

  it('a finding sits on the endpoint, else the host (by name or by the address it resolved to), else the target host', () => {
    const named: HostObservation = { ...literal('127.0.0.9'), host: 'app.test', resolvedVia: 'dns' };
    const web = { kind: 'web', host: 'app.test', address: '127.0.0.9', port: 8443, scheme: 'https' } as WebObservation;
    const scan: ScanReach = { web: [web], hosts: [named], services: [], targetHost: 'app.test' };
    expect(selfContainedAsset('https://app.test:8443/x', scan).key).toBe('web:https://app.test:8443');
    expect(selfContainedAsset('https://127.0.0.9:8443/x', scan).key).toBe('web:https://app.test:8443');
    expect(selfContainedAsset('http://app.test:81/x', scan).key).toBe('host:app.test');
    expect(selfContainedAsset('http://127.0.0.9:81/x', scan).key).toBe('host:app.test');
    expect(selfContainedAsset('http://other.test/x', scan).key).toBe('host:app.test');
    expect(selfContainedAsset('http://127.0.0.7/x', { ...scan, targetHost: undefined }).key).toBe('host:127.0.0.7');
  });

  it('finds nothing when the server answers otherwise (and ran clean)', async () => {
    hits.length = 0;
    const { template } = parsed(apiTemplate('sc-miss', `http://127.0.0.1:${inScan.port}/api/user?access_token={{token}}`));
    const out = await runSelfContainedTemplates([{ template: withUserVariables(template!, { token: 'wrong' }) }], reach(), { guard });
    expect(hits).toEqual(['/api/user?access_token=wrong']);
    expect(out.findings).toEqual([]);
    expect(out.errors).toEqual([]);
    expect(out.checkIds).toEqual(['sc-miss']);
  });

  it('a raw request names its host in the Host header (http, as nuclei)', async () => {
    hits.length = 0;
    const { template, warnings } = parsed(`id: sc-raw
info: { name: sc-raw, author: tests, severity: low }
self-contained: true
http:
  - raw:
      - |
        GET /raw-login HTTP/1.1
        Host: 127.0.0.1:${inScan.port}
    matchers:
      - type: word
        words: ["raw ok"]
`);
    expect(warnings).toEqual([]);
    const out = await runSelfContainedTemplates([{ template: template! }], reach(), { guard });
    expect(hits).toEqual(['/raw-login']);
    expect(out.findings.map((f) => f.evidence.url)).toEqual([`http://127.0.0.1:${inScan.port}/raw-login`]);
  });

  it("a raw request with a full URL in its request line: its headers see that URL's target variables", async () => {
    hits.length = 0;
    const { template, warnings } = parsed(`id: sc-raw-url
info: { name: sc-raw-url, author: tests, severity: low }
self-contained: true
http:
  - raw:
      - |
        GET http://127.0.0.1:${inScan.port}/raw-login HTTP/1.1
        Host: {{Hostname}}
    matchers:
      - type: word
        words: ["raw ok"]
`);
    expect(warnings).toEqual([]);
    const out = await runSelfContainedTemplates([{ template: template! }], reach(), { guard });
    expect(hits).toEqual(['/raw-login']);
    expect(out.findings).toHaveLength(1);
  });

  it('never sends to a host outside the scan: refused before connecting, with the host named', async () => {
    outsideHits.length = 0;
    const { template } = parsed(apiTemplate('sc-out', `http://127.0.0.2:${outside.port}/api/user?access_token={{token}}`));
    const out = await runSelfContainedTemplates([withToken(template!)], reach(), { guard });
    expect(outsideHits).toEqual([]);
    expect(out.findings).toEqual([]);
    expect(out.checkIds).toEqual([]);
    expect(out.errors).toEqual([
      {
        code: 'TEMPLATE_OUT_OF_SCOPE',
        message: expect.stringContaining('request not sent: 127.0.0.2 is not a host of this scan'),
        target: 'sc-out host:127.0.0.1',
      },
    ]);
    expect(out.summary.requestsSent).toBe(0);
  });

  it('a redirect from a scan host to another host is refused too', async () => {
    outsideHits.length = 0;
    const { template } = parsed(`id: sc-hop
info: { name: sc-hop, author: tests, severity: info }
self-contained: true
http:
  - method: GET
    path: ["http://127.0.0.1:${inScan.port}/hop"]
    redirects: true
    matchers:
      - type: word
        words: ['"login"']
`);
    const out = await runSelfContainedTemplates([{ template: template! }], reach(), { guard });
    expect(outsideHits).toEqual([]);
    expect(out.findings).toEqual([]);
    expect(out.errors.map((e) => [e.code, e.message.includes('127.0.0.2 is not a host of this scan')])).toEqual([['TEMPLATE_OUT_OF_SCOPE', true]]);
  });

  it('a scan host whose address the scope guard refuses is not reached either', async () => {
    outsideHits.length = 0;
    const narrow = createScopeGuard({ allowedNetworks: ['127.0.0.1/32'] });
    const { template } = parsed(apiTemplate('sc-guard', `http://127.0.0.2:${outside.port}/api/user?access_token={{token}}`));
    const out = await runSelfContainedTemplates([withToken(template!)], { ...reach(), hosts: [literal('127.0.0.1'), literal('127.0.0.2')] }, { guard: narrow });
    expect(outsideHits).toEqual([]);
    expect(out.errors).toEqual([
      { code: 'TEMPLATE_OUT_OF_SCOPE', message: expect.stringMatching(/127\.0\.0\.2 is out of scan scope/), target: 'sc-guard host:127.0.0.1' },
    ]);
  });

  it('the ordinary per-target runner leaves self-contained requests to the target host rule', async () => {
    const sender = createNodeHttpSender();
    outsideHits.length = 0;
    const { template } = parsed(apiTemplate('sc-targeted', `http://127.0.0.2:${outside.port}/api/user`));
    const out = await runTemplatesDetailed([template!], { baseUrl: `http://127.0.0.1:${inScan.port}` }, { send: sender });
    sender.destroy();
    expect(outsideHits).toEqual([]);
    expect(out.warnings.map((w) => w.message)).toEqual([
      `request to http://127.0.0.2:${outside.port}/api/user skipped: it does not go to the target http://127.0.0.1:${inScan.port}`,
    ]);
  });
});
