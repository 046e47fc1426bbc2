import { Prisma } from '../../db.js';
import { uuidOrNil } from '../../auth/authz.js';
import { utcFromJson, type PreparedRead } from '../../db/prepared-read.js';
import { pageOfIds } from '../../db/page-of-ids.js';
import { escapeLike } from '../../pagination.js';
import { countedByCounters, type AssetListFilters } from './list-total.js';
import type { ASSET_SORT_FIELDS } from './schemas.js';

/**
 * The REST asset page in one prepared statement: the page's rows with their discovery provenance (oldest source
 * first) and the filtered list's total, summed from asset_count when the filters allow (as countAssetList does)
 * or else counted (see page-of-ids.ts). Through the ORM it took two statements (the page with its provenance,
 * the counter sum) and most of the request's CPU (`npm run bench:api`, assets). The filters mirror assetWhere
 * (service.ts); test/assets.page-sql.test.ts compares the two for every filter, sort and page.
 */
export interface AssetPageQuery extends AssetListFilters {
  viewerId: string;
  workspaceId: string;
  sortBy: (typeof ASSET_SORT_FIELDS)[number];
  direction: 'ASC' | 'DESC';
  offset: number;
  limit: number;
}

/** The asset table's columns and a provenance row's, as Prisma types them (the statements read the same columns). */
export type AssetColumns = Prisma.AssetGetPayload<object>;
export type AssetDiscoveryColumns = Prisma.AssetDiscoveryGetPayload<object>;

export type AssetPageRow = AssetColumns & {
  discoveries: Array<Pick<AssetDiscoveryColumns, 'source' | 'from' | 'fromAssetId' | 'scanId' | 'firstSeenAt' | 'lastSeenAt'>>;
  total: number;
};

type RawDiscovery = Omit<AssetPageRow['discoveries'][number], 'firstSeenAt' | 'lastSeenAt'> & { firstSeenAt: string; lastSeenAt: string };
type RawRow = Omit<AssetPageRow, 'discoveries'> & { discoveries: RawDiscovery[] };

/** Columns are quoted identifiers from a closed list: nothing the caller typed reaches the SQL text. */
const SORT_COLUMNS: Record<AssetPageQuery['sortBy'], Prisma.Sql> = {
  lastSeenAt: Prisma.raw('"lastSeenAt"'),
  firstSeenAt: Prisma.raw('"firstSeenAt"'),
  value: Prisma.raw('"value"'),
};

/** The list's total as a scalar subquery: summed from asset_count when the filters allow (list-total.ts), else undefined (counted). */
export function assetCounterTotal(workspaceId: string, filters: AssetListFilters): Prisma.Sql | undefined {
  if (!countedByCounters(filters)) return undefined;
  const where = [Prisma.sql`c."workspaceId" = ${workspaceId}::uuid`];
  if (filters.kind) where.push(Prisma.sql`c."kind" = ${filters.kind}::"AssetKind"`);
  if (filters.enabled !== undefined) where.push(Prisma.sql`c."enabled" = ${filters.enabled}`);
  if (filters.dismissed !== undefined) where.push(Prisma.sql`c."dismissed" = ${filters.dismissed}`);
  return Prisma.sql`(SELECT coalesce(sum(c."count"), 0) FROM "asset_count" c WHERE ${Prisma.join(where, ' AND ')})`;
}

/** The list's filters over the asset table as `a` (the workspace and its visibility are the caller's), as assetWhere has them. */
export function assetFilterSql(filters: AssetListFilters): Prisma.Sql[] {
  const where: Prisma.Sql[] = [];
  if (filters.kind) where.push(Prisma.sql`a."kind" = ${filters.kind}::"AssetKind"`);
  if (filters.targetId) {
    // A malformed id matches nothing (as assetWhere), rather than failing the statement's uuid cast.
    const targetId = uuidOrNil(filters.targetId);
    where.push(Prisma.sql`EXISTS (SELECT 1 FROM "asset_target" link WHERE link."assetId" = a.id AND link."targetId" = ${targetId}::uuid)`);
  }
  if (filters.search) where.push(Prisma.sql`a."value" ILIKE ${`%${escapeLike(filters.search)}%`}`);
  if (filters.enabled !== undefined) where.push(Prisma.sql`a."enabled" = ${filters.enabled}`);
  if (filters.source)
    where.push(Prisma.sql`EXISTS (SELECT 1 FROM "asset_discovery" found WHERE found."assetId" = a.id AND found."source" = ${filters.source})`);
  if (filters.dismissed !== undefined) where.push(filters.dismissed ? Prisma.sql`a."dismissedAt" IS NOT NULL` : Prisma.sql`a."dismissedAt" IS NULL`);
  return where;
}

export async function findAssetPage(read: PreparedRead, query: AssetPageQuery): Promise<AssetPageRow[]> {
  const column = SORT_COLUMNS[query.sortBy];
  const direction = Prisma.raw(query.direction === 'ASC' ? 'ASC' : 'DESC');
  const filters = [
    Prisma.sql`a."workspaceId" = ${query.workspaceId}::uuid`,
    Prisma.sql`EXISTS (SELECT 1 FROM "workspace_member" mine WHERE mine."workspaceId" = a."workspaceId" AND mine."userId" = ${query.viewerId})`,
    ...assetFilterSql(query),
  ];
  const page = pageOfIds({
    from: Prisma.sql`"asset" a`,
    id: Prisma.sql`a.id`,
    sort: Prisma.sql`a.${column}`,
    where: filters,
    direction: query.direction,
    total: assetCounterTotal(query.workspaceId, query),
    limit: query.limit,
    offset: query.offset,
  });
  const rows = await read<RawRow>(Prisma.sql`
    WITH page AS (${page})
    SELECT a.id, a."workspaceId", a."kind"::text AS "kind", a."key", a."value", a."data", a."enabled", a."parentId", a."targetId",
           a."lastScanId", a."firstSeenAt", a."lastSeenAt", a."dismissedAt", a."references", page.total::int AS total,
           COALESCE((
             SELECT json_agg(json_build_object(
                      'source', d."source", 'from', d."from", 'fromAssetId', d."fromAssetId", 'scanId', d."scanId",
                      'firstSeenAt', d."firstSeenAt", 'lastSeenAt', d."lastSeenAt")
                    ORDER BY d."firstSeenAt" ASC, d."source" ASC)
             FROM "asset_discovery" d WHERE d."assetId" = a.id
           ), '[]'::json) AS discoveries
    FROM page JOIN "asset" a ON a.id = page.id
    ORDER BY a.${column} ${direction}, a.id ${direction}`);
  // Built field by field (see targets/workspace-page-sql.ts): the JSON's timestamps are UTC text.
  return rows.map((row) => ({
    id: row.id,
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
    dismissedAt: row.dismissedAt,
    references: row.references,
    discoveries: row.discoveries.map((entry) => ({
      source: entry.source,
      from: entry.from,
      fromAssetId: entry.fromAssetId,
      scanId: entry.scanId,
      firstSeenAt: utcFromJson(entry.firstSeenAt),
      lastSeenAt: utcFromJson(entry.lastSeenAt),
    })),
    total: row.total,
  }));
}
