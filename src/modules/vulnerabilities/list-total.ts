import type { FindingStatusFilter, Severity } from './schemas.js';

/** The filters of a workspace's finding list (REST's page, GraphQL's connection). */
export interface FindingListFilters {
  severity?: Severity[];
  status?: FindingStatusFilter;
  targetIds?: string[];
  assetId?: string;
  search?: string;
}

/**
 * Whether a list's total can be summed from finding_count (kept exact by the database's triggers on every
 * write): filtered by status and severity alone. A few counter rows then give it instead of every matching
 * row, whatever the workspace's size; the REST page, the GraphQL connection and their statements all follow this rule.
 */
export const countedByCounters = (filters: FindingListFilters) => !(filters.targetIds?.length || filters.assetId || filters.search);

/** The finding_count rows whose sum is the total (the workspace's own, under the caller's condition). */
export const counterWhere = (filters: FindingListFilters) => ({
  ...(filters.status && filters.status !== 'all' ? { status: filters.status } : {}),
  ...(filters.severity?.length ? { severity: { in: filters.severity } } : {}),
});
