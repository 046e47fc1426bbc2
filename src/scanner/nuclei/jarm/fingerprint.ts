/**
 * From ServerHellos to a JARM fingerprint, as salesforce/jarm's jarm.py reads them: per probe `cipher|version|alpn|
 * extension types` (`|||` when the answer is no ServerHello), then the 62-character fuzzy hash: for each probe the
 * cipher's 2-hex-digit index and a version letter (30 characters), then the first 32 hex digits of the SHA-256 of
 * the ALPN values and extension lists. Where jarm.py would stop on an exception the probe counts as failed (`|||`),
 * as its catch-all does; hdm/jarm-go (nuclei's) agrees on every well-formed answer.
 */
import { createHash } from 'node:crypto';

export const ZERO_JARM = '0'.repeat(62);
export const FAILED_PROBE = '|||';

/** Cipher suites in the order whose 1-based position is a probe's two hex digits (unknown suites: 0x46). */
const HASH_CIPHER_ORDER = [
  0x0004, 0x0005, 0x0007, 0x000a, 0x0016, 0x002f, 0x0033, 0x0035, 0x0039, 0x003c, 0x003d, 0x0041, 0x0045, 0x0067, 0x006b, 0x0084, 0x0088, 0x009a, 0x009c,
  0x009d, 0x009e, 0x009f, 0x00ba, 0x00be, 0x00c0, 0x00c4, 0xc007, 0xc008, 0xc009, 0xc00a, 0xc011, 0xc012, 0xc013, 0xc014, 0xc023, 0xc024, 0xc027, 0xc028,
  0xc02b, 0xc02c, 0xc02f, 0xc030, 0xc060, 0xc061, 0xc072, 0xc073, 0xc076, 0xc077, 0xc09c, 0xc09d, 0xc09e, 0xc09f, 0xc0a0, 0xc0a1, 0xc0a2, 0xc0a3, 0xc0ac,
  0xc0ad, 0xc0ae, 0xc0af, 0xcc13, 0xcc14, 0xcca8, 0xcca9, 0x1301, 0x1302, 0x1303, 0x1304, 0x1305,
].map((c) => c.toString(16).padStart(4, '0'));

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const sameBytes = (b: Uint8Array, expected: number[]) => b.length === expected.length && expected.every((x, i) => b[i] === x);

/** Python's int(hex, 16) over a slice: an empty slice is an error (jarm.py then gives up on the probe). */
function sliceNumber(data: Buffer, from: number, to: number): number {
  const s = data.subarray(from, to);
  if (s.length === 0) throw new Error('truncated ServerHello');
  return Number.parseInt(hex(s), 16);
}

/** The ALPN value and extension types after the cipher and compression method (`|` when jarm.py finds none). */
function extensionInfo(data: Buffer, counter: number, serverHelloLength: number): string {
  if (counter + 47 >= data.length) return '|';
  // jarm.py's checks for answers it does not read (no extensions, odd servers), kept as they are
  if (data[counter + 47] === 11) return '|';
  if (sameBytes(data.subarray(counter + 50, counter + 53), [0x0e, 0xac, 0x0b]) || sameBytes(data.subarray(82, 85), [0x0f, 0xf0, 0x0b])) return '|';
  if (counter + 42 >= serverHelloLength) return '|';
  let at = counter + 49;
  const end = sliceNumber(data, counter + 47, counter + 49) + at - 1;
  const types: Buffer[] = [];
  const values: Array<Buffer | undefined> = [];
  while (at < end) {
    types.push(data.subarray(at, at + 2));
    const length = sliceNumber(data, at + 2, at + 4);
    values.push(length === 0 ? undefined : data.subarray(at + 4, at + 4 + length));
    at += length + 4;
  }
  let alpn = '';
  const i = types.findIndex((t) => sameBytes(t, [0x00, 0x10]));
  if (i >= 0) {
    const value = values[i];
    // an empty ALPN extension, or a protocol name that is not UTF-8, ends jarm.py's reading of the probe
    if (!value) throw new Error('empty ALPN extension');
    alpn = new TextDecoder('utf-8', { fatal: true }).decode(value.subarray(3));
  }
  return `${alpn}|${types.map(hex).join('-')}`;
}

/** One probe's raw fingerprint from the bytes read after its ClientHello (at most 1484 in the reference). */
export function readServerHello(data: Buffer): string {
  try {
    if (data.length === 0 || data[0] === 21) return FAILED_PROBE;
    if (!(data[0] === 22 && data.length > 5 && data[5] === 2) || data.length <= 43) return FAILED_PROBE;
    const serverHelloLength = data.readUInt16BE(3);
    const counter = data[43]!;
    const cipher = hex(data.subarray(counter + 44, counter + 46));
    const version = hex(data.subarray(9, 11));
    return `${cipher}|${version}|${extensionInfo(data, counter, serverHelloLength)}`;
  } catch {
    return FAILED_PROBE;
  }
}

function cipherIndex(cipher: string): string {
  if (cipher === '') return '00';
  const i = HASH_CIPHER_ORDER.indexOf(cipher);
  return (i < 0 ? HASH_CIPHER_ORDER.length + 1 : i + 1).toString(16).padStart(2, '0');
}

function versionLetter(version: string): string {
  // the 4th hex digit of the legacy version: 0303 → d (a + 3); jarm-go's reading where jarm.py would fail
  const digit = version.length >= 4 ? Number.parseInt(version[3]!, 10) : Number.NaN;
  return Number.isNaN(digit) ? '0' : String.fromCharCode(0x61 + digit);
}

/** The fuzzy hash of the ten probes' raw fingerprints (62 zeros when every probe failed). */
export function jarmHash(raw: readonly string[]): string {
  if (raw.every((r) => r === FAILED_PROBE)) return ZERO_JARM;
  let fuzzy = '';
  let alpnsAndExtensions = '';
  for (const probe of raw) {
    const [cipher = '', version = '', alpn = '', exts = ''] = probe.split('|');
    fuzzy += cipherIndex(cipher) + versionLetter(version);
    alpnsAndExtensions += alpn + exts;
  }
  return fuzzy + createHash('sha256').update(alpnsAndExtensions, 'utf8').digest('hex').slice(0, 32);
}
