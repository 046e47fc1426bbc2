/**
 * Scope guard: decides which IP addresses the scanner may connect to.
 *
 * A scanner that follows DNS and redirects can be steered at internal infrastructure (SSRF):
 * the cloud metadata service, the database on 10.0.0.5, the admin UI on localhost. So every
 * connection the engine makes is checked against a block list of non-public ranges, AFTER DNS
 * resolution (a public-looking name may resolve to 127.0.0.1) and at connect time (see
 * `guardedLookup`), and against the IP we actually dial rather than the name we started from.
 *
 * Operators opt specific ranges back in with `allowedNetworks` (config `SCAN_ALLOWED_NETWORKS`);
 * an allowed network wins over the block list. Tests and local development allow loopback only.
 */
import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

/** Loopback only: the safe allow-list for tests and local development. */
export const LOOPBACK_NETWORKS: readonly string[] = ['127.0.0.0/8', '::1/128'];

interface BlockedRange {
  cidr: string;
  label: string;
}

/**
 * Ranges refused unless allowed. Order matters only for the message: the first match names the
 * range, so the specific metadata addresses come before the wider ranges that contain them.
 */
const BLOCKED_RANGES: readonly BlockedRange[] = [
  { cidr: '169.254.169.254/32', label: 'cloud metadata service (AWS, GCP, Azure, OpenStack)' },
  { cidr: '100.100.100.200/32', label: 'cloud metadata service (Alibaba Cloud)' },
  { cidr: 'fd00:ec2::254/128', label: 'cloud metadata service (AWS IPv6)' },
  { cidr: '0.0.0.0/8', label: 'unspecified / "this network"' },
  { cidr: '127.0.0.0/8', label: 'loopback' },
  { cidr: '10.0.0.0/8', label: 'private network (RFC 1918)' },
  { cidr: '172.16.0.0/12', label: 'private network (RFC 1918)' },
  { cidr: '192.168.0.0/16', label: 'private network (RFC 1918)' },
  { cidr: '100.64.0.0/10', label: 'carrier-grade NAT (RFC 6598)' },
  { cidr: '169.254.0.0/16', label: 'link-local' },
  { cidr: '192.0.0.0/24', label: 'IETF protocol assignments (reserved)' },
  { cidr: '192.0.2.0/24', label: 'documentation (TEST-NET-1)' },
  { cidr: '198.51.100.0/24', label: 'documentation (TEST-NET-2)' },
  { cidr: '203.0.113.0/24', label: 'documentation (TEST-NET-3)' },
  { cidr: '192.88.99.0/24', label: '6to4 relay anycast (deprecated)' },
  { cidr: '198.18.0.0/15', label: 'benchmarking (reserved)' },
  { cidr: '224.0.0.0/4', label: 'multicast' },
  { cidr: '240.0.0.0/4', label: 'reserved (incl. broadcast)' },
  { cidr: '::/128', label: 'unspecified' },
  { cidr: '::1/128', label: 'loopback' },
  { cidr: '::/96', label: 'IPv4-compatible IPv6 (deprecated)' },
  { cidr: '100::/64', label: 'discard-only (reserved)' },
  { cidr: '2001:db8::/32', label: 'documentation' },
  { cidr: 'fc00::/7', label: 'unique-local (private IPv6)' },
  { cidr: 'fe80::/10', label: 'link-local' },
  { cidr: 'fec0::/10', label: 'site-local (deprecated)' },
  { cidr: 'ff00::/8', label: 'multicast' },
];

export type ScopeDecision = { allowed: true; address: string; allowedBy?: string } | { allowed: false; address: string; range: string; label: string };

/** Thrown when a target address is out of scope. Never retry: the answer will not change. */
export class ScopeError extends Error {
  readonly code = 'SCOPE_BLOCKED' as const;
  constructor(
    readonly address: string,
    readonly range: string,
    readonly rangeLabel: string,
    /** The name that resolved to the address, when the check followed DNS. */
    readonly host?: string,
  ) {
    const subject = host && host !== address ? `${host} resolves to ${address}, which` : `Address ${address}`;
    super(
      `${subject} is out of scan scope: it is in ${range} (${rangeLabel}). ` +
        `To scan it, add a network that covers it to SCAN_ALLOWED_NETWORKS (e.g. ${singleAddressCidr(address)}).`,
    );
    this.name = 'ScopeError';
  }
}

export function isScopeError(err: unknown): err is ScopeError {
  return err instanceof ScopeError || (typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 'SCOPE_BLOCKED');
}

export interface ScopeGuardOptions {
  /** CIDRs (or single addresses) that are allowed even though a blocked range contains them. */
  allowedNetworks: readonly string[];
  /**
   * Name servers (`ip` or `ip:port`) for the names met while connecting (redirect targets, template requests);
   * the system's when empty. Names DNS does not know still go to the system resolver (/etc/hosts).
   */
  dnsServers?: readonly string[];
}

