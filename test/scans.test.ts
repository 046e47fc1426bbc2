import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { X509Certificate } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { createTestDatabase, startTestApp, type TestApp, type TestDatabase } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { waitFor } from './support/wait.js';
import { wsClientFor, type WsClient } from './support/ws.js';
import { addTarget, getScan, globalId, SCAN_UPDATED, startScan, stepOf, waitForScan, WORKSPACE_EVENTS, type Client } from './support/scans.js';
import { closedPort, DIRECTORY_LISTING, listen, makeCertificates, type TestCertificates } from './scanner/helpers.js';

/**
 * Scans end to end: real loopback services, the REST and GraphQL front doors, the job queue and its
 * workers inside the app, and what lands in the inventory and the findings. Scope: loopback only.
 */

const LOOPBACK_ONLY = { SCAN_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128', QUEUE_SUPERVISE_SECONDS: '1' };
const SSH_BANNER = 'SSH-2.0-OpenSSH_9.2p1';
/** Generous: every wait inside is bounded on its own; this only keeps a loaded CI machine from failing a healthy run. */
const SCAN_TEST_TIMEOUT = 120_000;

// ---------------------------------------------------------------------------------------------
// Loopback services that count every connection, so a test can also say "nobody came".

interface Service {
  port: number;
  connections: number;
  /** Request paths, for HTTP(S) services. */
  hits: string[];
  close(): Promise<void>;
}

async function serve(server: net.Server, hits: string[] = []): Promise<Service> {
  const service = { port: 0, connections: 0, hits, close: async () => {} };
  server.on('connection', () => {
    service.connections += 1;
  });
  const started = await listen(server);
  return Object.assign(service, { port: started.port, close: started.close });
}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

const HOME = '<!doctype html><html><head><title>Perimeter Scan Fixture</title></head><body><h1>Fixture</h1><a href="/files/">Shared files</a></body></html>';

/** nginx/1.18.0, no security headers, /.git/HEAD (while `gitExposed`), a listing at /files/; `/` waits for `gate` when set. */
function webApp(state: { gitExposed: boolean; gate?: Promise<void> }, hits: string[]) {
  return async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    hits.push(path);
    const headers = { server: 'nginx/1.18.0' };
    if (path === '/') {
      if (state.gate) await state.gate;
      res.writeHead(200, { ...headers, 'content-type': 'text/html; charset=utf-8' }).end(HOME);
    } else if (path === '/.git/HEAD' && state.gitExposed) {
      res.writeHead(200, { ...headers, 'content-type': 'text/plain' }).end('ref: refs/heads/main\n');
    } else if (path === '/files/') {
      res.writeHead(200, { ...headers, 'content-type': 'text/html' }).end(DIRECTORY_LISTING);
    } else {
      res.writeHead(404, { ...headers, 'content-type': 'text/plain' }).end('not found');
    }
  };
}

/** A catch-all single-page app over TLS: 200 for every path (so status alone proves nothing), HSTS, no version. */
function secureApp(hits: string[]) {
  return (req: http.IncomingMessage, res: http.ServerResponse) => {
    hits.push(new URL(req.url ?? '/', 'http://x').pathname);
    res.writeHead(200, { server: 'nginx', 'strict-transport-security': 'max-age=31536000', 'content-type': 'text/html' });
    res.end('<!doctype html><html><head><title>Secure Fixture</title></head><body><div id="app"></div></body></html>');
  };
}

let certs: TestCertificates;
const webState: { gitExposed: boolean; gate?: Promise<void> } = { gitExposed: true };
let web: Service;
let secure: Service;
let ssh: Service;
let closed: number;
let certificateFingerprint: string;

let server: TestApp;
let client: Client;
const sockets: WsClient[] = [];

function socket(app: TestApp, token: string): WsClient {
  const ws = wsClientFor(app, token);
  sockets.push(ws);
  return ws;
}

beforeAll(async () => {
  certs = makeCertificates();
  certificateFingerprint = new X509Certificate(certs.selfSigned.cert).fingerprint256;
  const webHits: string[] = [];
  web = await serve(http.createServer(webApp(webState, webHits)), webHits);
  const secureHits: string[] = [];
  secure = await serve(https.createServer({ key: certs.selfSigned.key, cert: certs.selfSigned.cert }, secureApp(secureHits)), secureHits);
  ssh = await serve(net.createServer((s) => s.end(`${SSH_BANNER}\r\n`)));
  closed = await closedPort();
  server = await startTestApp(LOOPBACK_ONLY);
  client = clientFor(server);
});

afterAll(async () => {
  await Promise.all(sockets.map((ws) => ws.dispose()));
  await server?.stop();
  await Promise.all([web, secure, ssh].filter(Boolean).map((s) => s.close()));
  certs?.cleanup();
});

const portSpec = () => [web.port, secure.port, ssh.port, closed].join(',');
const rows = (app: TestApp) => app.db.prisma;

async function assetsOf(app: TestApp, workspaceId: string) {
  return rows(app).asset.findMany({ where: { workspaceId }, orderBy: { key: 'asc' } });
}

async function findingsOf(app: TestApp, workspaceId: string) {
  return rows(app).finding.findMany({
    where: { workspaceId },
    include: { asset: { select: { key: true } }, events: { orderBy: { createdAt: 'asc' } } },
    orderBy: [{ checkId: 'asc' }, { matcher: 'asc' }],
  });
}

