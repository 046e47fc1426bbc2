/**
 * Subdomain discovery: the shared vocabulary of the engine's discovery sources.
 *
 * Plain JSON in and out (like every scanner observation), so a scan step can store a report and a
 * later step (or a retry) can read it back. Nothing here knows about the database or HTTP front doors.
 */

/** Why a host is in the inventory; REST/GraphQL expose these exact strings. */
export const DISCOVERY_SOURCES = ['bruteforce', 'ct', 'certificate', 'cname', 'link', 'dns', 'axfr', 'ptr', 'permutation', 'target', 'import'] as const;
export type DiscoverySource = (typeof DISCOVERY_SOURCES)[number];

/** One reason a name was found: the source, and what pointed at it (a name, an asset key, a URL). */
export interface NameOrigin {
  source: DiscoverySource;
  /** What led there: the parent name (bruteforce, permutation), the asset key or URL (certificate, link), the zone (ct, dns, axfr), the address (ptr). */
  from?: string;
}

/** What DNS said about a name's addresses. */
export interface NameResolution {
  name: string;
  /** `found`: at least one A/AAAA; `nxdomain`: the name (or the end of its CNAME chain) does not exist; `nodata`: exists, no address; `error`: no usable answer (timeout, SERVFAIL, refused). */
  status: 'found' | 'nxdomain' | 'nodata' | 'error';
  a: string[];
  aaaa: string[];
  /** The CNAME chain as followed, first hop first ([] when the name is not an alias). */
  cname: string[];
  /** Set for `error`. */
  error?: string;
}

export interface ZoneTransferResult {
  zone: string;
  /** The authoritative server asked (name and address). */
  server: string;
  address: string;
  ok: boolean;
  /** Owner names in the transferred zone (lower-case, no trailing dot); [] unless ok. */
  names: string[];
  records: number;
  /** Why it failed (refused, timeout, not authoritative ...); unset when ok. */
  reason?: string;
}

/**
 * A DNS client bound to a set of name servers (SCAN_DNS_SERVERS, or the system's), with per-server
 * concurrency and rate limits and a timeout on every query: no call ever waits forever.
 */
export interface DnsClient {
  /** A and AAAA of a name, following CNAMEs (bounded); one question per type. Never throws: failures are `status: 'error'`. */
  resolve(name: string): Promise<NameResolution>;
  /** NS target names ([] for no data or no such name). Throws DnsQueryError when no server answered. */
  ns(name: string): Promise<string[]>;
  /** MX exchange names. */
  mx(name: string): Promise<string[]>;
  /** SOA primary server and responsible mailbox (as a name); null when none. */
  soa(name: string): Promise<{ mname: string; rname: string } | null>;
  /** TXT records, each record's strings joined. */
  txt(name: string): Promise<string[]>;
  /** PTR names of an IPv4/IPv6 address. */
  ptr(address: string): Promise<string[]>;
  /** AXFR of `zone` from one authoritative server address, over TCP (port: the client's authoritativePort, default 53). Never throws. */
  zoneTransfer(zone: string, server: { name: string; address: string }): Promise<ZoneTransferResult>;
  /** Counters since creation, for step statistics and the benchmark. */
  stats(): { queries: number; timeouts: number; errors: number };
}

export interface DnsClientOptions {
  /** `ip` or `ip:port` entries; the system's resolvers (from /etc/resolv.conf via node:dns getServers) when empty. */
  servers?: readonly string[];
  /** Per query attempt. */
  timeoutMs?: number;
  /** Attempts per question (a timed-out UDP question is asked again, once by default). */
  tries?: number;
  /** Questions in flight per name server. */
  concurrencyPerServer?: number;
  /** Questions started per second per name server. */
  queriesPerSecondPerServer?: number;
  /** Port of authoritative servers for zone transfers (53 in the real world; tests use a loopback port). */
  authoritativePort?: number;
}

/** A wildcard zone: random labels under it resolve, to these answers. */
export interface WildcardZone {
  zone: string;
  /** Addresses (and CNAME targets) the random labels got. */
  answers: string[];
}

/** A CNAME that points at nothing, or at a service that answers "unclaimed". */
export interface TakeoverCandidate {
  name: string;
  chain: string[];
  /** `dangling-cname` (NXDOMAIN at the end of the chain) or `unclaimed-service`. */
  reason: 'dangling-cname' | 'unclaimed-service';
  /** The service the chain points at, when known (e.g. `GitHub Pages`). */
  service?: string;
  /** What showed it: the NXDOMAIN, or the body fingerprint seen. */
  evidence: string;
}

/** A host name discovery found, resolved, with every reason it was found. */
export interface DiscoveredHost {
  name: string;
  origins: NameOrigin[];
  resolution: NameResolution;
}

/** A soft failure of one source (timeout of the CT server, a refused transfer is not one: that is a result). */
export interface DiscoveryError {
  code: string;
  message: string;
  target?: string;
}

export interface DiscoveryReport {
  domain: string;
  /** In-scope names that resolve (status `found`), or whose CNAME dangles; sorted by name. */
  hosts: DiscoveredHost[];
  wildcards: WildcardZone[];
  zoneTransfers: ZoneTransferResult[];
  takeovers: TakeoverCandidate[];
  /** Names met on the way that are out of scope or excluded: never resolved further, kept as references. */
  outOfScope: Array<{ name: string; origin: NameOrigin }>;
  errors: DiscoveryError[];
  stats: {
    /** The brute-force phase alone (what the benchmark compares with gobuster). */
    bruteforce: { tried: number; found: number; ms: number };
    permutations: { tried: number; found: number };
    ct: { names: number };
    rounds: number;
    queries: number;
    /** True when maxNames stopped discovery early. */
    truncated: boolean;
  };
}

/** What one discovery run explores, and its bounds. */
export interface DiscoverOptions {
  /** The target's domain (normalised: lower-case, punycode, no trailing dot). */
  domain: string;
  /** Whether a name may be explored and recorded (see scope.ts `createNameScope`). */
  inScope: (name: string) => boolean;
  /** Labels to try under the domain (and under found names, while depth allows); may contain dots (`www.dev`). */
  wordlist: readonly string[];
  /**
   * Labels tried under names found in rounds 2 and later: a whole list under every found name multiplies fast, so
   * recursion tries the most common labels only. Default: the first RECURSION_WORDS of `wordlist`.
   */
  recursionWordlist?: readonly string[];
  /** Sources to use; all on when omitted. */
  sources?: Partial<Record<'bruteforce' | 'ct' | 'dns' | 'axfr' | 'permutations', boolean>>;
  /** Rounds of recursion: names found in round N feed brute force/permutations of round N+1 (1 = only under the domain). */
  maxDepth: number;
  /** Total in-scope names recorded; discovery stops (stats.truncated) when reached. */
  maxNames: number;
  /** Permutation guesses per round. */
  maxPermutations: number;
  /** crt.sh-compatible endpoint (`?q=%.<domain>&output=json`); unset or empty: CT is skipped. */
  ctUrl?: string;
  /** Names already known (earlier scans' certificates, links, CNAMEs); resolved and recorded with their origin. */
  seeds?: Array<{ name: string; origin: NameOrigin }>;
  /** Names resolved at once (across all servers; each server has its own limits in the DnsClient). */
  concurrency?: number;
  /** Timeout of the CT request. */
  ctTimeoutMs?: number;
  /** Stops early (scan cancelled, step deadline). */
  signal?: AbortSignal;
}