export interface ScopeGuard {
  readonly allowedNetworks: readonly string[];
  check(ip: string): ScopeDecision;
  isAllowed(ip: string): boolean;
  /** Throws ScopeError for a blocked address, TypeError for something that is not an IP. */
  assertAddressAllowed(ip: string): void;
  /** Resolves a name (or passes an IP through) and checks every address; throws ScopeError if any is blocked. */
  resolveHost(host: string): Promise<string[]>;
  /** Drop-in `lookup` for net.connect / tls.connect / http.request: resolves, then refuses blocked answers. */
  guardedLookup: net.LookupFunction;
  /**
   * Options to spread into net.connect / tls.connect / http.request for `host`. Node skips
   * `lookup` for IP literals, so a literal is checked here, now; a name gets `guardedLookup`,
   * so it is checked at connect time against what DNS really returned.
   */
  connectOptions(host: string): { host: string; lookup?: net.LookupFunction };
}

/** A name server that does not answer must not hold a connection attempt for long. */
const DNS_TIMEOUT_MS = 3_000;

export function createScopeGuard(options: ScopeGuardOptions): ScopeGuard {
  const allowedNetworks = parseCidrList(options.allowedNetworks.join(','));
  const allowList = new net.BlockList();
  for (const cidr of allowedNetworks) addCidr(allowList, cidr);
  const blockLists = BLOCKED_RANGES.map((range) => {
    const list = new net.BlockList();
    addCidr(list, range.cidr);
    return { ...range, list };
  });

  function check(ip: string): ScopeDecision {
    const address = normalizeAddress(ip);
    // An IPv6 address of a transition mechanism (mapped, SIIT, NAT64, 6to4, Teredo) reaches the IPv4 host it
    // embeds, so it is judged as that host: 2002:7f00:1:: is loopback, 2002:a9fe:a9fe:: the metadata service.
    const embedded = embeddedIPv4(address);
    const candidates = embedded ? [embedded.ipv4, address] : [address];
    for (const candidate of candidates) {
      if (allowList.check(candidate, net.isIPv4(candidate) ? 'ipv4' : 'ipv6')) {
        return { allowed: true, address: ip, allowedBy: allowedNetworks.find((cidr) => cidrContains(cidr, candidate)) };
      }
    }
    for (const candidate of candidates) {
      const family = net.isIPv4(candidate) ? 'ipv4' : 'ipv6';
      for (const range of blockLists) {
        if (!range.list.check(candidate, family)) continue;
        const label = candidate === address ? range.label : `${range.label}, embedded in this ${embedded!.via} address`;
        return { allowed: false, address: ip, range: range.cidr, label };
      }
    }
    return { allowed: true, address: ip };
  }

  function assertAllowed(ip: string, host?: string): void {
    const decision = check(ip);
    if (!decision.allowed) throw new ScopeError(ip, decision.range, decision.label, host);
  }

  async function resolveHost(host: string): Promise<string[]> {
    const name = stripBrackets(host);
    if (net.isIP(name)) {
      assertAllowed(name);
      return [name];
    }
    const answers = await lookupAll(name);
    // Every address must pass: a name with one internal answer is exactly the shape of a rebinding attack.
    for (const { address } of answers) assertAllowed(address, name);
    return answers.map((answer) => answer.address);
  }

  const servers = options.dnsServers?.length ? [...options.dnsServers] : null;
  /** Every address of a name: from the configured servers when there are some, else (or when they know none) the system's. */
  async function lookupAll(name: string, family: 0 | 4 | 6 = 0): Promise<dns.LookupAddress[]> {
    if (servers && name !== 'localhost' && !name.endsWith('.localhost')) {
      const resolver = new dns.promises.Resolver({ timeout: DNS_TIMEOUT_MS, tries: 2 });
      resolver.setServers(servers);
      const [v4, v6] = await Promise.all([
        family === 6 ? [] : resolver.resolve4(name).catch(() => [] as string[]),
        family === 4 ? [] : resolver.resolve6(name).catch(() => [] as string[]),
      ]);
      const found = [...v4.map((address) => ({ address, family: 4 })), ...v6.map((address) => ({ address, family: 6 }))];
      if (found.length) return found;
    }
    return dns.promises.lookup(name, { all: true, family, verbatim: false });
  }

  const guardedLookup: net.LookupFunction = (hostname, lookupOptions, callback) => {
    const family = lookupOptions.family === 4 || lookupOptions.family === 6 ? lookupOptions.family : 0;
    lookupAll(hostname, family).then(
      (list) => deliver(null, list),
      (err: NodeJS.ErrnoException) => deliver(err, []),
    );
    function deliver(err: NodeJS.ErrnoException | null, list: dns.LookupAddress[]) {
      if (err) return callback(err, []);
      try {
        for (const { address } of list) assertAllowed(address, hostname);
      } catch (scopeErr) {
        return callback(scopeErr as NodeJS.ErrnoException, []);
      }
      if (lookupOptions.all) return callback(null, list);
      if (list.length === 0) return callback(Object.assign(new Error(`No address for ${hostname}`), { code: 'ENOTFOUND' }), []);
      return callback(null, list[0].address, list[0].family);
    }
  };

  function connectOptions(host: string): { host: string; lookup?: net.LookupFunction } {
    const name = stripBrackets(host);
    if (net.isIP(name)) {
      assertAllowed(name);
      return { host: name };
    }
    return { host: name, lookup: guardedLookup };
  }

  return {
    allowedNetworks,
    check,
    isAllowed: (ip) => check(ip).allowed,
    assertAddressAllowed: (ip) => assertAllowed(ip),
    resolveHost,
    guardedLookup,
    connectOptions,
  };
}

