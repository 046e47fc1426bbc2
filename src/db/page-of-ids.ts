import { Prisma } from '../../prisma/generated/prisma/client.js';

export interface PageOfIdsQuery {
  /** The table and its alias, e.g. `"target" t`. */
  from: Prisma.Sql;
  /** The row's id and sort column under that alias, e.g. `t.id`, `t."createdAt"`. */
  id: Prisma.Sql;
  sort: Prisma.Sql;
  /** The filters, AND-ed (the visibility rule among them). */
  where: Prisma.Sql[];
  direction: 'ASC' | 'DESC';
  /** Rows with no sort value go last whichever the direction (as Prisma's `nulls: 'last'`). */
  nullsLast?: boolean;
  /** Keyset: a subquery giving the (sort, id) of the row the page starts after, within the same filters. */
  after?: Prisma.Sql;
  limit: number;
  offset: number;
}

/**
 * The ids of one page of a filtered list, each with the whole list's total: the core of the hand-written page
 * statements (workspaces/page-sql.ts, targets/page-sql.ts), which join their columns and counts onto it. The
 * total is a window count over every matching row, taken before the keyset and LIMIT cut the list: the window
 * keeps PostgreSQL from pushing the outer conditions into the subquery, so `total` is the whole list's on every page.
 */
export function pageOfIds(query: PageOfIdsQuery): Prisma.Sql {
  const direction = Prisma.raw(query.direction === 'ASC' ? 'ASC' : 'DESC');
  const nulls = query.nullsLast ? Prisma.raw('NULLS LAST') : Prisma.empty;
  const comparison = Prisma.raw(query.direction === 'ASC' ? '>' : '<');
  // As Prisma's cursors: a cursor row outside the filtered list starts nothing (an empty page), not a position.
  const keyset = query.after ? Prisma.sql`WHERE (matching.sort, matching.id) ${comparison} (${query.after})` : Prisma.empty;
  return Prisma.sql`
      SELECT matching.id, matching.total
      FROM (
        SELECT ${query.id} AS id, ${query.sort} AS sort, count(*) OVER () AS total
        FROM ${query.from}
        WHERE ${Prisma.join(query.where, ' AND ')}
      ) matching
      ${keyset}
      ORDER BY matching.sort ${direction} ${nulls}, matching.id ${direction}
      LIMIT ${query.limit} OFFSET ${query.offset}`;
}
