import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BUILTIN_CHECKS,
  createScopeGuard,
  findingFingerprint,
  inspectTls,
  missingSecurityHeaders,
  probeHttp,
  runChecks,
  type CertificateObservation,
  type Check,
  type WebObservation,
} from '../../src/scanner/index.js';
import {
  closedPort,
  hardenedRoutes,
  LOOPBACK,
  makeCertificates,
  SECURITY_HEADERS,
  startHttpServer,
  startHttpsServer,
  vulnerableRoutes,
  type Started,
  type TestCertificates,
} from './helpers.js';

const guard = createScopeGuard({ allowedNetworks: ['127.0.0.0/8', '::1/128'] });

let certs: TestCertificates;
const servers: Started[] = [];
let vulnerableWeb: WebObservation;
let hardenedWeb: WebObservation;
let hardenedHttpsWeb: WebObservation;
let selfSignedCert: CertificateObservation;
let expiredCert: CertificateObservation;
let caSignedCert: CertificateObservation;

beforeAll(async () => {
  certs = makeCertificates();
  const vulnerable = await startHttpServer(vulnerableRoutes);
  const hardened = await startHttpServer(hardenedRoutes);
  const hardenedHttps = await startHttpsServer(certs.caSigned, hardenedRoutes);
  const selfSigned = await startHttpsServer(certs.selfSigned, hardenedRoutes);
  const expired = await startHttpsServer(certs.expired, hardenedRoutes);
  servers.push(vulnerable, hardened, hardenedHttps, selfSigned, expired);
  const probe = (port: number) => probeHttp({ host: 'localhost', address: LOOPBACK, port, guard, timeoutMs: 2_000 });
  const tls = (port: number) => inspectTls({ host: 'localhost', address: LOOPBACK, port, guard, timeoutMs: 2_000 });
  [vulnerableWeb, hardenedWeb, hardenedHttpsWeb] = await Promise.all([probe(vulnerable.port), probe(hardened.port), probe(hardenedHttps.port)]);
  [selfSignedCert, expiredCert, caSignedCert] = await Promise.all([tls(selfSigned.port), tls(expired.port), tls(hardenedHttps.port)]);
});
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  certs.cleanup();
});

describe('built-in web checks', () => {
  it('find everything wrong with the vulnerable app, with evidence', async () => {
    const { findings, errors } = await runChecks({ web: [vulnerableWeb] }, { guard });
    expect(errors).toEqual([]);
    const byCheck = (id: string) => findings.filter((finding) => finding.checkId === id);

    const [git] = byCheck('http-exposed-git');
    expect(git).toMatchObject({
      kind: 'finding',
      name: 'Exposed Git repository',
      severity: 'high',
      matcher: '/.git/HEAD',
      asset: { type: 'web', key: `web:http://localhost:${vulnerableWeb.port}`, host: 'localhost', address: LOOPBACK, port: vulnerableWeb.port },
      fingerprintParts: ['http-exposed-git', `web:http://localhost:${vulnerableWeb.port}`, '/.git/HEAD'],
      source: 'builtin',
    });
    expect(git.evidence.url).toBe(`http://localhost:${vulnerableWeb.port}/.git/HEAD`);
    expect(git.evidence.request).toBe(`GET /.git/HEAD HTTP/1.1\r\nHost: localhost:${vulnerableWeb.port}`);
    expect(git.evidence.response).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*ref: refs\/heads\/main/);
    expect(git.evidence.extracted).toEqual({ ref: 'refs/heads/main' });
    expect(git.description).toBeTruthy();
    expect(git.remediation).toBeTruthy();

    const listings = byCheck('http-directory-listing');
    expect(listings.map((finding) => finding.matcher)).toEqual(['/files/']);
    expect(listings[0].evidence.extracted).toEqual({ path: '/files/', entries: ['backup.sql', 'id_rsa'] });

    const disclosures = byCheck('http-server-version-disclosure');
    expect(disclosures.map((finding) => [finding.matcher, finding.evidence.extracted?.version])).toEqual([
      ['header:server', '1.18.0'],
      ['header:x-powered-by', '8.1.2'],
    ]);

    const [headers] = byCheck('http-missing-security-headers');
    // Plain HTTP: HSTS is not expected there.
    expect(headers.evidence.extracted).toEqual({ missing: ['content-security-policy', 'x-frame-options', 'x-content-type-options'] });
    expect(byCheck('http-missing-security-headers')).toHaveLength(1);

    expect(findings).toHaveLength(5);
  });

  it('find nothing on a hardened app that answers 200 to every path (HTTP and HTTPS)', async () => {
    const { findings, errors } = await runChecks({ web: [hardenedWeb, hardenedHttpsWeb] }, { guard });
    expect(errors).toEqual([]);
    expect(findings).toEqual([]);
  });

  it('produce the same fingerprints on every run', async () => {
    const first = await runChecks({ web: [vulnerableWeb] }, { guard });
    const second = await runChecks({ web: [vulnerableWeb] }, { guard });
    expect(second.findings.map((f) => f.fingerprintParts)).toEqual(first.findings.map((f) => f.fingerprintParts));
    const fingerprints = first.findings.map((f) => findingFingerprint(f.fingerprintParts));
    expect(new Set(fingerprints).size).toBe(fingerprints.length);
    expect(fingerprints[0]).toMatch(/^[0-9a-f]{64}$/);
  });

  it('can be narrowed to some check ids', async () => {
    const { findings } = await runChecks({ web: [vulnerableWeb] }, { guard, checkIds: ['http-exposed-git'] });
    expect(findings.map((finding) => finding.checkId)).toEqual(['http-exposed-git']);
  });

  it('report a check that cannot reach its target as an error, not a crash', async () => {
    const port = await closedPort();
    const gone = { ...vulnerableWeb, port, url: `http://localhost:${port}/`, finalUrl: `http://localhost:${port}/` };
    const { findings, errors } = await runChecks({ web: [gone] }, { guard, checkIds: ['http-exposed-git'], timeoutMs: 1_000 });
    expect(findings).toEqual([]);
    expect(errors).toEqual([expect.objectContaining({ checkId: 'http-exposed-git', code: 'ECONNREFUSED' })]);
  });
});

