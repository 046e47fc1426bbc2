import { builder } from '../../graphql/builder.js';
import { rowFirst } from '../../graphql/row-first-plugin.js';
import { decodeId, decodeIds, decodeQueryId } from '../../graphql/ids.js';
import { WorkspaceRef } from '../workspaces/graphql.js';
import { TargetRef } from '../targets/graphql.js';
import { AssetRef } from '../assets/graphql.js';
import * as findings from './service.js';
import {
  DISMISS_REASONS,
  FINDING_EVENT_TYPES,
  FINDING_STATUS_FILTERS,
  FINDING_STATUSES,
  SEVERITIES,
  type FindingStatusFilter as FindingStatusFilterValue,
  type Severity,
} from './schemas.js';
import { prismaConnectionHelpers } from '@pothos/plugin-prisma';
import { connectionWithTotal } from '../../graphql/connection-total.js';
import { connectionWhere } from '../../graphql/relation-page-query.js';

export const SeverityEnum = builder.enumType('Severity', { values: SEVERITIES });
export const FindingStatusEnum = builder.enumType('FindingStatus', { values: FINDING_STATUSES });
const FindingStatusFilter = builder.enumType('FindingStatusFilter', { values: FINDING_STATUS_FILTERS });
const DismissReasonEnum = builder.enumType('DismissReason', { values: DISMISS_REASONS });
const FindingEventTypeEnum = builder.enumType('FindingEventType', { values: FINDING_EVENT_TYPES });

