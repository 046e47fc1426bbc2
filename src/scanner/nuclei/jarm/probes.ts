/**
 * The ten JARM ClientHellos (salesforce/jarm, as hdm/jarm-go which nuclei uses): record version, cipher list and
 * order, GREASE, ALPN list and order, supported_versions. Built byte for byte as the reference; the random parts
 * (client random, session id, key share, GREASE values) come from node:crypto and do not change the fingerprint.
 */
import { randomBytes, randomInt } from 'node:crypto';

type Order = 'FORWARD' | 'REVERSE' | 'TOP_HALF' | 'BOTTOM_HALF' | 'MIDDLE_OUT';

export interface JarmProbe {
  /** `tls11` / `tls12`: that version in record and hello; `tls13`: record 3.1, hello 3.3, supported_versions. */
  version: 'tls11' | 'tls12' | 'tls13';
  /** `all`: the full list (TLS 1.3 suites included); `no13`: without the five TLS 1.3 suites. */
  ciphers: 'all' | 'no13';
  cipherOrder: Order;
  grease: boolean;
  /** Rare ALPN: the list without http/1.1 and h2. */
  rareAlpn: boolean;
  /** supported_versions: `1.2` lists 3.1-3.3, `1.3` adds 3.4, `none` leaves the extension out (unless TLS 1.3). */
  versions: '1.2' | '1.3' | 'none';
  /** Order of the ALPN and supported_versions lists. */
  extensionOrder: 'FORWARD' | 'REVERSE';
}

const p = (
  version: JarmProbe['version'],
  ciphers: JarmProbe['ciphers'],
  cipherOrder: Order,
  grease: boolean,
  rareAlpn: boolean,
  versions: JarmProbe['versions'],
  extensionOrder: JarmProbe['extensionOrder'],
): JarmProbe => ({ version, ciphers, cipherOrder, grease, rareAlpn, versions, extensionOrder });

/** The probes in the reference's order (the fingerprint's positions follow it). */
export const JARM_PROBES: readonly JarmProbe[] = [
  p('tls12', 'all', 'FORWARD', false, false, '1.2', 'REVERSE'),
  p('tls12', 'all', 'REVERSE', false, false, '1.2', 'FORWARD'),
  p('tls12', 'all', 'TOP_HALF', false, false, 'none', 'FORWARD'),
  p('tls12', 'all', 'BOTTOM_HALF', false, true, 'none', 'FORWARD'),
  p('tls12', 'all', 'MIDDLE_OUT', true, true, 'none', 'REVERSE'),
  p('tls11', 'all', 'FORWARD', false, false, 'none', 'FORWARD'),
  p('tls13', 'all', 'FORWARD', false, false, '1.3', 'REVERSE'),
  p('tls13', 'all', 'REVERSE', false, false, '1.3', 'FORWARD'),
  p('tls13', 'no13', 'FORWARD', false, false, '1.3', 'FORWARD'),
  p('tls13', 'all', 'MIDDLE_OUT', true, false, '1.3', 'REVERSE'),
];

/** Cipher suites offered (`all`), weakest-first order of the reference; `no13` drops 0x1301-0x1305. */
const ALL_CIPHERS = [
  0x0016, 0x0033, 0x0067, 0xc09e, 0xc0a2, 0x009e, 0x0039, 0x006b, 0xc09f, 0xc0a3, 0x009f, 0x0045, 0x00be, 0x0088, 0x00c4, 0x009a, 0xc008, 0xc009, 0xc023,
  0xc0ac, 0xc0ae, 0xc02b, 0xc00a, 0xc024, 0xc0ad, 0xc0af, 0xc02c, 0xc072, 0xc073, 0xcca9, 0x1302, 0x1301, 0xcc14, 0xc007, 0xc012, 0xc013, 0xc027, 0xc02f,
  0xc014, 0xc028, 0xc030, 0xc060, 0xc061, 0xc076, 0xc077, 0xcca8, 0x1305, 0x1304, 0x1303, 0xcc13, 0xc011, 0x000a, 0x002f, 0x003c, 0xc09c, 0xc0a0, 0x009c,
  0x0035, 0x003d, 0xc09d, 0xc0a1, 0x009d, 0x0041, 0x00ba, 0x0084, 0x00c0, 0x0007, 0x0004, 0x0005,
];
const TLS13_SUITES = new Set([0x1301, 0x1302, 0x1303, 0x1304, 0x1305]);

const ALPN_ALL = ['http/0.9', 'http/1.0', 'http/1.1', 'spdy/1', 'spdy/2', 'spdy/3', 'h2', 'h2c', 'hq'];
const ALPN_RARE = ['http/0.9', 'http/1.0', 'spdy/1', 'spdy/2', 'spdy/3', 'h2c', 'hq'];

/** The reference's list reorderings (it applies them to ciphers, ALPN names and versions alike). */
export function reorder<T>(list: readonly T[], order: Order): T[] {
  const n = list.length;
  const half = Math.floor(n / 2);
  switch (order) {
    case 'FORWARD':
      return [...list];
    case 'REVERSE':
      return [...list].reverse();
    case 'BOTTOM_HALF':
      // an odd list leaves its middle element out
      return list.slice(n % 2 === 1 ? half + 1 : half);
    case 'TOP_HALF':
      // the first half backwards, preceded by the middle element of an odd list
      return [...(n % 2 === 1 ? [list[half]!] : []), ...reorder(reorder(list, 'REVERSE'), 'BOTTOM_HALF')];
    case 'MIDDLE_OUT': {
      const out: T[] = [];
      if (n % 2 === 1) {
        out.push(list[half]!);
        for (let i = 1; i <= half; i++) out.push(list[half + i]!, list[half - i]!);
      } else {
        for (let i = 1; i <= half; i++) out.push(list[half - 1 + i]!, list[half - i]!);
      }
      return out;
    }
  }
}