// ---------------------------------------------------------------------------------------------

describe('a scan of loopback services', { timeout: SCAN_TEST_TIMEOUT }, () => {
  let owner: TestUser;
  let workspaceId: string;
  let targetId: string;
  let firstScanId: string;
  let assetsAfterFirst: Awaited<ReturnType<typeof assetsOf>>;
  let findingsAfterFirst: Awaited<ReturnType<typeof findingsOf>>;

  beforeAll(async () => {
    owner = await client.signUp('Scanner');
    workspaceId = (await client.createWorkspace(owner)).id;
    targetId = (await addTarget(client, owner, workspaceId, '127.0.0.1')).id;
  });

  it('finds what each service exposes and nothing else, observed to completion over a websocket', async () => {
    const ws = socket(server, owner.token);
    // Workspace events: prove the subscription is live (a rename reaches it) before the scan starts.
    const events = ws.subscribe(WORKSPACE_EVENTS, { workspaceId: globalId('Workspace', workspaceId) });
    let renames = 0;
    await waitFor(
      async () => {
        renames += 1;
        await client.api('PATCH', `/api/v1/api/workspaces/${workspaceId}`, { as: owner, body: { description: `live ${renames}` } });
        return waitFor(() => events.results.some((r) => r.data?.workspaceEvents.type === 'workspace.updated'), { timeoutMs: 250 }).catch(() => false);
      },
      { timeoutMs: 20_000, what: 'the workspace event subscription to be live' },
    );

    // The web server holds `/` until the scan subscription has delivered its first state, so the scan
    // cannot finish before anyone watches it.
    const gate = deferred();
    webState.gate = gate.promise;
    const started = await startScan(client, owner, workspaceId, targetId, { ports: portSpec(), timeoutMs: 15_000 });
    firstScanId = started.id;
    expect(started).toMatchObject({
      workspaceId,
      targetId,
      status: 'PENDING',
      progress: { stepsDone: 0, stepsTotal: 5, percent: 0 },
      options: { ports: portSpec(), timeoutMs: 15_000, steps: ['dns', 'ports', 'http', 'tls', 'checks'] },
    });
    expect(started.steps.map((s: { name: string }) => s.name)).toEqual(['dns', 'ports', 'http', 'tls', 'checks']);

    const updates = ws.subscribe(SCAN_UPDATED, { id: globalId('Scan', firstScanId) });
    try {
      await waitFor(() => updates.results.length > 0 || updates.error !== undefined, { timeoutMs: 20_000, what: 'the first scanUpdated event' });
    } finally {
      gate.resolve();
      webState.gate = undefined;
    }
    await waitFor(() => updates.completed || updates.error !== undefined, { timeoutMs: 30_000, what: 'the scanUpdated stream to complete' });

    expect(updates.error).toBeUndefined();
    expect(updates.errors()).toEqual([]);
    const seen = updates.results.map((r) => r.data!.scanUpdated);
    expect(seen.every((s) => s.databaseId === firstScanId && s.id === globalId('Scan', firstScanId))).toBe(true);
    const statuses = seen.map((s) => s.status);
    expect(['PENDING', 'IN_PROGRESS']).toContain(statuses[0]);
    expect(statuses.at(-1)).toBe('COMPLETED');
    expect(statuses.slice(0, -1).every((s) => s === 'PENDING' || s === 'IN_PROGRESS')).toBe(true);
    expect(statuses.filter((s) => s === 'IN_PROGRESS').length).toBeGreaterThan(0);
    const progress = seen.map((s) => s.progress);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    expect(seen.at(-1)).toMatchObject({ stepsDone: 5, stepsTotal: 5, progress: 1, error: null });
    expect(seen.at(-1)!.steps.every((s: { status: string; attempts: number }) => s.status === 'COMPLETED' && s.attempts === 1)).toBe(true);

    const scan = await getScan(client, owner, workspaceId, firstScanId);
    expect(scan).toMatchObject({ status: 'COMPLETED', progress: { stepsDone: 5, stepsTotal: 5, percent: 100 }, error: null, assetsFound: 7 });
    expect(scan.findings).toEqual({ info: 2, low: 4, medium: 1, high: 1, critical: 0 });
    expect(new Date(scan.finishedAt).getTime()).toBeGreaterThanOrEqual(new Date(scan.startedAt).getTime());

    // ---- the inventory: exactly what is there
    const assets = await assetsOf(server, workspaceId);
    const byKey = new Map(assets.map((a) => [a.key, a]));
    const key = {
      host: 'host:127.0.0.1',
      web: `service:127.0.0.1:${web.port}/tcp`,
      secure: `service:127.0.0.1:${secure.port}/tcp`,
      ssh: `service:127.0.0.1:${ssh.port}/tcp`,
      httpApp: `web:http://127.0.0.1:${web.port}`,
      httpsApp: `web:https://127.0.0.1:${secure.port}`,
      certificate: `certificate:sha256:${certificateFingerprint.replace(/:/g, '').toLowerCase()}`,
    };
    expect([...byKey.keys()].sort()).toEqual(Object.values(key).sort());
    expect(assets.every((a) => a.enabled && a.targetId === targetId && a.lastScanId === firstScanId)).toBe(true);
    const id = (k: string) => byKey.get(k)!.id;
    expect(byKey.get(key.host)).toMatchObject({ kind: 'host', value: '127.0.0.1', parentId: null });
    for (const service of [key.web, key.secure, key.ssh]) expect(byKey.get(service)).toMatchObject({ kind: 'service', parentId: id(key.host) });
    expect(byKey.get(key.ssh)!.data).toMatchObject({ port: ssh.port, banner: SSH_BANNER, service: 'ssh', product: 'OpenSSH', version: '9.2p1' });
    expect(assets.some((a) => a.key.includes(`:${closed}`))).toBe(false);

    expect(byKey.get(key.httpApp)).toMatchObject({ kind: 'web', value: `http://127.0.0.1:${web.port}/`, parentId: id(key.web) });
    expect(byKey.get(key.httpApp)!.data).toMatchObject({
      scheme: 'http',
      status: 200,
      title: 'Perimeter Scan Fixture',
      server: 'nginx/1.18.0',
      technologies: [{ name: 'nginx', version: '1.18.0', evidence: 'header:server' }],
    });
    expect(byKey.get(key.httpsApp)).toMatchObject({ kind: 'web', value: `https://127.0.0.1:${secure.port}/`, parentId: id(key.secure) });
    expect(byKey.get(key.httpsApp)!.data).toMatchObject({
      scheme: 'https',
      status: 200,
      title: 'Secure Fixture',
      server: 'nginx',
      technologies: [{ name: 'nginx', evidence: 'header:server' }],
    });
    expect(byKey.get(key.certificate)).toMatchObject({ kind: 'certificate', value: 'localhost', parentId: id(key.secure) });
    expect(byKey.get(key.certificate)!.data).toMatchObject({
      selfSigned: true,
      expired: false,
      subjectCN: 'localhost',
      port: secure.port,
      fingerprint256: certificateFingerprint,
    });

    // ---- findings: exactly these, each on the right asset, with evidence
    const findings = await findingsOf(server, workspaceId);
    expect(findings.map((f) => [f.checkId, f.asset?.key, f.matcher, f.severity]).sort()).toEqual(
      [
        ['http-directory-listing', key.httpApp, '/files/', 'medium'],
        ['http-exposed-git', key.httpApp, '/.git/HEAD', 'high'],
        ['http-missing-security-headers', key.httpApp, 'missing-security-headers', 'low'],
        ['http-missing-security-headers', key.httpsApp, 'missing-security-headers', 'low'],
        ['http-server-version-disclosure', key.httpApp, 'header:server', 'low'],
        ['tls-self-signed-certificate', key.certificate, 'self-signed', 'low'],
        // The default template pack: neither service publishes a security.txt.
        ['security-txt-missing', key.httpApp, 'missing', 'info'],
        ['security-txt-missing', key.httpsApp, 'missing', 'info'],
      ].sort(),
    );
    for (const finding of findings) {
      expect(finding).toMatchObject({
        status: 'open',
        occurrences: 1,
        targetId,
        lastScanId: firstScanId,
        source: finding.checkId === 'security-txt-missing' ? 'nuclei' : 'builtin',
        fixedAt: null,
      });
      expect(finding.events.map((e) => [e.type, e.scanId])).toEqual([['opened', firstScanId]]);
    }
    const find = (checkId: string, assetKey: string) => findings.find((f) => f.checkId === checkId && f.asset?.key === assetKey)!;
    const git = find('http-exposed-git', key.httpApp).evidence as any;
    expect(git.url).toBe(`http://127.0.0.1:${web.port}/.git/HEAD`);
    expect(git.extracted).toEqual({ ref: 'refs/heads/main' });
    expect(git.response).toContain('ref: refs/heads/main');
    expect((find('http-server-version-disclosure', key.httpApp).evidence as any).extracted).toEqual({
      header: 'server',
      value: 'nginx/1.18.0',
      version: '1.18.0',
    });
    expect((find('http-missing-security-headers', key.httpApp).evidence as any).extracted.missing).toEqual([
      'content-security-policy',
      'x-frame-options',
      'x-content-type-options',
    ]);
    // HSTS is served over HTTPS, so it is not listed there; over plain HTTP it is not expected at all.
    expect((find('http-missing-security-headers', key.httpsApp).evidence as any).extracted.missing).toEqual([
      'content-security-policy',
      'x-frame-options',
      'x-content-type-options',
    ]);
    expect((find('http-directory-listing', key.httpApp).evidence as any).extracted).toMatchObject({ path: '/files/', entries: ['backup.sql', 'id_rsa'] });
    expect((find('tls-self-signed-certificate', key.certificate).evidence as any).extracted).toMatchObject({ fingerprint256: certificateFingerprint });
    // The HTTPS app answers 200 to /.git/HEAD and /files/ too, but with its page: no finding.
    expect(secure.hits).toContain('/.git/HEAD');
    expect(secure.hits).toContain('/files/');

    // ---- the REST lists show the same rows
    const listedAssets = await client.api('GET', '/api/v1/api/assets?limit=100', { as: owner, workspaceId });
    expect(listedAssets.status).toBe(200);
    expect(listedAssets.body.data.map((a: { id: string }) => a.id).sort()).toEqual(assets.map((a) => a.id).sort());
    const listedFindings = await client.api('GET', '/api/v1/api/vulnerabilities?limit=100', { as: owner, workspaceId });
    expect(listedFindings.status).toBe(200);
    expect(listedFindings.body.data.map((f: { id: string }) => f.id).sort()).toEqual(findings.map((f) => f.id).sort());

    // ---- and the workspace feed announced them
    const announced = (type: string) =>
      new Set(events.results.filter((r) => r.data?.workspaceEvents.type === type).map((r) => r.data!.workspaceEvents.entityId));
    await waitFor(() => announced('asset.discovered').size === assets.length && announced('finding.opened').size === findings.length, {
      timeoutMs: 15_000,
      what: 'asset.discovered and finding.opened events',
    });
    expect([...announced('asset.discovered')].sort()).toEqual(assets.map((a) => globalId('Asset', a.id)).sort());
    expect([...announced('finding.opened')].sort()).toEqual(findings.map((f) => globalId('Finding', f.id)).sort());
    expect(announced('scan.updated')).toEqual(new Set([globalId('Scan', firstScanId)]));

    assetsAfterFirst = assets;
    findingsAfterFirst = findings;
  });

  it('a second scan updates the same rows: what disappeared is fixed, the rest seen again', async () => {
    expect(firstScanId, 'needs the first scan').toBeDefined();
    webState.gitExposed = false;
    const second = await startScan(client, owner, workspaceId, targetId, { ports: portSpec(), timeoutMs: 15_000 });
    const done = await waitForScan(client, owner, workspaceId, second.id);
    expect(done).toMatchObject({ status: 'COMPLETED', assetsFound: 7, findings: { info: 2, low: 4, medium: 1, high: 0, critical: 0 } });

    const assets = await assetsOf(server, workspaceId);
    expect(assets.map((a) => a.id).sort()).toEqual(assetsAfterFirst.map((a) => a.id).sort());
    for (const before of assetsAfterFirst) {
      const after = assets.find((a) => a.id === before.id)!;
      expect(after.key).toBe(before.key);
      expect(after.firstSeenAt).toEqual(before.firstSeenAt);
      expect(after.lastSeenAt.getTime()).toBeGreaterThan(before.lastSeenAt.getTime());
      expect(after.lastScanId).toBe(second.id);
    }

    const findings = await findingsOf(server, workspaceId);
    expect(findings.map((f) => f.id).sort()).toEqual(findingsAfterFirst.map((f) => f.id).sort());
    for (const finding of findings) {
      const before = findingsAfterFirst.find((f) => f.id === finding.id)!;
      if (finding.checkId === 'http-exposed-git') {
        expect(finding).toMatchObject({ status: 'fixed', occurrences: 1, lastScanId: firstScanId });
        expect(finding.fixedAt!.getTime()).toBeGreaterThanOrEqual(new Date(done.startedAt).getTime());
        expect(finding.events.map((e) => [e.type, e.scanId])).toEqual([
          ['opened', firstScanId],
          ['fixed', second.id],
        ]);
      } else {
        expect(finding).toMatchObject({ status: 'open', occurrences: 2, lastScanId: second.id, fixedAt: null });
        expect(finding.lastSeenAt.getTime()).toBeGreaterThan(before.lastSeenAt.getTime());
        expect(finding.firstSeenAt).toEqual(before.firstSeenAt);
        expect(finding.events.map((e) => [e.type, e.scanId])).toEqual([
          ['opened', firstScanId],
          ['seen', second.id],
        ]);
      }
    }

    const open = await client.api('GET', '/api/v1/api/vulnerabilities?limit=100', { as: owner, workspaceId });
    expect(open.body.data).toHaveLength(7);
    expect(open.body.data.some((f: { checkId: string }) => f.checkId === 'http-exposed-git')).toBe(false);

    // Both scans are listed for the target, newest first; the status filter applies.
    const listed = await client.api('GET', `/api/v1/api/scans?targetId=${targetId}&status=COMPLETED`, { as: owner, workspaceId });
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((s: { id: string }) => s.id)).toEqual([second.id, firstScanId]);
    webState.gitExposed = true;
  });

  it('refuses to cancel or retry a scan that completed (409)', async () => {
    const cancel = await client.api('POST', `/api/v1/api/scans/${firstScanId}/cancel`, { as: owner, workspaceId });
    expect(cancel.status).toBe(409);
    expect(cancel.body.message).toContain('COMPLETED');
    const retry = await client.api('POST', `/api/v1/api/scans/${firstScanId}/retry`, { as: owner, workspaceId });
    expect(retry.status).toBe(409);
  });

  it("keeps each step's full result as a scan artefact in the blob store, readable by members only", async () => {
    const ports = await client.api('GET', `/api/v1/api/scans/${firstScanId}/artefacts/ports`, { as: owner, workspaceId });
    expect(ports.status).toBe(200);
    const scannedPorts = ports.body.services.map((service: { port: number }) => service.port);
    const storedPorts = (await server.db.prisma.asset.findMany({ where: { workspaceId, kind: 'service' } })).map(
      (asset) => (asset.data as { port: number }).port,
    );
    expect(scannedPorts.sort()).toEqual(storedPorts.sort());
    const stored = await server.app.deps.storage.get(`scan-artefacts/${firstScanId}/ports.json`);
    expect(JSON.parse(stored!.toString('utf8'))).toEqual(ports.body);
    expect((await client.api('GET', `/api/v1/api/scans/${firstScanId}/artefacts/bogus`, { as: owner, workspaceId })).status).toBe(400);
    const stranger = await client.signUp('Artefact stranger');
    const theirs = (await client.createWorkspace(stranger)).id;
    expect((await client.api('GET', `/api/v1/api/scans/${firstScanId}/artefacts/ports`, { as: stranger, workspaceId: theirs })).status).toBe(404);
  });

  it("keeps other users out: another workspace's scans and targets are 404, and its subscription gets an error", async () => {
    const stranger = await client.signUp('Stranger');
    const theirs = (await client.createWorkspace(stranger)).id;
    for (const ws of [theirs, workspaceId]) {
      const scan = await client.api('POST', '/api/v1/api/vulnerabilities/scan', { as: stranger, workspaceId: ws, body: { targetId } });
      expect(scan.status).toBe(404);
      expect(scan.headers.get('location')).toBeNull();
      const started = await client.api('POST', '/api/v1/api/scans', { as: stranger, workspaceId: ws, body: { targetId } });
      expect(started.status).toBe(404);
      expect((await client.api('GET', `/api/v1/api/scans/${firstScanId}`, { as: stranger, workspaceId: ws })).status).toBe(404);
      expect((await client.api('POST', `/api/v1/api/scans/${firstScanId}/retry`, { as: stranger, workspaceId: ws })).status).toBe(404);
      expect((await client.api('POST', `/api/v1/api/scans/${firstScanId}/cancel`, { as: stranger, workspaceId: ws })).status).toBe(404);
    }
    const list = await client.api('GET', '/api/v1/api/scans', { as: stranger, workspaceId: theirs });
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([]);
    expect(await rows(server).scan.count({ where: { targetId } })).toBe(2);

    const viaGraphQL = await client.gql('query($id: ID!) { scan(id: $id) { id } }', { as: stranger, variables: { id: globalId('Scan', firstScanId) } });
    expect(viaGraphQL.data).toEqual({ scan: null });
    const start = await client.gql('mutation($t: ID!) { startScan(targetId: $t) { __typename ... on Error { message } } }', {
      as: stranger,
      variables: { t: globalId('Target', targetId) },
    });
    expect(start.data.startScan.__typename).toBe('NotFoundError');

    const operation = socket(server, stranger.token).subscribe(SCAN_UPDATED, { id: globalId('Scan', firstScanId) });
    await waitFor(() => operation.error !== undefined || operation.completed, { timeoutMs: 15_000, what: 'the subscription to be refused' });
    expect(operation.results.filter((r) => r.data?.scanUpdated)).toEqual([]);
    expect(
      operation
        .errors()
        .map((e) => e.message)
        .join(' '),
    ).toMatch(/not found/i);
  });

  it('answers bad input with 400 naming the field, and starts nothing', async () => {
    const before = await rows(server).scan.count();
    const call = (path: string, body: unknown, ws: string | null = workspaceId) =>
      client.api('POST', `/api/v1/api/${path}`, { as: owner, workspaceId: ws ?? undefined, body });
    const fields = (response: { body: { details?: { field: string }[] } }) => response.body.details?.map((d) => d.field);

    for (const path of ['vulnerabilities/scan', 'scans']) {
      const missing = await call(path, {});
      expect(missing.status).toBe(400);
      expect(fields(missing)).toEqual(['targetId']);
      const invalid = await call(path, { targetId: 'not-a-uuid' });
      expect(invalid.status).toBe(400);
      expect(fields(invalid)).toEqual(['targetId']);
      const noWorkspace = await call(path, { targetId }, null);
      expect(noWorkspace.status).toBe(400);
      expect(noWorkspace.body.code).toBe('WORKSPACE_REQUIRED');
      expect(noWorkspace.body.message).toContain('X-Workspace-Id');
    }
    // The default-profile endpoint takes no options.
    const withOptions = await call('vulnerabilities/scan', { targetId, options: { ports: '80' } });
    expect(withOptions.status).toBe(400);
    expect(fields(withOptions)).toEqual(['options']);

    const badPorts = await call('scans', { targetId, options: { ports: '0-70000' } });
    expect(badPorts.status).toBe(400);
    expect(fields(badPorts)).toEqual(['options.ports']);
    expect(badPorts.body.message).toMatch(/port 0/i);
    const badTimeout = await call('scans', { targetId, options: { timeoutMs: 0 } });
    expect(badTimeout.status).toBe(400);
    expect(fields(badTimeout)).toEqual(['options.timeoutMs']);
    const unknown = await call('scans', { targetId, options: { bogus: true } });
    expect(unknown.status).toBe(400);
    expect(fields(unknown)).toEqual(['options.bogus']);
    const badStep = await call('scans', { targetId, options: { steps: ['nmap'] } });
    expect(badStep.status).toBe(400);
    expect(fields(badStep)?.[0]).toMatch(/^options\.steps/);

    const gqlBad = await client.gql(
      'mutation($t: ID!) { startScan(targetId: $t, options: { ports: "0-70000" }) { __typename ... on ValidationError { message } } }',
      {
        as: owner,
        variables: { t: globalId('Target', targetId) },
      },
    );
    expect(gqlBad.data.startScan.__typename).toBe('ValidationError');
    expect(gqlBad.data.startScan.message).toContain('options.ports');

    expect(await rows(server).scan.count()).toBe(before);
  });
});

