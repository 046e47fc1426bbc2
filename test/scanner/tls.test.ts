import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHostRateLimiter, createScopeGuard, inspectTls, ScopeError, TlsInspectionError } from '../../src/scanner/index.js';
import { closedPort, LOOPBACK, makeCertificates, startHttpServer, startHttpsServer, type Started, type TestCertificates } from './helpers.js';

const guard = createScopeGuard({ allowedNetworks: ['127.0.0.0/8', '::1/128'] });
const ok = { '/': (_req: unknown, res: { end(body: string): void }) => res.end('ok') };

let certs: TestCertificates;
let selfSigned: Started;
let expired: Started;
let caSigned: Started;
let plain: Started;

beforeAll(async () => {
  certs = makeCertificates();
  selfSigned = await startHttpsServer(certs.selfSigned, ok);
  expired = await startHttpsServer(certs.expired, ok);
  caSigned = await startHttpsServer({ key: certs.caSigned.key, cert: certs.caSigned.cert }, ok);
  plain = await startHttpServer(ok);
});
afterAll(async () => {
  await Promise.all([selfSigned.close(), expired.close(), caSigned.close(), plain.close()]);
  certs.cleanup();
});

describe('inspectTls', () => {
  it('describes a self-signed certificate', async () => {
    const cert = await inspectTls({ host: 'localhost', address: LOOPBACK, port: selfSigned.port, guard, timeoutMs: 2_000 });
    const expected = new X509Certificate(certs.selfSigned.cert);
    expect(cert).toMatchObject({
      kind: 'certificate',
      host: 'localhost',
      address: LOOPBACK,
      port: selfSigned.port,
      subjectCN: 'localhost',
      subject: 'CN=localhost, O=Perimeter Test',
      issuerCN: 'localhost',
      sans: ['localhost', '127.0.0.1'],
      serialNumber: expected.serialNumber,
      fingerprint256: expected.fingerprint256,
      validTo: new Date(expected.validTo).toISOString(),
      selfSigned: true,
      expired: false,
      notYetValid: false,
      trusted: false,
      trustError: 'DEPTH_ZERO_SELF_SIGNED_CERT',
      publicKeyAlgorithm: 'ec',
      publicKeyBits: 256,
    });
    expect(cert.daysUntilExpiry).toBeGreaterThan(3_600);
    expect(cert.protocol).toMatch(/^TLSv1\.[23]$/);
    expect(cert.cipher).toBeTruthy();
    expect(JSON.parse(JSON.stringify(cert))).toEqual(cert);
  });

  it('marks an expired certificate expired, with negative days left', async () => {
    const cert = await inspectTls({ host: LOOPBACK, address: LOOPBACK, port: expired.port, guard, timeoutMs: 2_000 });
    expect(cert).toMatchObject({
      subjectCN: 'expired.localhost',
      validFrom: '2020-01-01T00:00:00.000Z',
      validTo: '2020-02-01T00:00:00.000Z',
      expired: true,
      selfSigned: true,
      sans: [],
    });
    expect(cert.daysUntilExpiry).toBeLessThan(0);
  });

  it('does not call a CA-issued certificate self-signed, even though we do not trust that CA', async () => {
    const cert = await inspectTls({ host: 'localhost', address: LOOPBACK, port: caSigned.port, guard, timeoutMs: 2_000 });
    expect(cert).toMatchObject({ subjectCN: 'localhost', issuerCN: 'Perimeter Test CA', selfSigned: false, expired: false, trusted: false });
    expect(cert.trustError).toBe('UNABLE_TO_VERIFY_LEAF_SIGNATURE');
  });

  it('judges expiry against the given clock', async () => {
    const cert = await inspectTls({
      host: 'localhost',
      address: LOOPBACK,
      port: caSigned.port,
      guard,
      now: new Date('2100-01-01T00:00:00Z'),
      timeoutMs: 2_000,
    });
    expect(cert.expired).toBe(true);
  });

  it('fails with TlsInspectionError on a plain HTTP port and on a closed port', async () => {
    await expect(inspectTls({ host: LOOPBACK, address: LOOPBACK, port: plain.port, guard, timeoutMs: 2_000 })).rejects.toBeInstanceOf(TlsInspectionError);
    const port = await closedPort();
    await expect(inspectTls({ host: LOOPBACK, address: LOOPBACK, port, guard, timeoutMs: 2_000 })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('refuses out-of-scope addresses and uses the limiter', async () => {
    await expect(
      inspectTls({ host: 'localhost', address: LOOPBACK, port: selfSigned.port, guard: createScopeGuard({ allowedNetworks: [] }) }),
    ).rejects.toBeInstanceOf(ScopeError);
    const limiter = createHostRateLimiter({ maxConcurrentPerHost: 1 });
    const certsSeen = await Promise.all([selfSigned.port, expired.port].map((port) => inspectTls({ host: LOOPBACK, address: LOOPBACK, port, guard, limiter })));
    expect(certsSeen.map((c) => c.subjectCN)).toEqual(['localhost', 'expired.localhost']);
  });
});
