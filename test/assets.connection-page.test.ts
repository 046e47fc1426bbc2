import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { contextOf } from './support/service-context.js';
import { servedByAssetPage } from '../src/modules/assets/connection-page.js';
import type { AssetListFilters } from '../src/modules/assets/list-total.js';
import { assetListTotalOf, assetListTotalSelection, assetWhere } from '../src/modules/assets/service.js';
import { findVisibleWorkspace } from '../src/modules/workspaces/service.js';
import { connectionWhere } from '../src/graphql/relation-page-query.js';
import { ASSET_KINDS } from '../src/modules/assets/schemas.js';

/**
 * GraphQL's `workspace(id) { assets(...) }` is one hand-written statement where connection-page.ts says it
 * serves Pothos's query (assets/workspace-page-sql.ts). For every filter, page size, cursor and choice of
 * provenance and total it must answer what Prisma answers for the same query, nothing for a caller outside the
 * workspace, and leave every other query shape to Prisma.
 */
let server: TestApp;
let owner: TestUser;
let outsider: TestUser;
let workspaceId: string;
let emptyWorkspaceId: string;
let assetIds: string[];
let targetIds: string[];

const ASSETS = 19;

beforeAll(async () => {
  server = await startTestApp();
  const client = clientFor(server);
  owner = await client.signUp('Connection');
  outsider = await client.signUp('Outsider');
  const prisma = server.db.prisma;
  workspaceId = randomUUID();
  emptyWorkspaceId = randomUUID();
  await prisma.workspace.createMany({
    data: [
      { id: workspaceId, name: 'Assets', description: 'paged', ownerId: owner.id, archivedAt: new Date(Date.UTC(2026, 1, 3)) },
      { id: emptyWorkspaceId, name: 'Empty', ownerId: owner.id },
    ],
  });
  await prisma.workspaceMember.createMany({
    data: [
      { workspaceId, userId: owner.id, role: 'owner' },
      { workspaceId: emptyWorkspaceId, userId: owner.id, role: 'owner' },
    ],
  });
  const targets = Array.from({ length: 2 }, (_, i) => ({ id: randomUUID(), workspaceId, value: `t${i}.example.com`, type: 'domain' as const }));
  await prisma.target.createMany({ data: targets });
  targetIds = targets.map((target) => target.id);
  // Shared sighting times (the id breaks the tie), every kind, disabled and dismissed rows, JSON data, references.
  const base = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
  const assets = Array.from({ length: ASSETS }, (_, i) => ({
    id: randomUUID(),
    workspaceId,
    kind: ASSET_KINDS[i % ASSET_KINDS.length]!,
    key: `key:${i}`,
    value: i % 4 === 0 ? `Host_${i}%.Example.com` : `host${i}.example.com`,
    data: i % 2 ? { port: i, banner: 'ssh', nested: { ok: true } } : {},
    enabled: i % 3 !== 0,
    dismissedAt: i % 5 === 0 ? new Date(base + i * 7) : null,
    references: i % 3 === 1 ? ['partner.example.net'] : [],
    targetId: i % 4 === 3 ? null : targets[i % 2]!.id,
    firstSeenAt: new Date(base - i * 1000),
    lastSeenAt: new Date(base + Math.floor(i / 3) * 1000),
  }));
  assetIds = assets.map((asset) => asset.id);
  await prisma.asset.createMany({ data: assets });
  await prisma.assetTarget.createMany({
    data: assets.filter((asset) => asset.targetId).map((asset) => ({ assetId: asset.id, targetId: asset.targetId! })),
  });
  await prisma.assetDiscovery.createMany({
    data: assets.flatMap((asset, i) =>
      (['dns', 'ct', 'link'] as const).slice(0, i % 4).map((source, j) => ({
        assetId: asset.id,
        workspaceId,
        source,
        from: j ? `parent${i}` : null,
        fromAssetId: j === 2 ? assets[0]!.id : null,
        firstSeenAt: new Date(base + (j === 2 ? 0 : j * 300)),
        lastSeenAt: new Date(base + 5000 + j),
      })),
    ),
  });
});
afterAll(() => server?.stop());

const ORDER = [{ lastSeenAt: 'desc' as const }, { id: 'desc' as const }];
const DISCOVERIES = { discoveries: { orderBy: [{ firstSeenAt: 'asc' as const }, { source: 'asc' as const }] } };

/** The query Pothos builds for `workspace(id) { assets(first, after, ...) { ... } }` (assets/graphql.ts). */
function connectionQuery(filters: AssetListFilters, page: { take: number; after?: string }, asked: { total?: boolean; discoveries?: boolean } = {}) {
  const where = connectionWhere(assetWhere(contextOf(server, owner), filters), filters);
  const cursor = page.after ? { cursor: { id: page.after }, skip: 1 } : { skip: 0 };
  return {
    include: {
      assets: { take: page.take, ...cursor, where, orderBy: ORDER, ...(asked.discoveries ? { include: DISCOVERIES } : {}) },
      ...(asked.total ? assetListTotalSelection(filters, where) : {}),
    },
  };
}

/** The answer with its total as the resolver reads it (the statement sums the counter rows into one). */
function asResolved(row: unknown) {
  if (!row) return row;
  const { assetCounts, _count, ...rest } = row as Record<string, unknown>;
  return assetCounts === undefined && _count === undefined ? rest : { ...rest, total: assetListTotalOf(row as never) };
}