describe('POST /vulnerabilities/scan (the default profile)', { timeout: SCAN_TEST_TIMEOUT }, () => {
  it('answers 201 {} with a Location, and scans the port a URL target names', async () => {
    const owner = await client.signUp('Default');
    const workspaceId = (await client.createWorkspace(owner)).id;
    const target = await addTarget(client, owner, workspaceId, `http://127.0.0.1:${web.port}/`);
    const response = await client.api('POST', '/api/v1/api/vulnerabilities/scan', { as: owner, workspaceId, body: { targetId: target.id } });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({});
    const location = response.headers.get('location')!;
    expect(location).toMatch(/^\/api\/v1\/api\/scans\/[0-9a-f-]{36}$/);
    const scanId = location.split('/').at(-1)!;

    const ws = socket(server, owner.token);
    const updates = ws.subscribe(SCAN_UPDATED, { id: globalId('Scan', scanId) });
    await waitFor(() => updates.completed || updates.error !== undefined, { timeoutMs: 30_000, what: 'the scan stream to complete' });
    expect(updates.errors()).toEqual([]);
    expect(updates.results.at(-1)!.data!.scanUpdated.status).toBe('COMPLETED');

    const scan = await getScan(client, owner, workspaceId, scanId);
    expect(scan).toMatchObject({ status: 'COMPLETED', targetId: target.id, options: { steps: ['dns', 'ports', 'http', 'tls', 'checks'] } });
    const assets = await assetsOf(server, workspaceId);
    expect(assets.filter((a) => a.kind === 'service').map((a) => a.key)).toEqual([`service:127.0.0.1:${web.port}/tcp`]);
    expect(assets.filter((a) => a.kind === 'web').map((a) => a.key)).toEqual([`web:http://127.0.0.1:${web.port}`]);
  });
});

