import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { contextOf } from './support/service-context.js';
import { servedByTargetPage, type TargetConnectionFilters } from '../src/modules/targets/connection-page.js';
import { connectionWhere } from '../src/graphql/relation-page-query.js';
import { targetWhere } from '../src/modules/targets/service.js';
import { findVisibleWorkspace } from '../src/modules/workspaces/service.js';
import { TARGET_TYPES } from '../src/modules/targets/schemas.js';

/**
 * GraphQL's `workspace(id) { targets(...) }` is one hand-written statement where connection-page.ts says it
 * serves Pothos's query (targets/workspace-page-sql.ts). For every filter, page size, cursor and choice of
 * counts it must answer what Prisma answers for the same query, nothing for a caller outside the workspace, and
 * leave every other query shape to Prisma.
 */
let server: TestApp;
let owner: TestUser;
let outsider: TestUser;
let workspaceId: string;
let emptyWorkspaceId: string;
let targetIds: string[];

const TARGETS = 17;

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
      { id: workspaceId, name: 'Targets', description: 'paged', ownerId: owner.id, archivedAt: new Date(Date.UTC(2026, 1, 3)) },
      { id: emptyWorkspaceId, name: 'Empty', ownerId: owner.id },
    ],
  });
  await prisma.workspaceMember.createMany({
    data: [
      { workspaceId, userId: owner.id, role: 'owner' },
      { workspaceId: emptyWorkspaceId, userId: owner.id, role: 'owner' },
    ],
  });
  // Shared timestamps (the id breaks the tie), scanned and never-scanned targets, LIKE's wildcards and upper case.
  const base = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
  const targets = Array.from({ length: TARGETS }, (_, i) => ({
    id: randomUUID(),
    workspaceId,
    value: i % 4 === 0 ? `Host_${i}%.Example.com` : `host${i}.example.com`,
    type: TARGET_TYPES[i % TARGET_TYPES.length]!,
    lastScannedAt: i % 3 === 0 ? null : new Date(base + (i % 4) * 60_000),
    createdById: i % 2 ? owner.id : null,
    createdAt: new Date(base + Math.floor(i / 3) * 1000),
  }));
  targetIds = targets.map((target) => target.id);
  await prisma.target.createMany({ data: targets });
  const assets = targets
    .slice(0, 6)
    .map((target, i) => ({ id: randomUUID(), workspaceId, kind: 'host' as const, key: `host:c${i}`, value: `c${i}`, data: {}, targetId: target.id }));
  await prisma.asset.createMany({ data: assets });
  await prisma.assetTarget.createMany({
    data: assets.flatMap((asset, i) => targets.slice(i, i + 1 + (i % 3)).map((target) => ({ assetId: asset.id, targetId: target.id }))),
  });
  await prisma.findingTargetCount.createMany({ data: targets.slice(3, 10).map((target, i) => ({ targetId: target.id, open: i * 3 })) });
});
afterAll(() => server?.stop());

const ORDER = [{ createdAt: 'desc' }, { id: 'desc' }];
const COUNTS = { _count: { select: { assetLinks: true } }, openFindingCount: { select: { open: true } } };

/** The query Pothos builds for `workspace(id) { targets(first, after, search, type) { ... } }`. */
function connectionQuery(
  filters: TargetConnectionFilters,
  page: { take: number; after?: string },
  asked: { total?: boolean; include?: object } = { total: true, include: COUNTS },
) {
  const where = connectionWhere(targetWhere(contextOf(server, owner), filters), filters);
  const cursor = page.after ? { cursor: { id: page.after }, skip: 1 } : { skip: 0 };
  return {
    include: {
      targets: { where, orderBy: ORDER, take: page.take, ...cursor, ...(asked.include ? { include: asked.include } : {}) },
      ...(asked.total ? { _count: { select: { targets: { where } } } } : {}),
    },
  };
}

/** Prisma's answer, with a target that has no counter row read as the counter's zero (the resolver's reading). */
async function prismaAnswer(id: string, query: object) {
  const row = await server.db.prisma.workspace.findFirst({ ...query, where: { id } });
  const targets = (row as { targets?: Array<Record<string, unknown>> } | null)?.targets;
  for (const target of targets ?? []) if ('openFindingCount' in target && target.openFindingCount === null) target.openFindingCount = { open: 0 };
  return row;
}

