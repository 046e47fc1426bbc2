import { isRecord, onlyKeys } from '../../graphql/prisma-query-shape.js';

/**
 * When the GraphQL workspace connection can be served by the REST page's statement (page-sql.ts) instead of
 * Prisma's: one statement that also carries the total, where Prisma needs two and spends most of the page's
 * CPU building and mapping them. Pothos hands the connection the Prisma query its selection needs; the
 * statement serves it when that query asks for nothing beyond what the statement returns:
 *   - every workspace column (Prisma's include mode reads whole rows; the statement returns every column),
 *   - `members` in the order `members` and `role` use, their columns and their users (the User type exposes
 *     id, name and image, which the statement returns; test/workspaces.sql-count.test.ts checks both paths
 *     answer alike, so a field added to User or WorkspaceMember that the statement lacks fails there),
 *   - `_count` of targets (targetCount),
 *   - a forward page (`first`, optionally `after`): the statement pages by keyset after the cursor's row.
 * Anything else (the owner, a nested connection, a backward page) goes to Prisma as before.
 */
export interface ConnectionQuery {
  take: number;
  /** The cursor's workspace id: the page starts after it. */
  after?: string;
}

const MEMBER_COLUMNS = new Set(['id', 'workspaceId', 'userId', 'role', 'createdAt', 'updatedAt']);
const USER_COLUMNS = new Set(['id', 'name', 'image']);

function servesUser(user: unknown): boolean {
  if (user === true) return true;
  if (!isRecord(user) || !onlyKeys(user, ['select']) || !isRecord(user.select)) return false;
  return Object.entries(user.select).every(([column, wanted]) => wanted === true && USER_COLUMNS.has(column));
}

function servesMembers(members: unknown): boolean {
  if (members === true) return false; // Prisma's own order, not the statement's
  if (!isRecord(members) || !onlyKeys(members, ['orderBy', 'include', 'select'])) return false;
  const { orderBy, include, select } = members;
  if (!isRecord(orderBy) || !onlyKeys(orderBy, ['createdAt']) || orderBy.createdAt !== 'asc') return false;
  if (include !== undefined && !(isRecord(include) && onlyKeys(include, ['user']) && servesUser(include.user))) return false;
  if (select !== undefined) {
    if (!isRecord(select)) return false;
    for (const [field, wanted] of Object.entries(select)) {
      if (field === 'user' ? !servesUser(wanted) : !(wanted === true && MEMBER_COLUMNS.has(field))) return false;
    }
  }
  return true;
}

function servesInclude(include: unknown): boolean {
  if (include === undefined) return true;
  if (!isRecord(include) || !onlyKeys(include, ['members', '_count'])) return false;
  if (include.members !== undefined && !servesMembers(include.members)) return false;
  const count = include._count;
  if (count === undefined) return true;
  return isRecord(count) && onlyKeys(count, ['select']) && isRecord(count.select) && onlyKeys(count.select, ['targets']) && count.select.targets === true;
}

/** The query as the page statement can serve it, or null when Prisma must. */
export function servedByPageStatement(query: object): ConnectionQuery | null {
  const { take, skip, cursor, include, ...rest } = query as Record<string, unknown>;
  if (Object.keys(rest).length > 0 || typeof take !== 'number' || !Number.isInteger(take) || take <= 0) return null;
  if (cursor !== undefined && !(isRecord(cursor) && onlyKeys(cursor, ['id']) && typeof cursor.id === 'string')) return null;
  // Pothos skips the cursor's own row, and nothing else.
  if (skip !== (cursor === undefined ? 0 : 1)) return null;
  if (!servesInclude(include)) return null;
  return { take: take as number, after: (cursor as { id: string } | undefined)?.id };
}
