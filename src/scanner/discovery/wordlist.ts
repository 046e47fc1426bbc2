/**
 * Brute-force wordlists: the built-in one (SecLists' top 5000 subdomain labels, see data/LICENSE-SecLists.md)
 * and the checks every user-supplied list goes through before its entries become DNS questions.
 */
import { readFileSync } from 'node:fs';
import { shippedPath } from '../../shipped-files.js';

/** Entries may hold dots (`www.dev`): each part is a DNS label of letters, digits, `_` and `-` (not first). */
const LABEL = /^[a-z0-9_][a-z0-9_-]{0,62}$/;
/** Leaves room for the domain under a 253-character name. */
const MAX_ENTRY_LENGTH = 200;

let builtin: readonly string[] | undefined;

/** The shipped list, normalised (lower-case, deduplicated); read once, on first use. */
export function builtinWordlist(): readonly string[] {
  if (!builtin) {
    const text = readFileSync(shippedPath('src/scanner/discovery/data/subdomains-top5000.txt'), 'utf8');
    builtin = Object.freeze(validateLabels(parseWordlist(text), { max: Number.POSITIVE_INFINITY }));
  }
  return builtin;
}

/** One entry per line: trimmed, lower-case, without blank lines, `#` comments and repeats (first occurrence kept). */
export function parseWordlist(text: string): string[] {
  const seen = new Set<string>();
  for (const line of text.split(/\r?\n/)) {
    const entry = line.trim().toLowerCase();
    if (entry === '' || entry.startsWith('#')) continue;
    seen.add(entry);
  }
  return [...seen];
}

/**
 * Normalises like parseWordlist and rejects what cannot be a name prefix, naming the first bad entry and
 * its position (1-based, in the list as given), and lists longer than `max`.
 */
export function validateLabels(labels: readonly string[], options: { max: number }): string[] {
  const seen = new Set<string>();
  labels.forEach((raw, index) => {
    if (typeof raw !== 'string') throw new TypeError(`wordlist entry ${index + 1} is not a string`);
    const entry = raw.trim().toLowerCase().replace(/\.$/, '');
    if (entry === '' || entry.startsWith('#')) return;
    if (entry.length > MAX_ENTRY_LENGTH || !entry.split('.').every((part) => LABEL.test(part))) {
      throw new TypeError(
        `wordlist entry ${index + 1} ("${raw.length > 80 ? `${raw.slice(0, 80)}…` : raw}") is not a valid name prefix: ` +
          `dot-separated labels of a-z, 0-9, _ and - (not first), at most 63 characters each and ${MAX_ENTRY_LENGTH} in all`,
      );
    }
    seen.add(entry);
  });
  if (seen.size > options.max) throw new TypeError(`wordlist has ${seen.size} entries; at most ${options.max}`);
  return [...seen];
}
