import type { GraphQLContext } from './builder.js';

/**
 * A connection's `totalCount` counted apart from its page, batched per request: the connection object Pothos
 * hands its fields carries the parent row and the field's arguments, the key is `[parent id, filters]`, and
 * the keys of one request are grouped by their filters, each group counted with one call for all its parents.
 * For lists whose total the owning service reads from counters rather than by counting rows in the page's
 * statement (assets, findings).
 */
export function totalCountField<Args, Filters>(
  // The connection type's field builder (`fields: (t) => …` of the connection options).
  t: { loadable: (options: never) => unknown },
  options: {
    description: string;
    filtersOf: (args: Args) => Filters;
    count: (ctx: GraphQLContext, parentIds: string[], filters: Filters) => Promise<number[]>;
  },
) {
  const field = {
    type: 'Int',
    description: options.description,
    resolve: (connection: unknown) => {
      const { parent, args } = connection as { parent: { id: string }; args: Args };
      return JSON.stringify([parent.id, options.filtersOf(args)]);
    },
    load: (keys: string[], ctx: GraphQLContext) => loadTotals(keys, (parentIds, filters: Filters) => options.count(ctx, parentIds, filters)),
  };
  return t.loadable(field as never) as never;
}

async function loadTotals<F>(keys: readonly string[], count: (parentIds: string[], filters: F) => Promise<number[]>): Promise<number[]> {
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
