/**
 * IANA cipher suite names (what nuclei templates and Go's crypto/tls use) → OpenSSL names (what node:tls takes).
 * The translation follows OpenSSL's naming rules, and a name counts only if this node's OpenSSL knows it
 * (tls.getCiphers()), so a suite we would silently not offer is reported instead.
 */
import { getCiphers } from 'node:tls';

const TLS13_SUITES = new Set([
  'TLS_AES_128_GCM_SHA256',
  'TLS_AES_256_GCM_SHA384',
  'TLS_CHACHA20_POLY1305_SHA256',
  'TLS_AES_128_CCM_SHA256',
  'TLS_AES_128_CCM_8_SHA256',
]);

const KEY_EXCHANGE: Record<string, string[]> = {
  RSA: [''],
  ECDHE_RSA: ['ECDHE-RSA'],
  ECDHE_ECDSA: ['ECDHE-ECDSA'],
  DHE_RSA: ['DHE-RSA', 'EDH-RSA'],
  DHE_DSS: ['DHE-DSS', 'EDH-DSS'],
  PSK: ['PSK'],
  ECDHE_PSK: ['ECDHE-PSK'],
  DHE_PSK: ['DHE-PSK'],
  RSA_PSK: ['RSA-PSK'],
  SRP_SHA: ['SRP'],
  SRP_SHA_RSA: ['SRP-RSA'],
  SRP_SHA_DSS: ['SRP-DSS'],
};

/** Bulk cipher part; `mac: false` for AEAD modes whose OpenSSL name drops the hash. */
const ENCRYPTION: Array<[RegExp, (m: RegExpExecArray) => string, boolean]> = [
  [/^AES_(128|256)_CBC$/, (m) => `AES${m[1]}`, true],
  [/^AES_(128|256)_GCM$/, (m) => `AES${m[1]}-GCM`, true],
  [/^AES_(128|256)_CCM$/, (m) => `AES${m[1]}-CCM`, false],
  [/^AES_(128|256)_CCM_8$/, (m) => `AES${m[1]}-CCM8`, false],
  [/^CHACHA20_POLY1305$/, () => 'CHACHA20-POLY1305', false],
  [/^3DES_EDE_CBC$/, () => 'DES-CBC3', true],
  [/^CAMELLIA_(128|256)_CBC$/, (m) => `CAMELLIA${m[1]}`, true],
  [/^CAMELLIA_(128|256)_GCM$/, (m) => `CAMELLIA${m[1]}-GCM`, true],
  [/^ARIA_(128|256)_GCM$/, (m) => `ARIA${m[1]}-GCM`, true],
  [/^SEED_CBC$/, () => 'SEED', true],
  [/^RC4_128$/, () => 'RC4', true],
];

let known: Set<string> | undefined;

function candidates(iana: string): string[] {
  const m = /^TLS_(.+?)_WITH_(.+)_(SHA|SHA256|SHA384|MD5)$/.exec(iana) ?? /^TLS_(.+?)_WITH_(.+)()$/.exec(iana);
  if (!m) return [];
  const [, kx, enc, mac] = m;
  const exchanges = KEY_EXCHANGE[kx];
  if (!exchanges) return [];
  const rule = ENCRYPTION.find(([re]) => re.test(enc));
  // CCM / CHACHA20 names carry no hash, and their IANA names end without one: try the whole tail as the cipher
  const tail = mac ? `${enc}_${mac}` : enc;
  const aead = ENCRYPTION.find(([re, , withMac]) => !withMac && re.test(tail));
  const out: string[] = [];
  for (const x of exchanges) {
    if (rule) out.push([x, rule[1](rule[0].exec(enc)!), rule[2] ? mac : ''].filter(Boolean).join('-'));
    if (aead) out.push([x, aead[1](aead[0].exec(tail)!)].filter(Boolean).join('-'));
  }
  return out;
}

/** The OpenSSL name of an IANA suite this node can offer (TLS 1.3 suites keep their name), or undefined. */
export function openSslCipherName(iana: string): string | undefined {
  const name = iana.trim().toUpperCase();
  if (TLS13_SUITES.has(name)) return name;
  known ??= new Set(getCiphers().map((c) => c.toUpperCase()));
  return candidates(name).find((c) => known!.has(c));
}

export function isTls13Suite(iana: string): boolean {
  return TLS13_SUITES.has(iana.trim().toUpperCase());
}
