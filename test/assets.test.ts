import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { encodeGlobalID } from '@pothos/plugin-relay';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';

let server: TestApp;
let client: ReturnType<typeof clientFor>;

beforeAll(async () => {
  server = await startTestApp();
  client = clientFor(server);
});
afterAll(() => server?.stop());

const BASE = '/api/v1/api/assets';

type Asset = { id: string; kind: string; value: string; enabled: boolean; [key: string]: unknown };

function list(as: TestUser, workspaceId: string, query: Record<string, string | number | boolean> = {}) {
  const qs = new URLSearchParams(Object.entries(query).map(([key, value]) => [key, String(value)])).toString();
  return client.api('GET', `${BASE}${qs ? `?${qs}` : ''}`, { as, workspaceId });
}

function values(response: { body: { data: Asset[] } }): string[] {
  return response.body.data.map((asset) => asset.value);
}

function fields(response: { body: any }): string[] {
  return (response.body.details ?? []).map((detail: { field: string }) => detail.field);
}

/**
 * Scans write the inventory (not built yet): fixtures go straight to the database. A host with a service,
 * a web application and a certificate under it, on one target; another host on a second target.
 */
async function inventory() {
  const owner = await client.signUp('Owner');
  const workspaceId = (await client.createWorkspace(owner)).id;
  const prisma = server.db.prisma;
  const [web, api] = await Promise.all(
    ['https://web.example.com', '10.0.0.5'].map(
      async (value) => (await client.api('POST', '/api/v1/api/targets', { as: owner, workspaceId, body: { value } })).body,
    ),
  );
  const day = (n: number) => new Date(Date.UTC(2026, 0, n));
  const host = await prisma.asset.create({
    data: {
      workspaceId,
      targetId: web.id,
      kind: 'host',
      key: 'host:web.example.com',
      value: 'web.example.com',
      data: { addresses: ['10.0.0.7'] },
      firstSeenAt: day(1),
      lastSeenAt: day(5),
    },
  });
  const service = await prisma.asset.create({
    data: {
      workspaceId,
      targetId: web.id,
      parentId: host.id,
      kind: 'service',
      key: 'service:10.0.0.7:443/tcp',
      value: '10.0.0.7:443',
      data: { port: 443, protocol: 'tcp' },
      firstSeenAt: day(2),
      lastSeenAt: day(6),
    },
  });
  const site = await prisma.asset.create({
    data: {
      workspaceId,
      targetId: web.id,
      parentId: service.id,
      kind: 'web',
      key: 'web:https://web.example.com:443',
      value: 'https://web.example.com',
      data: { status: 200, title: 'Welcome' },
      firstSeenAt: day(3),
      lastSeenAt: day(7),
    },
  });
  const cert = await prisma.asset.create({
    data: {
      workspaceId,
      targetId: web.id,
      parentId: service.id,
      kind: 'certificate',
      key: 'cert:abc123',
      value: 'CN=web.example.com',
      data: { sha256: 'abc123' },
      enabled: false,
      firstSeenAt: day(4),
      lastSeenAt: day(4),
    },
  });
  const other = await prisma.asset.create({
    data: { workspaceId, targetId: api.id, kind: 'host', key: 'host:10.0.0.5', value: '10.0.0.5', data: {}, firstSeenAt: day(5), lastSeenAt: day(8) },
  });
  // Each asset was seen through its target, as a scan would have recorded.
  await prisma.assetTarget.createMany({ data: [host, service, site, cert, other].map((asset) => ({ assetId: asset.id, targetId: asset.targetId! })) });
  return { owner, workspaceId, targets: { web, api }, assets: { host, service, site, cert, other } };
}

