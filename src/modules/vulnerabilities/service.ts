import type { AppDeps, ServiceContext } from '../../context.js';
import { NotFoundError } from '../../errors.js';
import { assertCan, isUuid, requireViewer, uuidOrNil, visibleWorkspacesWhere } from '../../auth/authz.js';
import { Prisma, type PrismaClient } from '../../db.js';
import { validate } from '../../validate.js';
import { escapeLike, pageEnvelope, type Page } from '../../pagination.js';
import { publishChanges, recordChanges, trackChanges } from '../changes/record.js';
import { nodeIdOf } from '../../graphql/ids.js';
import { findFindingPage } from './page-sql.js';
import { counterWhere, countedByCounters, type FindingListFilters } from './list-total.js';
import type { ServedFindingPage } from './connection-page.js';
import { findWorkspaceWithFindingPage } from './workspace-page-sql.js';
import {
  dismissFindingsInput,
  findingStatisticsInput,
  listFindingsInput,
  reopenFindingsInput,
  SEVERITIES,
  type DismissFindingsInput,
  type FindingStatisticsInput,
  type FindingStatus,
  type ListFindingsInput,
  type ReopenFindingsInput,
  type Severity,
} from './schemas.js';

type FindingRow = Prisma.FindingGetPayload<object>;
type FindingEventRow = Prisma.FindingEventGetPayload<object>;

/** Every column of the row: GraphQL resolves a Finding from it as well. */
export type FindingResponse = FindingRow & { nodeId: string };

export interface FindingEventResponse {
  id: string;
  type: FindingEventRow['type'];
  scanId: string | null;
  actorId: string | null;
  comment: string | null;
  createdAt: Date;
}

export type FindingDetailResponse = FindingResponse & { events: FindingEventResponse[] };

/** Field by field, in the table's order: rows may carry more (a page's total, a detail's events), never passed on. */
export function toFindingResponse(row: FindingRow): FindingResponse {
  return {
    id: row.id,
    workspaceId: row.workspaceId,
    fingerprint: row.fingerprint,
    checkId: row.checkId,
    source: row.source,
    name: row.name,
    severity: row.severity,
    description: row.description,
    remediation: row.remediation,
    matcher: row.matcher,
    status: row.status,
    evidence: row.evidence,
    classification: row.classification,
    assetId: row.assetId,
    targetId: row.targetId,
    lastScanId: row.lastScanId,
    occurrences: row.occurrences,
    firstSeenAt: row.firstSeenAt,
    lastSeenAt: row.lastSeenAt,
    fixedAt: row.fixedAt,
    dismissReason: row.dismissReason,
    dismissComment: row.dismissComment,
    dismissedAt: row.dismissedAt,
    dismissedById: row.dismissedById,
    updatedAt: row.updatedAt,
    nodeId: nodeIdOf('Finding', row.id),
  };
}

function toEventResponse(event: FindingEventRow): FindingEventResponse {
  return { id: event.id, type: event.type, scanId: event.scanId, actorId: event.actorId, comment: event.comment, createdAt: event.createdAt };
}

export interface FindingFilters extends FindingListFilters {
  workspaceId?: string;
}

/** The visibility rule AND-ed with the filters: shared by the REST page, the GraphQL connection and lookups. */
export function findingWhere(ctx: ServiceContext, filters: FindingFilters): Prisma.FindingWhereInput {
  const viewer = requireViewer(ctx);
  const and: Prisma.FindingWhereInput[] = [{ workspace: visibleWorkspacesWhere(viewer) }];
  if (filters.workspaceId) and.push({ workspaceId: filters.workspaceId });
  if (filters.severity?.length) and.push({ severity: { in: filters.severity } });
  if (filters.status && filters.status !== 'all') and.push({ status: filters.status });
  // Every target the finding was seen through, not only the last one: overlapping targets share findings.
  if (filters.targetIds?.length) and.push({ targetLinks: { some: { targetId: { in: filters.targetIds.map(uuidOrNil) } } } });
  if (filters.assetId) and.push({ assetId: uuidOrNil(filters.assetId) });
  if (filters.search) {
    const contains = escapeLike(filters.search);
    and.push({
      OR: [{ name: { contains, mode: 'insensitive' } }, { checkId: { contains, mode: 'insensitive' } }, { description: { contains, mode: 'insensitive' } }],
    });
  }
  return { AND: and };
}

