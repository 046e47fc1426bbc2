import { isIPv4, isIPv6 } from 'node:net';
import { domainToASCII } from 'node:url';
import { ValidationError } from '../../errors.js';

export type TargetType = 'domain' | 'ip' | 'cidr' | 'url';

export interface NormalizedTarget {
  value: string;
  type: TargetType;
}

/** A scan expands a CIDR into its addresses: keep that bounded. */
export const MAX_CIDR_ADDRESSES = 1024;
const MIN_PREFIX = { 4: 22, 6: 118 } as const;
const MAX_INPUT_LENGTH = 2048;

function invalid(input: string, why: string): ValidationError {
  const shown = input.length > 80 ? `${input.slice(0, 77)}...` : input;
  return new ValidationError(`Invalid target "${shown}": ${why}`, [{ field: 'value', message: why }]);
}

/**
 * One canonical spelling per target, so the same thing added twice is one row:
 * - domain: IDN to ASCII, lower-case, one trailing dot dropped, LDH labels, at least two labels (or `localhost`);
 * - ip: canonical IPv4 / RFC 5952 IPv6 (an IPv4-mapped IPv6 address becomes IPv4);
 * - cidr: the network address and prefix, at most 1,024 addresses (a /32 or /128 is an ip);
 * - url: http or https, canonical host, default port dropped, no credentials, no fragment, no trailing slash.
 */
export function normalizeTarget(input: string): NormalizedTarget {
  const raw = typeof input === 'string' ? input.trim() : '';
  if (!raw) throw new ValidationError('Invalid target: must not be empty', [{ field: 'value', message: 'must not be empty' }]);
  if (raw.length > MAX_INPUT_LENGTH) throw invalid(raw, `must be at most ${MAX_INPUT_LENGTH} characters`);
  if (/\s/.test(raw)) throw invalid(raw, 'must not contain spaces');

  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(raw);
  if (scheme) return { value: normalizeUrl(raw, scheme[1].toLowerCase()), type: 'url' };

  const unbracketed = /^\[(.*)\]$/.exec(raw)?.[1] ?? raw;
  if (unbracketed.includes('/')) {
    if (/^[0-9a-f:.]+\/\d+$/i.test(unbracketed)) return normalizeCidr(raw, unbracketed);
    throw invalid(raw, 'a path needs a scheme: use a URL such as https://example.com/path');
  }
  const ip = parseIp(unbracketed);
  if (ip) return { value: formatIp(ip), type: 'ip' };
  if (unbracketed.includes(':')) {
    if (/^[^:]+:\d+$/.test(unbracketed)) throw invalid(raw, 'a port needs a scheme: use a URL such as http://example.com:8080');
    throw invalid(raw, 'not a valid IP address, domain name or URL');
  }
  return { value: normalizeDomain(raw, raw), type: 'domain' };
}

// ---------------------------------------------------------------- domains

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** The WHATWG host parser reads a name whose last label is numeric (1.2.3, 0x7f.1) as an IPv4 address. */
function endsInNumber(host: string): boolean {
  const labels = host.replace(/\.$/, '').split('.');
  const last = labels[labels.length - 1];
  return /^\d+$/.test(last) || /^0x[0-9a-f]*$/i.test(last);
}

function normalizeDomain(shown: string, host: string): string {
  if (host.includes('*')) throw invalid(shown, 'wildcards are not supported: add the domain itself');
  if (endsInNumber(host)) throw invalid(shown, 'not a valid IP address or domain name');
  if (host.includes('@')) throw invalid(shown, 'not a valid domain name');
  const ascii = domainToASCII(host).toLowerCase();
  if (!ascii) throw invalid(shown, 'not a valid domain name');
  const name = ascii.endsWith('.') ? ascii.slice(0, -1) : ascii;
  if (name.length > 253) throw invalid(shown, 'a domain name has at most 253 characters');
  const labels = name.split('.');
  for (const label of labels) {
    if (!label) throw invalid(shown, 'a domain name has no empty labels');
    if (label.length > 63) throw invalid(shown, 'a domain label has at most 63 characters');
    if (!LABEL.test(label)) throw invalid(shown, `label "${label}" may hold only letters, digits and inner hyphens`);
  }
  if (labels.length < 2 && name !== 'localhost') throw invalid(shown, 'a domain needs at least two labels (e.g. example.com)');
  if (/^\d+$/.test(labels[labels.length - 1])) throw invalid(shown, 'the top-level label must not be numeric');
  return name;
}

// ---------------------------------------------------------------- IP addresses

interface IpAddress {
  version: 4 | 6;
  /** 4 or 16 bytes. */
  bytes: number[];
}

function parseIpv4(text: string): number[] | null {
  // net.isIPv4 refuses leading zeros, hex and short forms: no octal surprises.
  return isIPv4(text) ? text.split('.').map(Number) : null;
}

