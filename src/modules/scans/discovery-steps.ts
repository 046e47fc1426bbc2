/**
 * The scan's discovery steps: `discovery` (before dns) finds host names under a domain target, or the names
 * of a CIDR's addresses; `pivot` (after http and tls) follows names the probes saw — certificate SANs, links,
 * redirects, CNAMEs — and probes the new in-scope ones, for a few rounds.
 */
import { mapBounded } from '../../concurrency.js';
import {
  builtinWordlist,
  createNameScope,
  discover,
  emptyDiscoveryReport,
  pivotNames,
  ptrNames,
  RECURSION_WORDS,
  resolveCandidates,
  takeoverFromWeb,
  type DiscoveredHost,
  type DiscoveryReport,
  type NameOrigin,
  type NameResolution,
  type TakeoverCandidate,
} from '../../scanner/discovery/index.js';
import type { CertificateObservation, HostObservation, ScopeGuard, ServiceObservation, StepError, WebObservation } from '../../scanner/index.js';
import { DEFAULT_DISCOVERY_OPTIONS } from './discovery-options.js';
import { expandCidr } from '../../scanner/cidr.js';
import type { StepContext } from './steps.js';

/** What the pipeline loads for the discovery steps (the workspace's settings, the instance's CT endpoint, what earlier scans saw). */
export interface DiscoveryInputs {
  rootDomains: string[];
  exclusions: string[];
  wordlist: string[];
  ctUrl: string;
  /** Observations earlier scans stored under the target's domain: their SANs, links and CNAMEs seed this discovery. */
  inventory: { hosts: HostObservation[]; web: WebObservation[]; certificates: CertificateObservation[] };
}

export interface DiscoveryStepOutput {
  report: DiscoveryReport;
}

export interface PivotStepOutput {
  /** In-scope names found by following the probes, with why. */
  discovered: DiscoveredHost[];
  outOfScope: Array<{ name: string; origin: NameOrigin }>;
  takeovers: TakeoverCandidate[];
  /** What probing the newly found (and enabled) hosts saw, like the dns/ports/http/tls steps' outputs. */
  hosts: HostObservation[];
  services: ServiceObservation[];
  web: WebObservation[];
  certificates: CertificateObservation[];
  errors: StepError[];
  rounds: number;
  /** Aliased hosts whose pages were compared with unclaimed-service fingerprints (a finding of theirs not seen again is fixed). */
  examined: string[];
}

export function isLocalhostName(name: string): boolean {
  return name === 'localhost' || name.endsWith('.localhost');
}

/** The domain a target names, when it names one (a URL's host name counts; an address does not). */
export function domainOfTarget(target: { type: string; value: string }): string | null {
  if (target.type === 'domain') return target.value;
  if (target.type === 'url') {
    const host = new URL(target.value).hostname;
    return /^[\d.]+$/.test(host) || host.startsWith('[') ? null : host;
  }
  return null;
}

/** A resolved name as the dns step would have observed it, so later steps and the inventory treat it alike. */
export function hostObservationOf(resolution: NameResolution, guard: ScopeGuard): HostObservation {
  const addresses = [...resolution.a, ...resolution.aaaa];
  const outOfScope: HostObservation['outOfScope'] = [];
  for (const address of addresses) {
    const decision = guard.check(address);
    if (!decision.allowed) outOfScope.push({ address, reason: `${decision.range} (${decision.label})` });
  }
  return { kind: 'host', host: resolution.name, addresses, a: resolution.a, aaaa: resolution.aaaa, cname: resolution.cname, resolvedVia: 'dns', outOfScope };
}

function scopeOf(ctx: StepContext, domain: string) {
  const inputs = ctx.discovery!;
  return createNameScope({ roots: [domain, ...inputs.rootDomains], exclusions: inputs.exclusions });
}

