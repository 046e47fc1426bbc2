/**
 * Runs the `ssl` blocks of nuclei templates against host:port through an injected TlsConnector
 * (nuclei pkg/protocols/ssl over tlsx's ctls client). Per block: render `address`, handshake with the block's
 * version bounds and cipher suites, build tlsx's response (JSON in `response`, and each non-zero field as a DSL
 * variable: tls_version, cipher, subject_dn, subject_cn, subject_an, issuer_dn, issuer_cn, not_before,
 * not_after, expired, self_signed, mismatched, untrusted, wildcard_certificate, domains, serial, ...), then
 * run the operators. Matchers without `part` read `body`, which ssl does not have (nuclei); extractors
 * without `part` read the JSON `response`.
 *
 * `jarm_hash` (tlsx's JARM of the address) is computed only for blocks whose operators read it, through
 * `deps.jarmConnect`, once per host:port and run.
 * Not provided: `revoked` (needs OCSP/CRL fetches; matchers using it were marked unsupported at parse time),
 * JA3, version/cipher enumeration, SSLv3. A failed handshake produces no event.
 */
import { X509Certificate } from 'node:crypto';
import { rootCertificates } from 'node:tls';
import { dslToString, type DslRecord, type DslScope, type DslValue } from '../dsl/index.js';
import { openSslCipherName } from '../parse/ssl-ciphers.js';
import type {
  HostTarget,
  NucleiTemplate,
  RunOutput,
  SslRequestBlock,
  SslRunDeps,
  TemplateResult,
  TlsProbe,
  TlsProbeRequest,
  TlsVersionName,
} from '../types.js';
import { type HostEvent, type HostProtocol, type HostTemplateRun, renderField, runHostTemplates } from './host-run.js';
import type { PartResolver } from './operators.js';
import { type CertificateFacts, isMismatched, isSelfSigned, readCertificate } from './x509-fields.js';
import { readsField } from '../jarm/calls.js';
import { JarmCache } from '../jarm/precompute.js';

const NODE_VERSIONS: Record<Exclude<TlsVersionName, 'sslv3'>, TlsProbeRequest['minVersion']> = {
  tls10: 'TLSv1',
  tls11: 'TLSv1.1',
  tls12: 'TLSv1.2',
  tls13: 'TLSv1.3',
};
const VERSION_NAMES: Record<string, string> = { TLSv1: 'tls10', 'TLSv1.1': 'tls11', 'TLSv1.2': 'tls12', 'TLSv1.3': 'tls13', SSLv3: 'ssl30' };

/** Every cipher OpenSSL has, old ones included (tlsx offers all of Go's); SECLEVEL=0 lets TLS 1.0/1.1 through. */
const ALL_CIPHERS = 'ALL:@SECLEVEL=0';

/** MakeDefaultMatchFunc / MakeDefaultExtractFunc: the part is a key of the data map (no aliases). */
export const sslPart: PartResolver = (part: string, scope: DslScope) => {
  const v = scope.get(part || 'response');
  return v === undefined ? undefined : dslToString(v);
};

/** Go's time.Time.String() for a UTC time without sub-seconds. */
function goTime(d: Date): string {
  return `${d
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, '')} +0000 UTC`;
}

function rfc3339(d: Date): string {
  return d.toISOString().replace(/\.000Z$/, 'Z');
}

let rootFingerprints: Set<string> | undefined;

/** tlsx IsUntrustedCA: a self-signed CA in the chain (leaf excluded) that is not a known root. */
function isUntrusted(chain: CertificateFacts[]): boolean {
  rootFingerprints ??= new Set(rootCertificates.map((pem) => new X509Certificate(pem).fingerprint256.replace(/:/g, '').toLowerCase()));
  return chain.some((c) => c.isCa && isSelfSigned(c) && !rootFingerprints!.has(c.fingerprints.sha256));
}

