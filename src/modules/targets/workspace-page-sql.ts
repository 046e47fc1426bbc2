import { Prisma } from '../../db.js';
import { utcFromJson, type PreparedRead } from '../../db/prepared-read.js';
import { pageOfIds } from '../../db/page-of-ids.js';
import { escapeLike } from '../../pagination.js';
import { assetCountOfTargetSql } from '../assets/service.js';
import { openFindingCountOfTargetSql } from '../vulnerabilities/service.js';
import { findWorkspaceWithPage, type WorkspaceRow } from '../workspaces/page-sql.js';
import type { ServedTargetPage } from './connection-page.js';
import type { TargetRow } from './response.js';

/**
 * GraphQL's `workspace(id) { targets(...) }` in one prepared statement, where connection-page.ts says it serves
 * the query: the workspace's row when the viewer is a member, the target page (newest first) with the counts
 * the query asked for, and the filtered total. Prisma answered it in one statement too, but building and mapping
 * that relation query cost most of the request's CPU (`npm run bench:api`, GraphQL targets). The answer has
 * Prisma's shape, so the Prisma plugin resolves the nested fields from it as from its own rows.
 */
export type WorkspaceWithTargetPage = WorkspaceRow & {
  targets: Array<TargetRow & { _count?: { assetLinks: number }; openFindingCount?: { open: number } }>;
  _count?: { targets: number };
};

type RawTarget = Omit<TargetRow, 'lastScannedAt' | 'createdAt' | 'updatedAt'> & {
  lastScannedAt: string | null;
  createdAt: string;
  updatedAt: string;
  assetCount?: number;
  findingCount?: number;
};

export async function findWorkspaceWithTargetPage(
  read: PreparedRead,
  query: ServedTargetPage & { viewerId: string; workspaceId: string },
): Promise<WorkspaceWithTargetPage | null> {
  // The membership check gates the whole answer (no row, no page), so the page's filters need not repeat it.
  const filters = [Prisma.sql`t."workspaceId" = ${query.workspaceId}::uuid`];
  if (query.search) filters.push(Prisma.sql`t."value" ILIKE ${`%${escapeLike(query.search)}%`}`);
  if (query.type) filters.push(Prisma.sql`t."type" = ${query.type}::"TargetType"`);
  const page = pageOfIds({
    from: Prisma.sql`"target" t`,
    id: Prisma.sql`t.id`,
    sort: Prisma.sql`t."createdAt"`,
    where: filters,
    direction: 'DESC',
    afterId: query.after,
    limit: query.limit,
    offset: 0,
  });
  const assetCount = query.withAssetCount ? Prisma.sql`, 'assetCount', ${assetCountOfTargetSql(Prisma.sql`t.id`)}` : Prisma.empty;
  const findingCount = query.withFindingCount ? Prisma.sql`, 'findingCount', ${openFindingCountOfTargetSql(Prisma.sql`t.id`)}` : Prisma.empty;
  // Counted on its own, so an empty page (past the end, or after the last cursor) has it too.
  const total = query.withTotal ? Prisma.sql`(SELECT count(*) FROM "target" t WHERE ${Prisma.join(filters, ' AND ')})` : Prisma.sql`NULL`;
  const row = await findWorkspaceWithPage<RawTarget>(read, {
    workspaceId: query.workspaceId,
    viewerId: query.viewerId,
    page,
    total,
    items: Prisma.sql`
      SELECT json_agg(json_build_object(
               'id', t.id, 'workspaceId', t."workspaceId", 'value', t."value", 'type', t."type", 'lastScannedAt', t."lastScannedAt",
               'createdById', t."createdById", 'createdAt', t."createdAt", 'updatedAt', t."updatedAt"${assetCount}${findingCount})
             ORDER BY t."createdAt" DESC, t.id DESC)
      FROM page JOIN "target" t ON t.id = page.id`,
  });
  if (!row) return null;
  const { items: targets, total: count, ...workspace } = row;
  return {
    ...workspace,
    ...(query.withTotal ? { _count: { targets: count ?? 0 } } : {}),
    // Built field by field: spreading each row into a new object cost ten times as much (a page's worth of
    // microseconds that showed in the request's profile).
    targets: targets.map((target) => {
      const row: WorkspaceWithTargetPage['targets'][number] = {
        id: target.id,
        workspaceId: target.workspaceId,
        value: target.value,
        type: target.type,
        lastScannedAt: target.lastScannedAt === null ? null : utcFromJson(target.lastScannedAt),
        createdById: target.createdById,
        createdAt: utcFromJson(target.createdAt),
        updatedAt: utcFromJson(target.updatedAt),
      };
      if (query.withAssetCount) row._count = { assetLinks: target.assetCount ?? 0 };
      if (query.withFindingCount) row.openFindingCount = { open: target.findingCount ?? 0 };
      return row;
    }),
  };
}