describe("GraphQL's workspace(id) { assets }", () => {
  it('answers as Prisma does for every filter, page size, cursor and choice of provenance and total', async () => {
    const filters: AssetListFilters[] = [
      {},
      { kind: 'host', enabled: true },
      { dismissed: true },
      { enabled: false, dismissed: false, kind: 'web' },
      { search: 'HOST_' },
      { targetId: targetIds[1] },
      { source: 'ct', search: 'example' },
    ];
    const cursors = [undefined, assetIds[0], assetIds[8], assetIds[ASSETS - 1]];
    const asks = [{ total: true, discoveries: true }, { total: false }, { total: true }, { discoveries: true }];
    let compared = 0;
    for (const filter of filters) {
      for (const take of [1, 6, 21]) {
        for (const after of cursors) {
          for (const asked of asks) {
            const query = connectionQuery(filter, { take, after }, asked);
            const label = JSON.stringify({ filter, take, after, asked });
            expect(servedByAssetPage(query), label).not.toBeNull();
            const expected = await server.db.prisma.workspace.findFirst({ ...query, where: { id: workspaceId } });
            expect(asResolved(await findVisibleWorkspace(contextOf(server, owner), workspaceId, query)), label).toEqual(asResolved(expected));
            compared++;
          }
        }
      }
    }
    expect(compared).toBe(filters.length * 3 * cursors.length * asks.length);
  });

  it('answers an empty page for a workspace without assets, and nothing for outsiders', async () => {
    const query = connectionQuery({}, { take: 21 }, { total: true, discoveries: true });
    const expected = await server.db.prisma.workspace.findFirst({ ...query, where: { id: emptyWorkspaceId } });
    expect(asResolved(await findVisibleWorkspace(contextOf(server, owner), emptyWorkspaceId, query))).toEqual(asResolved(expected));
    expect(await findVisibleWorkspace(contextOf(server, outsider), workspaceId, query)).toBeNull();
    expect(await findVisibleWorkspace(contextOf(server, owner), randomUUID(), query)).toBeNull();
  });

  it('leaves backward pages, foreign filters, other relations and totals to Prisma', () => {
    const served = connectionQuery({ kind: 'host' }, { take: 6 }, { total: true, discoveries: true });
    const { assets } = served.include;
    for (const query of [
      { include: { ...served.include, assets: { ...assets, take: -6 } } },
      { include: { ...served.include, assets: { ...assets, where: { AND: [{ workspaceId }] } } } },
      { include: { ...served.include, assets: { ...assets, orderBy: [{ firstSeenAt: 'desc' }, { id: 'desc' }] } } },
      { include: { ...served.include, assets: { ...assets, cursor: { id: 'nope' }, skip: 1 } } },
      { include: { ...served.include, assets: { ...assets, include: { ...DISCOVERIES, target: true } } } },
      { include: { ...served.include, assets: { ...assets, include: { discoveries: { ...DISCOVERIES.discoveries, include: { fromAsset: true } } } } } },
      { include: { ...served.include, assetCounts: { where: { kind: 'web' }, select: { count: true } } } },
      { include: { ...served.include, _count: { select: { assets: true } } } },
      { include: { ...served.include, members: true } },
      { select: { id: true, assets } },
    ]) {
      expect(servedByAssetPage(query), JSON.stringify(query)).toBeNull();
    }
  });

  it('pages the whole list over GraphQL, with provenance and total', async () => {
    const client = clientFor(server);
    const expected = await server.db.prisma.asset.findMany({
      where: { workspaceId },
      orderBy: [{ lastSeenAt: 'desc' }, { id: 'desc' }],
      include: DISCOVERIES as never,
    });
    const seen: Array<{ databaseId: string; discovery: Array<{ source: string }> }> = [];
    let after: string | null = null;
    for (let pages = 0; pages < 10; pages++) {
      const workspaceGlobalId = Buffer.from(`Workspace:${workspaceId}`).toString('base64');
      const answer: { data?: any; errors?: unknown } = await client.gql(
        `query ($id: ID!, $after: String) { workspace(id: $id) { assets(first: 5, after: $after) {
           totalCount pageInfo { hasNextPage endCursor } edges { node { databaseId discovery { source } } } } } }`,
        { as: owner, variables: { id: workspaceGlobalId, after } },
      );
      expect(answer.errors, JSON.stringify(answer.errors)).toBeUndefined();
      const connection: { totalCount: number; pageInfo: { hasNextPage: boolean; endCursor: string }; edges: Array<{ node: (typeof seen)[number] }> } =
        answer.data.workspace.assets;
      expect(connection.totalCount).toBe(ASSETS);
      seen.push(...connection.edges.map((edge) => edge.node));
      if (!connection.pageInfo.hasNextPage) break;
      after = connection.pageInfo.endCursor;
    }
    expect(seen).toEqual(
      (expected as unknown as Array<{ id: string; discoveries: Array<{ source: string }> }>).map((asset) => ({
        databaseId: asset.id,
        discovery: asset.discoveries.map((entry) => ({ source: entry.source })),
      })),
    );
  });
});
