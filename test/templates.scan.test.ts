import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { addTarget, startScan, stepOf, waitForScan, type Client, uploadTemplate } from './support/scans.js';
import { listen, SECURITY_HEADERS } from './scanner/helpers.js';
import { loadPack } from '../src/modules/templates/pack.js';
import { BUILTIN_CHECKS } from '../src/scanner/index.js';

/**
 * Templates in real scans: templates written here in nuclei's syntax go through the registry (REST), a scan of
 * loopback servers runs them next to the default pack and the built-in checks, and the findings are exactly
 * what the servers expose. A second scan fixes what is no longer seen; a switched-off template is not run.
 */

const LOOPBACK_ONLY = { SCAN_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128', QUEUE_SUPERVISE_SECONDS: '1' };
const SCAN_TEST_TIMEOUT = 120_000;

/** A template of the workspace: an admin console at /acme-admin, with its version extracted. */
const ACME_ADMIN = `id: acme-admin-console
info:
  name: Acme admin console exposed
  author: tests
  severity: medium
  description: The Acme admin console answers without authentication.
  remediation: Put the console behind the VPN.
  reference: https://acme.example/advisories/1
  classification:
    cve-id: CVE-2024-12345
    cwe-id: CWE-306
    cvss-metrics: CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:L/I:L/A:N
    cvss-score: 6.5
  tags: acme,panel

http:
  - method: GET
    path:
      - "{{BaseURL}}/acme-admin"
    matchers-condition: and
    matchers:
      - type: status
        status: [200]
      - type: word
        words: ["Acme Admin Console"]
      - type: word
        negative: true
        words: ["Sign in"]
    extractors:
      - type: regex
        name: version
        group: 1
        regex: ['Console v([0-9.]+)']
`;

/** A second template with named matchers: each one that matches is a finding of its own. */
const ACME_DEBUG = `id: acme-debug-headers
info:
  name: Acme debug headers
  author: tests
  severity: low
http:
  - method: GET
    path: ["{{BaseURL}}/"]
    matchers:
      - type: word
        name: debug-token
        part: header
        words: ["X-Acme-Debug-Token"]
      - type: regex
        name: trace-id
        part: header
        regex: ['(?i)x-acme-trace:\\s*[0-9a-f]{8}']
`;

/** An outsider's template: it must never run in our workspace's scans. */
const OUTSIDER = `id: outsider-probe
info:
  name: Outsider probe
  author: tests
  severity: critical
http:
  - method: GET
    path: ["{{BaseURL}}/outsider-only"]
    matchers:
      - type: status
        status: [200, 404]
`;

const HOME = '<!doctype html><html><head><title>Acme</title></head><body>Acme</body></html>';

/** Site A: hardened headers, a security.txt, the admin console, an .env (while `envExposed`), debug headers on /. */
function siteA(state: { envExposed: boolean; consoleOpen: boolean }, hits: string[]) {
  return (req: http.IncomingMessage, res: http.ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    hits.push(path);
    const ok = (body: string, headers: Record<string, string> = {}) =>
      res.writeHead(200, { 'content-type': 'text/html', ...SECURITY_HEADERS, ...headers }).end(body);
    if (path === '/') return ok(HOME, { 'x-acme-debug-token': 'on', 'x-acme-trace': 'deadbeefcafe' });
    if (path === '/.well-known/security.txt') return ok('Contact: mailto:security@acme.example\n', { 'content-type': 'text/plain' });
    if (path === '/acme-admin') return ok(state.consoleOpen ? '<h1>Acme Admin Console v3.2.1</h1>' : '<h1>Acme Admin Console</h1><form>Sign in</form>');
    if (path === '/.env' && state.envExposed) return ok('APP_KEY=base64:abc\nDB_PASSWORD=s3cret\n', { 'content-type': 'text/plain' });
    res.writeHead(404, { 'content-type': 'text/plain', ...SECURITY_HEADERS }).end('not found');
  };
}

/** Site B: a catch-all single-page app: 200 and the same page for every path, hardened headers. */
function siteB(hits: string[]) {
  return (req: http.IncomingMessage, res: http.ServerResponse) => {
    hits.push(new URL(req.url ?? '/', 'http://x').pathname);
    res
      .writeHead(200, { 'content-type': 'text/html', ...SECURITY_HEADERS })
      .end('<!doctype html><html><head><title>App</title></head><body><div id="root"></div></body></html>');
  };
}

let server: TestApp;
let client: Client;
const state = { envExposed: true, consoleOpen: true };
const hitsA: string[] = [];
const hitsB: string[] = [];
let a: { port: number; close(): Promise<void> };
let b: { port: number; close(): Promise<void> };

beforeAll(async () => {
  a = await listen(http.createServer(siteA(state, hitsA)));
  b = await listen(http.createServer(siteB(hitsB)));
  server = await startTestApp(LOOPBACK_ONLY);
  client = clientFor(server);
});

afterAll(async () => {
  await server?.stop();
  await a?.close();
  await b?.close();
});

async function findingsOf(workspaceId: string) {
  return server.db.prisma.finding.findMany({
    where: { workspaceId },
    include: { asset: { select: { key: true } }, events: { orderBy: { createdAt: 'asc' } } },
    orderBy: [{ checkId: 'asc' }, { matcher: 'asc' }],
  });
}

describe('templates in a scan', { timeout: SCAN_TEST_TIMEOUT }, () => {
  let owner: TestUser;
  let workspaceId: string;
  let targetId: string;
  let firstScanId: string;
  const webA = () => `web:http://127.0.0.1:${a.port}`;
  const webB = () => `web:http://127.0.0.1:${b.port}`;
  const ports = () => `${a.port},${b.port}`;

  beforeAll(async () => {
    owner = await client.signUp('Templater');
    workspaceId = (await client.createWorkspace(owner)).id;
    targetId = (await addTarget(client, owner, workspaceId, '127.0.0.1')).id;
    await uploadTemplate(client, owner, workspaceId, 'acme-admin.yaml', ACME_ADMIN);
    await uploadTemplate(client, owner, workspaceId, 'acme-debug.yaml', ACME_DEBUG);
    const outsider = await client.signUp('Outsider');
    const theirs = (await client.createWorkspace(outsider)).id;
    await uploadTemplate(client, outsider, theirs, 'outsider.yaml', OUTSIDER);
  });

  it('runs the workspace’s templates and the default pack on every web endpoint: exactly what is exposed', async () => {
    const started = await startScan(client, owner, workspaceId, targetId, { ports: ports(), timeoutMs: 10_000 });
    firstScanId = started.id;
    const done = await waitForScan(client, owner, workspaceId, started.id);
    expect(done).toMatchObject({ status: 'COMPLETED', error: null, findings: { info: 1, low: 2, medium: 1, high: 1, critical: 0 } });

    const findings = await findingsOf(workspaceId);
    expect(findings.map((f) => [f.checkId, f.asset?.key, f.matcher, f.severity, f.source])).toEqual([
      ['acme-admin-console', webA(), 'version', 'medium', 'nuclei'],
      ['acme-debug-headers', webA(), 'debug-token', 'low', 'nuclei'],
      ['acme-debug-headers', webA(), 'trace-id', 'low', 'nuclei'],
      ['exposed-env-file', webA(), '/.env', 'high', 'nuclei'],
      ['security-txt-missing', webB(), 'missing', 'info', 'nuclei'],
    ]);
    for (const finding of findings) {
      expect(finding).toMatchObject({ status: 'open', occurrences: 1, targetId, lastScanId: firstScanId });
      expect(finding.events.map((e) => [e.type, e.scanId])).toEqual([['opened', firstScanId]]);
    }

    // Everything the issue asks a template finding to carry.
    const console = findings[0]!;
    expect(console).toMatchObject({
      name: 'Acme admin console exposed',
      description: 'The Acme admin console answers without authentication.',
      remediation: 'Put the console behind the VPN.',
      classification: { cveId: ['CVE-2024-12345'], cweId: ['CWE-306'], cvssScore: 6.5, cvssMetrics: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:L/I:L/A:N' },
    });
    expect(console.evidence).toMatchObject({
      url: `http://127.0.0.1:${a.port}/acme-admin`,
      request: expect.stringMatching(/^GET \/acme-admin HTTP\/1\.1/),
      response: expect.stringContaining('Acme Admin Console v3.2.1'),
      extracted: {
        type: 'http',
        'extractor-name': 'version',
        'extracted-results': ['3.2.1'],
        tags: ['acme', 'panel'],
        reference: ['https://acme.example/advisories/1'],
      },
    });
    expect((findings[1]!.evidence as any).extracted['matcher-name']).toBe('debug-token');

    // The REST API shows them like any other finding.
    const listed = await client.api('GET', '/api/v1/api/vulnerabilities?limit=100', { as: owner, workspaceId });
    expect(listed.body.data.map((f: { checkId: string }) => f.checkId).sort()).toEqual(findings.map((f) => f.checkId).sort());

    // The catch-all site was asked for every exposure of the pack and raised none of them.
    for (const path of ['/.env', '/.git/config', '/backup.zip', '/server-status', '/actuator/env', '/v2/_catalog', '/.htpasswd']) expect(hitsB).toContain(path);
    // Another workspace's template never ran here.
    expect([...hitsA, ...hitsB]).not.toContain('/outsider-only');

    // The step records which templates ran (for fixing what is no longer seen) and stays small.
    const step = await server.db.prisma.scanStep.findFirstOrThrow({ where: { scanId: firstScanId, name: 'checks' } });
    const output = step.output as { checkIds: string[]; errors: unknown[]; templates: Record<string, number> };
    const packIds = (await loadPack()).map((entry) => entry.template.id);
    expect([...output.checkIds].sort()).toEqual([...BUILTIN_CHECKS.map((c) => c.id), ...packIds, 'acme-admin-console', 'acme-debug-headers'].sort());
    expect(output.errors).toEqual([]);
    expect(output.templates).toMatchObject({ templates: packIds.length + 2, endpoints: 2, requestsFailed: 0, truncated: 0 });
    expect(output.templates.requestsSaved).toBeGreaterThan(0);
    expect(JSON.stringify(step.output).length).toBeLessThan(64 * 1024);
  });

  it('a result pushed by nuclei for the same template, endpoint and matcher is the same finding', async () => {
    const tool = await client.api('POST', '/api/v1/api/tools', { as: owner, workspaceId, body: { name: 'nuclei-cli', category: 'vulnerability_scanner' } });
    const key = await client.api('POST', `/api/v1/api/tools/${tool.body.id}/api-key/rotate`, { as: owner, workspaceId });
    const line = JSON.stringify({
      'template-id': 'exposed-env-file',
      info: { name: 'Exposed .env file', severity: 'high' },
      type: 'http',
      host: `http://127.0.0.1:${a.port}`,
      'matched-at': `http://127.0.0.1:${a.port}/.env`,
      ip: '127.0.0.1',
      'extracted-results': ['APP_KEY', 'DB_PASSWORD'],
    });
    const submitted = await client.api('POST', '/api/v1/api/tools/results', {
      headers: { 'x-tool-api-key': key.body.apiKey },
      body: { format: 'nuclei-jsonl', data: line },
    });
    expect(submitted.status).toBe(200);
    expect(submitted.body.findings).toEqual({ opened: 0, seen: 1, reopened: 0 });
    const env = (await findingsOf(workspaceId)).filter((f) => f.checkId === 'exposed-env-file');
    expect(env).toHaveLength(1);
    expect(env[0]!.occurrences).toBe(2);
  });

  it('a second scan fixes the template findings no longer seen; a switched-off template is not run and fixes nothing', async () => {
    expect(firstScanId, 'needs the first scan').toBeDefined();
    state.envExposed = false;
    state.consoleOpen = false;
    const list = await client.api('GET', '/api/v1/api/templates?search=security-txt-missing', { as: owner, workspaceId });
    const securityTxt = list.body.data[0];
    const off = await client.api('PATCH', `/api/v1/api/templates/${securityTxt.id}`, { as: owner, workspaceId, body: { enabled: false } });
    expect(off.body.enabled).toBe(false);
    const hitsBefore = hitsB.length;

    const second = await startScan(client, owner, workspaceId, targetId, { ports: ports(), timeoutMs: 10_000 });
    const done = await waitForScan(client, owner, workspaceId, second.id);
    expect(done.status).toBe('COMPLETED');
    expect(hitsB.slice(hitsBefore)).not.toContain('/.well-known/security.txt');

    const findings = await findingsOf(workspaceId);
    const row = (checkId: string, matcher: string) => findings.find((f) => f.checkId === checkId && f.matcher === matcher)!;
    expect(findings.map((f) => [f.checkId, f.matcher, f.status])).toEqual([
      ['acme-admin-console', 'version', 'fixed'],
      ['acme-debug-headers', 'debug-token', 'open'],
      ['acme-debug-headers', 'trace-id', 'open'],
      ['exposed-env-file', '/.env', 'fixed'],
      ['security-txt-missing', 'missing', 'open'],
    ]);
    expect(row('exposed-env-file', '/.env').events.map((e) => [e.type, e.scanId])).toEqual([
      ['opened', firstScanId],
      ['seen', null],
      ['fixed', second.id],
    ]);
    expect(row('acme-admin-console', 'version').events.map((e) => e.type)).toEqual(['opened', 'fixed']);
    expect(row('acme-debug-headers', 'trace-id')).toMatchObject({ occurrences: 2, lastScanId: second.id });
    // Not run, so not judged: still open from the first scan.
    expect(row('security-txt-missing', 'missing')).toMatchObject({ status: 'open', occurrences: 1, lastScanId: firstScanId });
    const step = stepOf(done, 'checks');
    expect(step.status).toBe('COMPLETED');

    // Back on, and the pages back: the fixed findings reopen.
    await client.api('PATCH', `/api/v1/api/templates/${securityTxt.id}`, { as: owner, workspaceId, body: { enabled: true } });
    state.envExposed = true;
    const third = await startScan(client, owner, workspaceId, targetId, { ports: ports(), timeoutMs: 10_000 });
    expect((await waitForScan(client, owner, workspaceId, third.id)).status).toBe('COMPLETED');
    const after = await findingsOf(workspaceId);
    expect(after.map((f) => [f.checkId, f.matcher, f.status])).toEqual([
      ['acme-admin-console', 'version', 'fixed'],
      ['acme-debug-headers', 'debug-token', 'open'],
      ['acme-debug-headers', 'trace-id', 'open'],
      ['exposed-env-file', '/.env', 'open'],
      ['security-txt-missing', 'missing', 'open'],
    ]);
    expect(after.find((f) => f.checkId === 'exposed-env-file')!.events.map((e) => e.type)).toEqual(['opened', 'seen', 'fixed', 'reopened']);
  });

  it('an endpoint a scan does not cover keeps its template findings', async () => {
    // Only site B is scanned: nothing about site A is judged.
    const scan = await startScan(client, owner, workspaceId, targetId, { ports: String(b.port), timeoutMs: 10_000 });
    expect((await waitForScan(client, owner, workspaceId, scan.id)).status).toBe('COMPLETED');
    const findings = await findingsOf(workspaceId);
    expect(findings.filter((f) => f.asset?.key === webA() && f.status === 'open').map((f) => f.checkId)).toEqual([
      'acme-debug-headers',
      'acme-debug-headers',
      'exposed-env-file',
    ]);
  });
});