describe('missingSecurityHeaders', () => {
  it('accepts CSP frame-ancestors instead of X-Frame-Options and insists on nosniff and a real HSTS max-age', () => {
    expect(missingSecurityHeaders(SECURITY_HEADERS, true)).toEqual([]);
    const { 'x-frame-options': _, ...withoutXfo } = SECURITY_HEADERS;
    expect(missingSecurityHeaders(withoutXfo, true)).toEqual([]);
    expect(missingSecurityHeaders({ ...SECURITY_HEADERS, 'x-content-type-options': 'sniff-away' }, true)).toEqual(['x-content-type-options']);
    expect(missingSecurityHeaders({ ...SECURITY_HEADERS, 'strict-transport-security': 'max-age=0' }, true)).toEqual(['strict-transport-security']);
    expect(missingSecurityHeaders({}, true)).toEqual(['strict-transport-security', 'content-security-policy', 'x-frame-options', 'x-content-type-options']);
  });
});

describe('built-in certificate checks', () => {
  it('flag expired and self-signed certificates, keyed by fingerprint', async () => {
    const { findings } = await runChecks({ certificates: [expiredCert, selfSignedCert] }, { guard });
    const summary = findings.map((finding) => [finding.checkId, finding.asset.key, finding.matcher]);
    const key = (cert: CertificateObservation) => `certificate:sha256:${cert.fingerprint256.replace(/:/g, '').toLowerCase()}`;
    expect(summary).toEqual(
      expect.arrayContaining([
        ['tls-expired-certificate', key(expiredCert), 'expired'],
        ['tls-self-signed-certificate', key(expiredCert), 'self-signed'],
        ['tls-self-signed-certificate', key(selfSignedCert), 'self-signed'],
      ]),
    );
    expect(summary).toHaveLength(3);
    const expiredFinding = findings.find((finding) => finding.checkId === 'tls-expired-certificate')!;
    expect(expiredFinding).toMatchObject({ severity: 'medium', evidence: { extracted: { validTo: '2020-02-01T00:00:00.000Z' } } });
  });

  it('leave a valid CA-issued certificate alone', async () => {
    const { findings } = await runChecks({ certificates: [caSignedCert] }, { guard });
    expect(findings).toEqual([]);
  });
});

describe('check sources', () => {
  it('accept extra checks next to the built-ins (the template-engine seam)', async () => {
    const custom: Check = {
      id: 'custom-title-check',
      name: 'Title mentions Friends',
      severity: 'info',
      description: 'test',
      remediation: 'none',
      appliesTo: 'web',
      source: 'templates',
      run: async (ctx) => {
        const response = await ctx.fetchPath('/');
        return response.body.includes('Friends') ? [{ matcher: 'title', evidence: { url: response.url } }] : [];
      },
    };
    const { findings } = await runChecks(
      { web: [vulnerableWeb, hardenedWeb] },
      { guard, checks: [...BUILTIN_CHECKS, custom], checkIds: ['custom-title-check'] },
    );
    expect(findings.map((finding) => [finding.checkId, finding.source, finding.asset.port])).toEqual([['custom-title-check', 'templates', vulnerableWeb.port]]);
  });

  it('every built-in check has complete metadata and a unique id', () => {
    expect(new Set(BUILTIN_CHECKS.map((check) => check.id)).size).toBe(BUILTIN_CHECKS.length);
    expect(BUILTIN_CHECKS.map((check) => check.id).sort()).toEqual([
      'http-directory-listing',
      'http-exposed-git',
      'http-missing-security-headers',
      'http-server-version-disclosure',
      'tls-expired-certificate',
      'tls-self-signed-certificate',
    ]);
    for (const check of BUILTIN_CHECKS) {
      expect(check.name && check.description && check.remediation).toBeTruthy();
      expect(['info', 'low', 'medium', 'high', 'critical']).toContain(check.severity);
    }
  });
});