function parseIpv6(text: string): number[] | null {
  if (!isIPv6(text) || text.includes('%')) return null;
  let head = text;
  let tail: number[] = [];
  const v4 = /:(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const parsed = parseIpv4(v4[1]);
    if (!parsed) return null;
    tail = [(parsed[0] << 8) | parsed[1], (parsed[2] << 8) | parsed[3]];
    head = text.slice(0, -v4[1].length);
    if (head.endsWith(':') && !head.endsWith('::')) head = head.slice(0, -1);
  }
  const groupsOf = (part: string) => (part ? part.split(':').map((group) => parseInt(group, 16)) : []);
  let groups: number[];
  if (head.includes('::')) {
    const [left, right] = head.split('::');
    const l = groupsOf(left);
    const r = groupsOf(right);
    groups = [...l, ...new Array(8 - l.length - r.length - tail.length).fill(0), ...r, ...tail];
  } else {
    groups = [...groupsOf(head), ...tail];
  }
  if (groups.length !== 8) return null;
  return groups.flatMap((group) => [group >> 8, group & 0xff]);
}

function isV4Mapped(bytes: number[]): boolean {
  return bytes.length === 16 && bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
}

function parseIp(text: string): IpAddress | null {
  const v4 = parseIpv4(text);
  if (v4) return { version: 4, bytes: v4 };
  const v6 = parseIpv6(text);
  if (!v6) return null;
  return isV4Mapped(v6) ? { version: 4, bytes: v6.slice(12) } : { version: 6, bytes: v6 };
}

/** IPv4 dotted quad; IPv6 per RFC 5952 (lower-case, no leading zeros, the longest zero run of two or more as ::). */
function formatIp(ip: IpAddress): string {
  if (ip.version === 4) return ip.bytes.join('.');
  const groups = Array.from({ length: 8 }, (_, i) => (ip.bytes[2 * i] << 8) | ip.bytes[2 * i + 1]);
  let bestStart = -1;
  let bestLength = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i += 1;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j += 1;
    if (j - i > bestLength) [bestStart, bestLength] = [i, j - i];
    i = j;
  }
  const hex = groups.map((group) => group.toString(16));
  if (bestLength < 2) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}

// ---------------------------------------------------------------- CIDR

function normalizeCidr(shown: string, text: string): NormalizedTarget {
  const [addressText, prefixText] = text.split('/');
  const parsed = parseIpv4(addressText)
    ? { version: 4 as const, bytes: parseIpv4(addressText)! }
    : parseIpv6(addressText)
      ? { version: 6 as const, bytes: parseIpv6(addressText)! }
      : null;
  if (!parsed) throw invalid(shown, `"${addressText}" is not a valid IP address`);
  let prefix = Number(prefixText);
  let ip: IpAddress = parsed;
  const bits = parsed.version === 4 ? 32 : 128;
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > bits) throw invalid(shown, `the prefix length must be between 0 and ${bits}`);
  if (isV4Mapped(parsed.bytes) && prefix >= 96) {
    ip = { version: 4, bytes: parsed.bytes.slice(12) };
    prefix -= 96;
  }
  const total = ip.version === 4 ? 32 : 128;
  const minPrefix = MIN_PREFIX[ip.version];
  if (prefix < minPrefix) {
    const size = 1n << BigInt(total - prefix);
    throw invalid(
      shown,
      `the range holds ${size.toLocaleString('en-US')} addresses; at most ${MAX_CIDR_ADDRESSES.toLocaleString('en-US')} are allowed (IPv${ip.version} /${minPrefix} or longer)`,
    );
  }
  const network = ip.bytes.map((byte, i) => {
    const keep = Math.min(8, Math.max(0, prefix - 8 * i));
    return byte & ((0xff << (8 - keep)) & 0xff);
  });
  const address = formatIp({ version: ip.version, bytes: network });
  // A single address is an ip target: 10.0.0.1/32 and 10.0.0.1 are the same thing.
  if (prefix === total) return { value: address, type: 'ip' };
  return { value: `${address}/${prefix}`, type: 'cidr' };
}

// ---------------------------------------------------------------- URLs

function normalizeUrl(raw: string, scheme: string): string {
  if (scheme !== 'http' && scheme !== 'https') throw invalid(raw, `the URL scheme "${scheme}" is not supported: use http:// or https://`);
  const afterScheme = raw.slice(scheme.length + 3);
  const authorityEnd = afterScheme.search(/[/?#]/);
  const authority = authorityEnd === -1 ? afterScheme : afterScheme.slice(0, authorityEnd);
  const rest = authorityEnd === -1 ? '' : afterScheme.slice(authorityEnd);
  if (authority.includes('@')) throw invalid(raw, 'a URL must not carry credentials (user:password@)');
  // host[:port] or [v6][:port]
  const match = /^(\[[^\]]*\]|[^:]*)(?::(\d*))?$/.exec(authority);
  if (!match?.[1]) throw invalid(raw, 'the URL has no valid host');
  const rawHost = match[1];
  let host: string;
  if (rawHost.startsWith('[')) {
    const ip = parseIp(rawHost.slice(1, -1));
    if (!ip) throw invalid(raw, 'the URL host is not a valid IPv6 address');
    host = ip.version === 6 ? `[${formatIp(ip)}]` : formatIp(ip);
  } else {
    const ip = parseIp(rawHost);
    host = ip ? formatIp(ip) : normalizeDomain(raw, rawHost);
  }
  let url: URL;
  try {
    url = new URL(`${scheme}://${host}${match[2] ? `:${match[2]}` : ''}${rest}`);
  } catch {
    throw invalid(raw, 'not a valid URL');
  }
  const path = url.pathname.replace(/\/+$/, '');
  // url.host leaves out the default port of the scheme.
  return `${url.protocol}//${url.host}${path}${url.search}`;
}
