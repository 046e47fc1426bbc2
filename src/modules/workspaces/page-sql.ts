import type { Viewer } from '../../context.js';
import { Prisma } from '../../db.js';
import { utcFromJson, type PreparedRead } from '../../db/prepared-read.js';
import { pageOfIds } from '../../db/page-of-ids.js';
import { escapeLike } from '../../pagination.js';
import type { WorkspaceRole } from '../../auth/permissions.js';
import type { WorkspaceSortField } from './schemas.js';

/**
 * The REST workspace page in one statement: the page's rows with their members (and users) and target counts,
 * and the total of the filtered list (see page-of-ids.ts). Through the ORM it took two statements (page, count)
 * and most of the request's CPU went into building and mapping the relation query; this is the hottest read of
 * OASM's clients (their first request), so it is written out. The filters mirror workspaceListWhere (service.ts),
 * and the tests compare both (test/workspaces.rest.test.ts: search, archive filter, sort, pages, visibility).
 * GraphQL's workspace connection reads its forward pages through it too, where connection-page.ts says the
 * statement serves the selection (test/workspaces.sql-count.test.ts compares that with Prisma's answer).
 */
export interface WorkspacePageQuery {
  viewer: Viewer;
  search?: string;
  isArchived?: boolean;
  sortBy: WorkspaceSortField;
  direction: 'ASC' | 'DESC';
  offset: number;
  limit: number;
  /** Keyset: the page starts after this workspace in the list's order (GraphQL's `after` cursor, a visible id). */
  after?: string;
}

export interface WorkspacePageRow {
  id: string;
  name: string;
  description: string | null;
  isAssetsDiscovery: boolean;
  isAutoEnableAssetAfterDiscovered: boolean;
  archivedAt: Date | null;
  ownerId: string;
  createdAt: Date;
  updatedAt: Date;
  total: number;
  _count: { targets: number };
  members: Array<{
    id: string;
    workspaceId: string;
    role: WorkspaceRole;
    userId: string;
    createdAt: Date;
    updatedAt: Date;
    user: { id: string; name: string; image: string | null };
  }>;
}

/** Columns are quoted identifiers from a closed list: nothing the caller typed reaches the SQL text. */
const SORT_COLUMNS: Record<WorkspaceSortField, Prisma.Sql> = {
  createdAt: Prisma.raw('"createdAt"'),
  updatedAt: Prisma.raw('"updatedAt"'),
  name: Prisma.raw('"name"'),
};

/**
 * A workspace's row as Prisma reads it (include mode: every column), from the alias `w`: shared with the target
 * connection's statement (targets/workspace-page-sql.ts), which answers `workspace(id)` with its row.
 */
export const WORKSPACE_COLUMNS = Prisma.sql`w.id::text AS id, w."name", w."description", w."isAssetsDiscovery", w."isAutoEnableAssetAfterDiscovered",
           w."archivedAt", w."ownerId", w."createdAt", w."updatedAt"`;

/** The workspace's row by itself (what WORKSPACE_COLUMNS reads). */
export type WorkspaceRow = Omit<WorkspacePageRow, 'total' | '_count' | 'members'>;

/**
 * A workspace's row, for a member only, with one page of a relation that the relation's own module reads
 * (targets/, assets/, vulnerabilities/workspace-page-sql.ts: GraphQL's `workspace(id) { <list> }`), in one
 * statement: `page` gives the page's ids (db/page-of-ids.ts), `items` the json_agg of its rows joined on `page`,
 * `total` the list's total or NULL. The membership check gates the whole answer: null for anyone else.
 */
