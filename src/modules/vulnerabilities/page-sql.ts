import { Prisma } from '../../db.js';
import { uuidOrNil } from '../../auth/authz.js';
import type { PreparedRead } from '../../db/prepared-read.js';
import { pageOfIds } from '../../db/page-of-ids.js';
import { escapeLike } from '../../pagination.js';
import { countedByCounters, type FindingListFilters } from './list-total.js';
import type { FINDING_SORT_FIELDS } from './schemas.js';

/**
 * The REST finding page in one prepared statement: the page's rows and the filtered list's total, summed from
 * finding_count when the filters allow (as countFindingList does) or else counted (see page-of-ids.ts). Through
 * the ORM it took two statements (the page, the counter sum). The filters and orders mirror findingWhere and
 * listFindings (service.ts); test/vulnerabilities.page-sql.test.ts compares the two for every filter, sort and page.
 */
export interface FindingPageQuery extends FindingListFilters {
  viewerId: string;
  workspaceId: string;
  sortBy: (typeof FINDING_SORT_FIELDS)[number];
  direction: 'ASC' | 'DESC';
  offset: number;
  limit: number;
}

export type FindingPageRow = Prisma.FindingGetPayload<object> & { total: number };

/** Columns are quoted identifiers from a closed list: nothing the caller typed reaches the SQL text. */
const SORT_COLUMNS: Record<FindingPageQuery['sortBy'], Prisma.Sql> = {
  lastSeenAt: Prisma.raw('"lastSeenAt"'),
  firstSeenAt: Prisma.raw('"firstSeenAt"'),
  severity: Prisma.raw('"severity"'),
  name: Prisma.raw('"name"'),
};

function severityAndStatus(alias: Prisma.Sql, filters: FindingListFilters): Prisma.Sql[] {
  const where: Prisma.Sql[] = [];
  if (filters.severity?.length) where.push(Prisma.sql`${alias}."severity" = ANY(${filters.severity}::"Severity"[])`);
  if (filters.status && filters.status !== 'all') where.push(Prisma.sql`${alias}."status" = ${filters.status}::"FindingStatus"`);
  return where;
}

/** The list's total as a scalar subquery: summed from finding_count when the filters allow (list-total.ts), else undefined (counted). */
export function findingCounterTotal(workspaceId: string, filters: FindingListFilters): Prisma.Sql | undefined {
  if (!countedByCounters(filters)) return undefined;
  const where = [Prisma.sql`c."workspaceId" = ${workspaceId}::uuid`, ...severityAndStatus(Prisma.raw('c'), filters)];
  return Prisma.sql`(SELECT coalesce(sum(c."count"), 0) FROM "finding_count" c WHERE ${Prisma.join(where, ' AND ')})`;
}

/** The list's filters over the finding table as `f` (the workspace and its visibility are the caller's), as findingWhere has them. */
export function findingFilterSql(filters: FindingListFilters): Prisma.Sql[] {
  const where = severityAndStatus(Prisma.raw('f'), filters);
  // Malformed ids match nothing (as findingWhere), rather than failing the statement's uuid casts.
  if (filters.targetIds?.length) {
    where.push(
      Prisma.sql`EXISTS (SELECT 1 FROM "finding_target" link WHERE link."findingId" = f.id AND link."targetId" = ANY(${filters.targetIds.map(uuidOrNil)}::uuid[]))`,
    );
  }
  if (filters.assetId) where.push(Prisma.sql`f."assetId" = ${uuidOrNil(filters.assetId)}::uuid`);
  if (filters.search) {
    const pattern = `%${escapeLike(filters.search)}%`;
    where.push(Prisma.sql`(f."name" ILIKE ${pattern} OR f."checkId" ILIKE ${pattern} OR f."description" ILIKE ${pattern})`);
  }
  return where;
}

export async function findFindingPage(read: PreparedRead, query: FindingPageQuery): Promise<FindingPageRow[]> {
  const column = SORT_COLUMNS[query.sortBy];
  const direction = Prisma.raw(query.direction === 'ASC' ? 'ASC' : 'DESC');
  const filters = [
    Prisma.sql`f."workspaceId" = ${query.workspaceId}::uuid`,
    Prisma.sql`EXISTS (SELECT 1 FROM "workspace_member" mine WHERE mine."workspaceId" = f."workspaceId" AND mine."userId" = ${query.viewerId})`,
    ...findingFilterSql(query),
  ];
  // Severity sorts by rank (the enum's order), then the latest first, as listFindings asks Prisma.
  const then = query.sortBy === 'severity' ? Prisma.sql`f."lastSeenAt" DESC` : undefined;
  const page = pageOfIds({
    from: Prisma.sql`"finding" f`,
    id: Prisma.sql`f.id`,
    sort: Prisma.sql`f.${column}`,
    then,
    where: filters,
    direction: query.direction,
    total: findingCounterTotal(query.workspaceId, query),
    limit: query.limit,
    offset: query.offset,
  });
  const order = then ? Prisma.sql`f.${column} ${direction}, ${then}, f.id ${direction}` : Prisma.sql`f.${column} ${direction}, f.id ${direction}`;
  const rows = await read<FindingPageRow>(Prisma.sql`
    WITH page AS (${page})
    SELECT f.id, f."workspaceId", f."fingerprint", f."checkId", f."source", f."name", f."severity"::text AS "severity", f."description",
           f."remediation", f."matcher", f."status"::text AS "status", f."evidence", f."classification", f."assetId", f."targetId",
           f."lastScanId", f."occurrences", f."firstSeenAt", f."lastSeenAt", f."fixedAt", f."dismissReason"::text AS "dismissReason",
           f."dismissComment", f."dismissedAt", f."dismissedById", f."updatedAt", page.total::int AS total
    FROM page JOIN "finding" f ON f.id = page.id
    ORDER BY ${order}`);
  return rows;
}
