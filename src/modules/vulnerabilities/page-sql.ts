import { Prisma } from '../../db.js';
import { uuidOrNil } from '../../auth/authz.js';
import type { PreparedRead } from '../../db/prepared-read.js';
import { pageOfIds } from '../../db/page-of-ids.js';
import { escapeLike } from '../../pagination.js';
import type { FINDING_SORT_FIELDS, FindingStatusFilter, Severity } from './schemas.js';

/**
 * The REST finding page in one prepared statement: the page's rows and the filtered list's total, summed from
 * finding_count when the filters allow (as countFindingList does) or else counted (see page-of-ids.ts). Through
 * the ORM it took two statements (the page, the counter sum). The filters and orders mirror findingWhere and
 * listFindings (service.ts); test/vulnerabilities.page-sql.test.ts compares the two for every filter, sort and page.
 */
export interface FindingPageQuery {
  viewerId: string;
  workspaceId: string;
  severity?: Severity[];
  status?: FindingStatusFilter;
  targetIds?: string[];
  assetId?: string;
  search?: string;
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

/** Whether the total can be summed from finding_count: filtered by status and severity alone (as service.ts). */
const countedByCounters = (query: FindingPageQuery) => !(query.targetIds?.length || query.assetId || query.search);

function severityAndStatus(alias: Prisma.Sql, query: FindingPageQuery): Prisma.Sql[] {
  const filters: Prisma.Sql[] = [];
  if (query.severity?.length) filters.push(Prisma.sql`${alias}."severity" = ANY(${query.severity}::"Severity"[])`);
  if (query.status && query.status !== 'all') filters.push(Prisma.sql`${alias}."status" = ${query.status}::"FindingStatus"`);
  return filters;
}

function counterTotal(query: FindingPageQuery): Prisma.Sql {
  const filters = [Prisma.sql`c."workspaceId" = ${query.workspaceId}::uuid`, ...severityAndStatus(Prisma.raw('c'), query)];
  return Prisma.sql`(SELECT coalesce(sum(c."count"), 0) FROM "finding_count" c WHERE ${Prisma.join(filters, ' AND ')})`;
}

export async function findFindingPage(read: PreparedRead, query: FindingPageQuery): Promise<FindingPageRow[]> {
  const column = SORT_COLUMNS[query.sortBy];
  const direction = Prisma.raw(query.direction === 'ASC' ? 'ASC' : 'DESC');
  const filters = [
    Prisma.sql`f."workspaceId" = ${query.workspaceId}::uuid`,
    Prisma.sql`EXISTS (SELECT 1 FROM "workspace_member" mine WHERE mine."workspaceId" = f."workspaceId" AND mine."userId" = ${query.viewerId})`,
    ...severityAndStatus(Prisma.raw('f'), query),
  ];
  // Malformed ids match nothing (as findingWhere), rather than failing the statement's uuid casts.
  if (query.targetIds?.length) {
    filters.push(
      Prisma.sql`EXISTS (SELECT 1 FROM "finding_target" link WHERE link."findingId" = f.id AND link."targetId" = ANY(${query.targetIds.map(uuidOrNil)}::uuid[]))`,
    );
  }
  if (query.assetId) filters.push(Prisma.sql`f."assetId" = ${uuidOrNil(query.assetId)}::uuid`);
  if (query.search) {
    const pattern = `%${escapeLike(query.search)}%`;
    filters.push(Prisma.sql`(f."name" ILIKE ${pattern} OR f."checkId" ILIKE ${pattern} OR f."description" ILIKE ${pattern})`);
  }
  // Severity sorts by rank (the enum's order), then the latest first, as listFindings asks Prisma.
  const then = query.sortBy === 'severity' ? Prisma.sql`f."lastSeenAt" DESC` : undefined;
  const page = pageOfIds({
    from: Prisma.sql`"finding" f`,
    id: Prisma.sql`f.id`,
    sort: Prisma.sql`f.${column}`,
    then,
    where: filters,
    direction: query.direction,
    total: countedByCounters(query) ? counterTotal(query) : undefined,
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