/** Open findings by default, as OASM lists them; `status: 'all'` lifts that. */
export async function listFindings(ctx: ServiceContext, workspaceId: string, input: ListFindingsInput): Promise<Page<FindingResponse>> {
  const { page, limit, sortBy, sortOrder, q, ...filters } = validate(listFindingsInput, input);
  await assertCan(ctx, 'finding:read', { workspaceId });
  const viewerId = requireViewer(ctx).id;
  // Severity sorts by rank (info < low < medium < high < critical: the enum's order), then the latest first.
  const rows = await findFindingPage(ctx.deps.db.read, {
    ...filters,
    search: q,
    viewerId,
    workspaceId,
    sortBy,
    direction: sortOrder,
    offset: (page - 1) * limit,
    limit,
  });
  // Each row carries the list's total; a page past the end has no row to carry it, so it is counted then.
  const total = rows[0]?.total ?? (page > 1 ? await countFindingList(ctx, workspaceId, { ...filters, search: q }) : 0);
  return pageEnvelope(rows.map(toFindingResponse), total, page, limit);
}

export type { FindingListFilters };

/**
 * The total of a workspace's finding list, for a REST page past the end (a page's statement carries it on its
 * rows): summed from finding_count when the filters allow (list-total.ts), else the matching rows counted. The
 * caller has checked the workspace is the viewer's, which is all findingWhere's visibility rule asks.
 */
async function countFindingList(ctx: ServiceContext, workspaceId: string, filters: FindingListFilters): Promise<number> {
  if (!countedByCounters(filters)) return ctx.deps.prisma.finding.count({ where: findingWhere(ctx, { ...filters, workspaceId }) });
  const { _sum } = await ctx.deps.prisma.findingCount.aggregate({ where: { workspaceId, ...counterWhere(filters) }, _sum: { count: true } });
  return _sum.count ?? 0;
}

/**
 * The same total read by the statement that loads the workspace (the GraphQL connection, its page beside it):
 * the workspace's finding_count rows when the filters allow, else a count of the matching rows in that
 * statement, under the page's own `where` (findingWhere for these filters). findingListTotalOf reads it from
 * the loaded row. The workspace was loaded through the visibility rule.
 */
export function findingListTotalSelection(filters: FindingListFilters, where: Prisma.FindingWhereInput) {
  return countedByCounters(filters)
    ? { findingCounts: { where: counterWhere(filters), select: { count: true } } }
    : { _count: { select: { findings: { where } } } };
}

/**
 * GraphQL's `workspace(id)` with its finding page, in one statement, for the workspaces module when
 * connection-page.ts says the statement serves its query: null when the viewer is no member.
 */
export function findWorkspaceWithFindings(ctx: ServiceContext, workspaceId: string, page: ServedFindingPage) {
  return findWorkspaceWithFindingPage(ctx.deps.db.read, { ...page, viewerId: requireViewer(ctx).id, workspaceId });
}

export function findingListTotalOf(workspace: { findingCounts?: { count: number }[]; _count?: { findings?: number } }): number {
  return workspace.findingCounts ? workspace.findingCounts.reduce((sum, row) => sum + row.count, 0) : (workspace._count?.findings ?? 0);
}

/** One finding with its history (oldest event first). */
export async function getFinding(ctx: ServiceContext, workspaceId: string, id: string): Promise<FindingDetailResponse> {
  await assertCan(ctx, 'finding:read', { workspaceId });
  const row = isUuid(id)
    ? await ctx.deps.prisma.finding.findFirst({
        where: { AND: [{ id }, findingWhere(ctx, { workspaceId })] },
        include: { events: { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] } },
      })
    : null;
  if (!row) throw new NotFoundError('Finding');
  return { ...toFindingResponse(row), events: row.events.map(toEventResponse) };
}

export interface FindingStatistics {
  /** Open findings per severity, every severity present (most severe first). */
  data: { severity: Severity; count: number }[];
  byStatus: Record<FindingStatus, number>;
}

