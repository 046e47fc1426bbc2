import { isRecord, onlyKeys } from '../../graphql/prisma-query-shape.js';
import { isCountOf, isSelectOf, relationPageOf } from '../../graphql/relation-page-query.js';
import type { TargetType } from './normalize.js';

/**
 * When GraphQL's `workspace(id) { targets(...) }` can be read by one hand-written statement
 * (workspace-page-sql.ts) instead of Prisma's relation query: the workspace's row, the target page with its
 * asset and open-finding counts, and the filtered total. Pothos hands the workspace field the Prisma query its
 * selection needs; the statement serves it when that query asks for nothing beyond it:
 *   - the workspace's row (include mode: every column) and nothing else of the workspace but `targets` and the
 *     connection's `_count` of them,
 *   - `targets` with a `where` the connection's own query built (recognised by identity, so its filters are
 *     known exactly; see graphql/relation-page-query.ts), in the connection's order (createdAt, then id, descending),
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

const ORDER = [
  ['createdAt', 'desc'],
  ['id', 'desc'],
] as const;

/** The per-target include (the counts), or null when it asks for more. */
function servedCounts(include: unknown): { withAssetCount: boolean; withFindingCount: boolean } | null {
  if (include === undefined) return { withAssetCount: false, withFindingCount: false };
  if (!isRecord(include) || !onlyKeys(include, ['_count', 'openFindingCount'])) return null;
  const { _count: count, openFindingCount } = include;
  if (count !== undefined && !isSelectOf(count, 'assetLinks')) return null;
  if (openFindingCount !== undefined && !isSelectOf(openFindingCount, 'open')) return null;
  return { withAssetCount: count !== undefined, withFindingCount: openFindingCount !== undefined };
}

/** The page the statement reads for this workspace query, or null when Prisma must. */
export function servedByTargetPage(query: object): ServedTargetPage | null {
  const page = relationPageOf<TargetConnectionFilters>(query, 'targets', ORDER, ['_count']);
  if (!page) return null;
  const count = page.siblings._count;
  if (count !== undefined && !isCountOf(count, 'targets', page.where)) return null;
  const counts = servedCounts(page.include);
  if (!counts) return null;
  return { ...page.filters, limit: page.limit, after: page.after, withTotal: count !== undefined, ...counts };
}