describe('GraphQL startScan, and a workspace that does not auto-enable discoveries', { timeout: SCAN_TEST_TIMEOUT }, () => {
  it('starts a scan with options, lists it on the target and the workspace; what it probes on the target is enabled even without auto-enable', async () => {
    const owner = await client.signUp('Graph');
    const workspace = await client.createWorkspace(owner, { isAutoEnableAssetAfterDiscovered: false });
    const target = await addTarget(client, owner, workspace.id, '127.0.0.1');

    const started = await client.gql(
      `mutation($t: ID!, $o: ScanOptionsInput) { startScan(targetId: $t, options: $o) {
        __typename ... on Error { message }
        ... on MutationStartScanSuccess { data { id databaseId status stepsTotal options target { databaseId } steps { name status } } }
      } }`,
      { as: owner, variables: { t: globalId('Target', target.id), o: { steps: ['ports'], ports: String(ssh.port), timeoutMs: 1000 } } },
    );
    expect(started.errors).toBeUndefined();
    expect(started.data.startScan.__typename).toBe('MutationStartScanSuccess');
    const scan = started.data.startScan.data;
    expect(scan).toMatchObject({
      id: globalId('Scan', scan.databaseId),
      status: 'PENDING',
      stepsTotal: 2,
      options: { steps: ['dns', 'ports'], ports: String(ssh.port), timeoutMs: 1000 },
      target: { databaseId: target.id },
      steps: [
        { name: 'dns', status: 'PENDING' },
        { name: 'ports', status: 'PENDING' },
      ],
    });

    const lists = await client.gql(
      `query($t: ID!, $w: ID!) {
        target(id: $t) { scans { totalCount edges { node { databaseId } } } }
        workspace(id: $w) { scans(first: 10) { totalCount edges { node { databaseId target { databaseId } } } } }
      }`,
      { as: owner, variables: { t: globalId('Target', target.id), w: globalId('Workspace', workspace.id) } },
    );
    expect(lists.errors).toBeUndefined();
    expect(lists.data.target.scans).toEqual({ totalCount: 1, edges: [{ node: { databaseId: scan.databaseId } }] });
    expect(lists.data.workspace.scans).toEqual({ totalCount: 1, edges: [{ node: { databaseId: scan.databaseId, target: { databaseId: target.id } } }] });

    const done = await waitForScan(client, owner, workspace.id, scan.databaseId);
    expect(done.status).toBe('COMPLETED');
    const assets = await assetsOf(server, workspace.id);
    // isAutoEnableAssetAfterDiscovered is about hosts discovery finds (test/discovery.scan.test.ts); the target's own are enabled.
    expect(assets.map((a) => [a.key, a.enabled])).toEqual([
      ['host:127.0.0.1', true],
      [`service:127.0.0.1:${ssh.port}/tcp`, true],
    ]);
  });
});

