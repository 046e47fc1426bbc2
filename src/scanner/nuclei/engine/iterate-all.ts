/**
 * `iterate-all: true` (nuclei's MakeDynamicValuesCallback): a request using values of internal extractors is sent
 * once per extracted value, not only with the first. Round r gives each multi-valued name its r-th value, or its
 * last once it has no more (a single value stays); there are as many rounds as the longest list has values.
 * nuclei repeats every later request of the block that many times; only requests that use such a value are
 * repeated here (a request that uses none would be sent again unchanged).
 */
import { markerVariables } from '../parse/dsl.js';

/** How many times an entry is sent: the longest value list among the dynamic values it uses (at least 1). */
export function iterateAllRounds(entry: string, dynamic: ReadonlyMap<string, readonly string[]>): number {
  let rounds = 1;
  for (const name of markerVariables(entry)) rounds = Math.max(rounds, dynamic.get(name)?.length ?? 0);
  return rounds;
}

/** The value a dynamic name has in round `round` (0-based). */
export function valueInRound(values: readonly string[], round: number): string | undefined {
  return values[Math.min(round, values.length - 1)];
}
