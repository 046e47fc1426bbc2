import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { X509Certificate } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { certificateAssetKey, hostAssetKey, serviceAssetKey, webAssetKey } from '../src/scanner/index.js';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { waitFor } from './support/wait.js';
import { wsClientFor, type WsClient } from './support/ws.js';
import { addTarget, globalId, startScan, waitForScan, type Client } from './support/scans.js';
import { listen, makeCertificates, startBannerServer, type Started, type TestCertificates } from './scanner/helpers.js';

/**
 * The change feed end to end: loopback services are scanned, then changed (a port closed, a page title
 * changed, a new certificate on the TLS port) and scanned again. The second scan writes exactly the expected
 * asset events with before/after, its diff says the same, and the live subscription carries the same rows.
 */

const LOOPBACK = { SCAN_ALLOWED_NETWORKS: '127.0.0.1/32', QUEUE_SUPERVISE_SECONDS: '1' };
const TIMEOUT = 120_000;

const page = (title: string) => `<!doctype html><html><head><title>${title}</title></head><body><h1>${title}</h1></body></html>`;

let certs: TestCertificates;
let app: TestApp;
let client: Client;
let owner: TestUser;
let workspaceId: string;
let targetId: string;
let ws: WsClient;

const state = { title: 'First Title' };
let web: Started;
let secure: Started & { server: https.Server };
let banner: Started;
let fingerprints: { first: string; second: string };

beforeAll(async () => {
  certs = makeCertificates();
  fingerprints = { first: new X509Certificate(certs.selfSigned.cert).fingerprint256, second: new X509Certificate(certs.caSigned.cert).fingerprint256 };
  web = await listen(http.createServer((_req, res) => res.writeHead(200, { server: 'nginx/1.18.0', 'content-type': 'text/html' }).end(page(state.title))));
  const tlsServer = https.createServer({ key: certs.selfSigned.key, cert: certs.selfSigned.cert }, (_req, res) =>
    res.writeHead(200, { server: 'nginx', 'content-type': 'text/html' }).end(page('Secure')),
  );
  secure = { ...(await listen(tlsServer)), server: tlsServer };
  banner = await startBannerServer('SSH-2.0-OpenSSH_9.2p1\r\n');
  app = await startTestApp(LOOPBACK);
  client = clientFor(app);
  owner = await client.signUp('Watcher');
  workspaceId = (await client.createWorkspace(owner)).id;
  targetId = (await addTarget(client, owner, workspaceId, '127.0.0.1')).id;
  ws = wsClientFor(app, owner.token);
});

afterAll(async () => {
  await ws?.dispose();
  await app?.stop();
  await Promise.all([web, secure, banner].filter(Boolean).map((service) => service.close().catch(() => {})));
  certs?.cleanup();
});

const ports = () => [web.port, secure.port, banner.port].join(',');
const keys = () => ({
  host: hostAssetKey({ host: '127.0.0.1' }),
  web: serviceAssetKey({ address: '127.0.0.1', port: web.port, transport: 'tcp' }),
  secure: serviceAssetKey({ address: '127.0.0.1', port: secure.port, transport: 'tcp' }),
  banner: serviceAssetKey({ address: '127.0.0.1', port: banner.port, transport: 'tcp' }),
  page: webAssetKey({ scheme: 'http', host: '127.0.0.1', port: web.port }),
  securePage: webAssetKey({ scheme: 'https', host: '127.0.0.1', port: secure.port }),
  firstCert: certificateAssetKey({ fingerprint256: fingerprints.first }),
  secondCert: certificateAssetKey({ fingerprint256: fingerprints.second }),
});

async function changesOfScan(scanId: string) {
  return app.db.prisma.changeEvent.findMany({ where: { scanId }, orderBy: [{ at: 'asc' }, { id: 'asc' }] });
}

/** Asset events as comparable tuples: type, asset key, and what the data says. */
function assetEvents(rows: Awaited<ReturnType<typeof changesOfScan>>) {
  return rows
    .filter((row) => row.type.startsWith('asset.'))
    .map((row) => {
      const data = row.data as { key: string; changes?: unknown; reason?: string };
      return { type: row.type, key: data.key, ...(data.changes ? { changes: data.changes } : {}), ...(data.reason ? { reason: data.reason } : {}) };
    })
    .sort(byTypeAndKey);
}

function byTypeAndKey(a: { type: string; key: string }, b: { type: string; key: string }) {
  return `${a.type} ${a.key}`.localeCompare(`${b.type} ${b.key}`);
}

/** What the findings' own history says scan `scanId` did: the finding events must be exactly these. */
async function findingHistoryOf(scanId: string) {
  const events = await app.db.prisma.findingEvent.findMany({ where: { scanId, type: { in: ['opened', 'fixed', 'reopened'] } } });
  return events.map((event) => `finding.${event.type} ${event.findingId}`).sort();
}