export async function runDiscoveryStep(ctx: StepContext): Promise<DiscoveryStepOutput> {
  const options = ctx.options.discovery ?? DEFAULT_DISCOVERY_OPTIONS;
  const dns = ctx.dns!;
  if (ctx.target.type === 'ip' || ctx.target.type === 'cidr') {
    // An address range has no names to guess; what its addresses are called is the PTR records.
    const addresses = ctx.target.type === 'cidr' ? expandCidr(ctx.target.value) : [ctx.target.value];
    const named = await ptrNames(addresses, dns, { concurrency: 32 });
    const report = emptyDiscoveryReport(ctx.target.value, []);
    const resolved = await mapBounded(named.slice(0, options.maxNames), 32, async ({ name, origin }) => ({
      name,
      origins: [origin],
      resolution: await dns.resolve(name),
    }));
    report.hosts = resolved.filter((host) => host.resolution.status === 'found').sort((a, b) => a.name.localeCompare(b.name));
    report.stats.queries = dns.stats().queries;
    return { report };
  }
  const domain = domainOfTarget(ctx.target);
  if (!domain)
    return {
      report: emptyDiscoveryReport(ctx.target.value, [{ code: 'NO_DOMAIN', message: 'This target names no domain: there are no names to discover under it' }]),
    };
  if (isLocalhostName(domain)) {
    return {
      report: emptyDiscoveryReport(domain, [
        { code: 'NOT_IN_DNS', message: `"${domain}" is answered locally (RFC 6761), never by DNS: nothing to discover under it` },
      ]),
    };
  }
  // Nothing can be found under a domain DNS does not know (RFC 8020), nor through name servers that do not answer.
  const apex = await dns.resolve(domain);
  if (apex.status === 'error') {
    const reason = `No name server answered for ${domain} (${apex.error ?? 'no answer'}): check SCAN_DNS_SERVERS (${ctx.dnsServers?.join(', ') || "the system's resolvers"})`;
    return { report: emptyDiscoveryReport(domain, [{ code: 'DNS_UNANSWERED', message: reason, target: domain }]) };
  }
  if (apex.status === 'nxdomain' && !apex.cname.length) {
    return {
      report: emptyDiscoveryReport(domain, [
        { code: 'NXDOMAIN', message: `${domain} does not exist in DNS (NXDOMAIN): there are no names under it`, target: domain },
      ]),
    };
  }
  const inputs = ctx.discovery!;
  const scope = scopeOf(ctx, domain);
  const builtin = options.builtinWordlist ? builtinWordlist() : [];
  const wordlist = [...new Set([...builtin, ...inputs.wordlist, ...options.wordlist])];
  // Under found names: the labels the workspace and the scan chose, and the most common built-in ones.
  const recursionWordlist = [...new Set([...inputs.wordlist, ...options.wordlist, ...builtin.slice(0, RECURSION_WORDS)])];
  const seeds = pivotNames(inputs.inventory).filter((seed) => seed.name !== domain);
  const sources = Object.fromEntries(['bruteforce', 'ct', 'dns', 'axfr', 'permutations'].map((source) => [source, options.sources.includes(source as never)]));
  const report = await discover(
    {
      domain,
      inScope: scope.inScope,
      wordlist,
      recursionWordlist,
      sources,
      maxDepth: options.maxDepth,
      maxNames: options.maxNames,
      maxPermutations: options.maxPermutations,
      ctUrl: inputs.ctUrl,
      seeds,
    },
    { dns },
  );
  return { report };
}

