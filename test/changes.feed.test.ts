import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { assetFieldChanges, recordChanges } from '../src/modules/changes/record.js';
import type { ChangeEventRecord, ChangeInput } from '../src/modules/changes/types.js';
import { upsertAssets } from '../src/modules/assets/ingest.js';
import { recordFindings } from '../src/modules/vulnerabilities/ingest.js';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { addTarget, globalId, type Client } from './support/scans.js';

/**
 * The change feed's read side and its transaction guarantee: REST filters and cursor paging, the GraphQL
 * connection, bad input, workspace isolation, and that an ingest which rolls back leaves no event behind.
 */

let app: TestApp;
let client: Client;
let owner: TestUser;
let workspaceId: string;
let targetId: string;
let otherWorkspaceId: string;
const assetId = randomUUID();
const scanId = randomUUID();
const findingId = randomUUID();
const base = Date.parse('2026-01-01T00:00:00.000Z');
const minute = (n: number) => new Date(base + n * 60_000);

/** Ten events a minute apart (two share minute 5, so ties are ordered by id), newest is minute 9. */
function seed(): ChangeInput[] {
  const identity = { kind: 'service' as const, key: 'service:127.0.0.1:22/tcp', value: '127.0.0.1:22' };
  const finding = { name: 'Missing header', severity: 'low', checkId: 'http-headers' };
  return [
    { type: 'asset.discovered', workspaceId, at: minute(0), assetId, targetId, scanId, data: identity },
    { type: 'finding.opened', workspaceId, at: minute(1), assetId, findingId, targetId, scanId, data: finding },
    { type: 'asset.changed', workspaceId, at: minute(2), assetId, targetId, data: { ...identity, changes: [{ field: 'banner', before: 'a', after: 'b' }] } },
    {
      type: 'scan.completed',
      workspaceId,
      at: minute(3),
      scanId,
      targetId,
      data: { assetsFound: 1, findings: { info: 0, low: 1, medium: 0, high: 0, critical: 0 } },
    },
    { type: 'finding.dismissed', workspaceId, at: minute(4), findingId, data: { ...finding, actorId: 'u1', reason: 'other', comment: null } },
    { type: 'finding.reopened', workspaceId, at: minute(5), findingId, data: { ...finding, actorId: 'u1', comment: null } },
    {
      type: 'asset.gone',
      workspaceId,
      at: minute(5),
      assetId,
      targetId,
      data: { ...identity, lastSeenAt: minute(2).toISOString(), reason: 'port no longer open' },
    },
    { type: 'finding.fixed', workspaceId, at: minute(6), findingId, assetId, data: finding },
    { type: 'scan.failed', workspaceId, at: minute(7), scanId: randomUUID(), targetId, data: { error: 'boom' } },
    { type: 'asset.discovered', workspaceId, at: minute(9), assetId: randomUUID(), data: { kind: 'host', key: 'host:a.test', value: 'a.test' } },
  ];
}

let seeded: ChangeEventRecord[];

beforeAll(async () => {
  app = await startTestApp();
  client = clientFor(app);
  owner = await client.signUp('Feed');
  workspaceId = (await client.createWorkspace(owner)).id;
  targetId = (await addTarget(client, owner, workspaceId, 'example.test')).id;
  otherWorkspaceId = (await client.createWorkspace(owner)).id;
  const rows = await app.db.prisma.$transaction((tx) => recordChanges(tx, seed()));
  // Newest first, ties by id descending: what the feed answers.
  seeded = [...rows].sort((a, b) => b.at.getTime() - a.at.getTime() || (a.id < b.id ? 1 : -1));
  await app.db.prisma.$transaction((tx) =>
    recordChanges(tx, [{ type: 'scan.failed', workspaceId: otherWorkspaceId, at: minute(8), scanId, data: { error: 'elsewhere' } }]),
  );
});

afterAll(async () => {
  await app?.stop();
});

const list = (query: string, as: TestUser = owner, workspace = workspaceId) => client.api('GET', `/api/v1/api/changes${query}`, { as, workspaceId: workspace });
const ids = (body: { data: { id: string }[] }) => body.data.map((change) => change.id);

