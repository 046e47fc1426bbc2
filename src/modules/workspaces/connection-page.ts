import { isRecord, onlyKeys } from '../../graphql/prisma-query-shape.js';

/**
 * When the GraphQL workspace connection can be served by the REST page's statement (page-sql.ts) instead of
 * Prisma's: one statement that also carries the total, where Prisma needs two and spends most of the page's
 * CPU building and mapping them. Pothos hands the connection the Prisma query its selection needs; the
 * statement serves it when that query asks for nothing beyond the workspace's own row (Prisma's include mode
 * reads whole rows; the statement returns every column) and a forward page (`first`, optionally `after`): the
 * statement pages by keyset after the cursor's row. Its rows also carry their members (with their users) and
 * target counts, which `members`, `memberCount`, `role` and `targetCount` read without asking Prisma for them
 * (graphql-support.ts). Anything else (the owner, a nested connection, a backward page) goes to Prisma as before;
 * test/workspaces.sql-count.test.ts checks both paths answer alike.
 */
export interface ConnectionQuery {
  take: number;
  /** The cursor's workspace id: the page starts after it. */
  after?: string;
}

/** The query as the page statement can serve it, or null when Prisma must. */
export function servedByPageStatement(query: object): ConnectionQuery | null {
  const { take, skip, cursor, include, ...rest } = query as Record<string, unknown>;
  if (Object.keys(rest).length > 0 || typeof take !== 'number' || !Number.isInteger(take) || take <= 0) return null;
  if (include !== undefined && !(isRecord(include) && onlyKeys(include, []))) return null;
  if (cursor !== undefined && !(isRecord(cursor) && onlyKeys(cursor, ['id']) && typeof cursor.id === 'string')) return null;
  // Pothos skips the cursor's own row, and nothing else.
  if (skip !== (cursor === undefined ? 0 : 1)) return null;
  return { take: take as number, after: (cursor as { id: string } | undefined)?.id };
}