describe('cancel and retry', { timeout: SCAN_TEST_TIMEOUT }, () => {
  it('cancels a running scan: nothing further runs, the late step is discarded; a retry then completes', async () => {
    // A slow site: `/` is held until the test lets it answer (after the cancel), then answered at once.
    const slow = { holding: true, held: [] as (() => void)[], responded: 0 };
    const hits: string[] = [];
    const slowServer = await serve(
      http.createServer((req, res) => {
        hits.push(new URL(req.url ?? '/', 'http://x').pathname);
        const answer = () => {
          res.writeHead(200, { 'content-type': 'text/html' }).end('<title>Slow</title>');
          slow.responded += 1;
        };
        if (slow.holding) slow.held.push(answer);
        else answer();
      }),
      hits,
    );
    try {
      const owner = await client.signUp('Canceller');
      const workspaceId = (await client.createWorkspace(owner)).id;
      const target = await addTarget(client, owner, workspaceId, '127.0.0.1');
      const started = await startScan(client, owner, workspaceId, target.id, { ports: String(slowServer.port), timeoutMs: 20_000 });

      // Mid-step: the http step runs and its request is waiting on the slow server.
      const running = await waitForScan(client, owner, workspaceId, started.id, {
        until: (scan) => stepOf(scan, 'http').status === 'IN_PROGRESS' && slow.held.length > 0,
        what: 'the http step to be waiting on the slow server',
      });
      expect(running.status).toBe('IN_PROGRESS');
      const ws = socket(server, owner.token);
      const updates = ws.subscribe(SCAN_UPDATED, { id: globalId('Scan', started.id) });
      await waitFor(() => updates.results.length > 0, { timeoutMs: 15_000, what: 'the current state over the subscription' });

      const cancelled = await client.api('POST', `/api/v1/api/scans/${started.id}/cancel`, { as: owner, workspaceId });
      expect(cancelled.status).toBe(200);
      expect(cancelled.body.status).toBe('CANCELLED');
      expect(cancelled.body.steps.map((s: { name: string; status: string }) => [s.name, s.status])).toEqual([
        ['dns', 'COMPLETED'],
        ['ports', 'COMPLETED'],
        ['http', 'CANCELLED'],
        ['tls', 'CANCELLED'],
        ['checks', 'CANCELLED'],
      ]);
      await waitFor(() => updates.completed, { timeoutMs: 15_000, what: 'the subscription to end after CANCELLED' });
      expect(updates.results.at(-1)!.data!.scanUpdated.status).toBe('CANCELLED');

      // The site answers now; the late step finishes (its job completes) and what it saw is thrown away.
      slow.holding = false;
      for (const answer of slow.held.splice(0)) answer();
      const httpStepId = stepOf(cancelled.body, 'http').id;
      await waitFor(
        async () => {
          const jobs = await rows(server).$queryRawUnsafe<{ state: string }[]>(`SELECT state::text FROM pgboss.job WHERE data->>'stepId' = $1`, httpStepId);
          return jobs.length === 1 && jobs[0]!.state === 'completed';
        },
        { timeoutMs: 30_000, intervalMs: 100, what: 'the cancelled step’s job to finish' },
      );
      expect(slow.responded).toBe(1);
      const after = await getScan(client, owner, workspaceId, started.id);
      expect(after).toMatchObject({ status: 'CANCELLED', progress: { stepsDone: 2, stepsTotal: 5 }, finishedAt: cancelled.body.finishedAt });
      expect(stepOf(after, 'http').status).toBe('CANCELLED');
      expect((await assetsOf(server, workspaceId)).filter((a) => a.kind === 'web')).toEqual([]);
      const jobs = await rows(server).$queryRawUnsafe<{ step: string }[]>(
        `SELECT data->>'stepId' AS step FROM pgboss.job WHERE data->>'scanId' = $1`,
        started.id,
      );
      expect(jobs).toHaveLength(3); // dns, ports, http: nothing was enqueued after the cancel
      expect(hits).toEqual(['/']); // no checks ran against it

      // Retry: the first unfinished step runs again, then the rest.
      const retried = await client.api('POST', `/api/v1/api/scans/${started.id}/retry`, { as: owner, workspaceId });
      expect(retried.status).toBe(200);
      expect(retried.body).toMatchObject({ status: 'PENDING', error: null, finishedAt: null });
      const done = await waitForScan(client, owner, workspaceId, started.id);
      expect(done.status).toBe('COMPLETED');
      expect(done.steps.map((s: { name: string; status: string; attempts: number }) => [s.name, s.status, s.attempts])).toEqual([
        ['dns', 'COMPLETED', 1],
        ['ports', 'COMPLETED', 1],
        ['http', 'COMPLETED', 2],
        ['tls', 'COMPLETED', 1],
        ['checks', 'COMPLETED', 1],
      ]);
      const web = (await assetsOf(server, workspaceId)).filter((a) => a.kind === 'web');
      expect(web.map((a) => [a.key, (a.data as { title?: string }).title])).toEqual([[`web:http://127.0.0.1:${slowServer.port}`, 'Slow']]);
    } finally {
      await slowServer.close();
    }
  });
});

