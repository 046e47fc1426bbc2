import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { findFindingPage, type FindingPageQuery } from '../src/modules/vulnerabilities/page-sql.js';
import { FINDING_SORT_FIELDS, FINDING_STATUSES, SEVERITIES } from '../src/modules/vulnerabilities/schemas.js';
import { escapeLike } from '../src/pagination.js';

/**
 * The REST finding page is one hand-written statement (modules/vulnerabilities/page-sql.ts). For every filter,
 * sort and page it must list what the typed reads list (findingWhere's rows in listFindings's order, and the
 * exact total, whether summed from finding_count or counted), and nothing for a caller outside the workspace.
 */
let server: TestApp;
let owner: TestUser;
let outsider: TestUser;
let workspaceId: string;
const targetIds: string[] = [];
const assetIds: string[] = [];

const FINDINGS = 29;

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
      { id: workspaceId, name: 'Findings', ownerId: owner.id },
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
  const assets = Array.from({ length: 2 }, (_, i) => ({ id: randomUUID(), workspaceId, kind: 'host' as const, key: `host:${i}`, value: `a${i}`, data: {} }));
  await prisma.asset.createMany({ data: assets });
  assetIds.push(...assets.map((asset) => asset.id));
  // Shared sighting times and names, LIKE's wildcards and upper case, every severity and status, dismissals.
  const base = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
  const findings = Array.from({ length: FINDINGS }, (_, i) => {
    const status = FINDING_STATUSES[i % 4 === 3 ? 1 : i % 5 === 4 ? 2 : 0]!;
    return {
      id: randomUUID(),
      workspaceId,
      fingerprint: `fp-${i}`,
      checkId: i % 6 === 0 ? `CVE_2026-${i}%` : `check-${i % 4}`,
      source: 'nuclei',
      name: `Finding ${Math.floor(i / 2)}`,
      severity: SEVERITIES[(i * 3) % SEVERITIES.length]!,
      description: i % 7 === 0 ? 'Exposed ADMIN panel' : 'd',
      remediation: 'r',
      matcher: 'm',
      status,
      evidence: i % 2 ? { url: `https://a${i}.example.com/`, lines: [1, 2] } : {},
      classification: i % 3 ? { cvss: i / 2 } : undefined,
      assetId: i % 3 === 2 ? null : assets[i % 2]!.id,
      targetId: targets[i % 3]!.id,
      occurrences: 1 + (i % 4),
      firstSeenAt: new Date(base - Math.floor(i / 3) * 1000),
      lastSeenAt: new Date(base + Math.floor(i / 2) * 1000),
      fixedAt: status === 'fixed' ? new Date(base + i) : null,
      dismissReason: status === 'dismissed' ? ('accepted_risk' as const) : null,
      dismissComment: status === 'dismissed' ? 'known' : null,
      dismissedAt: status === 'dismissed' ? new Date(base + 2 * i) : null,
      dismissedById: status === 'dismissed' ? owner.id : null,
    };
  });
  await prisma.finding.createMany({ data: [...findings, { ...findings[0]!, id: randomUUID(), workspaceId: otherWorkspaceId, assetId: null, targetId: null }] });
  await prisma.findingTarget.createMany({
    data: findings.flatMap((finding, i) => targets.slice(i % 3, (i % 3) + 1 + (i % 2)).map((target) => ({ findingId: finding.id, targetId: target.id }))),
  });
});
afterAll(() => server?.stop());

/** What listFindings read before the statement: Prisma's page under findingWhere in its order, and the exact total. */
async function typedPage(q: FindingPageQuery) {
  const prisma = server.db.prisma;
  const direction = q.direction === 'ASC' ? ('asc' as const) : ('desc' as const);
  const contains = q.search ? escapeLike(q.search) : '';
  const where = {
    AND: [
      { workspace: { members: { some: { userId: q.viewerId } } } },
      { workspaceId: q.workspaceId },
      ...(q.severity?.length ? [{ severity: { in: q.severity } }] : []),
      ...(q.status && q.status !== 'all' ? [{ status: q.status }] : []),
      ...(q.targetIds?.length ? [{ targetLinks: { some: { targetId: { in: q.targetIds } } } }] : []),
      ...(q.assetId ? [{ assetId: q.assetId }] : []),
      ...(q.search
        ? [
            {
              OR: [
                { name: { contains, mode: 'insensitive' as const } },
                { checkId: { contains, mode: 'insensitive' as const } },
                { description: { contains, mode: 'insensitive' as const } },
              ],
            },
          ]
        : []),
    ],
  };
  const orderBy =
    q.sortBy === 'severity' ? [{ severity: direction }, { lastSeenAt: 'desc' as const }, { id: direction }] : [{ [q.sortBy]: direction }, { id: direction }];
  const rows = await prisma.finding.findMany({ where, orderBy, skip: q.offset, take: q.limit });
  const total = await prisma.finding.count({ where });
  return rows.map((row) => ({ ...row, total }));
}

function query(fields: Partial<FindingPageQuery> = {}): FindingPageQuery {
  return { viewerId: owner.id, workspaceId, sortBy: 'lastSeenAt', direction: 'DESC', offset: 0, limit: 10, ...fields };
}

describe('the finding page statement', () => {
  it('lists what the typed reads list, for every sort, direction, filter and page', async () => {
    const filters: Array<Partial<FindingPageQuery>> = [
      { status: 'all' },
      { status: 'open' },
      { status: 'open', severity: ['high'] },
      { status: 'fixed', severity: ['critical', 'info'] },
      { status: 'all', severity: ['low', 'medium', 'high'] },
      { status: 'all', search: 'admin' },
      { status: 'all', search: '_2026' },
      { status: 'all', search: '%' },
      { status: 'open', targetIds: [targetIds[1]!] },
      { status: 'all', targetIds: [targetIds[0]!, targetIds[2]!], severity: ['high', 'critical'] },
      { status: 'all', assetId: assetIds[1] },
    ];
    let compared = 0;
    for (const sortBy of FINDING_SORT_FIELDS) {
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
            expect(await findFindingPage(server.db.read, q), JSON.stringify(q)).toEqual(expected);
            compared += expected.length;
          }
        }
      }
    }
    expect(compared).toBeGreaterThan(FINDINGS * 16);
  });

  it('lists nothing for a caller outside the workspace, another workspace or malformed ids', async () => {
    expect(await findFindingPage(server.db.read, query({ viewerId: outsider.id, status: 'all' }))).toEqual([]);
    expect(await findFindingPage(server.db.read, query({ workspaceId: randomUUID(), status: 'all' }))).toEqual([]);
    expect(await findFindingPage(server.db.read, query({ targetIds: ['not-a-uuid'], status: 'all' }))).toEqual([]);
    expect(await findFindingPage(server.db.read, query({ assetId: 'not-a-uuid', status: 'all' }))).toEqual([]);
  });
});
