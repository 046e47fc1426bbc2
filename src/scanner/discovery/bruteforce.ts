/**
 * Brute force: ask DNS for `label.parent` for every label of a wordlist, many at once.
 *
 * Throughput is what matters (it is benchmarked against gobuster): a fixed pool of workers pulls
 * the next (parent, label) pair by index, so there is one pending promise per worker rather than
 * one per name, and a name string is built only when its turn comes. The DnsClient applies the
 * per-server limits; this pool only bounds how many names are in flight overall.
 */
import type { DnsClient, NameResolution } from './types.js';
import type { WildcardFilter } from './wildcard.js';

export const DEFAULT_BRUTEFORCE_CONCURRENCY = 256;

/**
 * Unanswered questions, with not one answered, after which the name servers count as dead and the run stops:
 * otherwise a dead server costs every label its full timeout (5,000 labels × 2 tries × 2 s / 64 in flight ≈ 5 min).
 */
export const DEAD_SERVER_ERRORS = 64;

export interface BruteforceOptions {
  /** Names resolved at once (default 256). */
  concurrency?: number;
  /** Names out of scope are skipped: never asked, not counted as tried. */
  inScope?: (name: string) => boolean;
  /** Drops names a wildcard answered. */
  wildcard?: WildcardFilter;
  signal?: AbortSignal;
  /** Called once per kept name, as it is found, with the parent it was guessed under. */
  onFound?: (resolution: NameResolution, parent: string) => void;
  /** Stop after this many kept names; unset: no limit. */
  maxFound?: number;
  /** Stop after asking this many names (a question budget); unset: no limit. */
  maxTried?: number;
}

export interface BruteforceResult {
  /** Kept names: resolved (`found`), or a CNAME chain ending in NXDOMAIN (a takeover candidate). */
  hits: NameResolution[];
  /** Names asked. */
  tried: number;
  /** hits.length. */
  found: number;
  /** Names a wildcard answered (dropped). */
  wildcardNoise: number;
  /** Names DNS could not answer (timeout, SERVFAIL ...), and the first such error. */
  errors: number;
  firstError?: string;
  ms: number;
  /** True when maxFound, maxTried or the signal stopped the run before every label was asked. */
  stopped: boolean;
  /** True when DEAD_SERVER_ERRORS questions went unanswered and none was answered: the run stopped early. */
  unanswered: boolean;
}

export interface BruteforceJob {
  parent: string;
  /** Lower-case, valid labels (see wordlist.ts validateLabels); may contain dots (`www.dev`). */
  labels: readonly string[];
}

/** Whether a resolution is worth keeping: an address, or a dangling alias. */
export function isKept(resolution: NameResolution): boolean {
  return resolution.status === 'found' || (resolution.status === 'nxdomain' && resolution.cname.length > 0);
}

/** Resolves `label.parent` for every label. */
export function bruteforce(parent: string, labels: readonly string[], dns: DnsClient, options: BruteforceOptions = {}): Promise<BruteforceResult> {
  return bruteforceJobs([{ parent, labels }], dns, options);
}

/** Several parents in one pool, so a small wordlist under many parents still keeps `concurrency` names in flight. */
export async function bruteforceJobs(jobs: readonly BruteforceJob[], dns: DnsClient, options: BruteforceOptions = {}): Promise<BruteforceResult> {
  const started = performance.now();
  const total = jobs.reduce((sum, job) => sum + job.labels.length, 0);
  const concurrency = Math.max(1, Math.min(options.concurrency ?? DEFAULT_BRUTEFORCE_CONCURRENCY, total || 1));
  const { inScope, wildcard, signal, onFound } = options;
  const maxFound = options.maxFound ?? Number.POSITIVE_INFINITY;
  const maxTried = options.maxTried ?? Number.POSITIVE_INFINITY;
  const suffixes = jobs.map((job) => `.${job.parent}`);
  const hits: NameResolution[] = [];
  let jobIndex = 0;
  let labelIndex = 0;
  let tried = 0;
  let wildcardNoise = 0;
  let errors = 0;
  let firstError: string | undefined;
  let stopped = false;
  let answered = 0;
  let unanswered = false;

  const worker = async () => {
    for (;;) {
      while (jobIndex < jobs.length && labelIndex >= jobs[jobIndex]!.labels.length) {
        jobIndex++;
        labelIndex = 0;
      }
      if (jobIndex >= jobs.length) return;
      if (signal?.aborted || hits.length >= maxFound || tried >= maxTried || unanswered) {
        stopped = true;
        return;
      }
      const job = jobIndex;
      const name = jobs[job]!.labels[labelIndex++] + suffixes[job]!;
      if (inScope && !inScope(name)) continue;
      tried++;
      let resolution: NameResolution;
      try {
        resolution = await dns.resolve(name);
      } catch (err) {
        // DnsClient.resolve promises never to throw; a client that does must not take the whole run down.
        resolution = { name, status: 'error', a: [], aaaa: [], cname: [], error: err instanceof Error ? err.message : String(err) };
      }
      if (resolution.status === 'error') {
        errors++;
        firstError ??= `${name}: ${resolution.error ?? 'no answer'}`;
        if (answered === 0 && errors >= DEAD_SERVER_ERRORS) unanswered = true;
        continue;
      }
      answered++;
      if (!isKept(resolution)) continue;
      if (wildcard && (await wildcard.isWildcardNoise(name, resolution))) {
        wildcardNoise++;
        continue;
      }
      if (hits.length >= maxFound) {
        stopped = true;
        return;
      }
      hits.push(resolution);
      onFound?.(resolution, jobs[job]!.parent);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return {
    hits,
    tried,
    found: hits.length,
    wildcardNoise,
    errors,
    firstError,
    ms: Math.round(performance.now() - started),
    stopped: stopped || unanswered,
    unanswered,
  };
}