/** Names the probes saw, followed for up to maxDepth rounds: each round probes the new enabled hosts and reads their names in turn. */
export async function runPivotStep(
  ctx: StepContext,
  probe: (
    hosts: HostObservation[],
  ) => Promise<{ services: ServiceObservation[]; web: WebObservation[]; certificates: CertificateObservation[]; errors: StepError[] }>,
): Promise<PivotStepOutput> {
  const options = ctx.options.discovery ?? DEFAULT_DISCOVERY_OPTIONS;
  const output: PivotStepOutput = {
    discovered: [],
    outOfScope: [],
    takeovers: [],
    hosts: [],
    services: [],
    web: [],
    certificates: [],
    errors: [],
    rounds: 0,
    examined: [],
  };
  const domain = domainOfTarget(ctx.target);
  const earlierHosts = ctx.previous.dns?.hosts ?? [];
  const earlierWeb = ctx.previous.http?.web ?? [];
  // Unclaimed services behind a CNAME show themselves in the page they serve.
  output.takeovers.push(...webTakeovers(earlierHosts, earlierWeb, output.examined));
  if (!domain || isLocalhostName(domain)) return output;
  const scope = scopeOf(ctx, domain);
  // What this scan already resolved: a pivot naming one of these adds its reason (provenance), not another probe.
  const resolvedBefore = new Map<string, NameResolution>();
  for (const host of earlierHosts) resolvedBefore.set(host.host, resolutionOf(host));
  for (const host of ctx.previous.discovery?.report.hosts ?? []) resolvedBefore.set(host.name, host.resolution);
  const known = new Set<string>([domain, ...resolvedBefore.keys()]);
  for (const { name } of ctx.previous.discovery?.report.outOfScope ?? []) known.add(name);
  const alsoFound = new Map<string, DiscoveredHost>();
  let seen = { hosts: earlierHosts, web: earlierWeb, certificates: ctx.previous.tls?.certificates ?? [] };
  const budget = () => options.maxNames - output.discovered.length;
  while (output.rounds < options.maxDepth && budget() > 0) {
    const named = pivotNames(seen);
    for (const { name, origin } of named) {
      const resolution = resolvedBefore.get(name);
      if (!resolution || name === domain || !scope.inScope(name)) continue;
      const entry = alsoFound.get(name) ?? { name, origins: [], resolution };
      if (!entry.origins.some((o) => o.source === origin.source && o.from === origin.from)) entry.origins.push(origin);
      alsoFound.set(name, entry);
    }
    const fresh = named.filter((candidate) => !known.has(candidate.name));
    if (!fresh.length) break;
    output.rounds++;
    for (const { name } of fresh) known.add(name);
    const resolved = await resolveCandidates(fresh, { dns: ctx.dns!, inScope: scope.inScope, concurrency: 32 });
    const found = resolved.hosts.slice(0, budget());
    output.discovered.push(...found);
    output.outOfScope.push(...resolved.outOfScope);
    output.takeovers.push(...resolved.takeovers);
    const scannable = ctx.scannable ? await ctx.scannable(found.map((host) => host.name)) : new Set<string>();
    const hosts = found
      .filter((host) => host.resolution.status === 'found' && scannable.has(host.name))
      .map((host) => hostObservationOf(host.resolution, ctx.guard));
    if (!hosts.length) break;
    const probed = await probe(hosts);
    output.hosts.push(...hosts);
    output.services.push(...probed.services);
    output.web.push(...probed.web);
    output.certificates.push(...probed.certificates);
    output.errors.push(...probed.errors);
    output.takeovers.push(...webTakeovers(hosts, probed.web, output.examined));
    seen = { hosts, web: probed.web, certificates: probed.certificates };
  }
  output.discovered.push(...alsoFound.values());
  return output;
}

/** A stored host observation as the resolution discovery would have made of it. */
function resolutionOf(host: HostObservation): NameResolution {
  return { name: host.host, status: host.addresses.length ? 'found' : 'nodata', a: host.a, aaaa: host.aaaa, cname: host.cname };
}

function webTakeovers(hosts: HostObservation[], web: WebObservation[], examined: string[]): TakeoverCandidate[] {
  const chains = new Map(hosts.filter((host) => host.cname.length).map((host) => [host.host, host.cname]));
  const found = new Map<string, TakeoverCandidate>();
  for (const page of web) {
    const chain = chains.get(page.host);
    if (chain && !examined.includes(page.host)) examined.push(page.host);
    const candidate = chain ? takeoverFromWeb(page, chain) : null;
    if (candidate) found.set(candidate.name, candidate);
  }
  return [...found.values()];
}
