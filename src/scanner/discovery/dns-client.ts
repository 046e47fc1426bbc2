/**
 * The discovery DNS client: every question goes to the configured name servers (SCAN_DNS_SERVERS, or the
 * system's), spread round-robin, each server behind its own concurrency and rate limits, every attempt
 * under a timeout. Answers are read the way a stub resolver reads them (CNAME chains from the answer
 * section, NXDOMAIN vs NODATA), so it works against recursive resolvers and authoritative servers alike.
 */
import dns from 'node:dns';
import ipaddr from 'ipaddr.js';
import type { Answer, MxData, OptAnswer, Packet, RecordType, SoaData } from 'dns-packet';
import { normalizeHostName } from '../dns.js';
import { createHostRateLimiter } from '../rate-limit.js';
import {
  askTcp,
  createUdpTransport,
  type DnsResponse,
  DnsTimeoutError,
  type NameServer,
  type QuestionOptions,
  questionPacket,
  transferZone,
} from './dns-transport.js';
import type { DnsClient, DnsClientOptions, NameResolution } from './types.js';

export interface DiscoveryDnsClientOptions extends DnsClientOptions {
  /** Whole zone transfer, connect to last record. */
  zoneTransferTimeoutMs?: number;
  /** A transfer bigger than this stops and fails (a zone is not supposed to be a denial of service). */
  zoneTransferMaxRecords?: number;
  zoneTransferMaxBytes?: number;
}

export type DiscoveryDnsClient = DnsClient & {
  /**
   * One question as asked (class, flags, EDNS) and the first answer any server gives, whatever its rcode
   * (SERVFAIL and REFUSED included: the nuclei dns protocol matches on them). DnsQueryError when no server answered.
   */
  exchange(
    name: string,
    type: RecordType,
    options?: QuestionOptions & { tries?: number; timeoutMs?: number },
  ): Promise<{ request: Packet; response: DnsResponse }>;
  /** The name servers asked, as `host:port`. */
  readonly servers: readonly string[];
  /** Closes the UDP sockets; questions asked afterwards fail. */
  close(): void;
};

/**
 * Defaults. 64 in flight and 2000 starts per second per server: at the 20-40 ms a nearby recursive resolver
 * takes per uncached name, 64 in flight is ~2000 questions/s, so the two limits agree; and 2000/s stays under
 * what public resolvers tolerate from one client (Google Public DNS documents 1500 QPS per client IP as its
 * default limit; we are 2 questions per name, A and AAAA), while a local unbound or dnsmasq takes far more.
 * Two tries: one lost UDP datagram should not lose a name, a dead server should not cost more than two timeouts.
 */
export const DNS_CLIENT_DEFAULTS = {
  timeoutMs: 2000,
  tries: 2,
  concurrencyPerServer: 64,
  queriesPerSecondPerServer: 2000,
  authoritativePort: 53,
  zoneTransferTimeoutMs: 30_000,
  zoneTransferMaxRecords: 100_000,
  zoneTransferMaxBytes: 10 * 1024 * 1024,
} as const;

/** CNAME hops followed per name (the chain as returned plus the questions asked for unresolved targets). */
export const MAX_CNAME_HOPS = 8;
/** Consecutive timeouts after which a server is asked only as a fallback, for SERVER_REST_MS. */
const SERVER_FAILURES_BEFORE_REST = 3;
const SERVER_REST_MS = 5_000;

/** No name server gave a usable answer (timeouts, SERVFAIL, REFUSED): not the same as "no such record". */
export class DnsQueryError extends Error {
  constructor(
    message: string,
    readonly question: { name: string; type: string },
  ) {
    super(message);
    this.name = 'DnsQueryError';
  }
}

/** `ip`, `ip:port`, `[v6]` or `[v6]:port` entries (SCAN_DNS_SERVERS); throws TypeError naming the first bad one. */
export function parseDnsServers(entries: readonly string[]): NameServer[] {
  return entries.map((entry) => parseDnsServer(entry));
}

