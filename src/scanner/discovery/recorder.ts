/**
 * The recorder behind discovery and resolveCandidates: every candidate name is checked against the
 * scope (out-of-scope ones kept as references, unresolved), resolved once, recorded once with all
 * its origins, its CNAME targets followed and dangling ones collected as takeover candidates, up to
 * maxNames.
 */
import { normalizeHostName } from '../dns.js';
import { isKept } from './bruteforce.js';
import { takeoverFromResolution } from './takeover.js';
import { DISCOVERY_SOURCES } from './types.js';
import type { DiscoveredHost, DnsClient, NameOrigin, NameResolution, TakeoverCandidate } from './types.js';
import type { WildcardFilter } from './wildcard.js';

/** Sources that guess: what they find is dropped when a wildcard gave the answer. Other sources saw the name somewhere. */
const GUESSING_SOURCES = new Set<NameOrigin['source']>(['bruteforce', 'permutation']);

/** Out-of-scope references kept per run; beyond this they are dropped (they are pointers, not assets). */
export const MAX_OUT_OF_SCOPE_NAMES = 10_000;

export interface ResolvedCandidates {
  hosts: DiscoveredHost[];
  outOfScope: Array<{ name: string; origin: NameOrigin }>;
  takeovers: TakeoverCandidate[];
}

export interface RecorderOptions {
  dns: DnsClient;
  inScope: (name: string) => boolean;
  wildcard?: WildcardFilter;
  maxNames: number;
  concurrency: number;
  signal?: AbortSignal;
}

interface Recorded {
  resolution: NameResolution;
  origins: NameOrigin[];
  round: number;
}

/** The inventory being built: each name resolved once, recorded once with all its origins. */
export interface Recorder {
  /** The round new names are credited to. */
  round: number;
  truncated: boolean;
  onTruncated?: () => void;
  dnsErrors: { count: number; first?: string };
  /** A name from some source: scope check, resolve (once), record if kept. Runs in the background; see settle(). */
  consider(name: string, origin: NameOrigin): void;
  /** A name resolved elsewhere (brute force) and kept; false once maxNames is reached. */
  record(resolution: NameResolution, origin: NameOrigin): boolean;
  cachedResolution(name: string): Promise<NameResolution> | undefined;
  foundInRound(round: number): string[];
  names(): IterableIterator<string>;
  /** Resolves once every consider() (and the CNAME follow-ups it started) is done. */
  settle(): Promise<void>;
  result(): ResolvedCandidates;
}

export function createRecorder(options: RecorderOptions): Recorder {
  const recorded = new Map<string, Recorded>();
  const resolutions = new Map<string, Promise<NameResolution>>();
  const outOfScope = new Map<string, { name: string; origin: NameOrigin }>();
  const takeovers = new Map<string, TakeoverCandidate>();
  const pending = new Set<Promise<void>>();
  const limit = createLimit(options.concurrency);

  const addOrigin = (entry: Recorded, origin: NameOrigin) => {
    if (!entry.origins.some((known) => known.source === origin.source && known.from === origin.from)) entry.origins.push({ ...origin });
  };

  const resolveOnce = (name: string): Promise<NameResolution> => {
    let resolution = resolutions.get(name);
    if (!resolution) {
      resolution = limit(() => options.dns.resolve(name)).then((result) => {
        if (result.status === 'error') {
          recorder.dnsErrors.count++;
          recorder.dnsErrors.first ??= `${name}: ${result.error ?? 'no answer'}`;
        }
        return result;
      });
      resolutions.set(name, resolution);
    }
    return resolution;
  };

  const examine = async (host: string, origin: NameOrigin) => {
    if (options.signal?.aborted && !resolutions.has(host)) return;
    const resolution = await resolveOnce(host);
    if (!isKept(resolution)) return;
    if (options.wildcard && GUESSING_SOURCES.has(origin.source) && (await options.wildcard.isWildcardNoise(host, resolution))) return;
    recorder.record({ ...resolution, name: host }, origin);
  };

  const recorder: Recorder = {
    round: 1,
    truncated: false,
    dnsErrors: { count: 0 },
    consider(name, origin) {
      const host = hostName(name);
      if (host === null) return;
      if (!options.inScope(host)) {
        const key = `${host}\u0000${origin.source}\u0000${origin.from ?? ''}`;
        if (outOfScope.size < MAX_OUT_OF_SCOPE_NAMES && !outOfScope.has(key)) outOfScope.set(key, { name: host, origin: { ...origin } });
        return;
      }
      const entry = recorded.get(host);
      if (entry) return addOrigin(entry, origin);
      const task = examine(host, origin)
        .catch((err) => {
          // Resolution never throws by contract; a caller's inScope or a broken client may. Count it, carry on.
          recorder.dnsErrors.count++;
          recorder.dnsErrors.first ??= `${host}: ${err instanceof Error ? err.message : String(err)}`;
        })
        .finally(() => pending.delete(task));
      pending.add(task);
    },
    record(resolution, origin) {
      const name = resolution.name.toLowerCase();
      const entry = recorded.get(name);
      if (entry) {
        addOrigin(entry, origin);
        return true;
      }
      if (recorded.size >= options.maxNames) {
        if (!recorder.truncated) {
          recorder.truncated = true;
          recorder.onTruncated?.();
        }
        return false;
      }
      recorded.set(name, { resolution: { ...resolution, name }, origins: [{ ...origin }], round: recorder.round });
      resolutions.set(name, Promise.resolve(resolution));
      const takeover = takeoverFromResolution({ ...resolution, name });
      if (takeover) takeovers.set(name, takeover);
      // Aliases name other hosts: in scope they are explored like any name, out of scope they are references.
      for (const target of resolution.cname) recorder.consider(target, { source: 'cname', from: `host:${name}` });
      return true;
    },
    cachedResolution: (name) => resolutions.get(name),
    foundInRound: (round) => [...recorded].filter(([, entry]) => entry.round === round).map(([name]) => name),
    names: () => recorded.keys(),
    async settle() {
      while (pending.size > 0) await Promise.all([...pending]);
    },
    result() {
      const hosts = [...recorded]
        .sort(([a], [b]) => compare(a, b))
        .map(([name, entry]) => ({ name, origins: [...entry.origins].sort(compareOrigins), resolution: entry.resolution }));
      const refs = [...outOfScope.values()].sort((a, b) => compare(a.name, b.name) || compareOrigins(a.origin, b.origin));
      return { hosts, outOfScope: refs, takeovers: [...takeovers.values()].sort((a, b) => compare(a.name, b.name)) };
    },
  };
  return recorder;
}

/** At most `size` tasks at once; a finishing task hands its slot straight to the next waiting one. */
function createLimit(size: number) {
  let active = 0;
  const waiting: Array<() => void> = [];
  return async <T>(task: () => Promise<T>): Promise<T> => {
    if (active >= size) await new Promise<void>((resolve) => waiting.push(resolve));
    else active++;
    try {
      return await task();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else active--;
    }
  };
}

function hostName(input: string): string | null {
  try {
    const host = normalizeHostName(input.trim().replace(/^\*\./, ''));
    return host.includes('.') && !host.includes(':') && !/^[0-9.]+$/.test(host) ? host : null;
  } catch {
    return null;
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareOrigins(a: NameOrigin, b: NameOrigin): number {
  return DISCOVERY_SOURCES.indexOf(a.source) - DISCOVERY_SOURCES.indexOf(b.source) || compare(a.from ?? '', b.from ?? '');
}