const findingEventsOf = (rows: Awaited<ReturnType<typeof changesOfScan>>) =>
  rows
    .filter((row) => row.type.startsWith('finding.'))
    .map((row) => `${row.type} ${row.findingId}`)
    .sort();

async function scan(): Promise<string> {
  const started = await startScan(client, owner, workspaceId, targetId, { ports: ports(), timeoutMs: 5_000 });
  const done = await waitForScan(client, owner, workspaceId, started.id);
  expect(done.status, JSON.stringify(done)).toBe('COMPLETED');
  return started.id;
}

describe('a rescan after the planted services changed', { timeout: TIMEOUT }, () => {
  let firstScanId: string;
  let secondScanId: string;

  it('the first scan records every asset it discovers, its findings and scan.completed', async () => {
    firstScanId = await scan();
    const rows = await changesOfScan(firstScanId);
    const k = keys();
    expect(assetEvents(rows)).toEqual(
      [k.host, k.web, k.secure, k.banner, k.page, k.securePage, k.firstCert]
        .map((key) => ({ type: 'asset.discovered', key }))
        .sort((a, b) => a.key.localeCompare(b.key)),
    );
    expect(findingEventsOf(rows)).toEqual(await findingHistoryOf(firstScanId));
    expect(findingEventsOf(rows).length).toBeGreaterThan(0);
    const completed = rows.filter((row) => row.type === 'scan.completed');
    expect(completed).toHaveLength(1);
    expect(completed[0]).toMatchObject({ targetId, workspaceId, data: { assetsFound: 7 } });
    // Every row names the scan and the target, and its asset or finding.
    expect(rows.every((row) => row.scanId === firstScanId && row.targetId === targetId && row.workspaceId === workspaceId)).toBe(true);
    expect(rows.filter((row) => row.type.startsWith('asset.')).every((row) => row.assetId)).toBe(true);
    expect(rows.filter((row) => row.type.startsWith('finding.')).every((row) => row.findingId)).toBe(true);
  });

  it('port closed, title changed, new certificate: exactly the expected change events, live on the subscription', async () => {
    const events = ws.subscribe(
      'subscription($workspaceId: ID!) { workspaceEvents(workspaceId: $workspaceId) { type workspaceId entityId at change { id type at assetId findingId scanId targetId data } } }',
      { workspaceId: globalId('Workspace', workspaceId) },
    );
    // Live before the rescan: a rename reaches the subscription.
    let renames = 0;
    await waitFor(
      async () => {
        renames += 1;
        await client.api('PATCH', `/api/v1/api/workspaces/${workspaceId}`, { as: owner, body: { description: `live ${renames}` } });
        return waitFor(() => events.results.some((r) => r.data?.workspaceEvents.type === 'workspace.updated'), { timeoutMs: 250 }).catch(() => false);
      },
      { timeoutMs: 20_000, what: 'the workspace event subscription to be live' },
    );
    // Events that are not changes keep their fields and have no change.
    const rename = events.results.find((r) => r.data?.workspaceEvents.type === 'workspace.updated')!.data.workspaceEvents;
    expect(rename).toMatchObject({ workspaceId: globalId('Workspace', workspaceId), entityId: globalId('Workspace', workspaceId), change: null });

    await banner.close();
    state.title = 'Second Title';
    secure.server.setSecureContext({ key: certs.caSigned.key, cert: certs.caSigned.cert });
    secondScanId = await scan();

    const rows = await changesOfScan(secondScanId);
    const k = keys();
    expect(assetEvents(rows)).toEqual(
      [
        { type: 'asset.changed', key: k.page, changes: [{ field: 'title', before: 'First Title', after: 'Second Title' }] },
        { type: 'asset.changed', key: k.secure, changes: [{ field: 'certificate', before: fingerprints.first, after: fingerprints.second }] },
        { type: 'asset.discovered', key: k.secondCert },
        { type: 'asset.gone', key: k.firstCert, reason: 'certificate no longer presented' },
        { type: 'asset.gone', key: k.banner, reason: 'port no longer open' },
      ].sort(byTypeAndKey),
    );
    expect(findingEventsOf(rows)).toEqual(await findingHistoryOf(secondScanId));
    expect(rows.filter((row) => row.type === 'scan.completed')).toHaveLength(1);

    // The subscription carries the same rows, with the payload the feed lists.
    await waitFor(() => events.results.filter((r) => r.data?.workspaceEvents.change?.scanId === globalId('Scan', secondScanId)).length >= rows.length, {
      timeoutMs: 20_000,
      what: 'every change of the second scan on the subscription',
    });
    expect(events.errors()).toEqual([]);
    const live = events.results.map((r) => r.data!.workspaceEvents).filter((event) => event.change?.scanId === globalId('Scan', secondScanId));
    expect(live.map((event) => event.change.id).sort()).toEqual(rows.map((row) => row.id).sort());
    for (const event of live) {
      const row = rows.find((candidate) => candidate.id === event.change.id)!;
      expect(event.type).toBe(row.type);
      expect(event.change).toMatchObject({ type: row.type, data: row.data, at: row.at.toISOString(), targetId: globalId('Target', targetId) });
      const about = row.type.startsWith('asset.')
        ? globalId('Asset', row.assetId!)
        : row.type.startsWith('finding.')
          ? globalId('Finding', row.findingId!)
          : globalId('Scan', secondScanId);
      expect(event.entityId).toBe(about);
    }
  });

  it('the diff of the second scan: new, gone and changed assets, new and fixed findings, against the first', async () => {
    const response = await client.api('GET', `/api/v1/api/scans/${secondScanId}/diff`, { as: owner, workspaceId });
    expect(response.status).toBe(200);
    const diff = response.body;
    const k = keys();
    expect(diff).toMatchObject({ scanId: secondScanId, targetId, status: 'COMPLETED', previousScanId: firstScanId, truncated: false });
    expect(diff.newAssets.map((a: { key: string }) => a.key)).toEqual([k.secondCert]);
    expect(diff.goneAssets.map((a: { key: string }) => a.key).sort()).toEqual([k.banner, k.firstCert].sort());
    expect(diff.changedAssets.map((a: { key: string; changes: unknown }) => [a.key, a.changes]).sort()).toEqual(
      [
        [k.page, [{ field: 'title', before: 'First Title', after: 'Second Title' }]],
        [k.secure, [{ field: 'certificate', before: fingerprints.first, after: fingerprints.second }]],
      ].sort(),
    );
    const rows = await changesOfScan(secondScanId);
    const ids = (...types: string[]) =>
      rows
        .filter((row) => types.includes(row.type))
        .map((row) => row.findingId)
        .sort();
    expect(diff.newFindings.map((f: { findingId: string }) => f.findingId).sort()).toEqual(ids('finding.opened', 'finding.reopened'));
    expect(diff.fixedFindings.map((f: { findingId: string }) => f.findingId).sort()).toEqual(ids('finding.fixed'));
    expect(diff.counts).toEqual({
      newAssets: 1,
      goneAssets: 2,
      changedAssets: 2,
      newFindings: diff.newFindings.length,
      fixedFindings: diff.fixedFindings.length,
    });

    // The first scan's diff: everything new, no previous scan.
    const first = (await client.api('GET', `/api/v1/api/scans/${firstScanId}/diff`, { as: owner, workspaceId })).body;
    expect(first).toMatchObject({ previousScanId: null, goneAssets: [], changedAssets: [] });
    expect(first.newAssets).toHaveLength(7);

    // GraphQL Scan.diff says the same.
    const gql = await client.gql(
      `query($id: ID!) { node(id: $id) { ... on Scan { diff { previousScanId newAssets { key assetId } goneAssets { key } changedAssets { key changes { field before after } } newFindings { findingId } fixedFindings { findingId } counts { newAssets goneAssets changedAssets } } } } }`,
      { as: owner, variables: { id: globalId('Scan', secondScanId) } },
    );
    expect(gql.errors).toBeUndefined();
    const graphDiff = gql.data.node.diff;
    expect(graphDiff.previousScanId).toBe(globalId('Scan', firstScanId));
    expect(graphDiff.newAssets).toEqual([{ key: k.secondCert, assetId: globalId('Asset', diff.newAssets[0].assetId) }]);
    expect(graphDiff.counts).toEqual({ newAssets: 1, goneAssets: 2, changedAssets: 2 });
    expect(graphDiff.changedAssets).toHaveLength(2);

    // Another workspace's member cannot read it.
    const stranger = await client.signUp('Stranger');
    const strangerWorkspace = (await client.createWorkspace(stranger)).id;
    expect((await client.api('GET', `/api/v1/api/scans/${secondScanId}/diff`, { as: stranger, workspaceId: strangerWorkspace })).status).toBe(404);
  });

  it('a third scan with nothing changed writes no asset events and reports nothing gone twice', async () => {
    const thirdScanId = await scan();
    const rows = await changesOfScan(thirdScanId);
    expect(assetEvents(rows)).toEqual([]);
    expect(rows.filter((row) => row.type === 'scan.completed')).toHaveLength(1);
  });

  it('the closed port answers again: its service is discovered again, marked reappeared', async () => {
    const again = net.createServer((socket) => socket.end('SSH-2.0-OpenSSH_9.2p1\r\n'));
    await new Promise<void>((resolve, reject) => {
      again.once('error', reject);
      again.listen(banner.port, '127.0.0.1', () => resolve());
    });
    try {
      const started = await startScan(client, owner, workspaceId, targetId, { ports: ports(), timeoutMs: 5_000, steps: ['dns', 'ports'] });
      expect((await waitForScan(client, owner, workspaceId, started.id)).status).toBe('COMPLETED');
      const rows = await changesOfScan(started.id);
      const discovered = rows.filter((row) => row.type.startsWith('asset.'));
      expect(discovered.map((row) => [row.type, row.data])).toEqual([
        ['asset.discovered', { kind: 'service', key: keys().banner, value: `127.0.0.1:${banner.port}`, reappeared: true }],
      ]);
    } finally {
      await new Promise((resolve) => again.close(resolve));
    }
  });
});

