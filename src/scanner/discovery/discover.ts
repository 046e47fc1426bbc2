/**
 * The discovery step: the domain and seeds, DNS records, zone transfers, CT, brute force and
 * permutations, then recursion under what was found. Every candidate name goes through one
 * recorder that checks scope, resolves each name once, follows CNAMEs, spots dangling ones and
 * stops at maxNames.
 *
 * A source that fails (CT down, name servers silent) becomes a DiscoveryError in the report: a
 * discovery run never throws for a source, only for options that make no sense.
 */
import { normalizeHostName } from '../dns.js';
import { type BruteforceJob, bruteforceJobs } from './bruteforce.js';
import { fetchCtNames } from './ct.js';
import { permutations } from './permutations.js';
import { recordNames, zoneTransfers } from './records.js';
import { createRecorder, type Recorder, type ResolvedCandidates } from './recorder.js';
import type { DiscoverOptions, DiscoveryError, DiscoveryReport, DnsClient, NameOrigin } from './types.js';
import { createWildcardFilter, type WildcardFilter } from './wildcard.js';
import { validateLabels } from './wordlist.js';

export { MAX_OUT_OF_SCOPE_NAMES, type ResolvedCandidates } from './recorder.js';

/** A report with nothing found yet (or nothing to find: the caller fills `errors` with why). */
export function emptyDiscoveryReport(domain: string, errors: DiscoveryError[] = []): DiscoveryReport {
  return {
    domain,
    hosts: [],
    wildcards: [],
    zoneTransfers: [],
    takeovers: [],
    outOfScope: [],
    errors,
    stats: { bruteforce: { tried: 0, found: 0, ms: 0 }, permutations: { tried: 0, found: 0 }, ct: { names: 0 }, rounds: 0, queries: 0, truncated: false },
  };
}

/** Labels tried under found names in later rounds when the caller names none: the head of a most-common-first list. */
export const RECURSION_WORDS = 100;

/** Brute-force questions per run, all rounds together, whatever maxNames × wordlist says. */
export const MAX_DISCOVERY_QUESTIONS = 2_000_000;
export const DEFAULT_DISCOVERY_CONCURRENCY = 256;

export interface DiscoverDeps {
  dns: DnsClient;
  fetch?: typeof globalThis.fetch;
}

