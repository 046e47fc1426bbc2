/**
 * Wildcard zones: `*.zone` answers every name under it, so without a filter a brute force of
 * 100,000 labels would "find" 100,000 hosts. We ask for a few random labels under a zone; if any
 * resolves, what they got is the wildcard's answer, and a guessed name answered with nothing but
 * those answers is noise. A name with an answer of its own (a real record beside the wildcard) is kept.
 */
import { getRandomValues } from 'node:crypto';
import type { DnsClient, NameResolution, WildcardZone } from './types.js';

export interface DetectWildcardOptions {
  /** Random labels asked; one answer is enough to call the zone a wildcard, several collect load-balanced answers. */
  probes?: number;
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** 16 crypto-random lower-case letters and digits: no real host is named like this. */
export function randomLabel(length = 16): string {
  const bytes = getRandomValues(new Uint8Array(length));
  let label = '';
  // 256 % 36 leaves a slight bias towards the first letters; irrelevant for an unguessable label.
  for (const byte of bytes) label += ALPHABET[byte % ALPHABET.length];
  return label;
}

/** The answers a name got that a wildcard could have given: addresses and the end of its CNAME chain. */
export function answersOf(resolution: NameResolution): string[] {
  const answers = [...resolution.a, ...resolution.aaaa];
  const last = resolution.cname[resolution.cname.length - 1];
  if (last !== undefined) answers.push(last.toLowerCase());
  return answers;
}

function resolvedSomething(resolution: NameResolution): boolean {
  return resolution.status === 'found' || resolution.cname.length > 0;
}

/** Asks `probes` random labels under `zone`; null when none resolves. */
export async function detectWildcard(zone: string, dns: DnsClient, options: DetectWildcardOptions = {}): Promise<WildcardZone | null> {
  const probes = Math.max(1, options.probes ?? 3);
  const results = await Promise.all(Array.from({ length: probes }, () => dns.resolve(`${randomLabel()}.${zone}`)));
  const answers = new Set<string>();
  let hit = false;
  for (const result of results) {
    if (!resolvedSomething(result)) continue;
    hit = true;
    for (const answer of answersOf(result)) answers.add(answer);
  }
  return hit ? { zone, answers: [...answers].sort() } : null;
}

export interface WildcardFilter {
  /** The wildcard of `zone`, detected once per zone (concurrent callers share one detection). */
  zone(zone: string): Promise<WildcardZone | null>;
  /**
   * True when the parent of `name` is a wildcard zone and `resolution` holds nothing but its answers
   * (every address among them, or a CNAME chain ending at one of its targets).
   */
  isWildcardNoise(name: string, resolution: NameResolution): Promise<boolean>;
  /** Wildcard zones detected so far, sorted by zone. */
  wildcards(): WildcardZone[];
}

export function createWildcardFilter(dns: DnsClient, options: DetectWildcardOptions = {}): WildcardFilter {
  const cache = new Map<string, Promise<{ zone: WildcardZone; answers: Set<string> } | null>>();
  const detected = new Map<string, WildcardZone>();

  const zone = (name: string) => {
    let entry = cache.get(name);
    if (!entry) {
      entry = detectWildcard(name, dns, options).then((found) => {
        if (!found) return null;
        detected.set(name, found);
        return { zone: found, answers: new Set(found.answers) };
      });
      cache.set(name, entry);
    }
    return entry;
  };

  return {
    zone: async (name) => (await zone(name))?.zone ?? null,
    async isWildcardNoise(name, resolution) {
      if (!resolvedSomething(resolution)) return false;
      const dot = name.indexOf('.');
      if (dot < 0) return false;
      // The parent is the zone to test: a wildcard anywhere above it also answers random labels under
      // the parent, while a real name in between stops the wildcard (RFC 4592) and so stops the filter.
      const wildcard = await zone(name.slice(dot + 1));
      if (!wildcard) return false;
      const last = resolution.cname[resolution.cname.length - 1];
      if (last !== undefined && wildcard.answers.has(last.toLowerCase())) return true;
      const addresses = [...resolution.a, ...resolution.aaaa];
      // A CNAME of its own (not the wildcard's target) means a real record, even if it lands on the same addresses.
      if (last !== undefined) return false;
      return addresses.length > 0 && addresses.every((address) => wildcard.answers.has(address));
    },
    wildcards: () => [...detected.values()].sort((a, b) => (a.zone < b.zone ? -1 : a.zone > b.zone ? 1 : 0)),
  };
}