/** tlsx's clients.Response as JSON (Go field order, omitempty) and as nuclei's DSL map (non-zero fields only). */
export function sslResponse(
  probe: TlsProbe,
  hostname: string,
  port: string,
  now = new Date(),
): { json: Record<string, unknown>; fields: Record<string, DslValue> } {
  const [leafDer, ...rest] = probe.chain;
  const leaf = readCertificate(leafDer);
  const chain = rest.map(readCertificate);
  const names = [leaf.subjectCn, ...leaf.dnsNames];
  const domains = [...new Set([...leaf.dnsNames, ...(leaf.subjectCn ? [leaf.subjectCn] : [])].map((d) => d.replace(/^\*\./, '')))];
  const cert = {
    expired: now.getTime() - leaf.notAfter.getTime() >= 500,
    self_signed: isSelfSigned(leaf),
    mismatched: isMismatched(hostname, names),
    untrusted: isUntrusted(chain),
    subject_dn: leaf.subjectDn,
    subject_cn: leaf.subjectCn,
    subject_org: leaf.subjectOrg,
    subject_an: leaf.dnsNames,
    domains,
    serial: leaf.serial,
    issuer_dn: leaf.issuerDn,
    issuer_cn: leaf.issuerCn,
    issuer_org: leaf.issuerOrg,
    emails: leaf.emails,
    wildcard_certificate: names.some((n) => n.includes('*.')),
  };
  const top = {
    host: hostname,
    ip: probe.remoteAddress,
    port,
    probe_status: true,
    tls_version: VERSION_NAMES[probe.protocol] ?? probe.protocol,
    cipher: probe.cipher,
    tls_connection: 'ctls',
    sni: probe.servername ?? hostname,
  };
  const isZero = (v: unknown) => v === false || v === '' || v === undefined || (Array.isArray(v) && v.length === 0);
  const json: Record<string, unknown> = { timestamp: now.toISOString() };
  for (const [k, v] of Object.entries({ host: top.host, ip: top.ip, port: top.port, probe_status: true, tls_version: top.tls_version, cipher: top.cipher })) {
    if (k === 'host' || k === 'port' || k === 'probe_status' || !isZero(v)) json[k] = v;
  }
  const certJson: Record<string, unknown> = {
    expired: cert.expired,
    self_signed: cert.self_signed,
    mismatched: cert.mismatched,
    untrusted: cert.untrusted,
    not_before: rfc3339(leaf.notBefore),
    not_after: rfc3339(leaf.notAfter),
    subject_dn: cert.subject_dn,
    subject_cn: cert.subject_cn,
    subject_org: cert.subject_org,
    subject_an: cert.subject_an,
    domains: cert.domains,
    serial: cert.serial,
    issuer_dn: cert.issuer_dn,
    issuer_cn: cert.issuer_cn,
    issuer_org: cert.issuer_org,
    emails: cert.emails,
    fingerprint_hash: leaf.fingerprints,
    wildcard_certificate: cert.wildcard_certificate,
  };
  for (const [k, v] of Object.entries(certJson)) if (!isZero(v)) json[k] = v;
  json.tls_connection = top.tls_connection;
  if (!isZero(top.sni)) json.sni = top.sni;

  const fields: Record<string, DslValue> = Object.create(null) as Record<string, DslValue>;
  for (const [k, v] of Object.entries({ ...top, ...cert })) if (!isZero(v)) fields[k] = v as DslValue;
  fields.timestamp = goTime(now);
  fields.not_before = goTime(leaf.notBefore);
  fields.not_after = goTime(leaf.notAfter);
  return { json, fields };
}

function splitHostPort(address: string): { host: string; port: string } | undefined {
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(address) ?? /^([^:]+):(\d+)$/.exec(address);
  if (!m) return undefined;
  return { host: m[1], port: m[2] };
}

function isIp(host: string): boolean {
  return /^\d+\.\d+\.\d+\.\d+$/.test(host) || host.includes(':');
}

