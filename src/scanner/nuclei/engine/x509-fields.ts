/**
 * The certificate fields tlsx reports (clients.Convertx509toResponse), read from the DER with a minimal
 * ASN.1 walker (no cryptography here: fingerprints use node:crypto). Reading the DER ourselves keeps the
 * subject/issuer RDN order and the AKI/SKI extensions, which node's X509Certificate does not expose, so that
 * subject_dn and self_signed come out as tlsx computes them.
 */
import { createHash } from 'node:crypto';

interface Tlv {
  tag: number;
  start: number;
  end: number;
}

function readTlv(buf: Uint8Array, offset: number, limit = buf.length): Tlv {
  if (offset + 2 > limit) throw new Error('truncated DER');
  const tag = buf[offset];
  let len = buf[offset + 1];
  let start = offset + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4 || start + n > limit) throw new Error('bad DER length');
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[start + i];
    start += n;
  }
  if (start + len > limit) throw new Error('truncated DER');
  return { tag, start, end: start + len };
}

function children(buf: Uint8Array, parent: Tlv): Tlv[] {
  const out: Tlv[] = [];
  for (let off = parent.start; off < parent.end; ) {
    const t = readTlv(buf, off, parent.end);
    out.push(t);
    off = t.end;
  }
  return out;
}

function oidString(bytes: Uint8Array): string {
  const parts: number[] = [];
  let value = 0;
  for (const b of bytes) {
    value = value * 128 + (b & 0x7f);
    if (!(b & 0x80)) {
      if (parts.length === 0) parts.push(value < 80 ? Math.floor(value / 40) : 2, value < 80 ? value % 40 : value - 80);
      else parts.push(value);
      value = 0;
    }
  }
  return parts.join('.');
}

/** Short names zcrypto's pkix prints (oidDotNotationToNames) for the attributes certificates use. */
const ATTRIBUTE_NAMES: Record<string, string> = {
  '2.5.4.3': 'CN',
  '2.5.4.6': 'C',
  '2.5.4.7': 'L',
  '2.5.4.8': 'ST',
  '2.5.4.10': 'O',
  '2.5.4.11': 'OU',
  '2.5.4.97': 'organizationIdentifier',
  '1.2.840.113549.1.9.1': 'emailAddress',
  '2.5.4.42': 'GN',
  '2.5.4.4': 'SN',
  '2.5.4.5': 'serialNumber',
  '2.5.4.12': 'title',
  '0.9.2342.19200300.100.1.25': 'DC',
  '0.9.2342.19200300.100.1.1': 'UID',
  '2.5.4.9': 'street',
  '2.5.4.17': 'postalCode',
  '2.5.4.15': 'businessCategory',
  '1.3.6.1.4.1.311.60.2.1.1': 'jurisdictionLocality',
  '1.3.6.1.4.1.311.60.2.1.2': 'jurisdictionStateOrProvince',
  '1.3.6.1.4.1.311.60.2.1.3': 'jurisdictionCountry',
};

function decodeString(buf: Uint8Array, t: Tlv): string | undefined {
  const bytes = buf.subarray(t.start, t.end);
  switch (t.tag) {
    case 0x0c: // UTF8String
      return Buffer.from(bytes).toString('utf8');
    case 0x13: // PrintableString
    case 0x16: // IA5String
    case 0x12: // NumericString
    case 0x1a: // VisibleString
      return Buffer.from(bytes).toString('latin1');
    case 0x14: // T61String: Go decodes it as Latin-1
      return Buffer.from(bytes).toString('latin1');
    case 0x1e: {
      // BMPString: UTF-16BE
      const swapped = Buffer.from(bytes);
      swapped.swap16();
      return swapped.toString('utf16le');
    }
    default:
      return undefined;
  }
}

interface Attribute {
  oid: string;
  value?: string;
  der: Uint8Array;
}

function readName(buf: Uint8Array, name: Tlv): Attribute[][] {
  return children(buf, name).map((set) =>
    children(buf, set).map((atv) => {
      const [oid, value] = children(buf, atv);
      return {
        oid: oidString(buf.subarray(oid.start, oid.end)),
        value: value ? decodeString(buf, value) : undefined,
        der: value ? buf.subarray(oid.end, value.end) : new Uint8Array(),
      };
    }),
  );
}

/** zcrypto RDNSequence.String(): RDNs last to first, ", " between attributes, RFC 2253 escaping. */
function nameString(rdns: Attribute[][]): string {
  const parts: string[] = [];
  for (let i = rdns.length - 1; i >= 0; i--) {
    for (const atv of rdns[i]) {
      const short = ATTRIBUTE_NAMES[atv.oid];
      if (!short || atv.value === undefined) {
        parts.push(`${atv.oid}=#${Buffer.from(atv.der).toString('hex')}`);
        continue;
      }
      const v = atv.value;
      let escaped = '';
      [...v].forEach((c, k, all) => {
        const special = ',+"\\<>;'.includes(c) || (c === ' ' && (k === 0 || k === all.length - 1)) || (c === '#' && k === 0);
        escaped += special ? `\\${c}` : c;
      });
      parts.push(`${short}=${escaped}`);
    }
  }
  return parts.join(', ');
}

function values(rdns: Attribute[][], oid: string): string[] {
  return rdns
    .flat()
    .filter((a) => a.oid === oid && a.value !== undefined)
    .map((a) => a.value!);
}