export async function findingStatistics(ctx: ServiceContext, workspaceId: string, input: FindingStatisticsInput = {}): Promise<FindingStatistics> {
  const { targetIds } = validate(findingStatisticsInput, input);
  await assertCan(ctx, 'finding:read', { workspaceId });
  let severityCount: Map<Severity, number>;
  let statusCount: Map<FindingStatus, number>;
  if (targetIds?.length) {
    const where = findingWhere(ctx, { workspaceId, targetIds, status: 'all' });
    const [bySeverity, byStatus] = await Promise.all([
      ctx.deps.prisma.finding.groupBy({ by: ['severity'], where: { AND: [where, { status: 'open' }] }, _count: { _all: true } }),
      ctx.deps.prisma.finding.groupBy({ by: ['status'], where, _count: { _all: true } }),
    ]);
    severityCount = new Map(bySeverity.map((group) => [group.severity, group._count._all]));
    statusCount = new Map(byStatus.map((group) => [group.status, group._count._all]));
  } else {
    // The whole workspace: its (status, severity) counters, at most 15 rows (see countFindingList).
    const counters = await ctx.deps.prisma.findingCount.findMany({ where: { workspaceId }, select: { status: true, severity: true, count: true } });
    severityCount = new Map();
    statusCount = new Map();
    for (const { status, severity, count } of counters) {
      statusCount.set(status, (statusCount.get(status) ?? 0) + count);
      if (status === 'open') severityCount.set(severity, count);
    }
  }
  return {
    data: [...SEVERITIES].reverse().map((severity) => ({ severity, count: severityCount.get(severity) ?? 0 })),
    byStatus: { open: statusCount.get('open') ?? 0, fixed: statusCount.get('fixed') ?? 0, dismissed: statusCount.get('dismissed') ?? 0 },
  };
}

export interface TriageResult {
  /** How many findings changed state (the others were already there). */
  updated: number;
  /** Every finding named, in the order given, as it now is. */
  data: FindingResponse[];
}

interface TriageChange {
  /** Only findings in these states change; the rest are left as they are. */
  from: Prisma.FindingWhereInput['status'];
  data: Prisma.FindingUpdateManyMutationInput;
  event: 'dismissed' | 'reopened';
  comment: string | null;
  /** The dismiss reason and the person's own comment, apart, for the change feed. */
  reason?: string;
  note?: string | null;
}

/**
 * Bulk triage inside one workspace. Every id must be a finding of this workspace, or nothing changes and the
 * answer is 404 naming the first missing id (a finding of another workspace reads exactly like one that does
 * not exist). The state change and its FindingEvents commit together; events are published after.
 */
async function triage(ctx: ServiceContext, workspaceId: string, ids: string[], change: TriageChange): Promise<TriageResult> {
  const viewer = requireViewer(ctx);
  await assertCan(ctx, 'finding:triage', { workspaceId });
  const unique = [...new Set(ids.map((id) => id.toLowerCase()))];
  const { changed, rows, changes } = await ctx.deps.prisma.$transaction(async (tx) => {
    const changes = trackChanges(tx);
    const present = await tx.finding.findMany({ where: { id: { in: unique }, workspaceId }, select: { id: true } });
    if (present.length !== unique.length) {
      const found = new Set(present.map((row) => row.id));
      throw new NotFoundError(`Finding ${unique.find((id) => !found.has(id))}`);
    }
    // The status condition sits in the UPDATE itself: of two concurrent requests only one changes a row (and logs it).
    const changed = await tx.finding.updateManyAndReturn({
      where: { id: { in: unique }, workspaceId, status: change.from },
      data: change.data,
      select: { id: true, name: true, severity: true, checkId: true, assetId: true, targetId: true },
    });
    if (changed.length) {
      await tx.findingEvent.createMany({
        data: changed.map((row) => ({ findingId: row.id, type: change.event, actorId: viewer.id, comment: change.comment })),
      });
      await recordChanges(
        tx,
        changed.map((row) => {
          const base = { workspaceId, findingId: row.id, assetId: row.assetId, targetId: row.targetId };
          const identity = { name: row.name, severity: row.severity, checkId: row.checkId, actorId: viewer.id };
          return change.event === 'dismissed'
            ? { ...base, type: 'finding.dismissed' as const, data: { ...identity, reason: change.reason ?? 'other', comment: change.note ?? null } }
            : { ...base, type: 'finding.reopened' as const, data: { ...identity, comment: change.comment } };
        }),
      );
    }
    const rows = await tx.finding.findMany({ where: { id: { in: unique }, workspaceId } });
    return { changed, rows, changes };
  });
  publishChanges(ctx.deps, changes);
  const byId = new Map(rows.map((row) => [row.id, toFindingResponse(row)]));
  return { updated: changed.length, data: unique.map((id) => byId.get(id)!) };
}

