/**
 * Discovery's bad inputs: bounds and lists that make no sense are 400s with the field named and nothing
 * written; a domain DNS does not know, or name servers that never answer, end the discovery step with the
 * reason in its error instead of hanging the scan.
 */
import dgram from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { startDnsServer, type TestDnsServer } from './support/dns-server.js';
import { addTarget, waitForScan } from './support/scans.js';

const BASE_ENV = { SCAN_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128', QUEUE_SUPERVISE_SECONDS: '1', SCAN_STEP_RETRIES: '0' };

describe('scan options of discovery', () => {
  let server: TestApp;
  let client: ReturnType<typeof clientFor>;
  let owner: TestUser;
  let workspaceId: string;
  let targetId: string;

  beforeAll(async () => {
    server = await startTestApp({ ...BASE_ENV, WORKERS: 'false' });
    client = clientFor(server);
    owner = await client.signUp('Bounds');
    workspaceId = (await client.createWorkspace(owner)).id;
    targetId = (await addTarget(client, owner, workspaceId, 'bounds.test')).id;
  });
  afterAll(() => server?.stop());

  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['recursion too deep', { maxDepth: 99 }, /maxDepth/],
    ['no names at all', { maxNames: 0 }, /maxNames/],
    ['too many permutations', { maxPermutations: 1_000_000 }, /maxPermutations/],
    ['an unknown source', { sources: ['rumour'] }, /sources/],
    ['a label that is not DNS', { wordlist: ['ok', 'not a label'] }, /wordlist/],
    ['an oversized wordlist', { wordlist: Array.from({ length: 10_001 }, (_, i) => `w${i}`) }, /wordlist/],
    ['an unknown option', { depth: 2 }, /depth/],
  ];
  for (const [what, discovery, field] of cases) {
    it(`refuses ${what} with a 400 naming the field, and starts nothing`, async () => {
      const response = await client.api('POST', '/api/v1/api/scans', { as: owner, workspaceId, body: { targetId, options: { discovery } } });
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('VALIDATION_FAILED');
      expect(JSON.stringify(response.body)).toMatch(field);
      const scans = await client.api('GET', '/api/v1/api/scans', { as: owner, workspaceId });
      expect(scans.body.total).toBe(0);
    });
  }

  it('refuses the same bounds through GraphQL as a ValidationError', async () => {
    const target = Buffer.from(`Target:${targetId}`).toString('base64');
    const result = await client.gql(
      `mutation($t: ID!) { startScan(targetId: $t, options: { discovery: { maxDepth: 9 } }) { __typename ... on ValidationError { message } } }`,
      { as: owner, variables: { t: target } },
    );
    expect(result.errors).toBeUndefined();
    expect(result.data.startScan.__typename).toBe('ValidationError');
  });
});

describe('discovery when DNS has no answer', () => {
  let dns: TestDnsServer;
  let dead: dgram.Socket;

  beforeAll(async () => {
    dns = await startDnsServer({ zones: [{ origin: 'real.test', records: [{ name: 'real.test', type: 'A', data: '127.0.0.1' }] }] });
    // A name server that receives every question and answers none.
    dead = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => dead.bind(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    dead?.close();
    await dns?.stop();
  });

  async function scanOf(server: TestApp, domain: string) {
    const client = clientFor(server);
    const owner = await client.signUp('NoAnswer');
    const workspaceId = (await client.createWorkspace(owner)).id;
    const target = await addTarget(client, owner, workspaceId, domain);
    const started = await client.api('POST', '/api/v1/api/scans', { as: owner, workspaceId, body: { targetId: target.id, options: { ports: '80' } } });
    expect(started.status).toBe(201);
    const scan = await waitForScan(client, owner, workspaceId, started.body.id, { timeoutMs: 60_000 });
    const hosts = await client.api('GET', '/api/v1/api/assets?kind=host', { as: owner, workspaceId });
    return { scan, hosts: hosts.body.data as any[] };
  }

  it('completes the scan of a domain DNS does not know, with NXDOMAIN as the discovery step error', async () => {
    const server = await startTestApp({ ...BASE_ENV, SCAN_DNS_SERVERS: dns.server });
    try {
      const { scan, hosts } = await scanOf(server, 'missing.real.test');
      expect(scan.status).toBe('COMPLETED');
      const discovery = scan.steps.find((step: any) => step.name === 'discovery');
      expect(discovery).toMatchObject({ status: 'COMPLETED' });
      expect(discovery.error).toMatch(/NXDOMAIN/);
      expect(hosts.map((host) => host.value)).toEqual(['missing.real.test']);
    } finally {
      await server.stop();
    }
  }, 90_000);

  it('ends discovery quickly with the reason when no name server answers, and the scan does not hang', async () => {
    const port = (dead.address() as AddressInfo).port;
    const server = await startTestApp({ ...BASE_ENV, SCAN_DNS_SERVERS: `127.0.0.1:${port}`, SCAN_DNS_TIMEOUT_MS: '200' });
    try {
      const started = Date.now();
      const { scan, hosts } = await scanOf(server, 'nowhere.test');
      expect(Date.now() - started).toBeLessThan(45_000);
      const discovery = scan.steps.find((step: any) => step.name === 'discovery');
      expect(discovery).toMatchObject({ status: 'COMPLETED' });
      expect(discovery.error).toMatch(/DNS_UNANSWERED.*SCAN_DNS_SERVERS/);
      // The dns step cannot resolve the target either: the scan fails with that reason rather than waiting.
      expect(scan.status).toBe('FAILED');
      expect(scan.error).toMatch(/dns step failed/);
      expect(hosts).toEqual([]);
    } finally {
      await server.stop();
    }
  }, 90_000);
});
