import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { findTargetPage, type TargetPageQuery } from '../src/modules/targets/page-sql.js';
import { countsOfTargets } from '../src/modules/targets/counts.js';
import { TARGET_SORT_FIELDS, TARGET_TYPES } from '../src/modules/targets/schemas.js';
import { escapeLike } from '../src/pagination.js';

/**
 * The REST target page is one hand-written statement (modules/targets/page-sql.ts). For every filter, sort and
 * page it must list what the typed reads list (targetWhere's rows in Prisma's order, the total, and the counts
 * countsOfTargets reads), and nothing for a caller outside the workspace.
 */
let server: TestApp;
let owner: TestUser;
let outsider: TestUser;
let workspaceId: string;

const TARGETS = 23;

beforeAll(async () => {
  server = await startTestApp();
  const client = clientFor(server);
  owner = await client.signUp('Pager');
  outsider = await client.signUp('Outsider');
  const prisma = server.db.prisma;
  workspaceId = randomUUID();
  const otherWorkspaceId = randomUUID();
  await prisma.workspace.createMany({
    data: [
      { id: workspaceId, name: 'Targets', ownerId: owner.id },
      { id: otherWorkspaceId, name: 'Elsewhere', ownerId: owner.id },
    ],
  });
  await prisma.workspaceMember.createMany({
    data: [
      { workspaceId, userId: owner.id, role: 'owner' },
      { workspaceId: otherWorkspaceId, userId: owner.id, role: 'owner' },
    ],
  });
  // Shared timestamps and scan times, never-scanned targets, values with LIKE's wildcards and upper case.
  const base = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
  const targets = Array.from({ length: TARGETS }, (_, i) => ({
    id: randomUUID(),
    workspaceId,
    value: i % 5 === 0 ? `Host_${i}%.Example.com` : `host${i}.example.com`,
    type: TARGET_TYPES[i % TARGET_TYPES.length]!,
    lastScannedAt: i % 3 === 0 ? null : new Date(base + (i % 4) * 60_000),
    createdAt: new Date(base + Math.floor(i / 2) * 1000),
  }));
  await prisma.target.createMany({ data: [...targets, { workspaceId: otherWorkspaceId, value: 'host1.example.com', type: 'domain' }] });
  const assets = targets
    .slice(0, 8)
    .map((target, i) => ({ id: randomUUID(), workspaceId, kind: 'host' as const, key: `host:a${i}`, value: `a${i}`, data: {}, targetId: target.id }));
  await prisma.asset.createMany({ data: assets });
  await prisma.assetTarget.createMany({
    data: assets.flatMap((asset, i) => targets.slice(i, i + 1 + (i % 3)).map((target) => ({ assetId: asset.id, targetId: target.id }))),
  });
  await prisma.findingTargetCount.createMany({ data: targets.slice(2, 9).map((target, i) => ({ targetId: target.id, open: i * 2 })) });
});
afterAll(() => server?.stop());

/** What listTargets read before the statement: Prisma's page and total under targetWhere, then countsOfTargets. */
async function typedPage(q: TargetPageQuery) {
  const prisma = server.db.prisma;
  const direction = q.direction === 'ASC' ? ('asc' as const) : ('desc' as const);
  const where = {
    AND: [
      { workspace: { members: { some: { userId: q.viewerId } } } },
      { workspaceId: q.workspaceId },
      ...(q.search ? [{ value: { contains: escapeLike(q.search), mode: 'insensitive' as const } }] : []),
      ...(q.type ? [{ type: q.type }] : []),
    ],
  };
  const primary = q.sortBy === 'lastScannedAt' ? { lastScannedAt: { sort: direction, nulls: 'last' as const } } : { [q.sortBy]: direction };
  const rows = await prisma.target.findMany({ where, orderBy: [primary, { id: direction }], skip: q.offset, take: q.limit });
  const total = await prisma.target.count({ where });
  const counts = await countsOfTargets(
    prisma,
    rows.map((row) => row.id),
  );
  return rows.map((row, i) => ({ ...row, ...counts[i]!, total }));
}

function query(fields: Partial<TargetPageQuery> = {}): TargetPageQuery {
  return { viewerId: owner.id, workspaceId, sortBy: 'createdAt', direction: 'DESC', offset: 0, limit: 10, ...fields };
}

describe('the target page statement', () => {
  it('lists what the typed reads list, for every sort, direction, filter and page', async () => {
    const filters: Array<Partial<TargetPageQuery>> = [
      {},
      { search: 'HOST_' },
      { search: '%' },
      { search: 'example' },
      { type: 'ip' },
      { type: 'domain', search: '1' },
    ];
    let compared = 0;
    for (const sortBy of TARGET_SORT_FIELDS) {
      for (const direction of ['ASC', 'DESC'] as const) {
        for (const filter of filters) {
          for (const [offset, limit] of [
            [0, 100],
            [0, 7],
            [7, 7],
            [21, 7],
          ] as const) {
            const q = query({ sortBy, direction, offset, limit, ...filter });
            const expected = await typedPage(q);
            expect(await findTargetPage(server.db.read, q), JSON.stringify(q)).toEqual(expected);
            compared += expected.length;
          }
        }
      }
    }
    expect(compared).toBeGreaterThan(TARGETS * 12);
  });

  it('lists nothing for a caller outside the workspace, or for another workspace', async () => {
    expect(await findTargetPage(server.db.read, query({ viewerId: outsider.id }))).toEqual([]);
    expect(await findTargetPage(server.db.read, query({ workspaceId: randomUUID() }))).toEqual([]);
  });
});
