import { isDeepStrictEqual } from 'node:util';
import { isRecord, onlyKeys } from '../../graphql/prisma-query-shape.js';
import { isCountOf, isSelectOf, relationPageOf } from '../../graphql/relation-page-query.js';
import { counterWhere, type AssetListFilters } from './list-total.js';

/**
 * When GraphQL's `workspace(id) { assets(...) }` can be read by one hand-written statement
 * (workspace-page-sql.ts) instead of Prisma's relation query, as the targets connection is (see
 * targets/connection-page.ts): the workspace's row and nothing else of it but
 *   - `assets` with the connection's own `where` (graphql/relation-page-query.ts), newest sighting first
 *     (lastSeenAt, then id, descending), a forward page, each asset's row with or without its provenance
 *     (`discoveries`, oldest source first, every column: no relation of it);
 *   - the connection's total as assetListTotalSelection asks it: the asset_count rows for these filters, or the
 *     `_count` of assets under the page's `where`.
 * Anything else (a backward page, `target`, `parent`, a discovery's `fromAsset`, another relation) goes to
 * Prisma as before; test/assets.connection-page.test.ts compares both answers.
 */
export interface ServedAssetPage extends AssetListFilters {
  limit: number;
  /** The cursor's asset id: the page starts after it. */
  after?: string;
  /** How the query asked for the total (the answer carries it the same way), if it did. */
  total?: 'counters' | 'count';
  withDiscoveries: boolean;
}

const ORDER = [
  ['lastSeenAt', 'desc'],
  ['id', 'desc'],
] as const;

/** `include: { discoveries: { orderBy: firstSeenAt, then source, ascending } }`, as the Asset type's `discovery` field asks. */
function servedDiscoveries(include: unknown): boolean | null {
  if (include === undefined) return false;
  if (!isRecord(include) || !onlyKeys(include, ['discoveries'])) return null;
  const { discoveries } = include;
  if (!isRecord(discoveries) || !onlyKeys(discoveries, ['orderBy'])) return null;
  return isDeepStrictEqual(discoveries.orderBy, [{ firstSeenAt: 'asc' }, { source: 'asc' }]) ? true : null;
}

/** The asset_count rows of exactly these filters, their count alone. */
const isCounterRows = (value: unknown, filters: AssetListFilters) =>
  isRecord(value) &&
  onlyKeys(value, ['where', 'select']) &&
  isSelectOf({ select: value.select }, 'count') &&
  isDeepStrictEqual(value.where, counterWhere(filters));

/** The page the statement reads for this workspace query, or null when Prisma must. */
export function servedByAssetPage(query: object): ServedAssetPage | null {
  const page = relationPageOf<AssetListFilters>(query, 'assets', ORDER, ['assetCounts', '_count']);
  if (!page) return null;
  const { assetCounts, _count: count } = page.siblings;
  if (assetCounts !== undefined && (count !== undefined || !isCounterRows(assetCounts, page.filters))) return null;
  if (count !== undefined && !isCountOf(count, 'assets', page.where)) return null;
  const withDiscoveries = servedDiscoveries(page.include);
  if (withDiscoveries === null) return null;
  const total = assetCounts !== undefined ? 'counters' : count !== undefined ? 'count' : undefined;
  return { ...page.filters, limit: page.limit, after: page.after, total, withDiscoveries };
}