describe('a web endpoint that switches from http to https on the same port', { timeout: TIMEOUT }, () => {
  it('the http endpoint is gone and the https one discovered; services on ports outside the list are not covered', async () => {
    const plain = await listen(http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(page('Plain'))));
    const port = plain.port;
    const options = { ports: String(port), timeoutMs: 5_000, steps: ['dns', 'ports', 'http'] };
    const first = await startScan(client, owner, workspaceId, targetId, options);
    expect((await waitForScan(client, owner, workspaceId, first.id)).status).toBe('COMPLETED');
    const httpKey = webAssetKey({ scheme: 'http', host: '127.0.0.1', port });
    expect(assetEvents(await changesOfScan(first.id))).toEqual(
      [
        { type: 'asset.discovered', key: serviceAssetKey({ address: '127.0.0.1', port, transport: 'tcp' }) },
        { type: 'asset.discovered', key: httpKey },
      ].sort(byTypeAndKey),
    );

    await plain.close();
    const tlsServer = https.createServer({ key: certs.selfSigned.key, cert: certs.selfSigned.cert }, (_req, res) => res.end(page('Now TLS')));
    await new Promise<void>((resolve, reject) => {
      tlsServer.once('error', reject);
      tlsServer.listen(port, '127.0.0.1', () => resolve());
    });
    try {
      const second = await startScan(client, owner, workspaceId, targetId, options);
      expect((await waitForScan(client, owner, workspaceId, second.id)).status).toBe('COMPLETED');
      expect(assetEvents(await changesOfScan(second.id))).toEqual(
        [
          { type: 'asset.discovered', key: webAssetKey({ scheme: 'https', host: '127.0.0.1', port }) },
          { type: 'asset.gone', key: httpKey, reason: 'endpoint no longer answers' },
        ].sort(byTypeAndKey),
      );
    } finally {
      await new Promise((resolve) => tlsServer.close(resolve));
    }
  });
});

