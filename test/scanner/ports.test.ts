import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHostRateLimiter, createScopeGuard, parsePortSpec, scanPorts, TOP_PORTS } from '../../src/scanner/index.js';
import { closedPort, installTripwire, LOOPBACK, startBannerServer, startHttpServer, type Started, type Tripwire } from './helpers.js';

const guard = createScopeGuard({ allowedNetworks: ['127.0.0.0/8', '::1/128'] });
let tripwire: Tripwire;
let ssh: Started;
let web: Started;
let closed: number;

beforeAll(async () => {
  tripwire = installTripwire();
  ssh = await startBannerServer('SSH-2.0-OpenSSH_9.2p1\r\n');
  web = await startHttpServer({ '/': (_req, res) => res.end('hi') });
  closed = await closedPort();
});
afterAll(async () => {
  await ssh.close();
  await web.close();
  tripwire.restore();
});

describe('scanPorts', () => {
  it('reports open ports with banner and service, and nothing for the closed port', async () => {
    const results = await scanPorts({ address: LOOPBACK, ports: [closed, web.port, ssh.port], guard, timeoutMs: 1_000, bannerTimeoutMs: 150 });
    expect(results.map((r) => r.port)).toEqual([ssh.port, web.port].sort((a, b) => a - b));
    const sshResult = results.find((r) => r.port === ssh.port)!;
    expect(sshResult).toEqual({
      kind: 'service',
      address: LOOPBACK,
      port: ssh.port,
      transport: 'tcp',
      open: true,
      banner: 'SSH-2.0-OpenSSH_9.2p1',
      service: 'ssh',
      product: 'OpenSSH',
      version: '9.2p1',
    });
    const webResult = results.find((r) => r.port === web.port)!;
    expect(webResult.open).toBe(true);
    expect(webResult.banner).toBeUndefined(); // HTTP servers wait for the client
  });

  it('can skip the banner grab', async () => {
    const [result] = await scanPorts({ address: LOOPBACK, ports: [ssh.port], guard, grabBanner: false });
    expect(result.port).toBe(ssh.port);
    expect(result.banner).toBeUndefined();
  });

  // Speed is measured by `npm run bench:scan` (side by side with nmap), not asserted here.
  it('sweeps 1,000 ports through the limiter and finds the open one among them', async () => {
    const ports = Array.from({ length: 1_000 }, (_, i) => 20_000 + i).filter((p) => p !== web.port && p !== ssh.port);
    const limiter = createHostRateLimiter({ maxConcurrentPerHost: 200, maxPerSecondPerHost: 100_000 });
    const results = await scanPorts({ address: LOOPBACK, ports: [...ports, ssh.port], guard, limiter, concurrency: 200, bannerTimeoutMs: 50 });
    expect(results.map((r) => r.port)).toContain(ssh.port);
  });

  it("keeps within the limiter's per-host concurrency", async () => {
    const limiter = createHostRateLimiter({ maxConcurrentPerHost: 4, maxPerSecondPerHost: 100_000 });
    let peak = 0;
    const watching = setInterval(() => (peak = Math.max(peak, limiter.active(LOOPBACK))), 1);
    const ports = Array.from({ length: 40 }, (_, i) => 30_000 + i);
    await scanPorts({ address: LOOPBACK, ports: [...ports, ssh.port], guard, limiter, concurrency: 50, bannerTimeoutMs: 30 });
    clearInterval(watching);
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThanOrEqual(4);
  });

  it('rejects names and invalid ports', async () => {
    await expect(scanPorts({ address: 'localhost', ports: [80], guard })).rejects.toThrow(/needs an IP address/);
    await expect(scanPorts({ address: LOOPBACK, ports: [0], guard })).rejects.toThrow(/Invalid port 0/);
    await expect(scanPorts({ address: LOOPBACK, ports: [70_000], guard })).rejects.toThrow(/Invalid port 70000/);
  });
});

describe('parsePortSpec', () => {
  it('expands lists and ranges into sorted unique ports', () => {
    expect(parsePortSpec('443, 80,8000-8003,80')).toEqual([80, 443, 8000, 8001, 8002, 8003]);
    expect(parsePortSpec('1-65535', 70_000)).toHaveLength(65_535);
  });

  it.each([
    ['', /empty/],
    ['0', /Invalid port 0 in "0": ports must be between 1 and 65535/],
    ['65536', /between 1 and 65535/],
    ['100-80', /start is greater than the end/],
    ['http', /Invalid port spec entry "http"/],
    ['1-20000', /covers 20000 ports; at most 10000/],
  ])('rejects %j', (spec, message) => {
    expect(() => parsePortSpec(spec)).toThrow(message);
  });
});

describe('TOP_PORTS', () => {
  it('is 100 unique, valid, sorted ports including the usual suspects', () => {
    expect(TOP_PORTS).toHaveLength(100);
    expect(new Set(TOP_PORTS).size).toBe(100);
    expect([...TOP_PORTS].sort((a, b) => a - b)).toEqual(TOP_PORTS);
    for (const port of [22, 80, 443, 3306, 3389, 5432, 6379, 8080, 8443, 27017]) expect(TOP_PORTS).toContain(port);
  });
});