function readTime(buf: Uint8Array, t: Tlv): Date {
  const s = Buffer.from(buf.subarray(t.start, t.end)).toString('latin1');
  const m = t.tag === 0x17 ? /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(s) : /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(s);
  if (!m) throw new Error(`unsupported certificate time ${JSON.stringify(s)}`);
  let year = Number(m[1]);
  if (t.tag === 0x17) year += year < 50 ? 2000 : 1900;
  return new Date(Date.UTC(year, Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6])));
}

export interface CertificateFacts {
  raw: Uint8Array;
  subjectDn: string;
  issuerDn: string;
  subjectCn: string;
  issuerCn: string;
  subjectOrg: string[];
  issuerOrg: string[];
  dnsNames: string[];
  emails: string[];
  notBefore: Date;
  notAfter: Date;
  /** tlsx FormatToSerialNumber: upper-case hex bytes joined by ':' ('' for zero). */
  serial: string;
  authorityKeyId: string;
  subjectKeyId: string;
  isCa: boolean;
  fingerprints: { md5: string; sha1: string; sha256: string };
}

export function readCertificate(der: Uint8Array): CertificateFacts {
  const cert = readTlv(der, 0);
  const tbs = children(der, cert)[0];
  let fields = children(der, tbs);
  if (fields[0]?.tag === 0xa0) fields = fields.slice(1); // explicit version
  const [serialTlv, , issuer, validity, subject] = fields;
  const extensions = fields.find((f) => f.tag === 0xa3);

  let serialBytes = der.subarray(serialTlv.start, serialTlv.end);
  while (serialBytes.length > 0 && serialBytes[0] === 0) serialBytes = serialBytes.subarray(1);
  const serial = [...serialBytes].map((b) => b.toString(16).padStart(2, '0').toUpperCase()).join(':');

  const [notBeforeTlv, notAfterTlv] = children(der, validity);
  const subjectRdns = readName(der, subject);
  const issuerRdns = readName(der, issuer);
  const facts: CertificateFacts = {
    raw: der.subarray(0, cert.end),
    subjectDn: nameString(subjectRdns),
    issuerDn: nameString(issuerRdns),
    subjectCn: values(subjectRdns, '2.5.4.3').at(-1) ?? '',
    issuerCn: values(issuerRdns, '2.5.4.3').at(-1) ?? '',
    subjectOrg: values(subjectRdns, '2.5.4.10'),
    issuerOrg: values(issuerRdns, '2.5.4.10'),
    dnsNames: [],
    emails: [],
    notBefore: readTime(der, notBeforeTlv),
    notAfter: readTime(der, notAfterTlv),
    serial,
    authorityKeyId: '',
    subjectKeyId: '',
    isCa: false,
    fingerprints: {
      md5: createHash('md5').update(der.subarray(0, cert.end)).digest('hex'),
      sha1: createHash('sha1').update(der.subarray(0, cert.end)).digest('hex'),
      sha256: createHash('sha256').update(der.subarray(0, cert.end)).digest('hex'),
    },
  };
  if (extensions) {
    const list = children(der, extensions)[0];
    for (const ext of children(der, list)) {
      const parts = children(der, ext);
      const oid = oidString(der.subarray(parts[0].start, parts[0].end));
      const value = parts[parts.length - 1]; // OCTET STRING (after the optional `critical` BOOLEAN)
      const inner = readTlv(der, value.start, value.end);
      if (oid === '2.5.29.14' && inner.tag === 0x04) facts.subjectKeyId = Buffer.from(der.subarray(inner.start, inner.end)).toString('hex');
      else if (oid === '2.5.29.35' && inner.tag === 0x30) {
        const keyId = children(der, inner).find((c) => c.tag === 0x80);
        if (keyId) facts.authorityKeyId = Buffer.from(der.subarray(keyId.start, keyId.end)).toString('hex');
      } else if (oid === '2.5.29.17' && inner.tag === 0x30) {
        for (const gn of children(der, inner)) {
          const text = Buffer.from(der.subarray(gn.start, gn.end)).toString('latin1');
          if (gn.tag === 0x82) facts.dnsNames.push(text);
          else if (gn.tag === 0x81) facts.emails.push(text);
        }
      } else if (oid === '2.5.29.19' && inner.tag === 0x30) {
        const first = children(der, inner)[0];
        facts.isCa = first?.tag === 0x01 && der[first.start] !== 0;
      }
    }
  }
  return facts;
}

/** tlsx IsSelfSigned: no AKI, AKI equal to SKI, or no DNS names at all. */
export function isSelfSigned(c: Pick<CertificateFacts, 'authorityKeyId' | 'subjectKeyId' | 'dnsNames'>): boolean {
  return c.authorityKeyId === '' || c.authorityKeyId === c.subjectKeyId || c.dnsNames.length === 0;
}

function matchWildcardToken(name: string, host: string): boolean {
  if (!name.includes('*')) return name.toLowerCase() === host.toLowerCase();
  const [prefix, suffix] = name.split('*');
  if (name.startsWith('*')) return host.endsWith(suffix);
  if (name.endsWith('*')) return host.startsWith(prefix);
  return host.startsWith(prefix) && host.endsWith(suffix);
}

/** tlsx IsMisMatchedCert: no name (CN or DNS name, one-label wildcards) covers the host. */
export function isMismatched(host: string, names: string[]): boolean {
  const hostTokens = host.split('.');
  for (const name of names) {
    if (!name.includes('*')) {
      if (name.toLowerCase() === host.toLowerCase()) return false;
      continue;
    }
    const tokens = name.split('.');
    if (tokens.length !== hostTokens.length) continue;
    if (tokens.every((t, i) => (i === 0 ? matchWildcardToken(t, hostTokens[i]) : t.toLowerCase() === hostTokens[i].toLowerCase()))) return false;
  }
  return true;
}