builder.prismaObject('FindingEvent', {
  description: 'One entry of a finding’s history.',
  fields: (t) => ({
    id: t.exposeID('id'),
    type: t.expose('type', { type: FindingEventTypeEnum }),
    scanId: t.exposeString('scanId', { nullable: true }),
    actorId: t.exposeString('actorId', { nullable: true, description: 'Who triaged it; null for changes a scan made.' }),
    comment: t.exposeString('comment', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

export const FindingRef = builder.prismaNode('Finding', {
  id: { field: 'id' },
  description: 'A vulnerability or misconfiguration, deduplicated per workspace by its fingerprint.',
  findUnique: (id, ctx) => findings.visibleFindingWhereUnique(ctx, id),
  // node(id) of one that is absent or not visible is null, not findUniqueOrThrow's masked INTERNAL error.
  nullable: true,
  fields: (t) => ({
    databaseId: t.exposeString('id', { description: 'The UUID the REST API uses.' }),
    fingerprint: t.exposeString('fingerprint'),
    checkId: t.exposeString('checkId', { description: 'The template or check that found it.' }),
    source: t.exposeString('source'),
    name: t.exposeString('name'),
    severity: t.expose('severity', { type: SeverityEnum }),
    description: t.exposeString('description'),
    remediation: t.exposeString('remediation'),
    matcher: t.exposeString('matcher'),
    status: t.expose('status', { type: FindingStatusEnum }),
    evidence: t.expose('evidence', { type: 'JSON' }),
    classification: t.expose('classification', { type: 'JSON', nullable: true }),
    asset: t.relation('asset', { nullable: true, type: AssetRef }),
    target: t.relation('target', { nullable: true, type: TargetRef }),
    occurrences: t.exposeInt('occurrences'),
    firstSeenAt: t.expose('firstSeenAt', { type: 'DateTime' }),
    lastSeenAt: t.expose('lastSeenAt', { type: 'DateTime' }),
    fixedAt: t.expose('fixedAt', { type: 'DateTime', nullable: true }),
    dismissReason: t.expose('dismissReason', { type: DismissReasonEnum, nullable: true }),
    dismissComment: t.exposeString('dismissComment', { nullable: true }),
    dismissedAt: t.expose('dismissedAt', { type: 'DateTime', nullable: true }),
    events: t.relation('events', { description: 'The history, oldest first.', query: { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] } }),
  }),
});

// The target's counter row (finding_target_count, kept exact by triggers), joined into the statement that loads the target.
builder.prismaObjectField('Target', 'findingCount', (t) =>
  t.int({
    description: 'Open findings on this target.',
    select: { openFindingCount: { select: { open: true } } },
    resolve: (target) => target.openFindingCount?.open ?? 0,
    // A target without a counter row has none open: loaded, the relation is null rather than absent.
    extensions: rowFirst((target: { openFindingCount?: { open: number } | null }) =>
      target.openFindingCount === undefined ? undefined : (target.openFindingCount?.open ?? 0),
    ),
  }),
);

type FindingConnectionArgs = {
  severity?: Severity[] | null;
  status?: FindingStatusFilterValue | null;
  targetId?: string | number | null;
  search?: string | null;
};

const findingListFilters = (args: FindingConnectionArgs): findings.FindingListFilters => ({
  severity: args.severity ?? undefined,
  status: args.status ?? 'open',
  targetIds: args.targetId == null ? undefined : [decodeQueryId(args.targetId, TargetRef, 'targetId')!],
  search: args.search ?? undefined,
});

const findingPage = prismaConnectionHelpers(builder, 'Finding', { cursor: 'id' });

// The page and its total in the statement that loads the workspace: the total from the counters REST sums
// where the filters allow (a 100,000-finding workspace is not counted row by row on every page), else counted.
builder.prismaObjectField('Workspace', 'findings', (t) =>
  t.connection(
    {
      type: FindingRef,
      description: "The workspace's findings, most recently seen first.",
      args: {
        severity: t.arg({ type: [SeverityEnum] }),
        status: t.arg({ type: FindingStatusFilter, defaultValue: 'open' }),
        targetId: t.arg.id(),
        search: t.arg.string({ description: 'Matches name, check id and description, case-insensitive.' }),
      },
      select: (args, ctx, nestedSelection) => {
        const filters = findingListFilters(args);
        // Marked as the connection's, so workspace(id) may read the page by its statement (connection-page.ts).
        const where = connectionWhere(findings.findingWhere(ctx, filters), filters);
        return {
          findings: { ...findingPage.getQuery(args, ctx, nestedSelection), where, orderBy: [{ lastSeenAt: 'desc' }, { id: 'desc' }] },
          ...findings.findingListTotalSelection(filters, where),
        };
      },
      resolve: (workspace, args, ctx) => {
        const row = workspace as unknown as { findings: never[]; findingCounts?: { count: number }[]; _count?: { findings?: number } };
        return { ...findingPage.resolve(row.findings, args, ctx, workspace), totalCount: findings.findingListTotalOf(row) };
      },
    },
    connectionWithTotal('FindingConnection', 'How many findings match, over every page.'),
    { name: 'FindingEdge' },
  ),
);

const SeverityCount = builder.objectRef<{ severity: (typeof SEVERITIES)[number]; count: number }>('SeverityCount').implement({
  fields: (t) => ({ severity: t.expose('severity', { type: SeverityEnum }), count: t.exposeInt('count') }),
});

const FindingStatusCounts = builder.objectRef<findings.FindingStatistics['byStatus']>('FindingStatusCounts').implement({
  fields: (t) => ({ open: t.exposeInt('open'), fixed: t.exposeInt('fixed'), dismissed: t.exposeInt('dismissed') }),
});

const FindingStatistics = builder.objectRef<findings.FindingStatistics>('FindingStatistics').implement({
  fields: (t) => ({
    bySeverity: t.field({ type: [SeverityCount], description: 'Open findings per severity, all five, most severe first.', resolve: (stats) => stats.data }),
    byStatus: t.field({ type: FindingStatusCounts, resolve: (stats) => stats.byStatus }),
  }),
});

builder.queryFields((t) => ({
  finding: t.prismaField({
    type: 'Finding',
    nullable: true,
    authScopes: { signedIn: true },
    args: { id: t.arg.id({ required: true }) },
    resolve: (query, _root, args, ctx) => findings.findVisibleFinding(ctx, decodeQueryId(args.id, FindingRef, 'id'), query),
  }),
  findingStatistics: t.field({
    type: FindingStatistics,
    authScopes: { signedIn: true },
    args: { workspaceId: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => findings.findingStatistics(ctx, decodeQueryId(args.workspaceId, WorkspaceRef, 'workspaceId')),
  }),
}));

builder.mutationFields((t) => ({
  dismissFindings: t.field({
    type: [FindingRef],
    errors: {},
    description: 'Dismisses findings of one workspace with a reason. Any id not of this workspace: NotFoundError, nothing changes.',
    args: {
      workspaceId: t.arg.id({ required: true }),
      ids: t.arg.idList({ required: true }),
      reason: t.arg({ type: DismissReasonEnum, required: true }),
      comment: t.arg.string(),
    },
    resolve: async (_root, args, ctx) =>
      (
        await findings.dismissFindings(ctx, decodeId(args.workspaceId, WorkspaceRef, 'workspaceId'), {
          ids: decodeIds(args.ids, FindingRef, 'ids'),
          reason: args.reason,
          comment: args.comment ?? undefined,
        })
      ).data,
  }),
  reopenFindings: t.field({
    type: [FindingRef],
    errors: {},
    description: 'Reopens dismissed findings of one workspace. Any id not of this workspace: NotFoundError, nothing changes.',
    args: {
      workspaceId: t.arg.id({ required: true }),
      ids: t.arg.idList({ required: true }),
      comment: t.arg.string(),
    },
    resolve: async (_root, args, ctx) =>
      (
        await findings.reopenFindings(ctx, decodeId(args.workspaceId, WorkspaceRef, 'workspaceId'), {
          ids: decodeIds(args.ids, FindingRef, 'ids'),
          comment: args.comment ?? undefined,
        })
      ).data,
  }),
}));