/**
 * Dismisses open (or fixed) findings with a reason; already dismissed ones are left as they are. The event's
 * comment records the reason, then the comment: `false_positive: only on staging`.
 */
export async function dismissFindings(ctx: ServiceContext, workspaceId: string, input: DismissFindingsInput): Promise<TriageResult> {
  const viewer = requireViewer(ctx);
  const { ids, reason, comment } = validate(dismissFindingsInput, input);
  return triage(ctx, workspaceId, ids, {
    from: { not: 'dismissed' },
    data: { status: 'dismissed', dismissReason: reason, dismissComment: comment || null, dismissedAt: new Date(), dismissedById: viewer.id },
    event: 'dismissed',
    comment: comment ? `${reason}: ${comment}` : reason,
    reason,
    note: comment || null,
  });
}

/** Reopens dismissed findings; findings that are not dismissed are left as they are. */
export async function reopenFindings(ctx: ServiceContext, workspaceId: string, input: ReopenFindingsInput): Promise<TriageResult> {
  const { ids, comment } = validate(reopenFindingsInput, input);
  return triage(ctx, workspaceId, ids, {
    from: 'dismissed',
    data: { status: 'open', fixedAt: null, dismissReason: null, dismissComment: null, dismissedAt: null, dismissedById: null },
    event: 'reopened',
    comment: comment || null,
  });
}

/** node(id) lookups: a unique where that also carries the visibility rule. */
export function visibleFindingWhereUnique(ctx: ServiceContext, id: string): Prisma.FindingWhereUniqueInput {
  return { id: uuidOrNil(id), AND: [findingWhere(ctx, {})] };
}

/** For finding(id) on GraphQL: null when absent or not visible. */
export async function findVisibleFinding<Q extends object>(ctx: ServiceContext, id: string, query: Q) {
  if (!isUuid(id)) return null;
  return ctx.deps.prisma.finding.findFirst({ ...query, where: { AND: [{ id }, findingWhere(ctx, {})] } });
}

/**
 * The count openFindingCountsOfTargets reads (the per-target counter), as a correlated subquery on a target id
 * column: for a statement that reads targets with their counts in one (targets/page-sql.ts).
 */
export function openFindingCountOfTargetSql(targetId: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`COALESCE((SELECT counter.open FROM "finding_target_count" counter WHERE counter."targetId" = ${targetId}), 0)`;
}

/**
 * How many open findings each target was seen through, in the order given: one read of their
 * finding_target_count rows (kept exact by the database's triggers on finding and finding_target; a target
 * with no row has none). For the targets module's counts; callers have checked visibility.
 */
export async function openFindingCountsOfTargets(prisma: PrismaClient, targetIds: readonly string[]): Promise<number[]> {
  if (!targetIds.length) return [];
  const rows = await prisma.findingTargetCount.findMany({ where: { targetId: { in: [...targetIds] } }, select: { targetId: true, open: true } });
  const counts = new Map(rows.map((row) => [row.targetId, row.open]));
  return targetIds.map((id) => counts.get(id) ?? 0);
}

/**
 * Findings per status across the whole instance, for the operator's /metrics (no viewer: never shown to users):
 * summed from the per-workspace counters (finding_count), not by counting every finding on each scrape.
 */
export async function countFindingsByStatus(deps: Pick<AppDeps, 'prisma'>): Promise<Record<string, number>> {
  const rows = await deps.prisma.findingCount.groupBy({ by: ['status'], _sum: { count: true } });
  const counts: Record<string, number> = { open: 0, fixed: 0, dismissed: 0 };
  for (const row of rows) counts[row.status] = row._sum.count ?? 0;
  return counts;
}

/**
 * How often findings were opened, fixed, reopened and dismissed since the instance began (from the
 * append-only history; `seen` is left out, it is every sighting), for the operator's /metrics.
 */
export async function countFindingTransitions(deps: Pick<AppDeps, 'prisma'>): Promise<Record<string, number>> {
  const types = ['opened', 'fixed', 'reopened', 'dismissed'] as const;
  const rows = await deps.prisma.findingEvent.groupBy({ by: ['type'], where: { type: { in: [...types] } }, _count: { _all: true } });
  const counts: Record<string, number> = Object.fromEntries(types.map((type) => [type, 0]));
  for (const row of rows) counts[row.type] = row._count._all;
  return counts;
}