export async function discover(options: DiscoverOptions, deps: DiscoverDeps): Promise<DiscoveryReport> {
  const domain = checkOptions(options);
  const { dns } = deps;
  const sources = { bruteforce: true, ct: true, dns: true, axfr: true, permutations: true, ...options.sources };
  const wordlist = validateLabels(options.wordlist, { max: Number.POSITIVE_INFINITY });
  const wordSet = new Set(wordlist);
  const concurrency = options.concurrency ?? DEFAULT_DISCOVERY_CONCURRENCY;
  // One signal for everything: the caller's cancellation, or ours once maxNames is reached.
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted) stop.abort();

  const queriesAtStart = dns.stats().queries;
  const wildcard = createWildcardFilter(dns);
  const recorder = createRecorder({ dns, inScope: options.inScope, wildcard, maxNames: options.maxNames, concurrency, signal: stop.signal });
  recorder.onTruncated = () => stop.abort();
  const errors: DiscoveryError[] = [];
  const fail = (code: string, err: unknown, target?: string) => errors.push({ code, message: err instanceof Error ? err.message : String(err), target });
  const report = emptyDiscoveryReport(domain, errors);

  try {
    // Round 1: the domain, seeds and every passive source, then brute force under the domain.
    recorder.round = 1;
    recorder.consider(domain, { source: 'target' });
    for (const seed of options.seeds ?? []) recorder.consider(seed.name, seed.origin);

    const ct =
      sources.ct && options.ctUrl?.trim()
        ? fetchCtNames(domain, { url: options.ctUrl, timeoutMs: options.ctTimeoutMs, fetch: deps.fetch, signal: stop.signal }).then(
            (names) => {
              report.stats.ct.names = names.length;
              for (const name of names) recorder.consider(name, { source: 'ct', from: domain });
            },
            // Cancelled by us (maxNames) or the caller: not a CT failure.
            (err) => stop.signal.aborted || fail('ct', err, domain),
          )
        : Promise.resolve();

    const records = sources.dns
      ? recordNames(domain, dns).then(
          (found) => {
            errors.push(...found.errors);
            for (const entry of found.names) recorder.consider(entry.name, entry.origin);
          },
          (err) => fail('dns', err, domain),
        )
      : Promise.resolve();

    const transfers = sources.axfr
      ? zoneTransfers(domain, dns).then(
          (found) => {
            errors.push(...found.errors);
            report.zoneTransfers = found.results;
            const wildcardOwners = new Set<string>();
            for (const result of found.results) {
              for (const name of result.ok ? result.names : []) {
                // A transferred `*.x` owner is the wildcard itself: the name it tells us about is `x`, a wildcard zone.
                if (name.startsWith('*.')) wildcardOwners.add(name.slice(2));
                recorder.consider(name.replace(/^\*\./, ''), { source: 'axfr', from: result.server });
              }
            }
            // Learn the wildcards' answers now, so they are reported even when nothing is guessed under them.
            return Promise.all([...wildcardOwners].map((zone) => (options.inScope(zone) ? wildcard.zone(zone) : null)));
          },
          (err) => fail('axfr', err, domain),
        )
      : Promise.resolve();

    // Guessing is bounded by what maxNames can justify, and in absolute terms; the first round under the domain always fits.
    const recursionWordlist = options.recursionWordlist
      ? validateLabels([...options.recursionWordlist], { max: Number.POSITIVE_INFINITY })
      : wordlist.slice(0, RECURSION_WORDS);
    const questionBudget = Math.max(wordlist.length, Math.min(MAX_DISCOVERY_QUESTIONS, options.maxNames * wordlist.length));
    const budget = { left: questionBudget };
    let budgetExhausted = false;
    const bruteforced = new Set<string>();
    if (sources.bruteforce && wordlist.length > 0 && !stop.signal.aborted) {
      const result = await guess([{ parent: domain, labels: wordlist }], 'bruteforce', recorder, dns, wildcard, options, concurrency, stop.signal, budget);
      bruteforced.add(domain);
      report.stats.bruteforce = { tried: result.tried, found: result.found, ms: result.ms };
    }
    await Promise.all([ct, records, transfers]);
    await recorder.settle();

    const triedGuesses = new Set<string>();
    for (let round = 1; round <= options.maxDepth && !stop.signal.aborted; round++) {
      report.stats.rounds = round;
      recorder.round = round;
      if (round > 1 && sources.bruteforce && wordlist.length > 0 && !budgetExhausted) {
        // Brute force under every name the previous round found, unless it is a wildcard zone (all noise there).
        const parents = await nonWildcardParents(recorder.foundInRound(round - 1), domain, wildcard, concurrency);
        const jobs = parents.filter((parent) => !bruteforced.has(parent)).map((parent) => ({ parent, labels: recursionWordlist }));
        for (const job of jobs) bruteforced.add(job.parent);
        if (jobs.length > 0) {
          const result = budget.left > 0 ? await guess(jobs, 'bruteforce', recorder, dns, wildcard, options, concurrency, stop.signal, budget) : null;
          await recorder.settle();
          if (budget.left <= 0 && (result === null || result.stopped) && !stop.signal.aborted) {
            fail(
              'question-budget',
              `brute force stopped in round ${round}: the budget of ${questionBudget} questions (maxNames × wordlist, at most ${MAX_DISCOVERY_QUESTIONS}) is spent`,
              domain,
            );
            budgetExhausted = true;
          }
        }
      }
      if (sources.permutations && options.maxPermutations > 0 && !stop.signal.aborted) {
        const found = recorder.foundInRound(round);
        const exclude = new Set([...recorder.names(), ...triedGuesses]);
        const candidates = permutations(found, domain, { max: options.maxPermutations, exclude }).filter((name) => {
          const dot = name.indexOf('.');
          // Already asked by the brute force under the same parent.
          return !(bruteforced.has(name.slice(dot + 1)) && wordSet.has(name.slice(0, dot)));
        });
        for (const name of candidates) triedGuesses.add(name);
        const result = await guess(byParent(candidates), 'permutation', recorder, dns, wildcard, options, concurrency, stop.signal, undefined);
        report.stats.permutations.tried += result.tried;
        report.stats.permutations.found += result.found;
        await recorder.settle();
      }
    }
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
  }
  await recorder.settle();

  const out = recorder.result();
  report.hosts = out.hosts;
  report.outOfScope = out.outOfScope;
  report.takeovers = out.takeovers;
  report.wildcards = wildcard.wildcards();
  report.stats.truncated = recorder.truncated;
  report.stats.queries = dns.stats().queries - queriesAtStart;
  if (recorder.dnsErrors.count > 0) {
    fail('dns-unanswered', `${recorder.dnsErrors.count} names got no usable DNS answer (first: ${recorder.dnsErrors.first})`, domain);
  }
  if (options.signal?.aborted) fail('aborted', 'discovery was cancelled before it finished', domain);
  return report;
}

