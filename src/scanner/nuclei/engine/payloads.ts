/**
 * Payload combinations of a block (nuclei generators.Iterator), generated lazily: a clusterbomb of large lists
 * is never held in memory, and the run stops asking for more once its request cap is reached.
 *
 *  - batteringram: each value of the (single) set in turn
 *  - pitchfork: the i-th value of every set together (the parser made the lengths equal)
 *  - clusterbomb: every combination, the first set varying fastest (as nuclei's iterator, in declaration order)
 */
import { renderMarkers, scopeOf, type DslRecord, type DslScope } from '../dsl/index.js';
import type { BlockPayloads } from '../parse/payloads.js';

export type PayloadValues = Record<string, string>;

/** How many combinations the block's payloads make (nuclei Iterator.Total). */
export function combinationCount(payloads: BlockPayloads): number {
  const lengths = payloads.sets.map((s) => s.values.length);
  switch (payloads.attack) {
    case 'batteringram':
      return lengths.reduce((a, b) => a + b, 0);
    case 'pitchfork':
      return Math.min(...lengths);
    case 'clusterbomb':
      return lengths.reduce((a, b) => a * b, 1);
  }
}

export function* payloadCombinations(payloads: BlockPayloads): Generator<PayloadValues> {
  const { sets } = payloads;
  if (payloads.attack === 'batteringram') {
    for (const set of sets) for (const value of set.values) yield { [set.name]: value };
    return;
  }
  if (payloads.attack === 'pitchfork') {
    const count = combinationCount(payloads);
    for (let i = 0; i < count; i++) yield Object.fromEntries(sets.map((s) => [s.name, s.values[i]!]));
    return;
  }
  if (sets.some((s) => s.values.length === 0)) return;
  const position = sets.map(() => 0);
  for (;;) {
    yield Object.fromEntries(sets.map((s, k) => [s.name, s.values[position[k]!]!]));
    // odometer: the first set is the least significant digit
    let k = 0;
    while (k < sets.length) {
      position[k]! += 1;
      if (position[k]! < sets[k]!.values.length) break;
      position[k] = 0;
      k++;
    }
    if (k === sets.length) return;
  }
}

/**
 * The scope of one combination: payload values are themselves rendered first (nuclei: `jon.doe@{{Hostname}}`)
 * against the rest, then take precedence over every other variable. `withTarget` adds the target variables.
 */
export function payloadScope(base: DslScope, values: PayloadValues | undefined, withTarget: (scope: DslScope) => DslScope): DslScope {
  if (!values) return base;
  return scopeOf(base, renderPayloadValues(values, withTarget(base)));
}

/** Payload values with their own markers rendered against `scope` (a value that cannot be rendered stays as written). */
export function renderPayloadValues(values: PayloadValues, scope: DslScope): DslRecord {
  const rendered: DslRecord = Object.create(null) as DslRecord;
  for (const [name, raw] of Object.entries(values)) {
    if (!raw.includes('{{')) {
      rendered[name] = raw;
      continue;
    }
    const r = renderMarkers(raw, scope);
    rendered[name] = r.unresolved.length || r.errors.length ? raw : r.text;
  }
  return rendered;
}

/** nuclei's `@once` annotation: a raw request sent with the first payload combination only. */
export function isOnceRequest(raw: string): boolean {
  return /^@once[ \t\r]*$/m.test(raw);
}
