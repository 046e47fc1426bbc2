/**
 * Discovery end to end: a scan of a domain target finds the planted attack surface on loopback (DNS, CT,
 * certificates, pages, CNAMEs, zone transfer), records each host with why it is there, and — by the
 * workspace's setting — probes the new hosts in the same scan or keeps them as candidates.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { AXFR_ONLY, OPEN_ZONE, PLANTED, PTR_NAME, startDiscoveryLab, ZONE, type DiscoveryLab } from './support/discovery-lab.js';
import { addTarget, globalId, startScan, waitForScan, WORKSPACE_EVENTS } from './support/scans.js';
import { waitFor } from './support/wait.js';
import { wsClientFor, type Operation, type WsClient } from './support/ws.js';

let lab: DiscoveryLab;
let server: TestApp;
let client: ReturnType<typeof clientFor>;
const sockets: WsClient[] = [];

beforeAll(async () => {
  lab = await startDiscoveryLab();
  server = await startTestApp({ ...lab.env, LOG_LEVEL: process.env.DEBUG_LOG ?? 'silent' });
  client = clientFor(server);
}, 60_000);

afterAll(async () => {
  await Promise.all(sockets.map((socket) => socket.dispose()));
  await server?.stop();
  await lab?.stop();
});

async function hostAssets(owner: TestUser, workspaceId: string, query = '') {
  const response = await client.api('GET', `/api/v1/api/assets?kind=host&limit=100${query}`, { as: owner, workspaceId });
  expect(response.status).toBe(200);
  return new Map<string, any>(response.body.data.map((asset: any) => [asset.value, asset]));
}

async function allAssets(owner: TestUser, workspaceId: string) {
  const response = await client.api('GET', '/api/v1/api/assets?limit=100', { as: owner, workspaceId });
  expect(response.status).toBe(200);
  return response.body.data as any[];
}

function sourcesOf(asset: any): string[] {
  return (asset?.discovery ?? []).map((entry: any) => entry.source).sort();
}

/** Every name the lab plants that discovery must find, with a source that must be among its provenance. */
const EXPECTED: Array<[string, string]> = [
  ...PLANTED.wordlist.map((name): [string, string] => [name, 'bruteforce']),
  [PLANTED.wildcardZone, 'bruteforce'],
  [PLANTED.ct, 'ct'],
  [PLANTED.ctParent, 'ct'],
  [PLANTED.recursion, 'bruteforce'],
  [PLANTED.certificate, 'certificate'],
  [PLANTED.link, 'link'],
  [PLANTED.script, 'link'],
  [PLANTED.cnameChain[0], 'bruteforce'],
  [PLANTED.cnameChain[1], 'cname'],
  [PLANTED.cnameChain[2], 'cname'],
  [PLANTED.dangling, 'bruteforce'],
  [PLANTED.nameServer, 'dns'],
  [PLANTED.mailExchange, 'dns'],
  [PLANTED.spfInclude, 'dns'],
  [PLANTED.permutation, 'permutation'],
];

