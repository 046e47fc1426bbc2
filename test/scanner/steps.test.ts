import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createHostRateLimiter,
  createScopeGuard,
  isRetryableStepError,
  runStep,
  ScopeError,
  StepInputError,
  type CertificateObservation,
  type ServiceObservation,
  type StepDeps,
  type WebObservation,
} from '../../src/scanner/index.js';
import {
  closedPort,
  installTripwire,
  LOOPBACK,
  makeCertificates,
  startBannerServer,
  startHttpServer,
  startHttpsServer,
  vulnerableRoutes,
  type Started,
  type TestCertificates,
  type Tripwire,
} from './helpers.js';

const deps: StepDeps = {
  guard: createScopeGuard({ allowedNetworks: ['127.0.0.0/8', '::1/128'] }),
  limiter: createHostRateLimiter({ maxConcurrentPerHost: 50, maxPerSecondPerHost: 5_000 }),
};
/** What a job queue does to inputs and results: they must survive it unchanged. */
const overTheQueue = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

let tripwire: Tripwire;
let certs: TestCertificates;
let web: Started;
let secure: Started;
let ssh: Started;
let closed: number;

beforeAll(async () => {
  tripwire = installTripwire();
  certs = makeCertificates();
  web = await startHttpServer(vulnerableRoutes);
  secure = await startHttpsServer(certs.selfSigned, { '/': (_req, res) => res.end('<title>TLS</title>') });
  ssh = await startBannerServer('SSH-2.0-OpenSSH_9.2p1\r\n');
  closed = await closedPort();
});
afterAll(async () => {
  await Promise.all([web.close(), secure.close(), ssh.close()]);
  certs.cleanup();
  tripwire.restore();
});

describe('runStep: dns → ports → http/tls → checks over JSON', () => {
  it('finds what is there and nothing that is not', async () => {
    const dns = overTheQueue(await runStep('dns', overTheQueue({ host: 'localhost' }), deps));
    expect(dns.step).toBe('dns');
    expect(dns.observations[0]).toMatchObject({ kind: 'host', host: 'localhost', outOfScope: [] });
    const address = dns.observations[0].a[0];
    expect(address).toBe(LOOPBACK);

    const portSpec = [closed, web.port, secure.port, ssh.port].join(',');
    const ports = overTheQueue(await runStep('ports', { address, host: 'localhost', ports: portSpec, timeoutMs: 1_000 }, deps));
    expect(ports.errors).toEqual([]);
    const open = ports.observations as ServiceObservation[];
    expect(open.map((service) => service.port)).toEqual([web.port, secure.port, ssh.port].sort((a, b) => a - b));
    expect(open.find((service) => service.port === ssh.port)).toMatchObject({ host: 'localhost', service: 'ssh', banner: 'SSH-2.0-OpenSSH_9.2p1' });

    // The queue fans out one http and one tls step per open port; non-web and non-TLS ports come back empty with a reason.
    const webResults = await Promise.all(open.map((service) => runStep('http', { host: 'localhost', address, port: service.port, timeoutMs: 1_000 }, deps)));
    const tlsResults = await Promise.all(open.map((service) => runStep('tls', { host: 'localhost', address, port: service.port, timeoutMs: 1_000 }, deps)));
    const webs = overTheQueue(webResults.flatMap((result) => result.observations)) as WebObservation[];
    const certificates = overTheQueue(tlsResults.flatMap((result) => result.observations)) as CertificateObservation[];
    expect(webs.map((w) => [w.port, w.scheme]).sort()).toEqual(
      [
        [web.port, 'http'],
        [secure.port, 'https'],
      ].sort(),
    );
    expect(certificates.map((c) => c.port)).toEqual([secure.port]);
    expect(webResults.find((result) => result.observations.length === 0)?.errors[0]).toMatchObject({ target: `localhost:${ssh.port}` });
    expect(tlsResults.filter((result) => result.errors.length > 0)).toHaveLength(2);

    const checks = overTheQueue(await runStep('checks', { web: webs, certificates }, deps));
    expect(checks.errors).toEqual([]);
    const found = checks.observations.map((finding) => `${finding.checkId} ${finding.asset.port ?? ''} ${finding.matcher}`).sort();
    expect(found).toEqual(
      [
        `http-directory-listing ${web.port} /files/`,
        `http-exposed-git ${web.port} /.git/HEAD`,
        `http-missing-security-headers ${secure.port} missing-security-headers`,
        `http-missing-security-headers ${web.port} missing-security-headers`,
        `http-server-version-disclosure ${web.port} header:server`,
        `http-server-version-disclosure ${web.port} header:x-powered-by`,
        `tls-self-signed-certificate ${secure.port} self-signed`,
      ].sort(),
    );
    // Nothing left loopback.
    expect(tripwire.attempts.filter((target) => !/^(127\.|localhost:|::1)/.test(target))).toEqual([]);
  });
});

describe('runStep errors', () => {
  it('rejects unknown steps and bad input as permanent StepInputError', async () => {
    const bad: Array<[string, unknown, RegExp]> = [
      ['nmap', {}, /Unknown scan step "nmap"/],
      ['dns', {}, /Invalid input for scan step "dns"/],
      ['ports', { address: 'localhost' }, /must be an IP address/],
      ['ports', { address: LOOPBACK, ports: '1-99999' }, /between 1 and 65535/],
      ['http', { address: LOOPBACK, port: 0 }, /port/],
      ['checks', { web: [{ kind: 'certificate' }] }, /must be a web observation/],
      ['dns', { host: 'bad host!' }, /not a valid host name/],
    ];
    for (const [step, input, message] of bad) {
      const err = await runStep(step as 'dns', input, deps).catch((e: unknown) => e);
      expect(err, `${step} ${JSON.stringify(input)}`).toBeInstanceOf(StepInputError);
      expect((err as Error).message).toMatch(message);
      expect(isRetryableStepError(err)).toBe(false);
    }
  });

  it('throws ScopeError (not retryable) for out-of-scope targets instead of returning an empty result', async () => {
    const closedDeps: StepDeps = { guard: createScopeGuard({ allowedNetworks: [] }) };
    for (const [step, input] of [
      ['ports', { address: LOOPBACK, ports: [web.port] }],
      ['http', { address: LOOPBACK, port: web.port }],
      ['tls', { address: LOOPBACK, port: secure.port }],
      ['http', { address: '169.254.169.254', port: 80 }],
    ] as const) {
      const err = await runStep(step, input, closedDeps).catch((e: unknown) => e);
      expect(err, `${step} ${JSON.stringify(input)}`).toBeInstanceOf(ScopeError);
      expect(isRetryableStepError(err)).toBe(false);
    }
    // DNS only talks to resolvers, so it runs, and says which answers are out of scope.
    const dns = await runStep('dns', { host: 'localhost' }, closedDeps);
    expect(dns.observations[0].outOfScope).toEqual([{ address: LOOPBACK, reason: '127.0.0.0/8 (loopback)' }]);
  });

  it('treats infrastructure errors as retryable', () => {
    expect(isRetryableStepError(Object.assign(new Error('timeout'), { code: 'ETIMEOUT' }))).toBe(true);
  });
});
