/**
 * Zone data and the lookup rules of an authoritative name server (RFC 1034 §4.3.2, RFC 4592 wildcards),
 * for the loopback test DNS server (dns-server.ts). Pure functions: no sockets here.
 *
 * Simplifications, on purpose: no delegation (an NS record below the apex is plain data, never a referral),
 * no DNSSEC, class IN only.
 */
import type { Answer, MxData, SoaData } from 'dns-packet';

export type ZoneRecord =
  | { name: string; type: 'A' | 'AAAA' | 'CNAME' | 'NS' | 'PTR'; data: string; ttl?: number }
  | { name: string; type: 'MX'; data: MxData; ttl?: number }
  | { name: string; type: 'SOA'; data: SoaData; ttl?: number }
  /** One string per character-string; a single string may exceed 255 bytes only if you split it yourself. */
  | { name: string; type: 'TXT'; data: string | string[]; ttl?: number };

export interface ZoneDefinition {
  /** The apex, e.g. `example.test`. */
  origin: string;
  /**
   * Names in data (CNAME, NS, PTR targets, MX exchanges) are always absolute, trailing dot optional.
   * Owner names: `@` (the apex), absolute (`www.example.test`, or anything with a trailing dot) or relative
   * to the origin (`www`). An SOA is made up (ns1.<origin>, hostmaster.<origin>) when the zone has none.
   */
  records: ZoneRecord[];
  /** Answer AXFR over TCP (otherwise REFUSED). */
  allowTransfer?: boolean;
}

export interface Zone {
  origin: string;
  allowTransfer: boolean;
  soa: Answer;
  /** Owner name → its records (names normalised). */
  byName: Map<string, Answer[]>;
  /** Every name that exists: owners and their ancestors up to the apex (empty non-terminals, RFC 4592 §2.2.2). */
  existing: Set<string>;
  /** Records in zone order (SOA first), for AXFR. */
  all: Answer[];
}

export type Rcode = 'NOERROR' | 'FORMERR' | 'SERVFAIL' | 'NXDOMAIN' | 'NOTIMP' | 'REFUSED';

export interface LookupResult {
  rcode: Rcode;
  /** The first owner name is in one of our zones. */
  authoritative: boolean;
  answers: Answer[];
  authorities: Answer[];
}

const DEFAULT_TTL = 300;
/** A CNAME chain inside our own zones is followed at most this far (a loop stops here too). */
const MAX_CHAIN = 16;

export function normalizeName(name: string): string {
  const lower = name.trim().toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

function ownerName(name: string, origin: string): string {
  const raw = name.trim();
  if (raw === '@' || raw === '') return origin;
  const lower = normalizeName(raw);
  if (raw.endsWith('.') || lower === origin || lower.endsWith(`.${origin}`)) return lower;
  return `${lower}.${origin}`;
}

export function buildZone(definition: ZoneDefinition): Zone {
  const origin = normalizeName(definition.origin);
  if (!origin) throw new TypeError('zone origin must not be empty');
  const byName = new Map<string, Answer[]>();
  const existing = new Set<string>([origin]);
  let soa: Answer | undefined;
  const rest: Answer[] = [];
  for (const record of definition.records) {
    const name = ownerName(record.name, origin);
    if (name !== origin && !name.endsWith(`.${origin}`)) throw new TypeError(`record ${record.name} is outside zone ${origin}`);
    const answer = { name, type: record.type, ttl: record.ttl ?? DEFAULT_TTL, class: 'IN', data: record.data } as Answer;
    if (record.type === 'SOA') {
      if (name !== origin) throw new TypeError(`SOA must be at the apex of ${origin}, not at ${name}`);
      soa = answer;
      continue;
    }
    const list = byName.get(name) ?? [];
    if (record.type === 'CNAME' ? list.length > 0 : list.some((other) => other.type === 'CNAME')) {
      throw new TypeError(`${name}: a CNAME cannot coexist with other records (RFC 1034 §3.6.2)`);
    }
    list.push(answer);
    byName.set(name, list);
    rest.push(answer);
    for (let at = name; at !== origin; at = at.slice(at.indexOf('.') + 1)) existing.add(at);
  }
  soa ??= {
    name: origin,
    type: 'SOA',
    ttl: DEFAULT_TTL,
    class: 'IN',
    data: { mname: `ns1.${origin}`, rname: `hostmaster.${origin}`, serial: 1, refresh: 3600, retry: 600, expire: 86400, minimum: 60 },
  };
  byName.set(origin, [soa, ...(byName.get(origin) ?? [])]);
  return { origin, allowTransfer: definition.allowTransfer ?? false, soa, byName, existing, all: [soa, ...rest] };
}

/** The zone with the longest origin containing `name`, or undefined. */
export function findZone(zones: readonly Zone[], name: string): Zone | undefined {
  let best: Zone | undefined;
  for (const zone of zones) {
    if ((name === zone.origin || name.endsWith(`.${zone.origin}`)) && (!best || zone.origin.length > best.origin.length)) best = zone;
  }
  return best;
}

/** The records owning `name`: its own, or those of the wildcard at its closest encloser (RFC 4592 §3.3.1). */
function recordsAt(zone: Zone, name: string): Answer[] | 'nxdomain' {
  const own = zone.byName.get(name);
  if (own) return own;
  if (zone.existing.has(name)) return []; // empty non-terminal: exists, no data, never wildcard-matched
  let encloser = name;
  while (encloser !== zone.origin && !zone.existing.has(encloser)) encloser = encloser.slice(encloser.indexOf('.') + 1);
  const wildcard = zone.byName.get(`*.${encloser}`);
  if (!wildcard) return 'nxdomain';
  return wildcard.map((record) => ({ ...record, name }) as Answer);
}

/** Answers a standard query the way an authoritative server does, following CNAMEs through our own zones. */
export function lookup(zones: readonly Zone[], qname: string, qtype: string): LookupResult {
  const first = findZone(zones, qname);
  if (!first) return { rcode: 'REFUSED', authoritative: false, answers: [], authorities: [] };
  const answers: Answer[] = [];
  const seen = new Set<string>();
  let zone = first;
  let name = qname;
  for (let hop = 0; hop < MAX_CHAIN; hop++) {
    seen.add(name);
    const records = recordsAt(zone, name);
    if (records === 'nxdomain') return { rcode: 'NXDOMAIN', authoritative: true, answers, authorities: [zone.soa] };
    const matching = records.filter((record) => record.type === qtype || qtype === 'ANY');
    if (matching.length > 0) return { rcode: 'NOERROR', authoritative: true, answers: [...answers, ...matching], authorities: [] };
    const cname = records.find((record) => record.type === 'CNAME');
    if (!cname) return { rcode: 'NOERROR', authoritative: true, answers, authorities: [zone.soa] };
    answers.push(cname);
    const target = normalizeName((cname as { data: string }).data);
    const next = findZone(zones, target);
    // A target elsewhere is the resolver's business; a loop ends like a real server's: with what we have.
    if (!next || seen.has(target)) return { rcode: 'NOERROR', authoritative: true, answers, authorities: [] };
    zone = next;
    name = target;
  }
  return { rcode: 'NOERROR', authoritative: true, answers, authorities: [] };
}

/** The AXFR answer (SOA, every other record, SOA) cut into messages of at most `perMessage` records. */
export function transferMessages(zone: Zone, perMessage: number): Answer[][] {
  const records = [...zone.all, zone.soa];
  const messages: Answer[][] = [];
  for (let at = 0; at < records.length; at += perMessage) messages.push(records.slice(at, at + perMessage));
  return messages;
}