/**
 * Parses and validates a comma-separated CIDR list such as `127.0.0.0/8,::1/128`.
 * A bare address means just that address (/32 or /128). Returns normalised `address/prefix` strings.
 */
export function parseCidrList(text: string): string[] {
  const result: string[] = [];
  for (const raw of text.split(',')) {
    const entry = raw.trim();
    if (!entry) continue;
    const slash = entry.indexOf('/');
    const address = slash === -1 ? entry : entry.slice(0, slash);
    const family = net.isIP(address);
    if (family === 0 || address.includes('%')) {
      throw new Error(`Invalid network "${entry}" in CIDR list: "${address}" is not an IPv4 or IPv6 address (expected e.g. 127.0.0.0/8 or ::1/128)`);
    }
    const maxPrefix = family === 4 ? 32 : 128;
    const prefixText = slash === -1 ? String(maxPrefix) : entry.slice(slash + 1);
    if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > maxPrefix) {
      throw new Error(`Invalid network "${entry}" in CIDR list: prefix length must be a whole number from 0 to ${maxPrefix}`);
    }
    result.push(`${address.toLowerCase()}/${Number(prefixText)}`);
  }
  return result;
}

function addCidr(list: net.BlockList, cidr: string): void {
  const [address, prefix] = cidr.split('/');
  list.addSubnet(address, Number(prefix), net.isIPv4(address) ? 'ipv4' : 'ipv6');
}

function cidrContains(cidr: string, ip: string): boolean {
  const list = new net.BlockList();
  addCidr(list, cidr);
  return list.check(ip, net.isIPv4(ip) ? 'ipv4' : 'ipv6');
}

function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** Validates and drops an IPv6 zone id (fe80::1%eth0): the zone does not change which range it is in. */
function normalizeAddress(ip: string): string {
  const bare = stripBrackets(ip.trim());
  if (!net.isIP(bare)) throw new TypeError(`Scope check needs an IP address, got "${ip}"; resolve names with resolveHost`);
  const zone = bare.indexOf('%');
  return (zone === -1 ? bare : bare.slice(0, zone)).toLowerCase();
}

interface EmbeddedIPv4 {
  ipv4: string;
  /** The transition mechanism, for messages. */
  via: string;
}

/**
 * The IPv4 address an IPv6 address of a transition mechanism carries (ipaddr.js names the ranges):
 * IPv4-mapped ::ffff:a.b.c.d and SIIT ::ffff:0:a.b.c.d, NAT64 64:ff9b::/96 and local-use 64:ff9b:1::/48 in the
 * last 32 bits, 6to4 2002::/16 in bits 16-47, Teredo 2001::/32 the client's address, inverted, in the last 32 bits.
 */
function embeddedIPv4(address: string): EmbeddedIPv4 | undefined {
  if (!net.isIPv6(address)) return undefined;
  const parsed = ipaddr.IPv6.parse(address);
  const [, second, third, , , , seventh, eighth] = parsed.parts;
  const fromWords = (high: number, low: number) => ipaddr.fromByteArray([high >> 8, high & 0xff, low >> 8, low & 0xff]).toString();
  switch (parsed.range()) {
    case 'ipv4Mapped':
      return { ipv4: fromWords(seventh, eighth), via: 'IPv4-mapped (::ffff:0:0/96)' };
    case 'rfc6145':
      return { ipv4: fromWords(seventh, eighth), via: 'SIIT (::ffff:0:0:0/96)' };
    case 'rfc6052':
      return { ipv4: fromWords(seventh, eighth), via: third === 0 ? 'NAT64 (64:ff9b::/96)' : 'local-use NAT64 (64:ff9b:1::/48)' };
    case '6to4':
      return { ipv4: fromWords(second, third), via: '6to4 (2002::/16)' };
    case 'teredo':
      return { ipv4: fromWords(~seventh & 0xffff, ~eighth & 0xffff), via: 'Teredo (2001::/32)' };
    default:
      return undefined;
  }
}

/** The narrowest allow-list entry that would admit `address` (its embedded IPv4, if it has one). */
function singleAddressCidr(address: string): string {
  const bare = stripBrackets(address).split('%')[0].toLowerCase();
  const effective = embeddedIPv4(bare)?.ipv4 ?? bare;
  return `${effective}/${net.isIPv4(effective) ? 32 : 128}`;
}