describe('discovery with auto-enable (REST, and live through workspaceEvents)', () => {
  let owner: TestUser;
  let workspaceId: string;
  let scan: any;
  let events: Operation;

  beforeAll(async () => {
    owner = await client.signUp('Discoverer');
    workspaceId = (await client.createWorkspace(owner)).id;
    const socket = wsClientFor(server, owner.token);
    sockets.push(socket);
    events = socket.subscribe(WORKSPACE_EVENTS, { workspaceId });
    const settings = await client.api('PATCH', `/api/v1/api/workspaces/${workspaceId}/discovery-settings`, {
      as: owner,
      workspaceId,
      body: { exclusions: [PLANTED.excluded] },
    });
    expect(settings.status).toBe(200);
    const target = await addTarget(client, owner, workspaceId, ZONE);
    const started = await startScan(client, owner, workspaceId, target.id, {
      ports: [lab.httpPort, lab.httpsPort],
      timeoutMs: 5_000,
      requestsPerSecond: 1_000,
    });
    scan = await waitForScan(client, owner, workspaceId, started.id, { timeoutMs: 120_000 });
  }, 180_000);

  it('runs discovery first and pivots after the probes, and completes', () => {
    expect(scan.status).toBe('COMPLETED');
    expect(scan.steps.map((step: any) => step.name)).toEqual(['discovery', 'dns', 'ports', 'http', 'tls', 'pivot', 'checks']);
  });

  it('finds every planted in-scope name, with the source that found it', async () => {
    const hosts = await hostAssets(owner, workspaceId);
    const missing = EXPECTED.filter(([name, source]) => !sourcesOf(hosts.get(name)).includes(source));
    expect(missing.map(([name, source]) => `${name} (${source}): ${JSON.stringify(sourcesOf(hosts.get(name)))}`)).toEqual([]);
    expect(sourcesOf(hosts.get(ZONE))).toContain('target');
    // Provenance says from what and in which scan.
    const chained = hosts.get(PLANTED.cnameChain[1]).discovery.find((entry: any) => entry.source === 'cname');
    expect(chained).toMatchObject({ from: `host:${PLANTED.cnameChain[0]}`, scanId: scan.id });
    expect(hosts.get(PLANTED.certificate).discovery.find((entry: any) => entry.source === 'certificate').from).toMatch(/^certificate:sha256:/);
  });

  it('keeps nothing under the wildcard zone, nothing out of scope, nothing excluded — and never asked DNS about the excluded name', async () => {
    const hosts = await hostAssets(owner, workspaceId);
    const names = [...hosts.keys()];
    expect(names.filter((name) => name.endsWith(`.${PLANTED.wildcardZone}`))).toEqual([]);
    expect(names.filter((name) => !name.endsWith(ZONE))).toEqual([]);
    expect(names).not.toContain(PLANTED.excluded);
    expect(lab.dns.queryLog().filter((query) => query.name === PLANTED.excluded)).toEqual([]);
    // The out-of-scope link is a reference on the page that pointed at it, and was never probed.
    const assets = await allAssets(owner, workspaceId);
    expect(assets.some((asset) => asset.kind === 'web' && asset.references.includes(PLANTED.outOfScopeLink))).toBe(true);
    expect(assets.some((asset) => asset.value.includes(PLANTED.outOfScopeLink))).toBe(false);
    expect(hosts.get(ZONE).references).toContain(PLANTED.outOfScopeSpf);
  });

  it("probes discovered hosts in the same scan (auto-enable), and their results arrive live like the target's", async () => {
    const hosts = await hostAssets(owner, workspaceId);
    expect(hosts.get(PLANTED.link).enabled).toBe(true);
    const web = (await allAssets(owner, workspaceId)).filter((asset) => asset.kind === 'web');
    const webKeys = web.map((asset) => asset.key);
    for (const name of [PLANTED.wordlist[0], PLANTED.ct, PLANTED.certificate, PLANTED.link]) {
      expect(webKeys).toContain(`web:http://${name}:${lab.httpPort}`);
    }
    const discovered = await waitFor(
      () => {
        const ids = new Set(events.results.filter((r) => r.data?.workspaceEvents.type === 'asset.discovered').map((r) => r.data.workspaceEvents.entityId));
        return ids.size >= hosts.size + web.length ? ids : undefined;
      },
      { timeoutMs: 10_000, what: 'asset.discovered events for every host and web endpoint' },
    );
    for (const asset of [hosts.get(PLANTED.ct), hosts.get(PLANTED.link), ...web.filter((w) => w.data.host === PLANTED.link)]) {
      expect(discovered.has(asset.nodeId)).toBe(true);
    }
  });

  it('reports the dangling CNAME as a possible takeover; a refused zone transfer is no finding', async () => {
    const response = await client.api('GET', '/api/v1/api/vulnerabilities?limit=100', { as: owner, workspaceId });
    expect(response.status).toBe(200);
    const byCheck = new Map<string, any>(response.body.data.map((finding: any) => [finding.checkId, finding]));
    expect(byCheck.get('subdomain-takeover-dangling-cname')).toMatchObject({ severity: 'high', name: 'Possible subdomain takeover' });
    expect(JSON.stringify(byCheck.get('subdomain-takeover-dangling-cname').evidence)).toContain(PLANTED.danglingTarget);
    expect(byCheck.has('dns-zone-transfer')).toBe(false);
    // The transfer was asked for, over TCP, and refused.
    expect(lab.dns.queryLog().some((query) => query.type === 'AXFR' && query.name === ZONE && query.transport === 'tcp')).toBe(true);
  });

  it('filters the inventory by source', async () => {
    const viaCt = await hostAssets(owner, workspaceId, '&source=ct');
    // The CT entry's common name (www) was found by brute force too: it is in both filters.
    expect([...viaCt.keys()].sort()).toEqual([PLANTED.ct, PLANTED.ctParent, PLANTED.wordlist[0]].sort());
    for (const asset of viaCt.values()) expect(sourcesOf(asset)).toContain('ct');
    const bad = await client.api('GET', '/api/v1/api/assets?source=rumour', { as: owner, workspaceId });
    expect(bad.status).toBe(400);
  });
});