function parseDnsServer(entry: string): NameServer {
  const text = entry.trim();
  const bad = () => new TypeError(`DNS server "${entry}" is not an IP address, ip:port or [IPv6]:port`);
  let host = text;
  let portText: string | undefined;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  if (bracketed) [, host, portText] = bracketed;
  else if (text.split(':').length === 2) [host, portText] = text.split(':');
  const port = portText === undefined ? 53 : Number(portText);
  if (!Number.isInteger(port) || port < 1 || port > 65535 || (portText !== undefined && !/^\d+$/.test(portText))) throw bad();
  let family: 4 | 6;
  if (ipaddr.IPv4.isValidFourPartDecimal(host) && !bracketed) family = 4;
  else if (ipaddr.IPv6.isValid(host) && host.includes(':')) family = 6;
  else throw bad();
  const canonical = ipaddr.parse(host).toString();
  return { host: canonical, port, family, key: family === 6 ? `[${canonical}]:${port}` : `${canonical}:${port}` };
}

export function createDnsClient(options: DiscoveryDnsClientOptions = {}): DiscoveryDnsClient {
  const settings = { ...DNS_CLIENT_DEFAULTS, ...definedOnly(options) };
  for (const key of ['timeoutMs', 'concurrencyPerServer', 'queriesPerSecondPerServer', 'zoneTransferTimeoutMs'] as const) positive(key, settings[key]);
  if (!Number.isInteger(settings.tries) || settings.tries < 1 || settings.tries > 10)
    throw new RangeError(`tries must be an integer from 1 to 10, got ${settings.tries}`);
  const port = settings.authoritativePort;
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new RangeError(`authoritativePort must be a port number, got ${port}`);

  const configured = options.servers?.map((entry) => entry.trim()).filter(Boolean) ?? [];
  const servers = parseDnsServers(configured.length > 0 ? configured : dns.getServers());
  if (servers.length === 0) throw new Error('no DNS servers: SCAN_DNS_SERVERS is empty and the system has none configured');

  const limiter = createHostRateLimiter({ maxConcurrentPerHost: settings.concurrencyPerServer, maxPerSecondPerHost: settings.queriesPerSecondPerServer });
  const udp = createUdpTransport();
  const counters = { queries: 0, timeouts: 0, errors: 0 };
  const health = new Map<string, { failures: number; restUntil: number }>();
  let rotation = 0;

  /** Servers in the order to try them: round-robin start, servers resting after repeated timeouts last. */
  function serverOrder(): NameServer[] {
    const start = rotation++ % servers.length;
    const rotated = [...servers.slice(start), ...servers.slice(0, start)];
    if (servers.length === 1) return rotated;
    const now = Date.now();
    const resting = (server: NameServer) => (health.get(server.key)?.restUntil ?? 0) > now;
    return [...rotated.filter((server) => !resting(server)), ...rotated.filter(resting)];
  }

  function noteOutcome(server: NameServer, timedOut: boolean): void {
    const state = health.get(server.key) ?? { failures: 0, restUntil: 0 };
    state.failures = timedOut ? state.failures + 1 : 0;
    if (state.failures >= SERVER_FAILURES_BEFORE_REST) state.restUntil = Date.now() + SERVER_REST_MS;
    health.set(server.key, state);
  }

  async function exchange(server: NameServer, name: string, type: RecordType, options?: QuestionOptions, timeoutMs = settings.timeoutMs): Promise<DnsResponse> {
    counters.queries++;
    const response = await udp.ask(server, name, type, timeoutMs, options);
    if (!response.flag_tc) return response;
    counters.queries++;
    return askTcp(server, name, type, timeoutMs, options);
  }

  /** Any answer from some server; only network failures move on to the next attempt. */
  async function exchangeAny(input: string, type: RecordType, options: QuestionOptions & { tries?: number; timeoutMs?: number } = {}) {
    const name = normalizeName(input);
    const order = serverOrder();
    const tries = Math.max(1, Math.min(10, options.tries ?? settings.tries));
    let failure = '';
    for (let attempt = 0; attempt < tries; attempt++) {
      const server = order[attempt % order.length];
      try {
        const response = await limiter.run(server.key, () => exchange(server, name, type, options, options.timeoutMs));
        noteOutcome(server, false);
        return { request: questionPacket(name, type, options.recursionDesired ?? true, options), response };
      } catch (err) {
        const timedOut = err instanceof DnsTimeoutError;
        if (timedOut) counters.timeouts++;
        else counters.errors++;
        noteOutcome(server, timedOut);
        failure = (err as Error).message;
      }
    }
    throw new DnsQueryError(failure, { name, type });
  }

  /** One question, answered NOERROR or NXDOMAIN by some server, or DnsQueryError. */
  async function ask(name: string, type: RecordType): Promise<DnsResponse> {
    const order = serverOrder();
    let failure = '';
    for (let attempt = 0; attempt < settings.tries; attempt++) {
      const server = order[attempt % order.length];
      try {
        const response = await limiter.run(server.key, () => exchange(server, name, type));
        noteOutcome(server, false);
        if (response.rcode === 'NOERROR' || response.rcode === 'NXDOMAIN') return response;
        counters.errors++;
        failure = `${type} ${name}: ${server.key} answered ${response.rcode}`;
        // Asking the one server again gets the same refusal; SERVFAIL may be a passing upstream failure.
        if (servers.length === 1 && response.rcode !== 'SERVFAIL') break;
      } catch (err) {
        const timedOut = err instanceof DnsTimeoutError;
        if (timedOut) counters.timeouts++;
        else counters.errors++;
        noteOutcome(server, timedOut);
        failure = (err as Error).message;
      }
    }
    throw new DnsQueryError(failure, { name, type });
  }

  /** Addresses of one type at the end of the CNAME chain, asking again for targets the server left unresolved. */
  async function follow(name: string, type: 'A' | 'AAAA'): Promise<Omit<NameResolution, 'name' | 'a' | 'aaaa'> & { addresses: string[] }> {
    const chain: string[] = [];
    const seen = new Set([name]);
    let current = name;
    for (let question = 0; question <= MAX_CNAME_HOPS; question++) {
      let response: DnsResponse;
      try {
        response = await ask(current, type);
      } catch (err) {
        return { status: 'error', addresses: [], cname: chain, error: (err as Error).message };
      }
      const walked = walkAnswers(response.answers ?? [], current, type);
      for (const target of walked.chain) {
        if (seen.has(target)) return { status: 'error', addresses: [], cname: chain, error: `CNAME loop at ${target}` };
        seen.add(target);
        chain.push(target);
      }
      if (chain.length > MAX_CNAME_HOPS) return { status: 'error', addresses: [], cname: chain, error: `CNAME chain longer than ${MAX_CNAME_HOPS}` };
      if (walked.addresses.length > 0) return { status: 'found', addresses: walked.addresses, cname: chain };
      // RFC 6604: NXDOMAIN after a CNAME is about the last name in the chain, which is what a dangling alias is.
      if (response.rcode === 'NXDOMAIN') return { status: 'nxdomain', addresses: [], cname: chain };
      if (walked.chain.length === 0 || soaCovers(response, walked.end)) return { status: 'nodata', addresses: [], cname: chain };
      current = walked.end; // an authoritative server gave the alias only: its target lives elsewhere
    }
    return { status: 'error', addresses: [], cname: chain, error: `CNAME chain longer than ${MAX_CNAME_HOPS}` };
  }

  async function resolve(input: string): Promise<NameResolution> {
    let name: string;
    try {
      name = normalizeHostName(input);
    } catch (err) {
      return { name: input, status: 'error', a: [], aaaa: [], cname: [], error: (err as Error).message };
    }
    const [a, aaaa] = await Promise.all([follow(name, 'A'), follow(name, 'AAAA')]);
    const cname = a.cname.length >= aaaa.cname.length ? a.cname : aaaa.cname;
    const resolution: NameResolution = { name, status: 'nodata', a: a.addresses, aaaa: aaaa.addresses, cname };
    // An address anywhere wins; NXDOMAIN is about the name, so it settles both types; "no A" says nothing about AAAA.
    if (a.status === 'found' || aaaa.status === 'found') resolution.status = 'found';
    else if (a.status === 'nxdomain' || aaaa.status === 'nxdomain') resolution.status = 'nxdomain';
    else if (a.status === 'error' || aaaa.status === 'error') {
      resolution.status = 'error';
      resolution.error = a.error ?? aaaa.error;
    }
    return resolution;
  }

  /** Records of `type` owned by the name or its aliases in one answer; [] for NXDOMAIN and NODATA. */
  async function records(input: string, type: RecordType): Promise<DataAnswer[]> {
    const name = normalizeHostName(input);
    const response = await ask(name, type);
    if (response.rcode === 'NXDOMAIN') return [];
    const answers = response.answers ?? [];
    const owners = new Set([name, ...walkAnswers(answers, name, type).chain]);
    return answers.filter((answer): answer is DataAnswer => answer.type === type && owners.has(normalizeName(answer.name)));
  }

  const client: DiscoveryDnsClient = {
    servers: servers.map((server) => server.key),
    exchange: exchangeAny,
    resolve,
    ns: async (name) => unique((await records(name, 'NS')).map((answer) => normalizeName(answer.data as string))),
    mx: async (name) => unique((await records(name, 'MX')).map((answer) => normalizeName((answer.data as MxData).exchange))),
    soa: async (name) => {
      const [answer] = await records(name, 'SOA');
      if (!answer) return null;
      const data = answer.data as SoaData;
      return { mname: normalizeName(data.mname), rname: normalizeName(data.rname) };
    },
    txt: async (name) => (await records(name, 'TXT')).map((answer) => txtText(answer.data as Buffer | Buffer[])),
    ptr: async (address) => unique((await records(reverseName(address), 'PTR')).map((answer) => normalizeName(answer.data as string))),
    zoneTransfer: (zone, server) =>
      transferZone(zone, server, {
        port,
        timeoutMs: settings.zoneTransferTimeoutMs,
        maxRecords: settings.zoneTransferMaxRecords,
        maxBytes: settings.zoneTransferMaxBytes,
        limiter,
        countQuery: () => counters.queries++,
      }),
    stats: () => ({ ...counters }),
    close: () => udp.close(),
  };
  return client;
}