describe('a step that outlives its lease', { timeout: SCAN_TEST_TIMEOUT }, () => {
  it('runs again elsewhere, but completes once: the next steps are enqueued once and nothing is counted twice', async () => {
    // A 2 s lease: the worker's queue gives up on the hanging http step and a second poller runs it again
    // while the first run is still waiting. Both runs are then let through.
    const leased = await startTestApp({ ...LOOPBACK_ONLY, SCAN_STEP_TIMEOUT_SECONDS: '2', SCAN_STEP_RETRIES: '5', WORKER_CONCURRENCY: '2' });
    const held: (() => void)[] = [];
    const site = await serve(
      http.createServer((req, res) => {
        const answer = () => res.writeHead(200, { 'content-type': 'text/html', server: 'nginx/1.18.0' }).end('<title>Twice</title>');
        if (new URL(req.url ?? '/', 'http://x').pathname === '/' && held.length < 2) held.push(answer);
        else answer();
      }),
    );
    try {
      const api = clientFor(leased);
      const owner = await api.signUp('Lease');
      const workspaceId = (await api.createWorkspace(owner)).id;
      const target = await addTarget(api, owner, workspaceId, '127.0.0.1');
      const started = await startScan(api, owner, workspaceId, target.id, { ports: String(site.port), timeoutMs: 20_000 });
      await waitFor(() => held.length === 2, { timeoutMs: 30_000, what: 'two runs of the http step to be waiting' });
      for (const answer of held) answer();

      const done = await waitForScan(api, owner, workspaceId, started.id);
      expect(done.status).toBe('COMPLETED');
      expect(stepOf(done, 'http').attempts).toBeGreaterThanOrEqual(2);
      const jobsPerStep = await leased.db.prisma.$queryRawUnsafe<{ step: string; jobs: number }[]>(
        `SELECT data->>'stepId' AS step, count(*)::int AS jobs FROM pgboss.job WHERE data->>'scanId' = $1 GROUP BY 1`,
        started.id,
      );
      expect(jobsPerStep.map((row) => row.jobs)).toEqual([1, 1, 1, 1, 1]);
      const findings = await leased.db.prisma.finding.findMany({ where: { workspaceId }, include: { events: true } });
      expect(findings.length).toBeGreaterThan(0);
      for (const finding of findings) {
        expect(finding.occurrences).toBe(1);
        expect(finding.events.map((e) => e.type)).toEqual(['opened']);
      }
      expect(await leased.db.prisma.asset.count({ where: { workspaceId, kind: 'web' } })).toBe(1);
    } finally {
      await leased.stop();
      await site.close();
    }
  });
});