describe('settings and other targets', () => {
  it('runs no discovery for a workspace that does not discover, unless the scan asks for it', async () => {
    const owner = await client.signUp('NoDiscovery');
    const workspaceId = (await client.createWorkspace(owner, { isAssetsDiscovery: false })).id;
    const target = await addTarget(client, owner, workspaceId, ZONE);
    const plain = await startScan(client, owner, workspaceId, target.id, { steps: ['dns'] });
    expect(plain.steps.map((step: any) => step.name)).toEqual(['dns']);
    const defaults = await startScan(client, owner, workspaceId, target.id, { ports: String(lab.httpPort) });
    expect(defaults.steps.map((step: any) => step.name)).toEqual(['dns', 'ports', 'http', 'tls', 'checks']);
    const asked = await startScan(client, owner, workspaceId, target.id, { steps: ['discovery'], discovery: { builtinWordlist: false, wordlist: ['www'] } });
    expect(asked.steps.map((step: any) => step.name)).toEqual(['discovery']);
    expect((await waitForScan(client, owner, workspaceId, asked.id, { timeoutMs: 60_000 })).status).toBe('COMPLETED');
    expect(sourcesOf((await hostAssets(owner, workspaceId)).get(PLANTED.wordlist[0]))).toContain('bruteforce');
  }, 120_000);

  it('names the addresses of an IP target by their PTR records', async () => {
    const owner = await client.signUp('Reverse');
    const workspaceId = (await client.createWorkspace(owner)).id;
    const target = await addTarget(client, owner, workspaceId, '127.0.0.1');
    const started = await startScan(client, owner, workspaceId, target.id, { steps: ['discovery'] });
    expect((await waitForScan(client, owner, workspaceId, started.id, { timeoutMs: 60_000 })).status).toBe('COMPLETED');
    const named = (await hostAssets(owner, workspaceId)).get(PTR_NAME);
    expect(named.discovery).toEqual([expect.objectContaining({ source: 'ptr', from: '127.0.0.1', scanId: started.id })]);
  }, 120_000);
});

describe('zone transfer', () => {
  it('lists the names of a zone whose server allows AXFR, and reports the open transfer', async () => {
    const owner = await client.signUp('Transfer');
    const workspaceId = (await client.createWorkspace(owner)).id;
    const target = await addTarget(client, owner, workspaceId, OPEN_ZONE);
    const started = await startScan(client, owner, workspaceId, target.id, {
      steps: ['discovery'],
      discovery: { builtinWordlist: false, sources: ['dns', 'axfr'] },
    });
    const done = await waitForScan(client, owner, workspaceId, started.id, { timeoutMs: 60_000 });
    expect(done.status).toBe('COMPLETED');
    expect(done.steps.map((step: any) => step.name)).toEqual(['discovery']);
    const hosts = await hostAssets(owner, workspaceId);
    expect(sourcesOf(hosts.get(AXFR_ONLY))).toEqual(['axfr']);
    expect(hosts.get(AXFR_ONLY).discovery[0]).toMatchObject({ from: `ns.${OPEN_ZONE}`, scanId: started.id });
    const findings = await client.api('GET', '/api/v1/api/vulnerabilities?limit=100', { as: owner, workspaceId });
    const transfer = findings.body.data.find((finding: any) => finding.checkId === 'dns-zone-transfer');
    expect(transfer).toMatchObject({ severity: 'medium', name: 'DNS zone transfer allowed', status: 'open' });
    expect(JSON.stringify(transfer.evidence)).toContain(AXFR_ONLY);
  }, 120_000);
});

