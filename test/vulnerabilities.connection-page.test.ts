import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { contextOf } from './support/service-context.js';
import { servedByFindingPage } from '../src/modules/vulnerabilities/connection-page.js';
import type { FindingListFilters } from '../src/modules/vulnerabilities/list-total.js';
import { findingListTotalOf, findingListTotalSelection, findingWhere } from '../src/modules/vulnerabilities/service.js';
import { findVisibleWorkspace } from '../src/modules/workspaces/service.js';
import { connectionWhere } from '../src/graphql/relation-page-query.js';
import { FINDING_STATUSES, SEVERITIES } from '../src/modules/vulnerabilities/schemas.js';

/**
 * GraphQL's `workspace(id) { findings(...) }` is one hand-written statement where connection-page.ts says it
 * serves Pothos's query (vulnerabilities/workspace-page-sql.ts). For every filter, page size, cursor and choice
 * of total it must answer what Prisma answers for the same query, nothing for a caller outside the workspace,
 * and leave every other query shape to Prisma.
 */
let server: TestApp;
let owner: TestUser;
let outsider: TestUser;
let workspaceId: string;
let emptyWorkspaceId: string;
let findingIds: string[];
let targetIds: string[];

const FINDINGS = 23;

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
      { id: workspaceId, name: 'Findings', description: 'paged', ownerId: owner.id },
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
  // Shared sighting times (the id breaks the tie), every severity and status, JSON evidence, nullable columns set.
  const base = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
  const findings = Array.from({ length: FINDINGS }, (_, i) => {
    const status = FINDING_STATUSES[i % 3]!;
    return {
      id: randomUUID(),
      workspaceId,
      fingerprint: `fp-${i}`,
      checkId: i % 5 === 0 ? `Check_${i}%` : `check-${i}`,
      source: 'nuclei',
      name: `Finding ${i}`,
      severity: SEVERITIES[(i * 2) % SEVERITIES.length]!,
      description: i % 4 === 0 ? 'Exposed ADMIN panel' : 'd',
      remediation: 'r',
      matcher: 'm',
      status,
      evidence: i % 2 ? { url: `https://a${i}.example.com/`, lines: [1, 2] } : {},
      classification: i % 3 ? { cvss: i / 2 } : undefined,
      targetId: targets[i % 2]!.id,
      occurrences: 1 + (i % 3),
      firstSeenAt: new Date(base - i * 1000),
      lastSeenAt: new Date(base + Math.floor(i / 3) * 1000),
      fixedAt: status === 'fixed' ? new Date(base + i) : null,
      dismissReason: status === 'dismissed' ? ('false_positive' as const) : null,
      dismissComment: status === 'dismissed' ? 'noise' : null,
      dismissedAt: status === 'dismissed' ? new Date(base + 2 * i) : null,
      dismissedById: status === 'dismissed' ? owner.id : null,
    };
  });
  findingIds = findings.map((finding) => finding.id);
  await prisma.finding.createMany({ data: findings });
  await prisma.findingTarget.createMany({ data: findings.map((finding) => ({ findingId: finding.id, targetId: finding.targetId })) });
});
afterAll(() => server?.stop());

const ORDER = [{ lastSeenAt: 'desc' as const }, { id: 'desc' as const }];

/** The query Pothos builds for `workspace(id) { findings(first, after, ...) { ... } }` (vulnerabilities/graphql.ts). */
function connectionQuery(filters: FindingListFilters, page: { take: number; after?: string }, withTotal = true) {
  const where = connectionWhere(findingWhere(contextOf(server, owner), filters), filters);
  const cursor = page.after ? { cursor: { id: page.after }, skip: 1 } : { skip: 0 };
  return {
    include: {
      findings: { take: page.take, ...cursor, where, orderBy: ORDER },
      ...(withTotal ? findingListTotalSelection(filters, where) : {}),
    },
  };
}

/** The answer with its total as the resolver reads it (the statement sums the counter rows into one). */
function asResolved(row: unknown) {
  if (!row) return row;
  const { findingCounts, _count, ...rest } = row as Record<string, unknown>;
  return findingCounts === undefined && _count === undefined ? rest : { ...rest, total: findingListTotalOf(row as never) };
}

