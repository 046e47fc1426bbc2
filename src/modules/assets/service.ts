import type { ServiceContext } from '../../context.js';
import { NotFoundError } from '../../errors.js';
import { assertCan, isUuid, requireViewer, uuidOrNil, visibleWorkspacesWhere } from '../../auth/authz.js';
import { Prisma, type PrismaClient } from '../../db.js';
import { validate } from '../../validate.js';
import { escapeLike, pageEnvelope, type Page } from '../../pagination.js';
import { nodeIdOf } from '../../graphql/ids.js';
import type { DiscoverySource } from '../../scanner/discovery/types.js';
import { listAssetsInput, updateAssetInput, type AssetKind, type ListAssetsInput, type UpdateAssetInput } from './schemas.js';
import { updateAssetsIn } from './update.js';
import { findAssetPage } from './page-sql.js';
import type { ServedAssetPage } from './connection-page.js';
import { findWorkspaceWithAssetPage } from './workspace-page-sql.js';
import { counterWhere, countedByCounters, type AssetListFilters } from './list-total.js';

/** One reason a host is in the inventory (per discovery source), as the APIs show it. */
export interface AssetDiscoveryResponse {
  source: DiscoverySource;
  /** What pointed at it: the parent name, an asset key, a URL or an address. */
  from: string | null;
  /** The asset that pointed at it, when it is in the inventory. */
  fromAssetId: string | null;
  scanId: string | null;
  firstSeenAt: Date;
  lastSeenAt: Date;
}

/** Every column of the row: GraphQL resolves an Asset from it as well. */
export interface AssetResponse {
  id: string;
  /** The GraphQL global id. */
  nodeId: string;
  workspaceId: string;
  kind: AssetKind;
  key: string;
  value: string;
  data: Prisma.JsonValue;
  enabled: boolean;
  parentId: string | null;
  targetId: string | null;
  lastScanId: string | null;
  firstSeenAt: Date;
  lastSeenAt: Date;
  /** Provenance, oldest source first; [] for assets no discovery found (seen by scanning a target directly). */
  discovery: AssetDiscoveryResponse[];
  /** Out-of-scope host names this asset pointed at, newest last. */
  references: string[];
  dismissed: boolean;
  dismissedAt: Date | null;
}

/** What a response needs besides the row: its provenance (one more query per page, whatever its size). */
export const assetResponseInclude = {
  discoveries: {
    orderBy: [{ firstSeenAt: 'asc' }, { source: 'asc' }],
    select: { source: true, from: true, fromAssetId: true, scanId: true, firstSeenAt: true, lastSeenAt: true },
  },
} satisfies Prisma.AssetInclude;

type AssetRow = Prisma.AssetGetPayload<{ include: typeof assetResponseInclude }>;

export function toAssetResponse(row: AssetRow): AssetResponse {
  return {
    id: row.id,
    nodeId: nodeIdOf('Asset', row.id),
    workspaceId: row.workspaceId,
    kind: row.kind,
    key: row.key,
    value: row.value,
    data: row.data,
    enabled: row.enabled,
    parentId: row.parentId,
    targetId: row.targetId,
    lastScanId: row.lastScanId,
    firstSeenAt: row.firstSeenAt,
    lastSeenAt: row.lastSeenAt,
    discovery: row.discoveries.map((entry) => ({ ...entry, source: entry.source as DiscoverySource })),
    references: row.references,
    dismissed: row.dismissedAt !== null,
    dismissedAt: row.dismissedAt,
  };
}

export interface AssetFilters extends AssetListFilters {
  workspaceId?: string;
}

/** The visibility rule AND-ed with the filters: shared by the REST page, the GraphQL connection and lookups. */
export function assetWhere(ctx: ServiceContext, filters: AssetFilters): Prisma.AssetWhereInput {
  const viewer = requireViewer(ctx);
  const and: Prisma.AssetWhereInput[] = [{ workspace: visibleWorkspacesWhere(viewer) }];
  if (filters.workspaceId) and.push({ workspaceId: filters.workspaceId });
  if (filters.kind) and.push({ kind: filters.kind });
  // A malformed id (e.g. from a GraphQL global id) matches nothing rather than failing the query.
  // Every target the asset was seen through, not only the last one: overlapping targets share assets.
  if (filters.targetId) and.push({ targetLinks: { some: { targetId: uuidOrNil(filters.targetId) } } });
  if (filters.search) and.push({ value: { contains: escapeLike(filters.search), mode: 'insensitive' } });
  if (filters.enabled !== undefined) and.push({ enabled: filters.enabled });
  if (filters.source) and.push({ discoveries: { some: { source: filters.source } } });
  if (filters.dismissed !== undefined) and.push({ dismissedAt: filters.dismissed ? { not: null } : null });
  return { AND: and };
}

export async function listAssets(ctx: ServiceContext, workspaceId: string, input: ListAssetsInput): Promise<Page<AssetResponse>> {
  const { page, limit, sortBy, sortOrder, ...filters } = validate(listAssetsInput, input);
  await assertCan(ctx, 'asset:read', { workspaceId });
  const viewerId = requireViewer(ctx).id;
  const rows = await findAssetPage(ctx.deps.db.read, { ...filters, viewerId, workspaceId, sortBy, direction: sortOrder, offset: (page - 1) * limit, limit });
  // Each row carries the list's total; a page past the end has no row to carry it, so it is counted then.
  const total = rows[0]?.total ?? (page > 1 ? await countAssetList(ctx, workspaceId, filters) : 0);
  return pageEnvelope(rows.map(toAssetResponse), total, page, limit);
}

export type { AssetListFilters };