/** Every record type but EDNS's OPT pseudo-record carries `data`. */
type DataAnswer = Exclude<Answer, OptAnswer>;

/** Follows CNAMEs through one answer section from `name`: the aliases met, where the chain ends, its addresses. */
function walkAnswers(answers: readonly Answer[], name: string, type: RecordType): { chain: string[]; end: string; addresses: string[] } {
  const chain: string[] = [];
  let current = name;
  for (let hop = 0; hop <= answers.length; hop++) {
    const owned = answers.filter((answer) => normalizeName(answer.name) === current);
    const addresses = owned.filter((answer) => answer.type === type).map((answer) => String((answer as DataAnswer).data).toLowerCase());
    if (addresses.length > 0) return { chain, end: current, addresses: unique(addresses) };
    const alias = owned.find((answer): answer is DataAnswer => answer.type === 'CNAME');
    if (!alias) break;
    current = normalizeName(alias.data as string);
    if (chain.includes(current) || current === name) break; // a loop inside one answer; the caller reports it
    chain.push(current);
  }
  return { chain, end: current, addresses: [] };
}

/** The authority section's SOA is for a zone containing `name`: the server knows the name and it has no data. */
function soaCovers(response: DnsResponse, name: string): boolean {
  return (response.authorities ?? []).some((record) => {
    if (record.type !== 'SOA') return false;
    const zone = normalizeName(record.name);
    return zone === '' || name === zone || name.endsWith(`.${zone}`);
  });
}

