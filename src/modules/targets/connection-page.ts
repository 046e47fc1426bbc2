import { isUuid } from '../../auth/authz.js';
import { isRecord, onlyKeys } from '../../graphql/prisma-query-shape.js';
import type { TargetType } from './normalize.js';

/**
 * When GraphQL's `workspace(id) { targets(...) }` can be read by one hand-written statement
 * (workspace-page-sql.ts) instead of Prisma's relation query: the workspace's row, the target page with its
 * asset and open-finding counts, and the filtered total. Pothos hands the workspace field the Prisma query its
 * selection needs; the statement serves it when that query asks for nothing beyond it:
 *   - the workspace's row (include mode: every column) and nothing else of the workspace but `targets` and the
 *     connection's `_count` of them,
 *   - `targets` with a `where` the connection's own query built (recognised by identity, so its filters are
 *     known exactly; see connectionWhere), in the connection's order (createdAt, then id, descending),
 *   - a forward page (`first`, optionally `after`: Pothos asks `take: n + 1`, and with a cursor `skip: 1`),
 *   - per target, optionally the asset count (`_count` of assetLinks) and the open-finding counter.
 * Anything else (a backward page, another relation, members) goes to Prisma as before;
 * test/targets.connection-page.test.ts compares both answers.
 */
export interface TargetConnectionFilters {
  search?: string;
  type?: TargetType;
}

export interface ServedTargetPage extends TargetConnectionFilters {
  limit: number;
  /** The cursor's target id: the page starts after it. */
  after?: string;
  /** What the query asked for beside the rows (the answer carries nothing it did not ask for, as Prisma's). */
  withTotal: boolean;
  withAssetCount: boolean;
  withFindingCount: boolean;
}

/** The filters of every `where` the connection's query built, by the object itself. */
const connectionFilters = new WeakMap<object, TargetConnectionFilters>();

/** Records that `where` is the connection's filter for `filters`, so the statement may serve a query holding it. */
export function connectionWhere<Where extends object>(where: Where, filters: TargetConnectionFilters): Where {
  connectionFilters.set(where, filters);
  return where;
}

function inConnectionOrder(orderBy: unknown): boolean {
  if (!Array.isArray(orderBy) || orderBy.length !== 2) return false;
  const [first, second] = orderBy as unknown[];
  return (
    isRecord(first) && onlyKeys(first, ['createdAt']) && first.createdAt === 'desc' && isRecord(second) && onlyKeys(second, ['id']) && second.id === 'desc'
  );
}

const isSelectOf = (value: unknown, key: string) =>
  isRecord(value) && onlyKeys(value, ['select']) && isRecord(value.select) && onlyKeys(value.select, [key]) && value.select[key] === true;

/** The per-target include (the counts), or null when it asks for more. */
function servedCounts(include: unknown): { withAssetCount: boolean; withFindingCount: boolean } | null {
  if (include === undefined) return { withAssetCount: false, withFindingCount: false };
  if (!isRecord(include) || !onlyKeys(include, ['_count', 'openFindingCount'])) return null;
  const { _count: count, openFindingCount } = include;
  if (count !== undefined && !isSelectOf(count, 'assetLinks')) return null;
  if (openFindingCount !== undefined && !isSelectOf(openFindingCount, 'open')) return null;
  return { withAssetCount: count !== undefined, withFindingCount: openFindingCount !== undefined };
}

/** The connection's total: `_count` of targets under the same `where` as the page. */
function servesTotal(count: unknown, where: object): boolean {
  if (!isRecord(count) || !onlyKeys(count, ['select']) || !isRecord(count.select) || !onlyKeys(count.select, ['targets'])) return false;
  const targets = count.select.targets;
  return isRecord(targets) && onlyKeys(targets, ['where']) && targets.where === where;
}

/** The page the statement reads for this workspace query, or null when Prisma must. */
export function servedByTargetPage(query: object): ServedTargetPage | null {
  const { include, ...rest } = query as Record<string, unknown>;
  if (Object.keys(rest).length > 0 || !isRecord(include) || !onlyKeys(include, ['targets', '_count'])) return null;
  const { targets, _count: count } = include;
  if (!isRecord(targets) || !onlyKeys(targets, ['where', 'orderBy', 'take', 'skip', 'cursor', 'include'])) return null;
  const { where, orderBy, take, skip, cursor, include: nested } = targets;
  const filters = isRecord(where) ? connectionFilters.get(where) : undefined;
  if (!filters || !inConnectionOrder(orderBy)) return null;
  if (typeof take !== 'number' || !Number.isInteger(take) || take <= 0) return null;
  // A cursor that is no UUID is Prisma's to refuse, as before.
  if (cursor !== undefined && !(isRecord(cursor) && onlyKeys(cursor, ['id']) && typeof cursor.id === 'string' && isUuid(cursor.id))) return null;
  // Pothos skips the cursor's own row, and nothing else.
  if (skip !== (cursor === undefined ? 0 : 1)) return null;
  if (count !== undefined && !servesTotal(count, where as object)) return null;
  const counts = servedCounts(nested);
  if (!counts) return null;
  return { ...filters, limit: take, after: (cursor as { id: string } | undefined)?.id, withTotal: count !== undefined, ...counts };
}