describe('discovery without auto-enable (GraphQL subscription)', () => {
  it('keeps discovered hosts as candidates, scans one when enabled, and a dismissed one never comes back as new', async () => {
    const owner = await client.signUp('Candidates');
    const workspace = await client.createWorkspace(owner, { isAutoEnableAssetAfterDiscovered: false });
    const settings = await client.gql(
      `mutation($w: ID!, $i: DiscoverySettingsInput!) { updateDiscoverySettings(workspaceId: $w, input: $i) {
        __typename ... on Error { message } } }`,
      { as: owner, variables: { w: globalId('Workspace', workspace.id), i: { wordlist: ['www', 'api', 'blog', 'shop'] } } },
    );
    expect(settings.errors).toBeUndefined();
    const target = await addTarget(client, owner, workspace.id, ZONE);
    const socket = wsClientFor(server, owner.token);
    sockets.push(socket);
    const events = socket.subscribe(WORKSPACE_EVENTS, { workspaceId: globalId('Workspace', workspace.id) });
    const options = { ports: String(lab.httpPort), timeoutMs: 5_000, discovery: { builtinWordlist: false, maxDepth: 1 } };
    const startMutation = `mutation($t: ID!, $o: ScanOptionsInput) { startScan(targetId: $t, options: $o) {
      __typename ... on Error { message } ... on MutationStartScanSuccess { data { databaseId } } } }`;
    // Discovery takes seconds before the first host is recorded; the subscription is live long before that.
    const started = await client.gql(startMutation, { as: owner, variables: { t: globalId('Target', target.id), o: options } });
    expect(started.data.startScan.__typename).toBe('MutationStartScanSuccess');
    const first = await waitForScan(client, owner, workspace.id, started.data.startScan.data.databaseId, { timeoutMs: 120_000 });
    expect(first.status).toBe('COMPLETED');

    const hosts = await hostAssets(owner, workspace.id);
    const www = hosts.get(PLANTED.wordlist[0]);
    const api = hosts.get(PLANTED.wordlist[1]);
    expect(www).toMatchObject({ enabled: false, dismissed: false });
    expect(sourcesOf(www)).toContain('bruteforce');
    expect(hosts.get(ZONE).enabled).toBe(true);
    // Candidates are resolved, never probed: only the target has web endpoints.
    const webHosts = (await allAssets(owner, workspace.id)).filter((asset) => asset.kind === 'web').map((asset) => asset.data.host);
    expect([...new Set(webHosts)]).toEqual([ZONE]);
    // Names the target's own page and certificate led to are candidates as well.
    expect(hosts.get(PLANTED.link)).toMatchObject({ enabled: false });
    // Each new host arrived live as asset.discovered.
    await waitFor(() => events.results.filter((result) => result.data?.workspaceEvents.type === 'asset.discovered').length >= hosts.size || undefined, {
      timeoutMs: 10_000,
      what: 'asset.discovered events',
    });
    const discoveredIds = new Set(
      events.results.filter((r) => r.data?.workspaceEvents.type === 'asset.discovered').map((r) => r.data.workspaceEvents.entityId),
    );
    expect(discoveredIds.has(www.nodeId) || discoveredIds.has(www.id)).toBe(true);

    // Enabling a candidate scans it.
    const enable = await client.gql(`mutation($id: ID!) { updateAsset(id: $id, enabled: true) { __typename ... on Error { message } } }`, {
      as: owner,
      variables: { id: www.nodeId },
    });
    expect(enable.errors).toBeUndefined();
    expect(enable.data.updateAsset.__typename).not.toBe('ValidationError');
    const scans = await waitFor(
      async () => {
        const list = await client.api('GET', `/api/v1/api/scans?targetId=${target.id}`, { as: owner, workspaceId: workspace.id });
        return list.body.data.length === 2 ? list.body.data : undefined;
      },
      { timeoutMs: 10_000, what: 'the scan of the enabled host' },
    );
    const second = await waitForScan(client, owner, workspace.id, scans[0].id, { timeoutMs: 60_000 });
    expect(second.status).toBe('COMPLETED');
    expect(second.options.hosts).toEqual([PLANTED.wordlist[0]]);
    expect(second.steps.map((step: any) => step.name)).not.toContain('discovery');
    const webAfter = (await allAssets(owner, workspace.id)).filter((asset) => asset.kind === 'web').map((asset) => asset.data.host);
    expect(webAfter).toContain(PLANTED.wordlist[0]);

    // A dismissed candidate is seen again by the next discovery but is not new, and stays off.
    const dismiss = await client.api('PATCH', `/api/v1/api/assets/${api.id}`, { as: owner, workspaceId: workspace.id, body: { dismissed: true } });
    expect(dismiss.status).toBe(200);
    expect(dismiss.body).toMatchObject({ enabled: false, dismissed: true });
    const before = events.results.length;
    const third = await startScan(client, owner, workspace.id, target.id, {
      ports: String(lab.httpPort),
      timeoutMs: 5_000,
      discovery: { builtinWordlist: false, maxDepth: 1 },
    });
    expect((await waitForScan(client, owner, workspace.id, third.id, { timeoutMs: 120_000 })).status).toBe('COMPLETED');
    const later = events.results
      .slice(before)
      .filter((r) => r.data?.workspaceEvents.type === 'asset.discovered')
      .map((r) => r.data.workspaceEvents.entityId);
    expect(later).not.toContain(api.nodeId);
    expect(later).not.toContain(api.id);
    expect((await hostAssets(owner, workspace.id)).get(PLANTED.wordlist[1])).toMatchObject({ enabled: false, dismissed: true });
  }, 300_000);
});