describe('GET /api/assets', () => {
  let fx: Awaited<ReturnType<typeof inventory>>;
  beforeAll(async () => {
    fx = await inventory();
  });

  it('pages the inventory, most recently seen first', async () => {
    const response = await list(fx.owner, fx.workspaceId, { limit: 2 });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ total: 5, page: 1, limit: 2, pageCount: 3, hasNextPage: true });
    expect(values(response)).toEqual(['10.0.0.5', 'https://web.example.com']);
    const last = await list(fx.owner, fx.workspaceId, { limit: 2, page: 3 });
    expect(values(last)).toEqual(['CN=web.example.com']);
    expect(last.body.hasNextPage).toBe(false);
    // Past the end: no rows, the total still told (counted on its own then), from the counters or by search.
    expect((await list(fx.owner, fx.workspaceId, { limit: 2, page: 4 })).body).toMatchObject({ data: [], total: 5, pageCount: 3, hasNextPage: false });
    expect((await list(fx.owner, fx.workspaceId, { search: 'web', page: 2 })).body).toMatchObject({ data: [], total: 3, hasNextPage: false });
  });

  it('answers each asset with its fields', async () => {
    const response = await list(fx.owner, fx.workspaceId, { kind: 'service' });
    expect(response.body.data).toEqual([
      {
        id: fx.assets.service.id,
        nodeId: encodeGlobalID('Asset', fx.assets.service.id),
        workspaceId: fx.workspaceId,
        kind: 'service',
        key: 'service:10.0.0.7:443/tcp',
        value: '10.0.0.7:443',
        data: { port: 443, protocol: 'tcp' },
        enabled: true,
        parentId: fx.assets.host.id,
        targetId: fx.targets.web.id,
        lastScanId: null,
        firstSeenAt: '2026-01-02T00:00:00.000Z',
        lastSeenAt: '2026-01-06T00:00:00.000Z',
        discovery: [],
        references: [],
        dismissed: false,
        dismissedAt: null,
      },
    ]);
  });

  it('filters by kind, target, search and enabled', async () => {
    expect(values(await list(fx.owner, fx.workspaceId, { kind: 'host' }))).toEqual(['10.0.0.5', 'web.example.com']);
    expect(values(await list(fx.owner, fx.workspaceId, { targetId: fx.targets.api.id }))).toEqual(['10.0.0.5']);
    expect((await list(fx.owner, fx.workspaceId, { targetId: fx.targets.web.id })).body.total).toBe(4);
    expect((await list(fx.owner, fx.workspaceId, { targetId: randomUUID() })).body.total).toBe(0);
    expect(values(await list(fx.owner, fx.workspaceId, { search: 'WEB.Example' }))).toEqual([
      'https://web.example.com',
      'web.example.com',
      'CN=web.example.com',
    ]);
    expect(values(await list(fx.owner, fx.workspaceId, { enabled: false }))).toEqual(['CN=web.example.com']);
    expect((await list(fx.owner, fx.workspaceId, { enabled: true })).body.total).toBe(4);
    expect(values(await list(fx.owner, fx.workspaceId, { kind: 'host', search: 'web' }))).toEqual(['web.example.com']);
  });

  it('sorts by value and firstSeenAt, either way', async () => {
    expect(values(await list(fx.owner, fx.workspaceId, { sortBy: 'value', sortOrder: 'ASC' }))).toEqual([
      '10.0.0.5',
      '10.0.0.7:443',
      'CN=web.example.com',
      'https://web.example.com',
      'web.example.com',
    ]);
    expect(values(await list(fx.owner, fx.workspaceId, { sortBy: 'firstSeenAt', sortOrder: 'ASC' }))).toEqual([
      'web.example.com',
      '10.0.0.7:443',
      'https://web.example.com',
      'CN=web.example.com',
      '10.0.0.5',
    ]);
    expect(values(await list(fx.owner, fx.workspaceId, { sortBy: 'lastSeenAt', sortOrder: 'ASC' }))[0]).toBe('CN=web.example.com');
  });

  it('refuses bad query parameters with 400 naming them', async () => {
    for (const [query, field] of [
      [{ kind: 'ip' }, 'kind'],
      [{ targetId: 'nope' }, 'targetId'],
      [{ enabled: 'yes' }, 'enabled'],
      [{ sortBy: 'key' }, 'sortBy'],
      [{ limit: 0 }, 'limit'],
      [{ search: 'x'.repeat(201) }, 'search'],
      [{ owner: 'me' }, 'owner'],
    ] as const) {
      const response = await list(fx.owner, fx.workspaceId, query);
      expect(response.status, JSON.stringify(query)).toBe(400);
      expect(fields(response)).toEqual([field]);
    }
  });
});

