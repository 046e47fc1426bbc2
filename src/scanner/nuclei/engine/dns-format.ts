/**
 * DNS messages and records in the text form nuclei's templates match on: miekg/dns's `Msg.String()`,
 * `RR.String()` (owner, TTL, class, type and data separated by tabs, names with their trailing dot) and
 * `Question.String()`. Templates look for things like "IN\tCNAME\t" or "\"v=spf1", so the layout matters.
 */
import ipaddr from 'ipaddr.js';
import type { DnsMessage, DnsRecord } from '../types.js';

const RCODES = ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED', 'YXDOMAIN', 'YXRRSET', 'NXRRSET', 'NOTAUTH', 'NOTZONE'];
const OPCODES = ['QUERY', 'IQUERY', 'STATUS', '', 'NOTIFY', 'UPDATE'];

export function rcodeNumber(rcode: string | undefined): number {
  const i = RCODES.indexOf((rcode ?? 'NOERROR').toUpperCase());
  return i === -1 ? Number(/^RCODE_(\d+)$/i.exec(rcode ?? '')?.[1] ?? 0) : i;
}

/** Names as miekg prints them: absolute, with the trailing dot ("." for the root). */
export function fqdn(name: string | undefined): string {
  const n = name ?? '';
  if (n === '' || n === '.') return '.';
  return n.endsWith('.') ? n : `${n}.`;
}

/** A TXT/CAA character-string: quoted; `"` and `\` escaped; bytes outside printable ASCII as \DDD. */
function quoted(bytes: Uint8Array): string {
  let out = '"';
  for (const b of bytes) {
    if (b === 0x22 || b === 0x5c) out += `\\${String.fromCharCode(b)}`;
    else if (b < 0x20 || b > 0x7e) out += `\\${String(b).padStart(3, '0')}`;
    else out += String.fromCharCode(b);
  }
  return `${out}"`;
}

function bytesOf(v: unknown): Uint8Array {
  if (v instanceof Uint8Array) return v;
  return Buffer.from(String(v ?? ''), 'utf8');
}

function hex(v: unknown): string {
  return Buffer.from(bytesOf(v)).toString('hex');
}

function ipv6(text: string): string {
  try {
    const parsed = ipaddr.IPv6.parse(text);
    // Go prints IPv4-mapped addresses with a dotted tail
    return parsed.isIPv4MappedAddress() ? `::ffff:${parsed.toIPv4Address().toString()}` : parsed.toString();
  } catch {
    return text;
  }
}

/** The data part of a record (what follows the header). */
export function rdataString(rr: DnsRecord): string {
  const d = rr.data as never as Record<string, unknown> & unknown;
  switch (rr.type) {
    case 'A':
      return String(rr.data);
    case 'AAAA':
      return ipv6(String(rr.data));
    case 'CNAME':
    case 'NS':
    case 'PTR':
    case 'DNAME':
      return fqdn(String(rr.data));
    case 'MX':
      return `${d.preference} ${fqdn(String(d.exchange))}`;
    case 'TXT':
    case 'SPF': {
      const parts = Array.isArray(rr.data) ? rr.data : [rr.data];
      return parts.map((p) => quoted(bytesOf(p))).join(' ');
    }
    case 'SOA':
      return `${fqdn(String(d.mname))} ${fqdn(String(d.rname))} ${d.serial} ${d.refresh} ${d.retry} ${d.expire} ${d.minimum}`;
    case 'SRV':
      return `${d.priority} ${d.weight} ${d.port} ${fqdn(String(d.target))}`;
    case 'CAA':
      return `${Number(d.flags ?? 0)} ${d.tag} ${quoted(bytesOf(d.value))}`;
    case 'DS':
      return `${d.keyTag} ${d.algorithm} ${d.digestType} ${hex(d.digest).toUpperCase()}`;
    case 'TLSA':
      return `${d.usage} ${d.selector} ${d.matchingType} ${hex(d.certificate)}`;
    case 'HINFO':
      return `${quoted(bytesOf(d.cpu))} ${quoted(bytesOf(d.os))}`;
    case 'DNSKEY':
      return `${d.flags} 3 ${d.algorithm} ${Buffer.from(bytesOf(d.key)).toString('base64')}`;
    default: {
      // RFC 3597 form, as miekg prints types it has no parser for
      const raw = bytesOf(rr.data instanceof Uint8Array ? rr.data : Buffer.alloc(0));
      return `\\# ${raw.length}${raw.length ? ` ${Buffer.from(raw).toString('hex')}` : ''}`;
    }
  }
}