describe("GraphQL's workspace(id) { findings }", () => {
  it('answers as Prisma does for every filter, page size, cursor and choice of total', async () => {
    const filters: FindingListFilters[] = [
      { status: 'open' },
      { status: 'all' },
      { status: 'open', severity: ['high', 'critical'] },
      { status: 'fixed', severity: ['info'] },
      { status: 'all', search: 'admin' },
      { status: 'all', search: '_1' },
      { status: 'open', targetIds: [targetIds[1]!] },
      { status: 'all', targetIds: [targetIds[0]!], severity: ['low'] },
    ];
    const cursors = [undefined, findingIds[0], findingIds[10], findingIds[FINDINGS - 1]];
    let compared = 0;
    for (const filter of filters) {
      for (const take of [1, 6, 21]) {
        for (const after of cursors) {
          for (const withTotal of [true, false]) {
            const query = connectionQuery(filter, { take, after }, withTotal);
            const label = JSON.stringify({ filter, take, after, withTotal });
            expect(servedByFindingPage(query), label).not.toBeNull();
            const expected = await server.db.prisma.workspace.findFirst({ ...query, where: { id: workspaceId } });
            expect(asResolved(await findVisibleWorkspace(contextOf(server, owner), workspaceId, query)), label).toEqual(asResolved(expected));
            compared++;
          }
        }
      }
    }
    expect(compared).toBe(filters.length * 3 * cursors.length * 2);
  });

  it('answers an empty page for a workspace without findings, and nothing for outsiders', async () => {
    const query = connectionQuery({ status: 'open' }, { take: 21 });
    const expected = await server.db.prisma.workspace.findFirst({ ...query, where: { id: emptyWorkspaceId } });
    expect(asResolved(await findVisibleWorkspace(contextOf(server, owner), emptyWorkspaceId, query))).toEqual(asResolved(expected));
    expect(await findVisibleWorkspace(contextOf(server, outsider), workspaceId, query)).toBeNull();
    expect(await findVisibleWorkspace(contextOf(server, owner), randomUUID(), query)).toBeNull();
  });

  it('leaves backward pages, foreign filters, relations and other totals to Prisma', () => {
    const served = connectionQuery({ status: 'open', severity: ['high'] }, { take: 6 });
    const { findings } = served.include;
    for (const query of [
      { include: { ...served.include, findings: { ...findings, take: -6 } } },
      { include: { ...served.include, findings: { ...findings, where: { AND: [{ workspaceId }] } } } },
      { include: { ...served.include, findings: { ...findings, orderBy: [{ severity: 'desc' }, { id: 'desc' }] } } },
      { include: { ...served.include, findings: { ...findings, cursor: { id: 'nope' }, skip: 1 } } },
      { include: { ...served.include, findings: { ...findings, include: { asset: true } } } },
      { include: { ...served.include, findingCounts: { where: { status: 'fixed' }, select: { count: true } } } },
      { include: { ...served.include, _count: { select: { findings: true } } } },
      { include: { ...served.include, targets: true } },
      { select: { id: true, findings } },
    ]) {
      expect(servedByFindingPage(query), JSON.stringify(query)).toBeNull();
    }
  });

  it('pages the whole list over GraphQL, with its total', async () => {
    const client = clientFor(server);
    const expected = await server.db.prisma.finding.findMany({ where: { workspaceId, status: 'open' }, orderBy: ORDER });
    const seen: Array<{ databaseId: string; severity: string; lastSeenAt: string }> = [];
    let after: string | null = null;
    for (let pages = 0; pages < 10; pages++) {
      const workspaceGlobalId = Buffer.from(`Workspace:${workspaceId}`).toString('base64');
      const answer: { data?: any; errors?: unknown } = await client.gql(
        `query ($id: ID!, $after: String) { workspace(id: $id) { findings(first: 3, after: $after) {
           totalCount pageInfo { hasNextPage endCursor } edges { node { databaseId severity lastSeenAt } } } } }`,
        { as: owner, variables: { id: workspaceGlobalId, after } },
      );
      expect(answer.errors, JSON.stringify(answer.errors)).toBeUndefined();
      const connection: { totalCount: number; pageInfo: { hasNextPage: boolean; endCursor: string }; edges: Array<{ node: (typeof seen)[number] }> } =
        answer.data.workspace.findings;
      expect(connection.totalCount).toBe(expected.length);
      seen.push(...connection.edges.map((edge) => edge.node));
      if (!connection.pageInfo.hasNextPage) break;
      after = connection.pageInfo.endCursor;
    }
    expect(seen).toEqual(expected.map((finding) => ({ databaseId: finding.id, severity: finding.severity, lastSeenAt: finding.lastSeenAt.toISOString() })));
  });
});
