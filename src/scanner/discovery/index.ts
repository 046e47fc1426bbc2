/**
 * Subdomain discovery: find the host names under a domain, each with why it was found.
 *
 *   discover(options, { dns })   the discovery step (seeds, DNS records, AXFR, CT, brute force, permutations, recursion)
 *   pivotNames(observations)     names a scan saw afterwards (certificates, CNAMEs, links) ...
 *   resolveCandidates(names)     ... resolved, scope-split and checked for takeovers
 */
export * from './types.js';
export {
  createNameScope,
  isSubdomainOrSelf,
  parseExclusionPattern,
  normalizeExclusionPattern,
  type NameScope,
  type NameScopeOptions,
  type ExclusionPattern,
} from './scope.js';
export {
  createDnsClient,
  parseDnsServers,
  DnsQueryError,
  DNS_CLIENT_DEFAULTS,
  MAX_CNAME_HOPS,
  type DiscoveryDnsClient,
  type DiscoveryDnsClientOptions,
} from './dns-client.js';
export { recordNames, zoneTransfers, ptrNames, spfNames, MAX_TRANSFER_SERVERS } from './records.js';
export { builtinWordlist, parseWordlist, validateLabels } from './wordlist.js';
export {
  discover,
  emptyDiscoveryReport,
  resolveCandidates,
  MAX_DISCOVERY_QUESTIONS,
  RECURSION_WORDS,
  MAX_OUT_OF_SCOPE_NAMES,
  DEFAULT_DISCOVERY_CONCURRENCY,
  type DiscoverDeps,
  type ResolveCandidatesOptions,
  type ResolvedCandidates,
} from './discover.js';
export { bruteforce, bruteforceJobs, DEFAULT_BRUTEFORCE_CONCURRENCY, type BruteforceOptions, type BruteforceResult, type BruteforceJob } from './bruteforce.js';
export { permutations, PERMUTATION_WORDS, type PermutationOptions } from './permutations.js';
export { fetchCtNames, CtSourceError, DEFAULT_CT_TIMEOUT_MS, DEFAULT_CT_MAX_BYTES, type FetchCtNamesOptions } from './ct.js';
export { pivotNames, type PivotInput, type PivotName } from './pivots.js';
export { UNCLAIMED_SERVICES, takeoverFromResolution, takeoverFromWeb, serviceForChain, type UnclaimedService } from './takeover.js';
export { detectWildcard, createWildcardFilter, type WildcardFilter, type DetectWildcardOptions } from './wildcard.js';