describe('GET and PATCH /api/assets/{id}', () => {
  it('gets one asset, and disables and re-enables it', async () => {
    const { owner, workspaceId, assets } = await inventory();
    const got = await client.api('GET', `${BASE}/${assets.site.id}`, { as: owner, workspaceId });
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ id: assets.site.id, kind: 'web', data: { status: 200, title: 'Welcome' }, parentId: assets.service.id, enabled: true });

    const off = await client.api('PATCH', `${BASE}/${assets.site.id}`, { as: owner, workspaceId, body: { enabled: false } });
    expect(off.status).toBe(200);
    expect(off.body).toMatchObject({ id: assets.site.id, enabled: false, value: 'https://web.example.com' });
    expect((await list(owner, workspaceId, { enabled: false })).body.total).toBe(2);
    const on = await client.api('PATCH', `${BASE}/${assets.site.id}`, { as: owner, workspaceId, body: { enabled: true } });
    expect(on.body.enabled).toBe(true);
  });

  it('refuses bad bodies with 400 naming the field', async () => {
    const { owner, workspaceId, assets } = await inventory();
    for (const [body, field] of [
      [{ enabled: 'false' }, 'enabled'],
      [{ enabled: null }, 'enabled'],
      [{}, '(body)'],
      [{ enabled: true, value: 'x' }, 'value'],
    ] as const) {
      const response = await client.api('PATCH', `${BASE}/${assets.host.id}`, { as: owner, workspaceId, body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(fields(response)).toEqual([field]);
    }
    expect((await client.api('GET', `${BASE}/${assets.host.id}`, { as: owner, workspaceId })).body.enabled).toBe(true);
    const badId = await client.api('GET', `${BASE}/123`, { as: owner, workspaceId });
    expect(badId.status).toBe(400);
    expect(fields(badId)).toEqual(['id']);
  });

  it("another workspace's asset reads exactly like one that does not exist", async () => {
    const mine = await inventory();
    const theirs = await inventory();
    const random = await client.api('GET', `${BASE}/${randomUUID()}`, { as: mine.owner, workspaceId: mine.workspaceId });
    const stranger = await client.api('GET', `${BASE}/${theirs.assets.host.id}`, { as: mine.owner, workspaceId: mine.workspaceId });
    expect(stranger.status).toBe(404);
    expect(stranger.body).toEqual(random.body);
    expect(stranger.body).toMatchObject({ code: 'NOT_FOUND', message: 'Asset not found' });

    const patch = await client.api('PATCH', `${BASE}/${theirs.assets.host.id}`, { as: mine.owner, workspaceId: mine.workspaceId, body: { enabled: false } });
    expect(patch.status).toBe(404);
    expect(patch.body).toEqual(random.body);
    expect((await server.db.prisma.asset.findUniqueOrThrow({ where: { id: theirs.assets.host.id } })).enabled).toBe(true);

    const viaHeader = await list(mine.owner, theirs.workspaceId);
    expect(viaHeader.status).toBe(404);
    expect(viaHeader.body.message).toBe('Workspace not found');
    expect((await list(mine.owner, mine.workspaceId)).body.total).toBe(5);
  });

  it('members read and toggle assets; anonymous callers get 401', async () => {
    const { owner, workspaceId, assets } = await inventory();
    const member = await client.signUp('Member');
    await client.addMember(owner, workspaceId, member);
    expect((await list(member, workspaceId)).body.total).toBe(5);
    const off = await client.api('PATCH', `${BASE}/${assets.other.id}`, { as: member, workspaceId, body: { enabled: false } });
    expect(off.status).toBe(200);
    expect(off.body.enabled).toBe(false);
    expect((await client.api('GET', BASE, { workspaceId })).status).toBe(401);
  });
});

describe('GraphQL', () => {
  const ASSETS = `query($id: ID!, $kind: AssetKind, $targetId: ID, $search: String, $enabled: Boolean) {
    node(id: $id) { ... on Workspace { assets(kind: $kind, targetId: $targetId, search: $search, enabled: $enabled) {
      totalCount edges { node { value kind } }
    } } }
  }`;

  it('lists the inventory as a connection with filters, and resolves parent and target', async () => {
    const { owner, workspaceId, targets, assets } = await inventory();
    const wsId = encodeGlobalID('Workspace', workspaceId);
    const all = await client.gql(ASSETS, { as: owner, variables: { id: wsId } });
    expect(all.data?.node.assets.totalCount).toBe(5);
    expect(all.data?.node.assets.edges.map((e: { node: { value: string } }) => e.node.value)).toEqual([
      '10.0.0.5',
      'https://web.example.com',
      '10.0.0.7:443',
      'web.example.com',
      'CN=web.example.com',
    ]);
    const hosts = await client.gql(ASSETS, { as: owner, variables: { id: wsId, kind: 'host', targetId: encodeGlobalID('Target', targets.web.id) } });
    expect(hosts.data?.node.assets).toEqual({ totalCount: 1, edges: [{ node: { value: 'web.example.com', kind: 'host' } }] });
    const searched = await client.gql(ASSETS, { as: owner, variables: { id: wsId, search: '10.0.0', enabled: true } });
    expect(searched.data?.node.assets.totalCount).toBe(2);
    const disabled = await client.gql(ASSETS, { as: owner, variables: { id: wsId, enabled: false } });
    expect(disabled.data?.node.assets.edges).toEqual([{ node: { value: 'CN=web.example.com', kind: 'certificate' } }]);

    const one = await client.gql(`query($id: ID!) { asset(id: $id) { databaseId kind data enabled parent { value parent { value } } target { value } } }`, {
      as: owner,
      variables: { id: encodeGlobalID('Asset', assets.site.id) },
    });
    expect(one.data?.asset).toEqual({
      databaseId: assets.site.id,
      kind: 'web',
      data: { status: 200, title: 'Welcome' },
      enabled: true,
      parent: { value: '10.0.0.7:443', parent: { value: 'web.example.com' } },
      target: { value: 'https://web.example.com' },
    });
  });

  it("returns null for another workspace's asset", async () => {
    const mine = await inventory();
    const theirs = await inventory();
    const id = encodeGlobalID('Asset', theirs.assets.host.id);
    const result = await client.gql('query($id: ID!) { asset(id: $id) { value } node(id: $id) { id } }', { as: mine.owner, variables: { id } });
    expect(result.data).toEqual({ asset: null, node: null });
  });
});
