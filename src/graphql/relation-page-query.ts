import { isUuid } from '../auth/authz.js';
import { isRecord, onlyKeys } from './prisma-query-shape.js';

/**
 * Reading a connection's page out of the Prisma query Pothos hands `workspace(id)`, for the modules whose
 * connections a hand-written statement can serve (targets/, assets/, vulnerabilities/connection-page.ts): the
 * workspace's row (include mode: every column), one relation's forward page, and siblings the module names
 * (its total), nothing else. The page's `where` is recognised by identity: the connection's own query marks the
 * object it builds (connectionWhere), so its filters are known exactly and no `where` from elsewhere is parsed back.
 */
const connectionFilters = new WeakMap<object, object>();

/** Records that `where` is a connection's filter for `filters`, so a statement may serve a query holding it. */
export function connectionWhere<Where extends object>(where: Where, filters: object): Where {
  connectionFilters.set(where, filters);
  return where;
}

export interface RelationPage<Filters> {
  /** The page's `where`, as marked (a total may name the same object). */
  where: object;
  filters: Filters;
  limit: number;
  /** The cursor row's id: the page starts after it. */
  after?: string;
  /** What the page asked for per row (the relation's own include), as Pothos built it. */
  include: unknown;
  /** The workspace query's other keys the module allowed (e.g. its total), as Pothos built them. */
  siblings: Record<string, unknown>;
}

/** Whether `orderBy` is exactly these columns and directions, in this order. */
function inOrder(orderBy: unknown, order: ReadonlyArray<readonly [string, 'asc' | 'desc']>): boolean {
  if (!Array.isArray(orderBy) || orderBy.length !== order.length) return false;
  return order.every(([column, direction], i) => {
    const term: unknown = orderBy[i];
    return isRecord(term) && onlyKeys(term, [column]) && term[column] === direction;
  });
}

/**
 * The forward page of `relation` (`first`, optionally `after`: Pothos asks `take: n + 1`, and with a cursor
 * `skip: 1`) in the connection's `order`, when the query asks for nothing but it and `siblings`; else null.
 */
export function relationPageOf<Filters>(
  query: object,
  relation: string,
  order: ReadonlyArray<readonly [string, 'asc' | 'desc']>,
  siblings: readonly string[],
): RelationPage<Filters> | null {
  const { include, ...rest } = query as Record<string, unknown>;
  if (Object.keys(rest).length > 0 || !isRecord(include) || !onlyKeys(include, [relation, ...siblings])) return null;
  const page = include[relation];
  if (!isRecord(page) || !onlyKeys(page, ['where', 'orderBy', 'take', 'skip', 'cursor', 'include'])) return null;
  const { where, orderBy, take, skip, cursor } = page;
  const filters = isRecord(where) ? connectionFilters.get(where) : undefined;
  if (!filters || !inOrder(orderBy, order)) return null;
  if (typeof take !== 'number' || !Number.isInteger(take) || take <= 0) return null;
  // A cursor that is no UUID is Prisma's to refuse, as before.
  if (cursor !== undefined && !(isRecord(cursor) && onlyKeys(cursor, ['id']) && typeof cursor.id === 'string' && isUuid(cursor.id))) return null;
  // Pothos skips the cursor's own row, and nothing else.
  if (skip !== (cursor === undefined ? 0 : 1)) return null;
  const present = siblings.filter((key) => include[key] !== undefined);
  return {
    where: where as object,
    filters: filters as Filters,
    limit: take,
    after: (cursor as { id: string } | undefined)?.id,
    include: page.include,
    siblings: Object.fromEntries(present.map((key) => [key, include[key]])),
  };
}

/** `_count: { select: { <relation>: { where } } }` under the page's own `where` (the connection's total). */
export function isCountOf(count: unknown, relation: string, where: object): boolean {
  if (!isRecord(count) || !onlyKeys(count, ['select']) || !isRecord(count.select) || !onlyKeys(count.select, [relation])) return false;
  const counted = count.select[relation];
  return isRecord(counted) && onlyKeys(counted, ['where']) && counted.where === where;
}

/** `{ select: { <key>: true } }`, e.g. a relation count's or a counter row's one column. */
export const isSelectOf = (value: unknown, key: string) =>
  isRecord(value) && onlyKeys(value, ['select']) && isRecord(value.select) && onlyKeys(value.select, [key]) && value.select[key] === true;