/** A GREASE value (RFC 8701): 0x?a?a with the same nibble twice. */
function grease(): Buffer {
  const b = 0x0a + (randomInt(16) << 4);
  return Buffer.from([b, b]);
}

const u16 = (n: number) => Buffer.from([(n >> 8) & 0xff, n & 0xff]);

function cipherBytes(probe: JarmProbe): Buffer {
  const base = probe.ciphers === 'all' ? ALL_CIPHERS : ALL_CIPHERS.filter((c) => !TLS13_SUITES.has(c));
  const parts: Buffer[] = reorder(base, probe.cipherOrder).map(u16);
  if (probe.grease) parts.unshift(grease());
  return Buffer.concat(parts);
}

function serverName(host: string): Buffer {
  const name = Buffer.from(host, 'utf8');
  return Buffer.concat([Buffer.from([0x00, 0x00]), u16(name.length + 5), u16(name.length + 3), Buffer.from([0x00]), u16(name.length), name]);
}

function alpn(probe: JarmProbe): Buffer {
  const names = reorder(probe.rareAlpn ? ALPN_RARE : ALPN_ALL, probe.extensionOrder);
  const list = Buffer.concat(names.map((n) => Buffer.concat([Buffer.from([n.length]), Buffer.from(n, 'latin1')])));
  return Buffer.concat([Buffer.from([0x00, 0x10]), u16(list.length + 2), u16(list.length), list]);
}

function keyShare(withGrease: boolean): Buffer {
  // x25519 share of random bytes; with GREASE a one-byte share of a GREASE group comes first
  const shares = Buffer.concat([...(withGrease ? [grease(), Buffer.from([0x00, 0x01, 0x00])] : []), Buffer.from([0x00, 0x1d, 0x00, 0x20]), randomBytes(32)]);
  return Buffer.concat([Buffer.from([0x00, 0x33]), u16(shares.length + 2), u16(shares.length), shares]);
}

function supportedVersions(probe: JarmProbe, withGrease: boolean): Buffer {
  const versions = probe.versions === '1.2' ? [0x0301, 0x0302, 0x0303] : [0x0301, 0x0302, 0x0303, 0x0304];
  const list = Buffer.concat([...(withGrease ? [grease()] : []), ...reorder(versions, probe.extensionOrder).map(u16)]);
  return Buffer.concat([Buffer.from([0x00, 0x2b]), u16(list.length + 1), Buffer.from([list.length]), list]);
}

// fixed extensions, in the reference's order around the variable ones
const EXTENDED_MASTER_SECRET = Buffer.from('00170000', 'hex');
const MAX_FRAGMENT_LENGTH = Buffer.from('0001000101', 'hex');
const RENEGOTIATION_INFO = Buffer.from('ff01000100', 'hex');
const SUPPORTED_GROUPS = Buffer.from('000a000a0008001d001700180019', 'hex');
const EC_POINT_FORMATS = Buffer.from('000b00020100', 'hex');
const SESSION_TICKET = Buffer.from('00230000', 'hex');
const SIGNATURE_ALGORITHMS = Buffer.from('000d00140012040308040401050308050501080606010201', 'hex');
const PSK_KEY_EXCHANGE_MODES = Buffer.from('002d00020101', 'hex');

function extensions(probe: JarmProbe, host: string): Buffer {
  const parts: Buffer[] = [];
  if (probe.grease) parts.push(grease(), Buffer.from([0x00, 0x00]));
  parts.push(serverName(host), EXTENDED_MASTER_SECRET, MAX_FRAGMENT_LENGTH, RENEGOTIATION_INFO, SUPPORTED_GROUPS, EC_POINT_FORMATS, SESSION_TICKET);
  parts.push(alpn(probe), SIGNATURE_ALGORITHMS, keyShare(probe.grease), PSK_KEY_EXCHANGE_MODES);
  if (probe.version === 'tls13' || probe.versions === '1.2') parts.push(supportedVersions(probe, probe.grease));
  const all = Buffer.concat(parts);
  return Buffer.concat([u16(all.length), all]);
}

/**
 * One probe's TLS record (a ClientHello). `host` goes into server_name as given, an IP literal included (the
 * reference does so too).
 */
export function buildClientHello(probe: JarmProbe, host: string): Buffer {
  const [record, hello] = probe.version === 'tls11' ? [0x0302, 0x0302] : probe.version === 'tls12' ? [0x0303, 0x0303] : [0x0301, 0x0303];
  const sessionId = randomBytes(32);
  const ciphers = cipherBytes(probe);
  const body = Buffer.concat([
    u16(hello),
    randomBytes(32),
    Buffer.from([sessionId.length]),
    sessionId,
    u16(ciphers.length),
    ciphers,
    // one compression method: null
    Buffer.from([0x01, 0x00]),
    extensions(probe, host),
  ]);
  const handshake = Buffer.concat([Buffer.from([0x01, 0x00]), u16(body.length), body]);
  return Buffer.concat([Buffer.from([0x16]), u16(record), u16(handshake.length), handshake]);
}
