/**
 * Batch loading of connection totals keyed by `JSON.stringify([parentId, filters])`: the keys of one request
 * are grouped by their filters, and each group is counted with one call for all its parents. The count
 * function returns one number per parent id, in the order given.
 */
export async function loadTotals<F>(keys: readonly string[], count: (parentIds: string[], filters: F) => Promise<number[]>): Promise<number[]> {
  const groups = new Map<string, { filters: F; parentIds: string[] }>();
  const parsed = keys.map((key) => {
    const [parentId, filters] = JSON.parse(key) as [string, F];
    const filtersKey = JSON.stringify(filters);
    const group = groups.get(filtersKey) ?? { filters, parentIds: [] };
    group.parentIds.push(parentId);
    groups.set(filtersKey, group);
    return { parentId, filtersKey };
  });
  const totals = new Map<string, Map<string, number>>();
  await Promise.all(
    [...groups].map(async ([filtersKey, { filters, parentIds }]) => {
      const counts = await count(parentIds, filters);
      totals.set(filtersKey, new Map(parentIds.map((id, i) => [id, counts[i]!])));
    }),
  );
  return parsed.map(({ parentId, filtersKey }) => totals.get(filtersKey)!.get(parentId)!);
}