describe('GET /api/v1/api/changes', () => {
  it('lists the workspace’s changes newest first with typed data, and nothing of another workspace', async () => {
    const response = await list('');
    expect(response.status).toBe(200);
    expect(ids(response.body)).toEqual(seeded.map((row) => row.id));
    expect(response.body.nextCursor).toBeNull();
    const changed = response.body.data.find((change: { type: string }) => change.type === 'asset.changed');
    expect(changed).toMatchObject({
      workspaceId,
      assetId,
      targetId,
      scanId: null,
      findingId: null,
      at: minute(2).toISOString(),
      data: { kind: 'service', key: 'service:127.0.0.1:22/tcp', value: '127.0.0.1:22', changes: [{ field: 'banner', before: 'a', after: 'b' }] },
    });
    const other = await list('', owner, otherWorkspaceId);
    expect(other.body.data.map((change: { data: unknown }) => change.data)).toEqual([{ error: 'elsewhere' }]);
  });

  it('pages with cursor and limit: every change once, in order, and the last page says so', async () => {
    const pages: string[][] = [];
    let cursor: string | null = null;
    do {
      const response: { status: number; body: { data: { id: string }[]; nextCursor: string | null } } = await list(
        `?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      expect(response.status).toBe(200);
      pages.push(ids(response.body));
      cursor = response.body.nextCursor;
    } while (cursor && pages.length < 10);
    expect(pages.map((page) => page.length)).toEqual([3, 3, 3, 1]);
    expect(pages.flat()).toEqual(seeded.map((row) => row.id));
    // A limit that ends exactly at the last row has no next page.
    expect((await list('?limit=10')).body.nextCursor).toBeNull();
    expect((await list('?limit=9')).body.nextCursor).not.toBeNull();
  });

  it('filters by types (comma list, repeated or both), since/until, asset, target and scan', async () => {
    const typesOf = (body: { data: { type: string }[] }) => body.data.map((change) => change.type);
    expect(typesOf((await list('?types=asset.gone,finding.opened')).body)).toEqual(['asset.gone', 'finding.opened']);
    expect(typesOf((await list('?types=asset.gone&types=finding.opened')).body)).toEqual(['asset.gone', 'finding.opened']);
    expect(typesOf((await list('?types=scan.failed,scan.completed&types=finding.fixed')).body)).toEqual(['scan.failed', 'finding.fixed', 'scan.completed']);
    const window = (await list(`?since=${minute(3).toISOString()}&until=${minute(6).toISOString()}`)).body;
    expect(window.data.map((change: { at: string }) => change.at).sort()).toEqual(
      [minute(3), minute(4), minute(5), minute(5)].map((date) => date.toISOString()),
    );
    expect(ids((await list(`?assetId=${assetId}`)).body)).toEqual(seeded.filter((row) => row.assetId === assetId).map((row) => row.id));
    expect(seeded.filter((row) => row.assetId === assetId)).toHaveLength(5);
    const byTarget = (await list(`?targetId=${targetId}`)).body;
    expect(byTarget.data).toHaveLength(6);
    expect(byTarget.data.every((change: { targetId: string }) => change.targetId === targetId)).toBe(true);
    expect(typesOf((await list(`?scanId=${scanId}`)).body)).toEqual(['scan.completed', 'finding.opened', 'asset.discovered']);
    expect(typesOf((await list(`?scanId=${scanId}&types=finding.opened&limit=1`)).body)).toEqual(['finding.opened']);
  });

  it('refuses bad input with 400 naming the field', async () => {
    const cases: [string, string][] = [
      ['?types=asset.exploded', 'types'],
      ['?limit=0', 'limit'],
      ['?limit=201', 'limit'],
      ['?cursor=not-a-cursor', 'cursor'],
      [`?cursor=${Buffer.from('2026-01-01T00:00:00.000Z|nope').toString('base64url')}`, 'cursor'],
      ['?since=yesterday', 'since'],
      [`?since=${minute(5).toISOString()}&until=${minute(5).toISOString()}`, 'until'],
      ['?assetId=42', 'assetId'],
      ['?unknown=1', ''],
    ];
    for (const [query, field] of cases) {
      const response = await list(query);
      expect(response.status, query).toBe(400);
      const fields: string[] = response.body.details?.map((detail: { field: string }) => detail.field) ?? [];
      // A list names the element: `types.0`.
      if (field)
        expect(
          fields.some((name) => name === field || name.startsWith(`${field}.`)),
          `${query}: ${fields.join(', ')}`,
        ).toBe(true);
    }
  });

  it('answers 401 without a token and 403/404 for a workspace the caller is not in', async () => {
    expect((await client.api('GET', '/api/v1/api/changes', { workspaceId })).status).toBe(401);
    const stranger = await client.signUp('Stranger');
    expect([403, 404]).toContain((await list('', stranger)).status);
  });
});

describe('Workspace.changes on GraphQL', () => {
  const QUERY = `query($id: ID!, $first: Int, $after: String, $types: [String!], $assetId: ID) {
    node(id: $id) { ... on Workspace { changes(first: $first, after: $after, types: $types, assetId: $assetId) {
      edges { cursor node { id type at assetId findingId scanId targetId data } }
      pageInfo { hasNextPage endCursor }
    } } }
  }`;

  it('is the same feed as REST: same order, forward paging, filters, global ids', async () => {
    const seen: string[] = [];
    let after: string | null = null;
    for (let pages = 0; pages < 10; pages += 1) {
      const result: { errors?: unknown; data?: any } = await client.gql(QUERY, {
        as: owner,
        variables: { id: globalId('Workspace', workspaceId), first: 4, after },
      });
      expect(result.errors).toBeUndefined();
      const connection = result.data.node.changes;
      seen.push(...connection.edges.map((edge: { node: { id: string } }) => edge.node.id));
      if (!connection.pageInfo.hasNextPage) break;
      after = connection.pageInfo.endCursor;
    }
    expect(seen).toEqual(seeded.map((row) => row.id));

    const filtered = await client.gql(QUERY, {
      as: owner,
      variables: { id: globalId('Workspace', workspaceId), types: ['asset.changed'], assetId: globalId('Asset', assetId) },
    });
    expect(filtered.data.node.changes.edges.map((edge: { node: unknown }) => edge.node)).toEqual([
      {
        id: expect.any(String),
        type: 'asset.changed',
        at: minute(2).toISOString(),
        assetId: globalId('Asset', assetId),
        findingId: null,
        scanId: null,
        targetId: globalId('Target', targetId),
        data: { kind: 'service', key: 'service:127.0.0.1:22/tcp', value: '127.0.0.1:22', changes: [{ field: 'banner', before: 'a', after: 'b' }] },
      },
    ]);
  });

  it('refuses an unknown type and backward paging with a clear error', async () => {
    const bad = await client.gql(QUERY, { as: owner, variables: { id: globalId('Workspace', workspaceId), types: ['asset.exploded'] } });
    expect(JSON.stringify(bad.errors)).toMatch(/must be one of/);
    const backward = await client.gql(`query($id: ID!) { node(id: $id) { ... on Workspace { changes(last: 2) { edges { cursor } } } } }`, {
      as: owner,
      variables: { id: globalId('Workspace', workspaceId) },
    });
    expect(JSON.stringify(backward.errors)).toMatch(/forward only/);
  });
});

describe('events are written in the transaction of the change', () => {
  const input = (key: string) => ({
    kind: 'host' as const,
    key: `host:${key}`,
    value: key,
    data: { host: key, addresses: ['192.0.2.1'], a: [], aaaa: [], cname: [] },
  });

  it('an ingest that rolls back leaves neither the asset, the finding nor their events', async () => {
    const scope = { workspaceId, targetId, scanId: null, autoEnable: true, now: new Date() };
    await expect(
      app.db.prisma.$transaction(async (tx) => {
        const { idByKey } = await upsertAssets(tx, scope, [input('rolled-back.test')]);
        await recordFindings(
          tx,
          scope,
          [
            {
              checkId: 'x',
              source: 'test',
              name: 'X',
              severity: 'low',
              description: '',
              remediation: '',
              matcher: 'm',
              evidence: {},
              asset: { type: 'host', key: 'host:rolled-back.test' },
              fingerprintParts: ['x', 'host:rolled-back.test', 'm'],
            } as never,
          ],
          idByKey,
        );
        throw new Error('the step failed after ingesting');
      }),
    ).rejects.toThrow('the step failed after ingesting');
    expect(await app.db.prisma.asset.count({ where: { workspaceId, key: 'host:rolled-back.test' } })).toBe(0);
    expect(await app.db.prisma.changeEvent.count({ where: { workspaceId, at: scope.now } })).toBe(0);

    // The same ingest committed writes its events.
    await app.db.prisma.$transaction((tx) => upsertAssets(tx, scope, [input('committed.test')]));
    const written = await app.db.prisma.changeEvent.findMany({ where: { workspaceId, at: scope.now } });
    expect(written.map((row) => [row.type, (row.data as { key: string }).key])).toEqual([['asset.discovered', 'host:committed.test']]);

    // Seen again with new addresses: asset.changed with before/after, in canonical (sorted) form.
    const later = { ...scope, now: new Date(scope.now.getTime() + 1000) };
    await app.db.prisma.$transaction((tx) =>
      upsertAssets(tx, later, [
        { ...input('committed.test'), data: { host: 'committed.test', addresses: ['192.0.2.9', '192.0.2.1'], a: [], aaaa: [], cname: [] } },
      ]),
    );
    const changed = await app.db.prisma.changeEvent.findMany({ where: { workspaceId, at: later.now } });
    expect(changed.map((row) => [row.type, row.data])).toEqual([
      [
        'asset.changed',
        {
          kind: 'host',
          key: 'host:committed.test',
          value: 'committed.test',
          changes: [{ field: 'addresses', before: ['192.0.2.1'], after: ['192.0.2.1', '192.0.2.9'] }],
        },
      ],
    ]);
  });
});

describe('what counts as a change of an asset', () => {
  it('compares the tracked fields in canonical form and ignores the rest', () => {
    const host = { host: 'a.test', addresses: ['192.0.2.2', '192.0.2.1'], cname: ['edge.cdn.test', 'final.cdn.test'], resolvedVia: 'dns' };
    // Order of addresses, the rest of a CNAME chain and other fields are not changes.
    expect(assetFieldChanges('host', host, { ...host, addresses: ['192.0.2.1', '192.0.2.2'], cname: ['EDGE.cdn.test.'], resolvedVia: 'system' })).toEqual([]);
    expect(assetFieldChanges('host', host, { ...host, cname: [] })).toEqual([{ field: 'cname', before: 'edge.cdn.test', after: null }]);
    const page = { status: 200, title: 'A', server: 'nginx', finalUrl: 'http://a.test/', technologies: [{ name: 'nginx', evidence: 'h' }], bodySha256: 'x' };
    expect(assetFieldChanges('web', page, { ...page, bodySha256: 'y', technologies: [{ name: 'nginx', evidence: 'body' }] })).toEqual([]);
    expect(
      assetFieldChanges('web', page, {
        ...page,
        status: 301,
        title: undefined,
        technologies: [
          { name: 'PHP', version: '8.2', evidence: 'h' },
          { name: 'nginx', evidence: 'h' },
        ],
      }),
    ).toEqual([
      { field: 'status', before: 200, after: 301 },
      { field: 'title', before: 'A', after: null },
      { field: 'technologies', before: ['nginx'], after: ['PHP 8.2', 'nginx'] },
    ]);
    const service = { address: '192.0.2.1', port: 22, banner: 'SSH-2.0-OpenSSH_9.2', product: 'OpenSSH', version: '9.2' };
    expect(assetFieldChanges('service', service, { ...service, banner: 'SSH-2.0-OpenSSH_9.6', version: '9.6' })).toEqual([
      { field: 'banner', before: 'SSH-2.0-OpenSSH_9.2', after: 'SSH-2.0-OpenSSH_9.6' },
      { field: 'version', before: '9.2', after: '9.6' },
    ]);
    // A certificate's key is its fingerprint: a new certificate is a new asset, never a change of one.
    expect(assetFieldChanges('certificate', { daysUntilExpiry: 30 }, { daysUntilExpiry: 29 })).toEqual([]);
  });
});