function className(c: string | undefined): string {
  return (c ?? 'IN').toUpperCase();
}

/** miekg RR_Header.String(). */
export function headerString(rr: DnsRecord): string {
  return `${fqdn(rr.name)}\t${rr.ttl ?? 0}\t${className(rr.class)}\t${rr.type}\t`;
}

/** miekg OPT.String(). */
function optString(rr: DnsRecord): string {
  const flags = rr.flag_do || ((rr.flags ?? 0) & 0x8000) !== 0 ? 'flags: do; ' : 'flags:; ';
  return `\n;; OPT PSEUDOSECTION:\n; EDNS: version ${rr.ednsVersion ?? 0}; ${flags}udp: ${rr.udpPayloadSize ?? 0}`;
}

/** miekg RR.String(). */
export function recordString(rr: DnsRecord): string {
  if (rr.type === 'OPT') return optString(rr);
  return headerString(rr) + rdataString(rr);
}

/** miekg rrToString: records concatenated with nothing in between. */
export function recordsString(records: DnsRecord[] | undefined): string {
  return (records ?? []).map(recordString).join('');
}

/** miekg Question.String(). */
export function questionString(questions: DnsMessage['questions']): string {
  return (questions ?? []).map((q) => `;${fqdn(q.name)}\t${className(q.class)}\t ${q.type}`).join('');
}

/** miekg Msg.String(). */
export function messageString(msg: DnsMessage, rcode = msg.rcode ?? 'NOERROR'): string {
  const flags = msg.flags ?? 0;
  const qr = msg.type === 'response';
  let s = `;; opcode: ${OPCODES[(flags >> 11) & 0xf] || String((flags >> 11) & 0xf)}, status: ${rcode.toUpperCase()}, id: ${msg.id ?? 0}\n`;
  s += ';; flags:';
  if (qr) s += ' qr';
  if (flags & 0x400) s += ' aa';
  if (flags & 0x200) s += ' tc';
  if (flags & 0x100) s += ' rd';
  if (flags & 0x80) s += ' ra';
  if (flags & 0x40) s += ' z';
  if (flags & 0x20) s += ' ad';
  if (flags & 0x10) s += ' cd';
  const questions = msg.questions ?? [];
  const answers = msg.answers ?? [];
  const authorities = msg.authorities ?? [];
  const additionals = msg.additionals ?? [];
  s += `; QUERY: ${questions.length}, ANSWER: ${answers.length}, AUTHORITY: ${authorities.length}, ADDITIONAL: ${additionals.length}\n`;
  const opt = additionals.find((r) => r.type === 'OPT');
  if (opt) s += `${optString(opt)}\n`;
  if (questions.length) s += `\n;; QUESTION SECTION:\n${questions.map((q) => `${questionString([q])}\n`).join('')}`;
  if (answers.length) s += `\n;; ANSWER SECTION:\n${answers.map((r) => `${recordString(r)}\n`).join('')}`;
  if (authorities.length) s += `\n;; AUTHORITY SECTION:\n${authorities.map((r) => `${recordString(r)}\n`).join('')}`;
  if (additionals.length > (opt ? 1 : 0)) {
    s += `\n;; ADDITIONAL SECTION:\n${additionals
      .filter((r) => r.type !== 'OPT')
      .map((r) => `${recordString(r)}\n`)
      .join('')}`;
  }
  return s;
}

/** nuclei recordsKeyValue: `<lowercase type>` → data without the header and trailing dot; repeated types become lists. */
export function recordsKeyValue(records: DnsRecord[] | undefined): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
  for (const rr of records ?? []) {
    if (rr.type === 'OPT') continue;
    const key = rr.type.toLowerCase();
    const value = rdataString(rr).replace(/\.$/, '');
    const previous = out[key];
    if (previous === undefined) out[key] = value;
    else out[key] = Array.isArray(previous) ? [...previous, value] : [previous, value];
  }
  return out;
}
