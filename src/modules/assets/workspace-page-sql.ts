import { Prisma } from '../../db.js';
import { utcFromJson, type PreparedRead } from '../../db/prepared-read.js';
import { pageOfIds } from '../../db/page-of-ids.js';
import { findWorkspaceWithPage, type WorkspaceRow } from '../workspaces/page-sql.js';
import type { ServedAssetPage } from './connection-page.js';
import { assetCounterTotal, assetFilterSql, type AssetColumns, type AssetDiscoveryColumns } from './page-sql.js';

/**
 * GraphQL's `workspace(id) { assets(...) }` in one prepared statement, where connection-page.ts says it serves
 * the query: the workspace's row when the viewer is a member, the asset page (latest sighting first) with the
 * provenance if asked, and the total as the query asked it. The answer has Prisma's shape (the counter rows'
 * total as one row: assetListTotalOf sums them), so the Prisma plugin resolves the nested fields from it as from
 * its own rows. Prisma answered in one statement too, but building and mapping it cost most of the request.
 */
type DiscoveryRow = AssetDiscoveryColumns;

export type AssetRowWithDiscoveries = AssetColumns & { discoveries?: DiscoveryRow[] };

export type WorkspaceWithAssetPage = WorkspaceRow & {
  assets: AssetRowWithDiscoveries[];
  assetCounts?: Array<{ count: number }>;
  _count?: { assets: number };
};

type Timestamps<T, K extends keyof T> = Omit<T, K> & { [P in K]: T[P] extends Date ? string : string | null };
type RawDiscovery = Timestamps<DiscoveryRow, 'firstSeenAt' | 'lastSeenAt'>;
type RawAsset = Timestamps<Omit<AssetRowWithDiscoveries, 'discoveries'>, 'firstSeenAt' | 'lastSeenAt' | 'dismissedAt'> & { discoveries?: RawDiscovery[] };

export async function findWorkspaceWithAssetPage(
  read: PreparedRead,
  query: ServedAssetPage & { viewerId: string; workspaceId: string },
): Promise<WorkspaceWithAssetPage | null> {
  // The membership check gates the whole answer (no row, no page), so the page's filters need not repeat it.
  const filters = [Prisma.sql`a."workspaceId" = ${query.workspaceId}::uuid`, ...assetFilterSql(query)];
  const page = pageOfIds({
    from: Prisma.sql`"asset" a`,
    id: Prisma.sql`a.id`,
    sort: Prisma.sql`a."lastSeenAt"`,
    where: filters,
    direction: 'DESC',
    afterId: query.after,
    limit: query.limit,
    offset: 0,
  });
  const discoveries = query.withDiscoveries
    ? Prisma.sql`, 'discoveries', COALESCE((
        SELECT json_agg(json_build_object(
                 'id', d.id, 'assetId', d."assetId", 'workspaceId', d."workspaceId", 'source', d."source", 'from', d."from",
                 'fromAssetId', d."fromAssetId", 'scanId', d."scanId", 'firstSeenAt', d."firstSeenAt", 'lastSeenAt', d."lastSeenAt")
               ORDER BY d."firstSeenAt" ASC, d."source" ASC)
        FROM "asset_discovery" d WHERE d."assetId" = a.id), '[]'::json)`
    : Prisma.empty;
  // Counted on its own, so an empty page (past the end, or after the last cursor) has it too.
  const total = query.total
    ? (assetCounterTotal(query.workspaceId, query) ?? Prisma.sql`(SELECT count(*) FROM "asset" a WHERE ${Prisma.join(filters, ' AND ')})`)
    : Prisma.sql`NULL`;
  const row = await findWorkspaceWithPage<RawAsset>(read, {
    workspaceId: query.workspaceId,
    viewerId: query.viewerId,
    page,
    total,
    items: Prisma.sql`
             SELECT json_agg(json_build_object(
                      'id', a.id, 'workspaceId', a."workspaceId", 'kind', a."kind", 'key', a."key", 'value', a."value", 'data', a."data",
                      'enabled', a."enabled", 'parentId', a."parentId", 'targetId', a."targetId", 'lastScanId', a."lastScanId",
                      'firstSeenAt', a."firstSeenAt", 'lastSeenAt', a."lastSeenAt", 'dismissedAt', a."dismissedAt",
                      'references', a."references"${discoveries})
                    ORDER BY a."lastSeenAt" DESC, a.id DESC)
             FROM page JOIN "asset" a ON a.id = page.id`,
  });
  if (!row) return null;
  const { items: assets, total: count, ...workspace } = row;
  const answer: WorkspaceWithAssetPage = { ...workspace, assets: assets.map(assetOf) };
  if (query.total === 'counters') answer.assetCounts = [{ count: count ?? 0 }];
  if (query.total === 'count') answer._count = { assets: count ?? 0 };
  return answer;
}

/** Field by field (see targets/workspace-page-sql.ts): the JSON's timestamps are UTC text. */
function assetOf(raw: RawAsset): AssetRowWithDiscoveries {
  const asset: AssetRowWithDiscoveries = {
    id: raw.id,
    workspaceId: raw.workspaceId,
    kind: raw.kind,
    key: raw.key,
    value: raw.value,
    data: raw.data,
    enabled: raw.enabled,
    parentId: raw.parentId,
    targetId: raw.targetId,
    lastScanId: raw.lastScanId,
    firstSeenAt: utcFromJson(raw.firstSeenAt),
    lastSeenAt: utcFromJson(raw.lastSeenAt),
    dismissedAt: raw.dismissedAt === null ? null : utcFromJson(raw.dismissedAt),
    references: raw.references,
  };
  if (raw.discoveries) {
    asset.discoveries = raw.discoveries.map((entry) => ({
      id: entry.id,
      assetId: entry.assetId,
      workspaceId: entry.workspaceId,
      source: entry.source,
      from: entry.from,
      fromAssetId: entry.fromAssetId,
      scanId: entry.scanId,
      firstSeenAt: utcFromJson(entry.firstSeenAt),
      lastSeenAt: utcFromJson(entry.lastSeenAt),
    }));
  }
  return asset;
}
