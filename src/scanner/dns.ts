/**
 * DNS step: what a host name points at.
 *
 * Asks DNS directly (dns.promises.Resolver) so we see A, AAAA and CNAME records as published,
 * with a timeout: a dead name server must not stall a scan. Names DNS does not know (/etc/hosts
 * entries, mDNS) fall back to the system resolver, which is what connect would use; `localhost`
 * names go to the system resolver only (RFC 6761: never sent to DNS).
 */
import dns from 'node:dns';
import net from 'node:net';
import { domainToASCII } from 'node:url';
import type { ScopeGuard } from './scope.js';
import type { HostObservation } from './types.js';

export interface ResolveDnsOptions {
  timeoutMs?: number;
  /** Name servers (`ip` or `ip:port`) instead of the system's; lets tests answer from a loopback server. */
  servers?: string[];
  /** When given, addresses it refuses are listed in `outOfScope` (resolution itself touches only DNS servers). */
  guard?: ScopeGuard;
}

export const DEFAULT_DNS_TIMEOUT_MS = 5_000;

/** Answers meaning "no such record", as opposed to "could not ask". */
const NO_RECORD_CODES = new Set(['ENODATA', 'ENOTFOUND', 'ENONAME', 'EAI_NODATA', 'EAI_NONAME', 'NXDOMAIN']);

export async function resolveDns(hostInput: string, options: ResolveDnsOptions = {}): Promise<HostObservation> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_DNS_TIMEOUT_MS;
  const host = normalizeHostName(hostInput);

  if (net.isIP(host)) {
    const a = net.isIPv4(host) ? [host] : [];
    const aaaa = net.isIPv6(host) ? [host] : [];
    return observation(host, a, aaaa, [], 'literal', options.guard);
  }

  // RFC 6761: localhost names are answered locally and must not be sent to DNS servers.
  if (host === 'localhost' || host.endsWith('.localhost')) return systemLookup(host, [], timeoutMs, options.guard);

  const resolver = new dns.promises.Resolver({ timeout: timeoutMs, tries: 1 });
  if (options.servers?.length) resolver.setServers(options.servers);
  const timer = setTimeout(() => resolver.cancel(), timeoutMs);
  let answers: [string[], string[], string[]];
  let transientError: unknown;
  try {
    const settled = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host), resolver.resolveCname(host)]);
    answers = settled.map((result) => {
      if (result.status === 'fulfilled') return result.value;
      if (!NO_RECORD_CODES.has(errorCode(result.reason))) transientError ??= result.reason;
      return [];
    }) as [string[], string[], string[]];
  } finally {
    clearTimeout(timer);
  }
  const [a, aaaa, cname] = answers;
  if (a.length > 0 || aaaa.length > 0) return observation(host, a, aaaa, cname, 'dns', options.guard);
  // A server we could not ask is a failure to retry, not an empty answer; and asking the system
  // resolver instead would mostly wait on the same dead server a second time.
  if (transientError !== undefined) throw transientError;
  // DNS says the name has no addresses: the system resolver (/etc/hosts, mDNS) may still know it.
  return systemLookup(host, cname, timeoutMs, options.guard);
}

async function systemLookup(host: string, cname: string[], timeoutMs: number, guard: ScopeGuard | undefined): Promise<HostObservation> {
  try {
    const found = await withTimeout(dns.promises.lookup(host, { all: true, family: 0 }), timeoutMs, `system lookup of ${host}`);
    const v4 = found.filter((entry) => entry.family === 4).map((entry) => entry.address);
    const v6 = found.filter((entry) => entry.family === 6).map((entry) => entry.address);
    return observation(host, unique(v4), unique(v6), cname, 'system', guard);
  } catch (err) {
    // A name that exists nowhere is an answer, not a failure.
    if (NO_RECORD_CODES.has(errorCode(err))) return observation(host, [], [], cname, 'dns', guard);
    throw err;
  }
}

function observation(
  host: string,
  a: string[],
  aaaa: string[],
  cname: string[],
  resolvedVia: HostObservation['resolvedVia'],
  guard: ScopeGuard | undefined,
): HostObservation {
  const addresses = [...a, ...aaaa];
  const outOfScope: HostObservation['outOfScope'] = [];
  if (guard) {
    for (const address of addresses) {
      const decision = guard.check(address);
      if (!decision.allowed) outOfScope.push({ address, reason: `${decision.range} (${decision.label})` });
    }
  }
  return { kind: 'host', host, addresses, a, aaaa, cname, resolvedVia, outOfScope };
}

/** Lower-case, no trailing dot, no IPv6 brackets; rejects things that cannot be a host name. */
export function normalizeHostName(input: string): string {
  let host = input.trim().toLowerCase();
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (net.isIP(host)) return host;
  if (host.endsWith('.')) host = host.slice(0, -1);
  // Internationalised names go over the wire as punycode.
  if (/[^\x00-\x7f]/.test(host)) host = domainToASCII(host);
  if (!host || host.length > 253 || !/^[a-z0-9_]([a-z0-9_-]{0,62})(\.[a-z0-9_]([a-z0-9_-]{0,62}))*$/.test(host)) {
    throw new TypeError(`"${input}" is not a valid host name or IP address`);
  }
  return host;
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}

function errorCode(err: unknown): string {
  return typeof err === 'object' && err !== null ? String((err as { code?: unknown }).code ?? '') : '';
}

async function withTimeout<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`${what} timed out after ${timeoutMs} ms`), { code: 'ETIMEOUT' })), timeoutMs);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
