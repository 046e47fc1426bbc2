/**
 * TLS step: which certificate does this endpoint present, and is it any good?
 *
 * We complete a handshake without verifying (rejectUnauthorized: false), read the leaf
 * certificate, then judge it ourselves: expired, not yet valid, self-signed, trusted or not.
 * Verification failing is a finding, not a reason to look away.
 */
import type { X509Certificate } from 'node:crypto';
import net from 'node:net';
import tls from 'node:tls';
import type { HostRateLimiter } from './rate-limit.js';
import type { ScopeGuard } from './scope.js';
import type { CertificateObservation } from './types.js';

export const DEFAULT_TLS_TIMEOUT_MS = 10_000;
const DAY_MS = 86_400_000;

export interface InspectTlsOptions {
  /** Name for SNI (and the trust check); may equal the address. */
  host: string;
  address: string;
  port: number;
  timeoutMs?: number;
  guard: ScopeGuard;
  limiter?: HostRateLimiter;
  /** For tests: the time expiry is judged against. */
  now?: Date;
}

export class TlsInspectionError extends Error {
  constructor(
    message: string,
    readonly code: string,
    cause?: unknown,
  ) {
    super(message, { cause });
    this.name = 'TlsInspectionError';
  }
}

export async function inspectTls(options: InspectTlsOptions): Promise<CertificateObservation> {
  const connect = options.guard.connectOptions(options.address); // throws ScopeError before dialling
  const run = () => handshake(connect, options);
  return options.limiter ? options.limiter.run(connect.host, run) : run();
}

interface HandshakeResult {
  certificate: X509Certificate;
  protocol: string | null;
  cipher: string | null;
  trusted: boolean;
  trustError?: string;
}

function handshake(connect: { host: string }, options: InspectTlsOptions): Promise<CertificateObservation> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TLS_TIMEOUT_MS;
  const where = `${options.host}:${options.port}`;
  return new Promise((resolve, reject) => {
    let settled = false;
    const socket = tls.connect({
      ...connect,
      port: options.port,
      servername: net.isIP(options.host) ? undefined : options.host,
      rejectUnauthorized: false,
      // Real-world endpoints still run old protocol versions; we want to see them, not fail on them.
      minVersion: 'TLSv1',
    });
    const finish = (outcome: { result?: HandshakeResult; error?: Error }): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (outcome.error) {
        reject(outcome.error);
        return;
      }
      resolve(describeCertificate(outcome.result!, options));
    };
    const timer = setTimeout(
      () => finish({ error: new TlsInspectionError(`TLS handshake with ${where} timed out after ${timeoutMs} ms`, 'ETIMEDOUT') }),
      timeoutMs,
    );
    socket.once('secureConnect', () => {
      const certificate = socket.getPeerX509Certificate();
      if (!certificate) {
        return finish({ error: new TlsInspectionError(`${where} completed a TLS handshake without presenting a certificate`, 'NO_CERTIFICATE') });
      }
      const trustError = socket.authorizationError ? String(socket.authorizationError) : undefined;
      finish({
        result: {
          certificate,
          protocol: socket.getProtocol(),
          cipher: socket.getCipher()?.name ?? null,
          trusted: socket.authorized,
          ...(trustError ? { trustError } : {}),
        },
      });
    });
    socket.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'SCOPE_BLOCKED') return finish({ error: err });
      finish({ error: new TlsInspectionError(`TLS handshake with ${where} failed: ${err.message}`, err.code ?? 'TLS_FAILED', err) });
    });
  });
}

function describeCertificate(result: HandshakeResult, options: InspectTlsOptions): CertificateObservation {
  const cert = result.certificate;
  const now = (options.now ?? new Date()).getTime();
  const validFrom = new Date(cert.validFrom);
  const validTo = new Date(cert.validTo);
  const subject = parseDistinguishedName(cert.subject);
  const issuer = parseDistinguishedName(cert.issuer);
  const observation: CertificateObservation = {
    kind: 'certificate',
    host: options.host.toLowerCase(),
    address: options.address,
    port: options.port,
    subject: formatDistinguishedName(cert.subject),
    sans: parseSubjectAltName(cert.subjectAltName),
    issuer: formatDistinguishedName(cert.issuer),
    validFrom: validFrom.toISOString(),
    validTo: validTo.toISOString(),
    serialNumber: cert.serialNumber,
    fingerprint256: cert.fingerprint256,
    selfSigned: isSelfSigned(cert, result.trustError),
    expired: validTo.getTime() < now,
    notYetValid: validFrom.getTime() > now,
    daysUntilExpiry: Math.floor((validTo.getTime() - now) / DAY_MS),
    protocol: result.protocol,
    cipher: result.cipher,
    trusted: result.trusted,
  };
  if (subject.CN) observation.subjectCN = subject.CN;
  if (issuer.CN) observation.issuerCN = issuer.CN;
  if (result.trustError) observation.trustError = result.trustError;
  const key = cert.publicKey;
  if (key.asymmetricKeyType) observation.publicKeyAlgorithm = key.asymmetricKeyType;
  const bits = publicKeyBits(key.asymmetricKeyDetails);
  if (bits) observation.publicKeyBits = bits;
  return observation;
}

/**
 * Self-signed: the certificate names itself as issuer and its own key verifies its signature,
 * or OpenSSL reports the presented chain as a single self-signed certificate. A leaf sent without
 * its intermediates is NOT self-signed (it is an incomplete chain), so chain length alone is not used.
 */
function isSelfSigned(cert: X509Certificate, trustError: string | undefined): boolean {
  if (trustError === 'DEPTH_ZERO_SELF_SIGNED_CERT') return true;
  if (cert.subject !== cert.issuer) return false;
  try {
    return cert.verify(cert.publicKey);
  } catch {
    return false;
  }
}

function publicKeyBits(details: { modulusLength?: number; namedCurve?: string } | undefined): number | undefined {
  if (!details) return undefined;
  if (details.modulusLength) return details.modulusLength;
  const curveBits: Record<string, number> = { prime256v1: 256, secp384r1: 384, secp521r1: 521 };
  return details.namedCurve ? curveBits[details.namedCurve] : undefined;
}

/** Node prints distinguished names one `KEY=value` per line. */
function parseDistinguishedName(dn: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const line of dn.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0 && fields[line.slice(0, eq)] === undefined) fields[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return fields;
}

function formatDistinguishedName(dn: string): string {
  return dn.split('\n').filter(Boolean).join(', ');
}

/** `DNS:a.example, IP Address:127.0.0.1` (values may be JSON-quoted when they contain commas) → values. */
function parseSubjectAltName(text: string | undefined): string[] {
  if (!text) return [];
  const values: string[] = [];
  for (const match of text.matchAll(/(?:^|, )(DNS|IP Address|email|URI):("(?:[^"\\]|\\.)*"|[^,]*)/g)) {
    const raw = match[2];
    values.push(raw.startsWith('"') ? (JSON.parse(raw) as string) : raw);
  }
  return values;
}
