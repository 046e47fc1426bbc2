import { Prisma } from '../../db.js';
import type { PreparedRead } from '../../db/prepared-read.js';
import { pageOfIds } from '../../db/page-of-ids.js';
import { escapeLike } from '../../pagination.js';
import { assetCountOfTargetSql } from '../assets/service.js';
import { openFindingCountOfTargetSql } from '../vulnerabilities/service.js';
import type { TargetType } from './normalize.js';
import type { TargetCounts, TargetRow } from './response.js';
import type { TARGET_SORT_FIELDS } from './schemas.js';

/**
 * The REST target page in one prepared statement: the page's rows with their asset and open-finding counts
 * (each counted by its own module's subquery, on the same indexes countsOfTargets uses) and the filtered list's
 * total (see page-of-ids.ts). Through the ORM it took four statements (page, total, two grouped counts), most of
 * the request's CPU (`npm run bench:api`, targets). The filters mirror targetWhere (service.ts);
 * test/targets.page-sql.test.ts compares the two for every filter, sort and page.
 */
export interface TargetPageQuery {
  viewerId: string;
  workspaceId: string;
  search?: string;
  type?: TargetType;
  sortBy: (typeof TARGET_SORT_FIELDS)[number];
  direction: 'ASC' | 'DESC';
  offset: number;
  limit: number;
}

export type TargetPageRow = TargetRow & TargetCounts & { total: number };

/** Columns are quoted identifiers from a closed list: nothing the caller typed reaches the SQL text. */
const SORT_COLUMNS: Record<TargetPageQuery['sortBy'], Prisma.Sql> = {
  createdAt: Prisma.raw('"createdAt"'),
  value: Prisma.raw('"value"'),
  lastScannedAt: Prisma.raw('"lastScannedAt"'),
};

export async function findTargetPage(read: PreparedRead, query: TargetPageQuery): Promise<TargetPageRow[]> {
  const column = SORT_COLUMNS[query.sortBy];
  const direction = Prisma.raw(query.direction === 'ASC' ? 'ASC' : 'DESC');
  // Never-scanned targets sort last whichever the direction (as listTargets asks Prisma).
  const nulls = query.sortBy === 'lastScannedAt' ? Prisma.raw('NULLS LAST') : Prisma.empty;
  const filters = [
    Prisma.sql`t."workspaceId" = ${query.workspaceId}::uuid`,
    Prisma.sql`EXISTS (SELECT 1 FROM "workspace_member" mine WHERE mine."workspaceId" = t."workspaceId" AND mine."userId" = ${query.viewerId})`,
  ];
  if (query.search) filters.push(Prisma.sql`t."value" ILIKE ${`%${escapeLike(query.search)}%`}`);
  if (query.type) filters.push(Prisma.sql`t."type" = ${query.type}::"TargetType"`);
  const page = pageOfIds({
    from: Prisma.sql`"target" t`,
    id: Prisma.sql`t.id`,
    sort: Prisma.sql`t.${column}`,
    where: filters,
    direction: query.direction,
    nullsLast: query.sortBy === 'lastScannedAt',
    limit: query.limit,
    offset: query.offset,
  });
  return read<TargetPageRow>(Prisma.sql`
    WITH page AS (${page})
    SELECT t.id::text AS id, t."workspaceId"::text AS "workspaceId", t."value", t."type"::text AS "type", t."lastScannedAt",
           t."createdById", t."createdAt", t."updatedAt", page.total::int AS total,
           ${assetCountOfTargetSql(Prisma.sql`t.id`)} AS "assetCount",
           ${openFindingCountOfTargetSql(Prisma.sql`t.id`)} AS "findingCount"
    FROM page JOIN "target" t ON t.id = page.id
    ORDER BY t.${column} ${direction} ${nulls}, t.id ${direction}`);
}
