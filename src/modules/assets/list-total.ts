import type { DiscoverySource } from '../../scanner/discovery/types.js';
import type { AssetKind } from './schemas.js';

/** The filters of a workspace's asset list (REST's page, GraphQL's connection). */
export interface AssetListFilters {
  kind?: AssetKind;
  targetId?: string;
  search?: string;
  enabled?: boolean;
  /** Found (at least) by this discovery source. */
  source?: DiscoverySource;
  dismissed?: boolean;
}

/**
 * Whether a list's total can be summed from asset_count (kept exact by the database's triggers on every write):
 * filtered by kind, enabled and dismissed alone. A few counter rows then give it instead of every matching row,
 * whatever the workspace's size; the REST page, the GraphQL connection and their statements all follow this rule.
 */
export const countedByCounters = (filters: AssetListFilters) => !(filters.targetId || filters.search || filters.source);

/** The asset_count rows whose sum is the total (the workspace's own, under the caller's condition). */
export const counterWhere = (filters: AssetListFilters) => ({
  ...(filters.kind ? { kind: filters.kind } : {}),
  ...(filters.enabled !== undefined ? { enabled: filters.enabled } : {}),
  ...(filters.dismissed !== undefined ? { dismissed: filters.dismissed } : {}),
});