function executor(target: HostTarget, deps: SslRunDeps) {
  const targetHost = target.host
    .trim()
    .replace(/^\[(.*)\]$/, '$1')
    .toLowerCase();
  const jarm = deps.jarmConnect ? new JarmCache({ connect: deps.jarmConnect, timeoutMs: deps.jarmTimeoutMs, signal: deps.signal }) : undefined;
  return async (block: SslRequestBlock, scope: DslScope, run: HostTemplateRun<SslRequestBlock>): Promise<HostEvent | undefined> => {
    const address = renderField(block.address, scope, run, `${block.path}.address`);
    if (address === undefined) return undefined;
    const split = splitHostPort(address.trim());
    if (!split) {
      run.warn(`request not sent: address ${JSON.stringify(address)} is not host:port`, `${block.path}.address`);
      return undefined;
    }
    if (!deps.allowOffTargetRequests && split.host.toLowerCase() !== targetHost) {
      run.warn(`request to ${address} skipped: it does not go to the target ${target.host}`, `${block.path}.address`);
      return undefined;
    }
    const suites = block.cipherSuites.map((s) => openSslCipherName(s)!).filter(Boolean);
    const req: TlsProbeRequest = {
      host: split.host,
      port: Number(split.port),
      servername: isIp(split.host) ? undefined : split.host,
      minVersion: block.minVersion && block.minVersion !== 'sslv3' ? NODE_VERSIONS[block.minVersion] : 'TLSv1',
      maxVersion: block.maxVersion && block.maxVersion !== 'sslv3' ? NODE_VERSIONS[block.maxVersion] : 'TLSv1.3',
      ciphers: suites.length ? `${suites.join(':')}:@SECLEVEL=0` : ALL_CIPHERS,
      timeoutMs: deps.timeoutMs ?? 10_000,
      signal: deps.signal,
    };
    run.stats.requestsSent++;
    let probe: TlsProbe;
    try {
      probe = await deps.connect(req);
    } catch (err) {
      run.stats.requestsFailed++;
      run.warn(`ssl ${address} failed: ${(err as Error).message}`, block.path);
      return undefined;
    }
    if (probe.chain.length === 0) {
      run.warn(`ssl ${address}: no certificates returned by server`, block.path);
      return undefined;
    }
    let built: ReturnType<typeof sslResponse>;
    try {
      built = sslResponse(probe, split.host, split.port);
    } catch (err) {
      run.warn(`ssl ${address}: certificate could not be read (${(err as Error).message})`, block.path);
      return undefined;
    }
    const response = JSON.stringify(built.json);
    const data: Record<string, DslValue> = Object.create(null) as Record<string, DslValue>;
    Object.assign(data, { type: 'ssl', response, host: `${target.host}:${target.port ?? 443}`, matched: address, Port: split.port, 'template-id': run.tpl.id });
    Object.assign(data, built.fields);
    if (readsField(block, 'jarm_hash')) {
      if (jarm) data.jarm_hash = (await jarm.get(split.host, Number(split.port))).hash;
      else run.warn('jarm_hash not computed: this run has no plain TCP connector for JARM probes (jarmConnect)', block.path);
    }
    return { data, matched: address, request: `TLS handshake with ${address} (${req.minVersion}..${req.maxVersion})`, response };
  };
}

/** Run the ssl blocks of `templates` against host:port (default port 443). Templates without ssl blocks are ignored. */
export async function runSslTemplatesDetailed(templates: NucleiTemplate[], target: HostTarget, deps: SslRunDeps): Promise<RunOutput> {
  const { inputVars, execute, readPart } = sslProtocol(target, deps);
  return runHostTemplates(templates, deps, (t) => t.ssl, inputVars, execute, readPart);
}

/** The ssl protocol against host:port, for runHostTemplates and for flows (engine/flow.ts). */
export function sslProtocol(target: HostTarget, deps: SslRunDeps): HostProtocol<SslRequestBlock> {
  const host = target.host.trim().replace(/^\[(.*)\]$/, '$1');
  const port = String(target.port ?? 443);
  const inputVars: DslRecord = { Hostname: host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`, Host: host, Port: port, FQDN: host };
  return { inputVars, execute: executor(target, deps), readPart: sslPart };
}

export async function runSslTemplates(templates: NucleiTemplate[], target: HostTarget, deps: SslRunDeps): Promise<TemplateResult[]> {
  return (await runSslTemplatesDetailed(templates, target, deps)).results;
}
