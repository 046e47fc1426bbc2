import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { randomUUID } from 'node:crypto';
import { encodeGlobalID } from '@pothos/plugin-relay';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { ASSETS_PATH, day, discoveryFixtures, found } from './support/asset-discovery.js';

/**
 * Discovered hosts as members see and decide them through REST and GraphQL (the service itself is in
 * assets.discovery.service.test.ts). Workers are off: enabling a candidate schedules its scan (a row and a queued
 * job), and nothing ever runs or leaves the machine.
 */
let server: TestApp;
let client: ReturnType<typeof clientFor>;
// The SQL the app sends while `recording`: the tests count the provenance queries of one page.
const statements: string[] = [];
let recording = false;

beforeAll(async () => {
  server = await startTestApp({ WORKERS: 'false', SCAN_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128' }, { logQueries: true });
  client = clientFor(server);
  server.db.onStatement((text) => {
    if (recording) statements.push(text);
  });
});
afterAll(() => server?.stop());

const BASE = ASSETS_PATH;
const { record, candidates } = discoveryFixtures(() => server);

function list(as: TestUser, workspaceId: string, query: Record<string, string>) {
  return client.api('GET', `${BASE}?${new URLSearchParams(query)}`, { as, workspaceId });
}

/** Scans of some hosts of the target (what enabling candidates schedules), oldest first. */
async function scansOf(targetId: string) {
  const scans = await server.db.prisma.scan.findMany({ where: { targetId }, orderBy: { createdAt: 'asc' } });
  return scans.filter((scan) => (scan.options as { hosts?: unknown }).hosts !== undefined);
}

/**
 * A statement that reads assets' provenance: a query of its own, the page's query with the relation joined in,
 * or the REST page's own statement (assets/page-sql.ts).
 */
const loadsProvenance = (sql: string) =>
  sql.startsWith('SELECT "public"."asset_discovery"') || sql.includes('_discoveries"."__prisma_data__"') || sql.includes('FROM "asset_discovery" d');

describe('REST', () => {
  it('shows provenance, references and dismissal, and filters by source and dismissed', async () => {
    const fx = await candidates();
    const one = await client.api('GET', `${BASE}/${fx.id('both.example.test')}`, { as: fx.owner, workspaceId: fx.workspaceId });
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ enabled: false, dismissed: false, dismissedAt: null, references: ['partner.example.com'] });
    expect(one.body.discovery).toEqual([
      {
        source: 'bruteforce',
        from: 'example.test',
        fromAssetId: null,
        scanId: fx.scan.id,
        firstSeenAt: day(1).toISOString(),
        lastSeenAt: day(1).toISOString(),
      },
      { source: 'ct', from: 'example.test', fromAssetId: null, scanId: fx.scan.id, firstSeenAt: day(1).toISOString(), lastSeenAt: day(1).toISOString() },
    ]);

    const values = (response: { body: { data: { value: string }[] } }) => response.body.data.map((asset) => asset.value).sort();
    expect(values(await list(fx.owner, fx.workspaceId, { kind: 'host', source: 'ct' }))).toEqual(['both.example.test', 'ct.example.test']);
    expect(values(await list(fx.owner, fx.workspaceId, { source: 'bruteforce' }))).toEqual(['both.example.test', 'brute.example.test']);
    expect((await list(fx.owner, fx.workspaceId, { kind: 'service', source: 'ct' })).body.total).toBe(0);
    await client.api('PATCH', `${BASE}/${fx.id('ct.example.test')}`, { as: fx.owner, workspaceId: fx.workspaceId, body: { dismissed: true } });
    expect(values(await list(fx.owner, fx.workspaceId, { dismissed: 'true' }))).toEqual(['ct.example.test']);
    expect(values(await list(fx.owner, fx.workspaceId, { dismissed: 'false', source: 'ct' }))).toEqual(['both.example.test']);
    const bad = await list(fx.owner, fx.workspaceId, { source: 'guess' });
    expect(bad.status).toBe(400);
    expect(bad.body.details).toEqual([{ field: 'source', message: expect.stringContaining('must be one of: bruteforce, ct') }]);

    // The page's provenance is one query, whatever the page size: its own, or joined into the page's (relationJoins).
    statements.length = 0;
    recording = true;
    const page = await list(fx.owner, fx.workspaceId, { limit: '100' });
    recording = false;
    expect(page.body.data).toHaveLength(3);
    expect(statements.filter(loadsProvenance)).toHaveLength(1);
  });

  it('enables a candidate (and schedules its scan), dismisses it, and takes the dismissal back', async () => {
    const fx = await candidates();
    const publish = vi.spyOn(server.app.deps.pubsub, 'publish');
    const id = fx.id('ct.example.test');
    const on = await client.api('PATCH', `${BASE}/${id}`, { as: fx.owner, workspaceId: fx.workspaceId, body: { enabled: true } });
    expect(on.status).toBe(200);
    expect(on.body).toMatchObject({ id, enabled: true, dismissed: false });
    const [scan] = await scansOf(fx.target.id);
    expect(scan?.options).toMatchObject({ hosts: ['ct.example.test'] });
    expect(publish.mock.calls.filter(([topic, , event]) => topic === 'workspace:event' && (event as { type: string }).type === 'asset.updated')).toEqual([
      ['workspace:event', fx.workspaceId, expect.objectContaining({ type: 'asset.updated', entityId: id })],
    ]);
    publish.mockRestore();
    // Already enabled: nothing to scan again.
    await client.api('PATCH', `${BASE}/${id}`, { as: fx.owner, workspaceId: fx.workspaceId, body: { enabled: true } });
    expect(await scansOf(fx.target.id)).toHaveLength(1);

    const off = await client.api('PATCH', `${BASE}/${id}`, { as: fx.owner, workspaceId: fx.workspaceId, body: { dismissed: true } });
    expect(off.body).toMatchObject({ enabled: false, dismissed: true });
    const dismissedAt = off.body.dismissedAt;
    expect(Date.parse(dismissedAt)).not.toBeNaN();
    // Dismissing again keeps the original time; disabling keeps the dismissal.
    expect((await client.api('PATCH', `${BASE}/${id}`, { as: fx.owner, workspaceId: fx.workspaceId, body: { dismissed: true } })).body.dismissedAt).toBe(
      dismissedAt,
    );
    expect((await client.api('PATCH', `${BASE}/${id}`, { as: fx.owner, workspaceId: fx.workspaceId, body: { enabled: false } })).body.dismissed).toBe(true);
    // Back to a candidate, then enabled again (a new scan).
    const undismissed = await client.api('PATCH', `${BASE}/${id}`, { as: fx.owner, workspaceId: fx.workspaceId, body: { dismissed: false } });
    expect(undismissed.body).toMatchObject({ enabled: false, dismissed: false, dismissedAt: null });
    await client.api('PATCH', `${BASE}/${id}`, { as: fx.owner, workspaceId: fx.workspaceId, body: { dismissed: true } });
    const back = await client.api('PATCH', `${BASE}/${id}`, { as: fx.owner, workspaceId: fx.workspaceId, body: { enabled: true } });
    expect(back.body).toMatchObject({ enabled: true, dismissed: false, dismissedAt: null });
    expect(await scansOf(fx.target.id)).toHaveLength(2);

    const contradictory = await client.api('PATCH', `${BASE}/${id}`, { as: fx.owner, workspaceId: fx.workspaceId, body: { enabled: true, dismissed: true } });
    expect(contradictory.status).toBe(400);
    expect(contradictory.body.details).toEqual([{ field: 'dismissed', message: expect.stringContaining('a dismissed asset cannot be enabled') }]);
  });

  it('updates many at once: ids of other workspaces are notFound and never touched', async () => {
    const fx = await candidates();
    const theirs = await candidates();
    const member = await client.signUp('Member');
    await client.addMember(fx.owner, fx.workspaceId, member);
    const stranger = theirs.id('ct.example.test');
    const nothing = randomUUID();
    const ids = [fx.id('ct.example.test'), fx.id('both.example.test'), stranger, fx.id('ct.example.test').toUpperCase(), nothing];
    const publish = vi.spyOn(server.app.deps.pubsub, 'publish');
    const result = await client.api('PATCH', BASE, { as: member, workspaceId: fx.workspaceId, body: { ids, enabled: true } });
    expect(result.status).toBe(200);
    expect(result.body).toEqual({ updated: 2, notFound: [stranger, nothing] });
    const events = publish.mock.calls.filter(([topic, , event]) => topic === 'workspace:event' && (event as { type: string }).type === 'asset.updated');
    expect(events.map(([, , event]) => (event as { entityId: string }).entityId).sort()).toEqual([fx.id('both.example.test'), fx.id('ct.example.test')].sort());
    publish.mockRestore();
    // One scan of the target for both hosts.
    const scans = await scansOf(fx.target.id);
    expect(scans).toHaveLength(1);
    expect(scans[0]?.options).toMatchObject({ hosts: ['both.example.test', 'ct.example.test'] });
    expect((await server.db.prisma.asset.findUniqueOrThrow({ where: { id: stranger } })).enabled).toBe(false);
    expect(await scansOf(theirs.target.id)).toHaveLength(0);

    const dismissed = await client.api('PATCH', BASE, {
      as: member,
      workspaceId: fx.workspaceId,
      body: { ids: [fx.id('brute.example.test'), stranger], dismissed: true },
    });
    expect(dismissed.body).toEqual({ updated: 1, notFound: [stranger] });
    expect((await server.db.prisma.asset.findUniqueOrThrow({ where: { id: stranger } })).dismissedAt).toBeNull();
    expect((await server.db.prisma.asset.findUniqueOrThrow({ where: { id: fx.id('brute.example.test') } })).dismissedAt).not.toBeNull();
  });

  it('refuses bad bulk bodies with 400 naming the field, and anonymous callers with 401', async () => {
    const fx = await candidates();
    for (const [body, field] of [
      [{ ids: [], enabled: true }, 'ids'],
      [{ ids: Array.from({ length: 1001 }, () => randomUUID()), enabled: true }, 'ids'],
      [{ ids: ['nope'], enabled: true }, 'ids.0'],
      [{ ids: [fx.id('ct.example.test')] }, '(body)'],
      [{ ids: [fx.id('ct.example.test')], enabled: 'true' }, 'enabled'],
      [{ ids: [fx.id('ct.example.test')], enabled: true, dismissed: true }, 'dismissed'],
      [{ ids: [fx.id('ct.example.test')], enabled: true, kind: 'host' }, 'kind'],
      [{ enabled: true }, 'ids'],
    ] as const) {
      const response = await client.api('PATCH', BASE, { as: fx.owner, workspaceId: fx.workspaceId, body });
      expect(response.status, JSON.stringify(body).slice(0, 100)).toBe(400);
      expect(response.body.details.map((detail: { field: string }) => detail.field)).toEqual([field]);
    }
    expect(await server.db.prisma.asset.count({ where: { workspaceId: fx.workspaceId, enabled: true } })).toBe(0);
    expect((await client.api('PATCH', BASE, { workspaceId: fx.workspaceId, body: { ids: [fx.id('ct.example.test')], enabled: true } })).status).toBe(401);
  });
});

