import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { findAssetPage, type AssetPageQuery } from '../src/modules/assets/page-sql.js';
import { assetResponseInclude } from '../src/modules/assets/service.js';
import { ASSET_KINDS, ASSET_SORT_FIELDS } from '../src/modules/assets/schemas.js';
import { escapeLike } from '../src/pagination.js';

/**
 * The REST asset page is one hand-written statement (modules/assets/page-sql.ts). For every filter, sort and
 * page it must list what the typed reads list (assetWhere's rows in Prisma's order with their provenance, and
 * the exact total, whether summed from asset_count or counted), and nothing for a caller outside the workspace.
 */
let server: TestApp;
let owner: TestUser;
let outsider: TestUser;
let workspaceId: string;
const targetIds: string[] = [];

const ASSETS = 26;

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
      { id: workspaceId, name: 'Assets', ownerId: owner.id },
      { id: otherWorkspaceId, name: 'Elsewhere', ownerId: owner.id },
    ],
  });
  await prisma.workspaceMember.createMany({
    data: [
      { workspaceId, userId: owner.id, role: 'owner' },
      { workspaceId: otherWorkspaceId, userId: owner.id, role: 'owner' },
    ],
  });
  const targets = Array.from({ length: 3 }, (_, i) => ({ id: randomUUID(), workspaceId, value: `t${i}.example.com`, type: 'domain' as const }));
  await prisma.target.createMany({ data: targets });
  targetIds.push(...targets.map((target) => target.id));
  // Shared sighting times, LIKE's wildcards and upper case in values, every kind, disabled and dismissed rows.
  const base = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
  const assets = Array.from({ length: ASSETS }, (_, i) => ({
    id: randomUUID(),
    workspaceId,
    kind: ASSET_KINDS[i % ASSET_KINDS.length]!,
    key: `key:${i}`,
    value: i % 5 === 0 ? `Host_${i}%.Example.com` : `host${i}.example.com`,
    data: i % 2 ? { port: i, tls: true } : {},
    enabled: i % 3 !== 0,
    dismissedAt: i % 7 === 0 ? new Date(base + i) : null,
    references: i % 4 === 0 ? [`partner${i}.example.net`, 'cdn.example.org'] : [],
    targetId: targets[i % 3]!.id,
    firstSeenAt: new Date(base - Math.floor(i / 3) * 1000),
    lastSeenAt: new Date(base + Math.floor(i / 2) * 1000),
  }));
  await prisma.asset.createMany({ data: [...assets, { workspaceId: otherWorkspaceId, kind: 'host', key: 'key:0', value: 'host1.example.com', data: {} }] });
  await prisma.assetTarget.createMany({
    data: assets.flatMap((asset, i) => targets.slice(i % 3, (i % 3) + 1 + (i % 2)).map((target) => ({ assetId: asset.id, targetId: target.id }))),
  });
  // Several sources per asset, some first seen at the same time (ordered by source then).
  await prisma.assetDiscovery.createMany({
    data: assets.flatMap((asset, i) =>
      (['ct', 'dns', 'bruteforce'] as const).slice(0, i % 4).map((source, j) => ({
        assetId: asset.id,
        workspaceId,
        source,
        from: j ? `parent${i}.example.com` : null,
        fromAssetId: j === 2 ? assets[0]!.id : null,
        firstSeenAt: new Date(base + (j === 1 ? 0 : j * 500)),
        lastSeenAt: new Date(base + 10_000 + j),
      })),
    ),
  });
});
afterAll(() => server?.stop());

/** What listAssets read before the statement: Prisma's page under assetWhere with its provenance, and the exact total. */
async function typedPage(q: AssetPageQuery) {
  const prisma = server.db.prisma;
  const direction = q.direction === 'ASC' ? ('asc' as const) : ('desc' as const);
  const where = {
    AND: [
      { workspace: { members: { some: { userId: q.viewerId } } } },
      { workspaceId: q.workspaceId },
      ...(q.kind ? [{ kind: q.kind }] : []),
      ...(q.targetId ? [{ targetLinks: { some: { targetId: q.targetId } } }] : []),
      ...(q.search ? [{ value: { contains: escapeLike(q.search), mode: 'insensitive' as const } }] : []),
      ...(q.enabled !== undefined ? [{ enabled: q.enabled }] : []),
      ...(q.source ? [{ discoveries: { some: { source: q.source } } }] : []),
      ...(q.dismissed !== undefined ? [{ dismissedAt: q.dismissed ? { not: null } : null }] : []),
    ],
  };
  const rows = await prisma.asset.findMany({
    where,
    orderBy: [{ [q.sortBy]: direction }, { id: direction }],
    skip: q.offset,
    take: q.limit,
    include: assetResponseInclude,
  });
  const total = await prisma.asset.count({ where });
  return rows.map((row) => ({ ...row, total }));
}

function query(fields: Partial<AssetPageQuery> = {}): AssetPageQuery {
  return { viewerId: owner.id, workspaceId, sortBy: 'lastSeenAt', direction: 'DESC', offset: 0, limit: 10, ...fields };
}

describe('the asset page statement', () => {
  it('lists what the typed reads list, for every sort, direction, filter and page', async () => {
    const filters: Array<Partial<AssetPageQuery>> = [
      {},
      { kind: 'host', enabled: true },
      { kind: 'web', dismissed: false },
      { enabled: false, dismissed: true },
      { search: 'HOST_' },
      { search: '%' },
      { targetId: targetIds[1] },
      { source: 'dns' },
      { source: 'bruteforce', kind: 'host', search: 'example' },
    ];
    let compared = 0;
    for (const sortBy of ASSET_SORT_FIELDS) {
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
            expect(await findAssetPage(server.db.read, q), JSON.stringify(q)).toEqual(expected);
            compared += expected.length;
          }
        }
      }
    }
    expect(compared).toBeGreaterThan(ASSETS * 12);
  });

  it('lists nothing for a caller outside the workspace, another workspace or a malformed target id', async () => {
    expect(await findAssetPage(server.db.read, query({ viewerId: outsider.id }))).toEqual([]);
    expect(await findAssetPage(server.db.read, query({ workspaceId: randomUUID() }))).toEqual([]);
    expect(await findAssetPage(server.db.read, query({ targetId: 'not-a-uuid' }))).toEqual([]);
  });
});
