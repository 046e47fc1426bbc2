import { isDeepStrictEqual } from 'node:util';
import { isRecord, onlyKeys } from '../../graphql/prisma-query-shape.js';
import { isCountOf, isSelectOf, relationPageOf } from '../../graphql/relation-page-query.js';
import { counterWhere, type FindingListFilters } from './list-total.js';

/**
 * When GraphQL's `workspace(id) { findings(...) }` can be read by one hand-written statement
 * (workspace-page-sql.ts) instead of Prisma's relation query, as the targets connection is (see
 * targets/connection-page.ts): the workspace's row and nothing else of it but
 *   - `findings` with the connection's own `where` (graphql/relation-page-query.ts), latest sighting first
 *     (lastSeenAt, then id, descending), a forward page, each finding's row and no relation of it;
 *   - the connection's total as findingListTotalSelection asks it: the finding_count rows for these filters, or
 *     the `_count` of findings under the page's `where`.
 * Anything else (a backward page, `asset`, `target`, `events`, another relation) goes to Prisma as before;
 * test/vulnerabilities.connection-page.test.ts compares both answers.
 */
export interface ServedFindingPage extends FindingListFilters {
  limit: number;
  /** The cursor's finding id: the page starts after it. */
  after?: string;
  /** How the query asked for the total (the answer carries it the same way), if it did. */
  total?: 'counters' | 'count';
}

const ORDER = [
  ['lastSeenAt', 'desc'],
  ['id', 'desc'],
] as const;

/** The finding_count rows of exactly these filters, their count alone. */
const isCounterRows = (value: unknown, filters: FindingListFilters) =>
  isRecord(value) &&
  onlyKeys(value, ['where', 'select']) &&
  isSelectOf({ select: value.select }, 'count') &&
  isDeepStrictEqual(value.where, counterWhere(filters));

/** The page the statement reads for this workspace query, or null when Prisma must. */
export function servedByFindingPage(query: object): ServedFindingPage | null {
  const page = relationPageOf<FindingListFilters>(query, 'findings', ORDER, ['findingCounts', '_count']);
  if (!page || page.include !== undefined) return null;
  const { findingCounts, _count: count } = page.siblings;
  if (findingCounts !== undefined && (count !== undefined || !isCounterRows(findingCounts, page.filters))) return null;
  if (count !== undefined && !isCountOf(count, 'findings', page.where)) return null;
  const total = findingCounts !== undefined ? 'counters' : count !== undefined ? 'count' : undefined;
  return { ...page.filters, limit: page.limit, after: page.after, total };
}