/**
 * The total of a workspace's asset list, for a REST page past the end (a page's statement carries it on its
 * rows): summed from asset_count when the filters allow (list-total.ts), else the matching rows counted. The
 * caller has checked the workspace is the viewer's, which is all assetWhere's visibility rule asks.
 */
async function countAssetList(ctx: ServiceContext, workspaceId: string, filters: AssetListFilters): Promise<number> {
  if (!countedByCounters(filters)) return ctx.deps.prisma.asset.count({ where: assetWhere(ctx, { ...filters, workspaceId }) });
  const { _sum } = await ctx.deps.prisma.assetCount.aggregate({ where: { workspaceId, ...counterWhere(filters) }, _sum: { count: true } });
  return _sum.count ?? 0;
}

/**
 * The same total read by the statement that loads the workspace (the GraphQL connection, its page beside it):
 * the workspace's asset_count rows when the filters allow, else a count of the matching rows in that statement,
 * under the page's own `where` (assetWhere for these filters). assetListTotalOf reads it from the loaded row.
 * The workspace was loaded through the visibility rule.
 */
export function assetListTotalSelection(filters: AssetListFilters, where: Prisma.AssetWhereInput) {
  return countedByCounters(filters)
    ? { assetCounts: { where: counterWhere(filters), select: { count: true } } }
    : { _count: { select: { assets: { where } } } };
}

export function assetListTotalOf(workspace: { assetCounts?: { count: number }[]; _count?: { assets?: number } }): number {
  return workspace.assetCounts ? workspace.assetCounts.reduce((sum, row) => sum + row.count, 0) : (workspace._count?.assets ?? 0);
}

/**
 * GraphQL's `workspace(id)` with its asset page, in one statement, for the workspaces module when
 * connection-page.ts says the statement serves its query: null when the viewer is no member.
 */
export function findWorkspaceWithAssets(ctx: ServiceContext, workspaceId: string, page: ServedAssetPage) {
  return findWorkspaceWithAssetPage(ctx.deps.db.read, { ...page, viewerId: requireViewer(ctx).id, workspaceId });
}

async function findAssetOrThrow(ctx: ServiceContext, workspaceId: string, id: string): Promise<AssetRow> {
  const row = isUuid(id)
    ? await ctx.deps.prisma.asset.findFirst({ where: { AND: [{ id }, assetWhere(ctx, { workspaceId })] }, include: assetResponseInclude })
    : null;
  if (!row) throw new NotFoundError('Asset');
  return row;
}

export async function getAsset(ctx: ServiceContext, workspaceId: string, id: string): Promise<AssetResponse> {
  await assertCan(ctx, 'asset:read', { workspaceId });
  return toAssetResponse(await findAssetOrThrow(ctx, workspaceId, id));
}

/**
 * Enables, disables or dismisses one asset (see updateAssetsIn). Disabled assets stay in the inventory but are
 * left out of scans; a dismissed one is also never offered as a new candidate again. Managing the inventory is target work.
 */
export async function updateAsset(ctx: ServiceContext, workspaceId: string, id: string, input: UpdateAssetInput): Promise<AssetResponse> {
  const change = validate(updateAssetInput, input);
  const { notFound } = await updateAssetsIn(ctx, workspaceId, [id], change);
  if (notFound.length) throw new NotFoundError('Asset');
  return toAssetResponse(await findAssetOrThrow(ctx, workspaceId, id));
}

/** For GraphQL, where an asset is named by its id alone: finds its workspace (if visible), then updates it. */
export async function updateVisibleAsset(ctx: ServiceContext, id: string, input: UpdateAssetInput): Promise<AssetResponse> {
  const change = validate(updateAssetInput, input);
  const row = isUuid(id) ? await ctx.deps.prisma.asset.findFirst({ where: { AND: [{ id }, assetWhere(ctx, {})] }, select: { workspaceId: true } }) : null;
  if (!row) throw new NotFoundError('Asset');
  return updateAsset(ctx, row.workspaceId, id, change);
}

/** node(id) lookups: a unique where that also carries the visibility rule. */
export function visibleAssetWhereUnique(ctx: ServiceContext, id: string): Prisma.AssetWhereUniqueInput {
  return { id: uuidOrNil(id), AND: [assetWhere(ctx, {})] };
}

/** For asset(id) on GraphQL: null when absent or not visible. */
export async function findVisibleAsset<Q extends object>(ctx: ServiceContext, id: string, query: Q) {
  if (!isUuid(id)) return null;
  return ctx.deps.prisma.asset.findFirst({ ...query, where: { AND: [{ id }, assetWhere(ctx, {})] } });
}

/**
 * The count assetCountsOfTargets reads, as a correlated subquery on a target id column: for a statement that
 * reads targets with their counts in one (targets/page-sql.ts), while the asset tables stay this module's.
 */
export function assetCountOfTargetSql(targetId: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`(SELECT count(*)::int FROM "asset_target" linked WHERE linked."targetId" = ${targetId})`;
}

/**
 * How many assets each target was seen through (one grouped count over the link table, by its targetId
 * index), in the order given. For the targets module's counts; callers have checked the targets are visible.
 */
export async function assetCountsOfTargets(prisma: PrismaClient, targetIds: readonly string[]): Promise<number[]> {
  if (!targetIds.length) return [];
  const groups = await prisma.assetTarget.groupBy({ by: ['targetId'], where: { targetId: { in: [...targetIds] } }, _count: { _all: true } });
  const counts = new Map(groups.map((group) => [group.targetId, group._count._all]));
  return targetIds.map((id) => counts.get(id) ?? 0);
}