describe('GraphQL', () => {
  const ASSETS = `query($id: ID!, $source: DiscoverySource, $dismissed: Boolean) {
    node(id: $id) { ... on Workspace { assets(kind: host, source: $source, dismissed: $dismissed) {
      totalCount edges { node { value enabled dismissed dismissedAt references discovery { source from fromAssetId fromAsset { value } scanId firstSeenAt lastSeenAt } } }
    } } }
  }`;
  const UPDATE_ONE = `mutation($id: ID!, $enabled: Boolean, $dismissed: Boolean) {
    updateAsset(id: $id, enabled: $enabled, dismissed: $dismissed) {
      __typename
      ... on MutationUpdateAssetSuccess { data { databaseId enabled dismissed } }
      ... on ValidationError { details { field message } }
      ... on Error { code }
    }
  }`;
  const UPDATE_MANY = `mutation($ids: [ID!]!, $enabled: Boolean, $dismissed: Boolean) {
    updateAssets(ids: $ids, enabled: $enabled, dismissed: $dismissed) {
      __typename
      ... on MutationUpdateAssetsSuccess { data { updated notFound } }
      ... on ValidationError { details { field message } }
    }
  }`;

  it('lists hosts by source with their provenance, in one provenance query per page', async () => {
    const fx = await candidates();
    const apex = await record(fx.scope(), [found('example.test', { source: 'target' })]);
    await record(fx.scope({ now: day(2) }), [found('ct.example.test', { source: 'ct', from: 'example.test' })]);
    statements.length = 0;
    recording = true;
    const result = await client.gql(ASSETS, { as: fx.owner, variables: { id: encodeGlobalID('Workspace', fx.workspaceId), source: 'ct' } });
    recording = false;
    expect(result.errors).toBeUndefined();
    const nodes = result.data?.node.assets.edges.map((edge: { node: unknown }) => edge.node);
    expect(result.data?.node.assets.totalCount).toBe(2);
    expect(nodes).toEqual([
      {
        value: 'ct.example.test',
        enabled: false,
        dismissed: false,
        dismissedAt: null,
        references: [],
        discovery: [
          {
            source: 'ct',
            from: 'example.test',
            fromAssetId: apex.idByName.get('example.test'),
            fromAsset: { value: 'example.test' },
            scanId: fx.scan.id,
            firstSeenAt: day(1).toISOString(),
            lastSeenAt: day(2).toISOString(),
          },
        ],
      },
      expect.objectContaining({ value: 'both.example.test', references: ['partner.example.com'] }),
    ]);
    // The source filter is an EXISTS inside the page's queries; loading provenance is one query (or part of the page's).
    expect(statements.filter(loadsProvenance)).toHaveLength(1);
  });

  it('updates one asset or many, with global or raw ids; other workspaces are notFound', async () => {
    const fx = await candidates();
    const theirs = await candidates();
    const ct = fx.id('ct.example.test');
    const one = await client.gql(UPDATE_ONE, { as: fx.owner, variables: { id: encodeGlobalID('Asset', ct), enabled: true } });
    expect(one.data?.updateAsset).toEqual({ __typename: 'MutationUpdateAssetSuccess', data: { databaseId: ct, enabled: true, dismissed: false } });
    expect(await scansOf(fx.target.id)).toHaveLength(1);
    const dismissed = await client.gql(UPDATE_ONE, { as: fx.owner, variables: { id: ct, dismissed: true } });
    expect(dismissed.data?.updateAsset.data).toEqual({ databaseId: ct, enabled: false, dismissed: true });
    const foreign = await client.gql(UPDATE_ONE, { as: fx.owner, variables: { id: theirs.id('ct.example.test'), enabled: true } });
    expect(foreign.data?.updateAsset).toEqual({ __typename: 'NotFoundError', code: 'NOT_FOUND' });
    const nothing = await client.gql(UPDATE_ONE, { as: fx.owner, variables: { id: ct } });
    expect(nothing.data?.updateAsset.__typename).toBe('ValidationError');

    const theirGlobal = encodeGlobalID('Asset', theirs.id('both.example.test'));
    const many = await client.gql(UPDATE_MANY, {
      as: fx.owner,
      variables: { ids: [encodeGlobalID('Asset', fx.id('both.example.test')), fx.id('brute.example.test'), theirGlobal], enabled: true },
    });
    expect(many.data?.updateAssets).toEqual({ __typename: 'MutationUpdateAssetsSuccess', data: { updated: 2, notFound: [theirGlobal] } });
    expect(await server.db.prisma.asset.count({ where: { workspaceId: theirs.workspaceId, enabled: true } })).toBe(0);
    const wrongType = await client.gql(UPDATE_MANY, { as: fx.owner, variables: { ids: [encodeGlobalID('Target', fx.target.id)], enabled: true } });
    expect(wrongType.data?.updateAssets).toMatchObject({ __typename: 'ValidationError', details: [{ field: 'ids.0' }] });
  });
});
