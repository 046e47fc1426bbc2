/**
 * "DNS itself" as a discovery source: the names a domain's own records point at (NS, MX, SOA, SPF),
 * zone transfers from its name servers, and reverse (PTR) names of the addresses found.
 *
 * Every name is returned as found, in scope or not: the caller decides what to explore.
 */
import ipaddr from 'ipaddr.js';
import { normalizeHostName } from '../dns.js';
import type { DiscoveryError, DnsClient, NameOrigin, ZoneTransferResult } from './types.js';

/** Zone transfer attempts per domain (name server addresses), whatever the NS set says. */
export const MAX_TRANSFER_SERVERS = 10;
export const DEFAULT_PTR_CONCURRENCY = 16;

type FoundName = { name: string; origin: NameOrigin };

/** Names in the domain's NS, MX, SOA (primary server; the mailbox is not a host) and SPF records. */
export async function recordNames(domain: string, dns: DnsClient): Promise<{ names: FoundName[]; errors: DiscoveryError[] }> {
  const zone = normalizeHostName(domain);
  const names: FoundName[] = [];
  const errors: DiscoveryError[] = [];
  const seen = new Set<string>();
  const add = (type: string, candidates: readonly string[]) => {
    for (const candidate of candidates) {
      const name = hostNameOrNull(candidate);
      const from = `${type} ${zone}`;
      if (!name || seen.has(`${from} ${name}`)) continue;
      seen.add(`${from} ${name}`);
      names.push({ name, origin: { source: 'dns', from } });
    }
  };
  const lookups: Array<[string, () => Promise<string[]>]> = [
    ['NS', () => dns.ns(zone)],
    ['MX', () => dns.mx(zone)],
    [
      'SOA',
      async () => {
        const soa = await dns.soa(zone);
        return soa ? [soa.mname] : [];
      },
    ],
    ['TXT', async () => (await dns.txt(zone)).flatMap(spfNames)],
  ];
  const settled = await Promise.allSettled(lookups.map(([, run]) => run()));
  settled.forEach((outcome, index) => {
    const type = lookups[index][0];
    if (outcome.status === 'fulfilled') add(type, outcome.value);
    else errors.push({ code: 'dns', message: errorMessage(outcome.reason), target: `${type} ${zone}` });
  });
  return { names, errors };
}

/**
 * Host names an SPF record (RFC 7208) names: `include:`, `a:`, `mx:`, `exists:` mechanisms and the
 * `redirect=` modifier. Domain specs with macros (`%{i}`) are templates, not names, and are skipped.
 */
export function spfNames(record: string): string[] {
  const terms = record.trim().split(/\s+/);
  if (terms[0]?.toLowerCase() !== 'v=spf1') return [];
  const names: string[] = [];
  for (const term of terms.slice(1)) {
    const match = /^[+\-~?]?(include|a|mx|exists):(.+)$/i.exec(term) ?? /^(redirect)=(.+)$/i.exec(term);
    if (!match) continue;
    const spec = match[2].replace(/\/\/?\d+(\/\/\d+)?$/, ''); // a:host/24, mx:host//64
    if (spec.includes('%')) continue;
    const name = hostNameOrNull(spec);
    if (name) names.push(name);
  }
  return names;
}

/**
 * AXFR attempts against the domain's name servers: NS names, their addresses, one attempt per address
 * (at most MAX_TRANSFER_SERVERS). A refusal is a result (`ok: false`), not an error; errors are the
 * lookups that could not be made (no answer for NS, a name server name that does not resolve).
 */
export async function zoneTransfers(domain: string, dns: DnsClient): Promise<{ results: ZoneTransferResult[]; errors: DiscoveryError[] }> {
  const zone = normalizeHostName(domain);
  const errors: DiscoveryError[] = [];
  let servers: string[];
  try {
    servers = await dns.ns(zone);
  } catch (err) {
    return { results: [], errors: [{ code: 'axfr', message: errorMessage(err), target: `NS ${zone}` }] };
  }
  const resolutions = await Promise.all(servers.slice(0, MAX_TRANSFER_SERVERS).map((server) => dns.resolve(server)));
  const targets: Array<{ name: string; address: string }> = [];
  const addresses = new Set<string>();
  for (const resolution of resolutions) {
    if (resolution.status !== 'found') {
      const why = resolution.status === 'error' ? resolution.error : resolution.status === 'nxdomain' ? 'no such name' : 'no address';
      errors.push({ code: 'axfr', message: `name server ${resolution.name}: ${why}`, target: resolution.name });
      continue;
    }
    for (const address of [...resolution.a, ...resolution.aaaa]) {
      if (addresses.has(address) || targets.length >= MAX_TRANSFER_SERVERS) continue;
      addresses.add(address);
      targets.push({ name: resolution.name, address });
    }
  }
  const results = await Promise.all(targets.map((target) => dns.zoneTransfer(zone, target)));
  return { results, errors };
}

/**
 * PTR names of addresses, `concurrency` questions at a time. An address without a reverse name, or whose
 * reverse zone does not answer, simply contributes nothing: reverse DNS is a bonus, often unmaintained.
 */
export async function ptrNames(
  addresses: readonly string[],
  dns: DnsClient,
  options: { concurrency?: number } = {},
): Promise<Array<{ name: string; origin: { source: 'ptr'; from: string } }>> {
  const concurrency = options.concurrency ?? DEFAULT_PTR_CONCURRENCY;
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError(`concurrency must be a positive integer, got ${concurrency}`);
  const unique = [...new Set(addresses.map((address) => address.trim()))];
  const invalid = unique.find((address) => !ipaddr.isValid(address) || (!address.includes(':') && !ipaddr.IPv4.isValidFourPartDecimal(address)));
  if (invalid !== undefined) throw new TypeError(`"${invalid}" is not an IP address`);

  const found: Array<{ name: string; origin: { source: 'ptr'; from: string } }> = [];
  let next = 0;
  const worker = async () => {
    while (next < unique.length) {
      const address = unique[next++];
      const names = await dns.ptr(address).catch(() => [] as string[]);
      for (const candidate of new Set(names)) {
        const name = hostNameOrNull(candidate);
        if (name) found.push({ name, origin: { source: 'ptr', from: address } });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, unique.length) }, worker));
  return found;
}

function hostNameOrNull(candidate: string): string | null {
  try {
    const name = normalizeHostName(candidate);
    // A bare IP (an SPF a: with an address, say) or a one-label name is not a host name to explore.
    return ipaddr.isValid(name) || !name.includes('.') ? null : name;
  } catch {
    return null;
  }
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
