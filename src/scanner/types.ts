/**
 * Observation types produced by the scan engine.
 *
 * Every observation is plain JSON (strings, numbers, booleans, arrays, objects; dates as ISO
 * strings) so a job queue can carry it between processes and a persistence layer can store it
 * without knowing how it was produced. Each one has a `kind` discriminator so a consumer can
 * switch on it, and each asset-like observation has a natural key (see asset-keys.ts) so repeated
 * scans update the same row instead of creating duplicates.
 */

export type Severity = 'info' | 'low' | 'medium' | 'high' | 'critical';

export const SEVERITIES: readonly Severity[] = ['info', 'low', 'medium', 'high', 'critical'];

/** Result of the `dns` step for one host name. */
export interface HostObservation {
  kind: 'host';
  host: string;
  /** A and AAAA addresses together, IPv4 first; what later steps connect to. */
  addresses: string[];
  a: string[];
  aaaa: string[];
  cname: string[];
  /** Where the answer came from: the DNS resolver, the system resolver (/etc/hosts etc.) or the name was already an IP. */
  resolvedVia: 'dns' | 'system' | 'literal';
  /** Addresses the scope guard refuses, with the reason; later steps will refuse to touch them. */
  outOfScope: Array<{ address: string; reason: string }>;
}

/** One open TCP port. Closed and filtered ports are not observations. */
export interface ServiceObservation {
  kind: 'service';
  address: string;
  /** The name the scan was started for, when known; the address is what was scanned. */
  host?: string;
  port: number;
  transport: 'tcp';
  open: true;
  /** What the service said first (SSH, SMTP, FTP... speak before the client), control characters escaped. */
  banner?: string;
  /** Best guess of the protocol, from the banner when there is one, else from the port number. */
  service?: string;
  product?: string;
  version?: string;
}

export interface DetectedTechnology {
  name: string;
  version?: string;
  /** Where it was seen, e.g. `header:server` or `body`. */
  evidence: string;
}

export interface RedirectHop {
  url: string;
  status: number;
  location: string;
}

/** Result of the `http` step: one web endpoint (scheme + host + port). */
export interface WebObservation {
  kind: 'web';
  host: string;
  address: string;
  port: number;
  scheme: 'http' | 'https';
  /** The URL that was probed first (always path `/`). */
  url: string;
  /** The URL of the last response, after the redirects that were followed. */
  finalUrl: string;
  status: number;
  statusText?: string;
  title?: string;
  server?: string;
  contentType?: string;
  /** Selected response headers of the final response, lower-cased names. */
  headers: Record<string, string>;
  /** The start of the final body, bounded; enough for titles, markers and technology patterns. */
  bodyExcerpt: string;
  /** Bytes of body actually read (never more than the probe's limit). */
  bodyBytesRead: number;
  bodyTruncated: boolean;
  /** sha256 of the bytes read, to notice a changed page cheaply. */
  bodySha256: string;
  redirectChain: RedirectHop[];
  /** Set when a redirect was not followed because its target is out of scope or the hop limit was hit. */
  redirectStopped?: { url: string; reason: string };
  technologies: DetectedTechnology[];
  tls?: { protocol: string | null; cipher: string | null };
  responseTimeMs: number;
}

/** Result of the `tls` step: the leaf certificate a TLS endpoint presents. */
export interface CertificateObservation {
  kind: 'certificate';
  host: string;
  address: string;
  port: number;
  subject: string;
  subjectCN?: string;
  /** Subject alternative names, values only (DNS names and IP addresses). */
  sans: string[];
  issuer: string;
  issuerCN?: string;
  /** ISO 8601. */
  validFrom: string;
  /** ISO 8601. */
  validTo: string;
  serialNumber: string;
  /** Colon-separated upper-case hex, as Node prints it; also the certificate's natural key. */
  fingerprint256: string;
  selfSigned: boolean;
  expired: boolean;
  notYetValid: boolean;
  /** Whole days from the scan until validTo; negative once expired. */
  daysUntilExpiry: number;
  publicKeyAlgorithm?: string;
  publicKeyBits?: number;
  /** Negotiated protocol, e.g. TLSv1.3. */
  protocol: string | null;
  cipher: string | null;
  /** Whether the chain verifies against Node's CA store for the host name; we never require it. */
  trusted: boolean;
  /** OpenSSL's reason when not trusted, e.g. DEPTH_ZERO_SELF_SIGNED_CERT, CERT_HAS_EXPIRED. */
  trustError?: string;
}

export type AssetType = 'host' | 'service' | 'web' | 'certificate';

/** Which asset a finding is about, by natural key (see asset-keys.ts). */
export interface AssetRef {
  type: AssetType;
  key: string;
  host?: string;
  address?: string;
  port?: number;
}

export interface FindingEvidence {
  /** The URL (or host:port for non-HTTP) the evidence came from. */
  url?: string;
  /** Request as sent, abridged. */
  request?: string;
  /** Response as received, abridged (status line, relevant headers, body excerpt). */
  response?: string;
  /** Values the check pulled out, e.g. the missing headers or the disclosed version. */
  extracted?: Record<string, string | string[] | number | boolean>;
}

/** CVE, CWE and CVSS of a finding, when its source knows them (e.g. a nuclei template's classification). */
export interface FindingClassification {
  cveId?: string[];
  cweId?: string[];
  cvssScore?: number;
  cvssMetrics?: string;
}

/** A vulnerability or misconfiguration found by a check. */
export interface FindingObservation {
  kind: 'finding';
  checkId: string;
  name: string;
  severity: Severity;
  description: string;
  remediation: string;
  asset: AssetRef;
  /**
   * What within the asset matched, stable across scans (e.g. `/.git/HEAD`, `header:server`), so
   * two different problems of one check on one asset stay two findings.
   */
  matcher: string;
  /**
   * `[checkId, asset.key, matcher]`: hash these (asset-keys.ts `findingFingerprint`) to get a
   * deterministic id, so a finding seen again updates the existing row and one not seen again
   * can be marked resolved.
   */
  fingerprintParts: [string, string, string];
  evidence: FindingEvidence;
  /** Which check source produced it: `builtin` here; a template engine would use its own name. */
  source: string;
  /** Stored on the finding when present; absent leaves what is stored. */
  classification?: FindingClassification;
}

export type Observation = HostObservation | ServiceObservation | WebObservation | CertificateObservation | FindingObservation;
