/**
 * Permutations: guesses derived from labels that exist. Organisations name hosts in patterns
 * (dev, dev2, dev-api, staging-api), so a found `dev-api` makes `staging-api` far likelier than a
 * random dictionary word. Bounded and deterministic: the same input always gives the same guesses,
 * and at most `max` of them, shared fairly between the found labels.
 */
import { isSubdomainOrSelf } from './scope.js';

/** Environment and service words that appear in host names; joined with and swapped into found labels. */
export const PERMUTATION_WORDS: readonly string[] = [
  'dev',
  'staging',
  'stage',
  'test',
  'qa',
  'uat',
  'prod',
  'preprod',
  'api',
  'admin',
  'internal',
  'beta',
  'v1',
  'v2',
  'old',
  'new',
  'app',
  'www',
  'demo',
  'sandbox',
];

export interface PermutationOptions {
  /** At most this many guesses. */
  max: number;
  /** Replaces PERMUTATION_WORDS (lower-case labels). */
  words?: readonly string[];
  /** Names never to return besides the found ones (known already, or asked before). */
  exclude?: ReadonlySet<string>;
}

const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;
const TRAILING_NUMBER = /^(.*?)(\d{1,6})$/;

/**
 * Guesses under `parent` from the names found there (names elsewhere are ignored). The leftmost
 * label of each found name is varied; the rest of the name stays (`dev.eu.example.com` → `dev1.eu.example.com`).
 * Order: numeric neighbours, word swaps, word joins, then word sub-names (`dev.api`), round-robin over labels.
 */
export function permutations(foundNames: Iterable<string>, parent: string, options: PermutationOptions): string[] {
  const max = Math.max(0, Math.floor(options.max));
  if (max === 0) return [];
  const words = [...new Set((options.words ?? PERMUTATION_WORDS).map((word) => word.toLowerCase()))].filter((word) => LABEL.test(word));
  const found = new Set<string>();
  // Each found name is varied once; its leftmost label changes, the rest stays (so `www` under ten parents gives ten sets).
  const bases = new Map<string, { label: string; rest: string }>();
  for (const raw of foundNames) {
    const name = raw.toLowerCase();
    found.add(name);
    if (name === parent || !isSubdomainOrSelf(name, parent)) continue;
    const dot = name.indexOf('.');
    const label = name.slice(0, dot);
    if (!LABEL.test(label)) continue;
    bases.set(name, { label, rest: name.slice(dot + 1) });
  }
  const sorted = [...bases.keys()].sort().map((key) => bases.get(key)!);

  const out: string[] = [];
  const seen = new Set<string>();
  const known = (name: string) => found.has(name) || seen.has(name) || options.exclude?.has(name) === true;
  const tiers = [numericVariants, (label: string) => wordSwaps(label, words), (label: string) => wordJoins(label, words)];
  for (const tier of tiers) {
    if (!roundRobin(sorted, tier, known, seen, out, max)) return out;
  }
  // Sub-names last: they put a word under the found name (`dev.api.example.com`), a deeper and rarer pattern.
  roundRobin(sorted, (label) => words.filter((word) => word !== label).map((word) => `${word}.${label}`), known, seen, out, max);
  return out;
}

/** Takes the i-th guess of every base in turn; false once `max` is reached. */
function roundRobin(
  bases: Array<{ label: string; rest: string }>,
  variants: (label: string) => Iterable<string>,
  known: (name: string) => boolean,
  seen: Set<string>,
  out: string[],
  max: number,
): boolean {
  let active = bases.map((base) => ({ rest: base.rest, iterator: variants(base.label)[Symbol.iterator]() }));
  while (active.length > 0) {
    const next: typeof active = [];
    for (const entry of active) {
      const step = entry.iterator.next();
      if (step.done) continue;
      next.push(entry);
      const name = `${step.value}.${entry.rest}`;
      if (!validGuess(step.value, name) || known(name)) continue;
      seen.add(name);
      out.push(name);
      if (out.length >= max) return false;
    }
    active = next;
  }
  return true;
}

function validGuess(relative: string, name: string): boolean {
  return name.length <= 253 && relative.split('.').every((label) => LABEL.test(label));
}

/** dev → dev1, dev2, dev3, dev01, dev02, dev-1, dev-2; web7 → web8, web6, web9, web (zero padding kept: web07 → web08). */
function* numericVariants(label: string): Generator<string> {
  const match = TRAILING_NUMBER.exec(label);
  if (!match) {
    yield* [`${label}1`, `${label}2`, `${label}3`, `${label}01`, `${label}02`, `${label}-1`, `${label}-2`];
    return;
  }
  const [, stem, digits] = match as unknown as [string, string, string];
  const value = Number(digits);
  const padded = (n: number) => String(n).padStart(digits.length, '0');
  yield `${stem}${padded(value + 1)}`;
  if (value > 0) yield `${stem}${padded(value - 1)}`;
  yield `${stem}${padded(value + 2)}`;
  const bare = stem.replace(/-$/, '');
  if (bare) yield bare;
}

/** dev-api → staging-api, test-api ... and dev-admin, dev-internal ...: each known word of the label replaced by the others. */
function* wordSwaps(label: string, words: readonly string[]): Generator<string> {
  const parts = label.split('-');
  if (parts.length < 2) return;
  for (let index = 0; index < parts.length; index++) {
    if (!words.includes(parts[index]!)) continue;
    for (const word of words) {
      if (word === parts[index] || parts.includes(word)) continue;
      const copy = [...parts];
      copy[index] = word;
      yield copy.join('-');
    }
  }
}

/** dev → dev-api, api-dev, dev-admin, admin-dev ... (a label is never joined with a word it already holds). */
function* wordJoins(label: string, words: readonly string[]): Generator<string> {
  const parts = label.split('-');
  for (const word of words) {
    if (parts.includes(word)) continue;
    yield `${label}-${word}`;
    yield `${word}-${label}`;
  }
}