/** Resolves `label.parent` for every job through the recorder's cache, recording what is kept with `source` (from: the parent). */
async function guess(
  jobs: BruteforceJob[],
  source: 'bruteforce' | 'permutation',
  recorder: Recorder,
  dns: DnsClient,
  wildcard: WildcardFilter,
  options: DiscoverOptions,
  concurrency: number,
  signal: AbortSignal,
  budget: { left: number } | undefined,
) {
  const cached: DnsClient = { ...dns, resolve: (name) => recorder.cachedResolution(name) ?? dns.resolve(name) };
  const result = await bruteforceJobs(jobs, cached, {
    concurrency,
    inScope: options.inScope,
    wildcard,
    signal,
    maxTried: budget?.left,
    onFound: (resolution, parent) => recorder.record(resolution, { source, from: parent }),
  });
  if (budget) budget.left -= result.tried;
  recorder.dnsErrors.count += result.errors;
  recorder.dnsErrors.first ??= result.firstError;
  return result;
}

/** Full names as (parent, first label) jobs, parents in first-seen order. */
function byParent(names: readonly string[]): BruteforceJob[] {
  const jobs = new Map<string, string[]>();
  for (const name of names) {
    const dot = name.indexOf('.');
    const parent = name.slice(dot + 1);
    const labels = jobs.get(parent);
    if (labels) labels.push(name.slice(0, dot));
    else jobs.set(parent, [name.slice(0, dot)]);
  }
  return [...jobs].map(([parent, labels]) => ({ parent, labels }));
}

async function nonWildcardParents(names: readonly string[], domain: string, wildcard: WildcardFilter, concurrency: number): Promise<string[]> {
  const candidates = names.filter((name) => name !== domain).sort();
  const keep = new Array<boolean>(candidates.length).fill(false);
  let next = 0;
  const worker = async () => {
    while (next < candidates.length) {
      const index = next++;
      keep[index] = (await wildcard.zone(candidates[index]!)) === null;
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, candidates.length) }, worker));
  return candidates.filter((_, index) => keep[index]);
}

function checkOptions(options: DiscoverOptions): string {
  let domain: string;
  try {
    domain = normalizeHostName(options.domain);
  } catch {
    throw new TypeError(`discovery domain "${options.domain}" is not a valid host name`);
  }
  if (!domain.includes('.') || /^[0-9.]+$/.test(domain) || domain.includes(':'))
    throw new TypeError(`discovery domain "${options.domain}" is not a domain name`);
  const positiveInteger = (key: 'maxDepth' | 'maxNames', value: number) => {
    if (!Number.isInteger(value) || value < 1) throw new RangeError(`${key} must be a positive integer, got ${value}`);
  };
  positiveInteger('maxDepth', options.maxDepth);
  positiveInteger('maxNames', options.maxNames);
  if (!Number.isInteger(options.maxPermutations) || options.maxPermutations < 0) {
    throw new RangeError(`maxPermutations must be zero or a positive integer, got ${options.maxPermutations}`);
  }
  if (options.concurrency !== undefined && (!Number.isInteger(options.concurrency) || options.concurrency < 1)) {
    throw new RangeError(`concurrency must be a positive integer, got ${options.concurrency}`);
  }
  return domain;
}

export interface ResolveCandidatesOptions {
  dns: DnsClient;
  inScope: (name: string) => boolean;
  /** Drops names only guessed (bruteforce, permutation origins) that a wildcard answered. */
  wildcard?: WildcardFilter;
  concurrency?: number;
  /** Recorded names at most (default: no limit). */
  maxNames?: number;
  signal?: AbortSignal;
}

/**
 * Names seen after discovery (certificate SANs, links, CNAMEs from pivotNames): out-of-scope ones
 * set aside unresolved, the rest resolved once each, CNAME targets followed, dangling ones reported.
 */
export async function resolveCandidates(
  names: ReadonlyArray<{ name: string; origin: NameOrigin }>,
  options: ResolveCandidatesOptions,
): Promise<ResolvedCandidates> {
  const recorder = createRecorder({
    dns: options.dns,
    inScope: options.inScope,
    wildcard: options.wildcard,
    maxNames: options.maxNames ?? Number.POSITIVE_INFINITY,
    concurrency: options.concurrency ?? DEFAULT_DISCOVERY_CONCURRENCY,
    signal: options.signal,
  });
  for (const entry of names) recorder.consider(entry.name, entry.origin);
  await recorder.settle();
  return recorder.result();
}