describe('scan scope', { timeout: SCAN_TEST_TIMEOUT }, () => {
  let shared: TestDatabase;
  let refusing: TestApp | undefined;
  let allowing: TestApp | undefined;

  beforeAll(async () => {
    shared = await createTestDatabase();
  });
  afterAll(async () => {
    await refusing?.stop();
    await allowing?.stop();
    await shared?.db.close();
    await shared?.dispose();
  });

  it('an instance that does not allow loopback refuses 127.0.0.1 and localhost without a single connection; a retry under a wider scope completes', async () => {
    refusing = await startTestApp({ QUEUE_SUPERVISE_SECONDS: '1' }, { database: shared });
    const api = clientFor(refusing);
    const owner = await api.signUp('Scoped');
    const workspaceId = (await api.createWorkspace(owner)).id;
    const ports = [web.port, secure.port, ssh.port].join(',');
    const connectionsBefore = [web, secure, ssh].map((s) => s.connections);

    const results: Record<string, any> = {};
    for (const value of ['127.0.0.1', 'localhost']) {
      const target = await addTarget(api, owner, workspaceId, value);
      const started = await startScan(api, owner, workspaceId, target.id, { ports });
      results[value] = await waitForScan(api, owner, workspaceId, started.id);
    }
    for (const [value, scan] of Object.entries(results)) {
      expect(scan.status, value).toBe('FAILED');
      expect(scan.error).toContain('127.0.0.1');
      expect(scan.error).toContain('127.0.0.0/8');
      expect(scan.error).toContain('loopback');
      expect(scan.error).toMatch(/SCAN_ALLOWED_NETWORKS/);
      expect(scan.steps.map((s: { name: string; status: string }) => [s.name, s.status])).toEqual([
        ['dns', 'COMPLETED'],
        ['ports', 'FAILED'],
        ['http', 'PENDING'],
        ['tls', 'PENDING'],
        ['checks', 'PENDING'],
      ]);
      expect(stepOf(scan, 'ports').error).toBe(scan.error);
    }
    expect(results.localhost.error).toContain('localhost');
    expect([web, secure, ssh].map((s) => s.connections)).toEqual(connectionsBefore);
    expect(await refusing.db.prisma.asset.count({ where: { workspaceId, kind: { not: 'host' } } })).toBe(0);

    // Retrying a scope refusal on the same instance fails again, with the same message, still without a connection.
    const refused = results['127.0.0.1'];
    const retried = await api.api('POST', `/api/v1/api/scans/${refused.id}/retry`, { as: owner, workspaceId });
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ status: 'PENDING', error: null });
    const again = await waitForScan(api, owner, workspaceId, refused.id);
    expect(again).toMatchObject({ status: 'FAILED', error: refused.error });
    expect(stepOf(again, 'ports').attempts).toBe(2);
    expect([web, secure, ssh].map((s) => s.connections)).toEqual(connectionsBefore);

    // The operator allows loopback (a new instance on the same database) and retries: the scan completes.
    await refusing.stop();
    refusing = undefined;
    allowing = await startTestApp(LOOPBACK_ONLY, { database: shared });
    const allowed = clientFor(allowing);
    const retriedAllowed = await allowed.api('POST', `/api/v1/api/scans/${refused.id}/retry`, { as: owner, workspaceId });
    expect(retriedAllowed.status).toBe(200);
    const completed = await waitForScan(allowed, owner, workspaceId, refused.id);
    expect(completed).toMatchObject({ status: 'COMPLETED', error: null });
    expect(stepOf(completed, 'dns').attempts).toBe(1);
    const services = await allowing.db.prisma.asset.findMany({ where: { workspaceId, kind: 'service' }, orderBy: { key: 'asc' } });
    expect(services.map((s) => s.key).sort()).toEqual([web.port, secure.port, ssh.port].map((p) => `service:127.0.0.1:${p}/tcp`).sort());
  });
});