describe('triage and failures in the feed', { timeout: TIMEOUT }, () => {
  it('dismiss → finding.dismissed with reason and comment; reopen → finding.reopened by the person', async () => {
    const finding = await app.db.prisma.finding.findFirstOrThrow({ where: { workspaceId, status: 'open' } });
    const dismissed = await client.api('POST', '/api/v1/api/vulnerabilities/dismiss', {
      as: owner,
      workspaceId,
      body: { ids: [finding.id], reason: 'accepted_risk', comment: 'lab only' },
    });
    expect(dismissed.status).toBe(200);
    const reopened = await client.api('POST', '/api/v1/api/vulnerabilities/reopen', { as: owner, workspaceId, body: { ids: [finding.id] } });
    expect(reopened.status).toBe(200);
    // Dismissing again what is already dismissed is not a change: only one event per transition.
    const rows = await app.db.prisma.changeEvent.findMany({ where: { findingId: finding.id, scanId: null }, orderBy: { at: 'asc' } });
    expect(rows.map((row) => [row.type, row.data])).toEqual([
      [
        'finding.dismissed',
        { name: finding.name, severity: finding.severity, checkId: finding.checkId, actorId: owner.id, reason: 'accepted_risk', comment: 'lab only' },
      ],
      ['finding.reopened', { name: finding.name, severity: finding.severity, checkId: finding.checkId, actorId: owner.id, comment: null }],
    ]);
    expect(rows.every((row) => row.assetId === finding.assetId && row.targetId === finding.targetId)).toBe(true);
  });

  it('a scan the scope refuses fails and records scan.failed with its error', async () => {
    const outside = await addTarget(client, owner, workspaceId, '127.0.0.2');
    const started = await startScan(client, owner, workspaceId, outside.id, { ports: '80' });
    const done = await waitForScan(client, owner, workspaceId, started.id);
    expect(done.status).toBe('FAILED');
    const rows = await changesOfScan(started.id);
    // The dns step completed (its host is in the inventory); the ports step failed the scan.
    expect(rows.map((row) => [row.type, row.targetId, row.data])).toEqual([
      ['asset.discovered', outside.id, { kind: 'host', key: 'host:127.0.0.2', value: '127.0.0.2' }],
      ['scan.failed', outside.id, { error: done.error }],
    ]);
  });
});