export async function findWorkspaceWithPage<Item>(
  read: PreparedRead,
  query: { workspaceId: string; viewerId: string; page: Prisma.Sql; items: Prisma.Sql; total: Prisma.Sql },
): Promise<(WorkspaceRow & { items: Item[]; total: number | null }) | null> {
  const [row] = await read<WorkspaceRow & { items: Item[]; total: number | null }>(Prisma.sql`
    WITH page AS (${query.page})
    SELECT ${WORKSPACE_COLUMNS}, (${query.total})::int AS total, COALESCE((${query.items}), '[]'::json) AS items
    FROM "workspace" w
    WHERE w.id = ${query.workspaceId}::uuid
      AND EXISTS (SELECT 1 FROM "workspace_member" mine WHERE mine."workspaceId" = w.id AND mine."userId" = ${query.viewerId})`);
  return row ?? null;
}

type RawMember = Omit<WorkspacePageRow['members'][number], 'createdAt' | 'updatedAt'> & { createdAt: string; updatedAt: string };
type RawRow = Omit<WorkspacePageRow, 'members' | '_count'> & { members: RawMember[]; targetCount: number };

export async function findWorkspacePage(read: PreparedRead, query: WorkspacePageQuery): Promise<WorkspacePageRow[]> {
  const column = SORT_COLUMNS[query.sortBy];
  const direction = Prisma.raw(query.direction === 'ASC' ? 'ASC' : 'DESC');
  const filters = [Prisma.sql`EXISTS (SELECT 1 FROM "workspace_member" mine WHERE mine."workspaceId" = w.id AND mine."userId" = ${query.viewer.id})`];
  if (query.search) {
    const pattern = `%${escapeLike(query.search)}%`;
    filters.push(Prisma.sql`(w."name" ILIKE ${pattern} OR w."description" ILIKE ${pattern})`);
  }
  if (query.isArchived !== undefined) filters.push(query.isArchived ? Prisma.sql`w."archivedAt" IS NOT NULL` : Prisma.sql`w."archivedAt" IS NULL`);
  const page = pageOfIds({
    from: Prisma.sql`"workspace" w`,
    id: Prisma.sql`w.id`,
    sort: Prisma.sql`w.${column}`,
    where: filters,
    direction: query.direction,
    afterId: query.after,
    // Unfiltered, the list is the viewer's memberships ((workspaceId, userId) is unique and each has its workspace):
    // counted on their index alone.
    total:
      query.search || query.isArchived !== undefined
        ? undefined
        : Prisma.sql`(SELECT count(*) FROM "workspace_member" mine WHERE mine."userId" = ${query.viewer.id})`,
    limit: query.limit,
    offset: query.offset,
  });
  const rows = await read<RawRow>(Prisma.sql`
    WITH page AS (${page})
    SELECT ${WORKSPACE_COLUMNS}, page.total::int AS total,
           (SELECT count(*)::int FROM "target" t WHERE t."workspaceId" = w.id) AS "targetCount",
           COALESCE((
             SELECT json_agg(json_build_object(
                      'id', m.id, 'workspaceId', m."workspaceId", 'role', m.role, 'userId', m."userId", 'createdAt', m."createdAt", 'updatedAt', m."updatedAt",
                      'user', json_build_object('id', u.id, 'name', u."name", 'image', u."image"))
                    ORDER BY m."createdAt")
             FROM "workspace_member" m JOIN "user" u ON u.id = m."userId"
             WHERE m."workspaceId" = w.id
           ), '[]'::json) AS members
    FROM page JOIN "workspace" w ON w.id = page.id
    ORDER BY w.${column} ${direction}, w.id ${direction}`);
  // Built field by field: spreading each row and member into new objects cost several times as much per page.
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    description: row.description,
    isAssetsDiscovery: row.isAssetsDiscovery,
    isAutoEnableAssetAfterDiscovered: row.isAutoEnableAssetAfterDiscovered,
    archivedAt: row.archivedAt,
    ownerId: row.ownerId,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    total: row.total,
    _count: { targets: row.targetCount },
    members: row.members.map((member) => ({
      id: member.id,
      workspaceId: member.workspaceId,
      role: member.role,
      userId: member.userId,
      createdAt: utcFromJson(member.createdAt),
      updatedAt: utcFromJson(member.updatedAt),
      user: member.user,
    })),
  }));
}
