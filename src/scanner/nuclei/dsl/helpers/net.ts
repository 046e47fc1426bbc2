/** Address helpers: ip_format (mapcidr's AlterIP notations) and rand_ip (a random address of a CIDR). */
import { randomBytes, randomInt } from 'node:crypto';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { DslEvalError } from '../ast.js';
import { bytes, def, INF, S } from './registry.js';

/** An address as Go's net.IP: 4 bytes for IPv4, 16 for IPv6. Invalid input is an error (nuclei prints "<nil>" or panics). */
function parseIp(text: string): Uint8Array {
  const family = isIP(text);
  if (family === 0 || text.includes('%')) throw new DslEvalError(`'${text}' is not an IP address`);
  // ipaddr.js reads "::1.2.3.4" as ::ffff:1.2.3.4; Go (and RFC 4291) read it as ::102:304
  const normalised = /^::[0-9]+\./.test(text) ? `0${text}` : text;
  return Uint8Array.from(ipaddr.parse(normalised).toByteArray());
}

const isMappedV4 = (b: Uint8Array) => b.length === 16 && b.slice(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff;

/** Go's To4: the IPv4 bytes of an IPv4 or IPv4-mapped address. */
function to4(b: Uint8Array): Uint8Array | undefined {
  if (b.length === 4) return b;
  return isMappedV4(b) ? b.slice(12) : undefined;
}

/** Go's net.IP.String(): dotted quad for IPv4 (and IPv4-mapped), RFC 5952 otherwise. */
function goIpString(b: Uint8Array): string {
  const v4 = to4(b);
  if (v4) return [...v4].join('.');
  return (ipaddr.fromByteArray([...b]) as ipaddr.IPv6).toRFC5952String();
}

const last4 = (b: Uint8Array) => (b.length === 4 ? b : b.slice(12));
const hex = (n: number) => `0x${n.toString(16)}`;
/** Go's %#o: a leading 0 unless the digits already start with one; width pads with zeros first. */
const octal = (n: number, width = 0) => {
  const digits = n.toString(8).padStart(width, '0');
  return digits[0] === '0' ? digits : `0${digits}`;
};

function toBigInt(b: Uint8Array): bigint {
  const v = to4(b) ?? b;
  return v.reduce((acc, x) => (acc << 8n) | BigInt(x), 0n);
}

function alterIp(input: string, format: string): string | undefined {
  const ip = parseIp(input);
  const standard = goIpString(ip);
  const [a, b, c, d] = last4(ip);
  switch (format) {
    case '1':
      return standard;
    case '2':
      // mapcidr's regexes, kept as they are: they drop every "0." run and a trailing ".0" run
      return standard.replace(/[0]+\./gm, '').replace(/\.[0^]+$/m, '');
    case '3':
      return `${octal(a, 4)}.${octal(b)}.${octal(c)}.${octal(d)}`;
    case '4':
      return `${hex(a)}.${hex(b)}.${hex(c)}.${hex(d)}`;
    case '5':
      return toBigInt(ip).toString();
    case '6':
      return toBigInt(ip).toString(2);
    case '7':
      return `${hex(a)}.${b}.${octal(c)}.${hex(d)}`;
    case '8':
      if (to4(ip))
        return `::ffff:${[a, b].map((x) => x.toString(16).padStart(2, '0')).join('')}:${[c, d].map((x) => x.toString(16).padStart(2, '0')).join('')}`;
      return standard;
    case '9':
      return [...bytes(input)].map((x) => `%${x.toString(16).toUpperCase().padStart(2, '0')}`).join('');
    case '10': {
      const parts = standard.split('.');
      if (parts.length !== 4) throw new DslEvalError('ip_format 10 (zero padding) needs an IPv4 address');
      return parts.map((p) => p.padStart(3, '0')).join('.');
    }
    case '11': {
      const parts = standard.split('.');
      if (parts.length !== 4 || parts[3] !== '0') return undefined;
      return `${parts[0]}.${parts[1]}.${Number(parts[2]) + 255}`;
    }
    default:
      return undefined;
  }
}

/** ip_format(ip, index): one of mapcidr's eleven notations of an address (the first one it gives for index 4). */
def('ip_format', 2, 2, ([ip, index]) => {
  const format = S(index);
  if (!/^[+-]?[0-9]+$/.test(format)) throw new DslEvalError(`strconv.ParseInt: parsing "${format}": invalid syntax`);
  const n = Number(format);
  if (n <= 0 || n > 11) throw new DslEvalError('invalid format, format must be in range 1-11');
  const out = alterIp(S(ip), format);
  if (out === undefined) throw new DslEvalError('no formatted IP returned');
  return out;
});

/** Go's net.ParseCIDR: address/prefix, the prefix within the family's bits. */
function parseCidr(cidr: string): { ip: Uint8Array; bits: number } {
  const slash = cidr.lastIndexOf('/');
  const prefix = cidr.slice(slash + 1);
  if (slash < 0 || !/^[0-9]+$/.test(prefix)) throw new DslEvalError(`${cidr} is not a valid cidr`);
  let ip: Uint8Array;
  try {
    ip = parseIp(cidr.slice(0, slash));
  } catch {
    throw new DslEvalError(`${cidr} is not a valid cidr`);
  }
  const bits = Number(prefix);
  if (bits > ip.length * 8) throw new DslEvalError(`${cidr} is not a valid cidr`);
  return { ip, bits };
}

/**
 * rand_ip(cidr, ...): a random address of one of the CIDRs (picked at random), as nuclei: host bits random,
 * never the network address itself (255 tries), and a /32 or /128 gives its address. It only makes a string:
 * where requests go is still decided by the scan's scope guard.
 */
def('rand_ip', 1, INF, (args) => {
  const pick = args[randomInt(args.length)];
  if (typeof pick !== 'string') throw new DslEvalError('rand_ip: the CIDR must be a string');
  const { ip, bits } = parseCidr(pick);
  if (bits === ip.length * 8) return goIpString(ip);
  const network = ip.map((x, i) => {
    const keep = Math.max(0, Math.min(8, bits - i * 8));
    return x & ((0xff << (8 - keep)) & 0xff);
  });
  let out = network;
  for (let attempt = 0; attempt < 255; attempt++) {
    const r = randomBytes(ip.length);
    out = network.map((x, i) => {
      const keep = Math.max(0, Math.min(8, bits - i * 8));
      return x | (r[i] & (0xff >> keep));
    });
    if (out.some((x, i) => x !== network[i])) break;
  }
  return goIpString(out);
});