/** in-addr.arpa / ip6.arpa name of an address; TypeError for anything that is not one. */
export function reverseName(address: string): string {
  const text = address.trim().replace(/^\[(.*)\]$/, '$1');
  if (!ipaddr.isValid(text) || (!text.includes(':') && !ipaddr.IPv4.isValidFourPartDecimal(text))) throw new TypeError(`"${address}" is not an IP address`);
  const parsed = ipaddr.process(text); // IPv4-mapped IPv6 is asked as the IPv4 address it carries
  if (parsed.kind() === 'ipv4') return `${parsed.toByteArray().reverse().join('.')}.in-addr.arpa`;
  const nibbles = parsed.toByteArray().flatMap((byte) => [(byte >> 4).toString(16), (byte & 15).toString(16)]);
  return `${nibbles.reverse().join('.')}.ip6.arpa`;
}

export function normalizeName(name: string): string {
  const lower = name.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

function txtText(data: Buffer | Buffer[] | string): string {
  const parts = Array.isArray(data) ? data : [data];
  return parts.map((part) => part.toString()).join('');
}

function unique<T>(values: T[]): T[] {
  return [...new Set(values)];
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as Partial<T>;
}

function positive(name: string, value: number): void {
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`${name} must be a positive number, got ${value}`);
}