describe("GraphQL's workspace(id) { targets }", () => {
  it('answers as Prisma does for every filter, page size, cursor and choice of counts', async () => {
    const filters: TargetConnectionFilters[] = [
      {},
      { search: 'HOST_' },
      { search: '%' },
      { search: 'host1' },
      { type: 'domain' },
      { search: 'example', type: 'ip' },
    ];
    const cursors = [undefined, targetIds[0], targetIds[7], targetIds[TARGETS - 1]];
    const asks = [
      { total: true, include: COUNTS },
      { total: false },
      { total: true, include: { _count: COUNTS._count } },
      { include: { openFindingCount: COUNTS.openFindingCount } },
    ];
    let compared = 0;
    for (const filter of filters) {
      for (const take of [1, 5, 21]) {
        for (const after of cursors) {
          for (const asked of asks) {
            const query = connectionQuery(filter, { take, after }, asked);
            const label = JSON.stringify({ filter, take, after, asked });
            expect(servedByTargetPage(query), label).not.toBeNull();
            // A cursor outside the filtered list starts nothing, in Prisma's answer and the statement's.
            const expected = await prismaAnswer(workspaceId, query);
            expect(await findVisibleWorkspace(contextOf(server, owner), workspaceId, query), label).toEqual(expected);
            compared++;
          }
        }
      }
    }
    expect(compared).toBe(filters.length * 3 * cursors.length * asks.length);
  });

  it('answers an empty page for a workspace without targets, and nothing for outsiders', async () => {
    const query = connectionQuery({}, { take: 21 });
    expect(await findVisibleWorkspace(contextOf(server, owner), emptyWorkspaceId, query)).toEqual(await prismaAnswer(emptyWorkspaceId, query));
    expect(await findVisibleWorkspace(contextOf(server, outsider), workspaceId, query)).toBeNull();
    expect(await findVisibleWorkspace(contextOf(server, owner), randomUUID(), query)).toBeNull();
    await server.db.prisma.workspaceMember.deleteMany({ where: { workspaceId, userId: owner.id } });
    try {
      expect(await findVisibleWorkspace(contextOf(server, owner), workspaceId, query)).toBeNull();
    } finally {
      await server.db.prisma.workspaceMember.create({ data: { workspaceId, userId: owner.id, role: 'owner' } });
    }
  });

  it('leaves backward pages, foreign filters, other relations and orders to Prisma', () => {
    const served = connectionQuery({}, { take: 6 });
    const { targets } = served.include;
    for (const query of [
      { include: { ...served.include, targets: { ...targets, take: -6 } } },
      { include: { ...served.include, targets: { ...targets, where: { AND: [{ workspaceId }] } } } },
      { include: { ...served.include, targets: { ...targets, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] } } },
      { include: { ...served.include, targets: { ...targets, cursor: { id: 'not-a-uuid' }, skip: 1 } } },
      { include: { ...served.include, targets: { ...targets, include: { ...COUNTS, scans: true } } } },
      { include: { ...served.include, members: true } },
      { include: { ...served.include, _count: { select: { targets: true } } } },
      { select: { id: true, targets: targets } },
      { include: { _count: served.include._count } },
    ]) {
      expect(servedByTargetPage(query), JSON.stringify(query)).toBeNull();
    }
  });

  it('pages the whole list over GraphQL, with counts and total', async () => {
    const client = clientFor(server);
    const expected = await server.db.prisma.target.findMany({
      where: { workspaceId },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      include: COUNTS,
    });
    const seen: Array<{ databaseId: string; assetCount: number; findingCount: number }> = [];
    let after: string | null = null;
    for (let pages = 0; pages < 10; pages++) {
      const workspaceGlobalId = Buffer.from(`Workspace:${workspaceId}`).toString('base64');
      const answer: { data?: any; errors?: unknown } = await client.gql(
        `query ($id: ID!, $after: String) { workspace(id: $id) { targets(first: 5, after: $after) {
           totalCount pageInfo { hasNextPage endCursor } edges { node { databaseId assetCount findingCount } } } } }`,
        { as: owner, variables: { id: workspaceGlobalId, after } },
      );
      expect(answer.errors, JSON.stringify(answer.errors)).toBeUndefined();
      const connection: { totalCount: number; pageInfo: { hasNextPage: boolean; endCursor: string }; edges: Array<{ node: (typeof seen)[number] }> } =
        answer.data.workspace.targets;
      expect(connection.totalCount).toBe(TARGETS);
      seen.push(...connection.edges.map((edge) => edge.node));
      if (!connection.pageInfo.hasNextPage) break;
      after = connection.pageInfo.endCursor;
    }
    expect(seen).toEqual(
      expected.map((target) => ({ databaseId: target.id, assetCount: target._count.assetLinks, findingCount: target.openFindingCount?.open ?? 0 })),
    );
  });
});
