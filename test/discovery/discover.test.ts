import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discover, resolveCandidates } from '../../src/scanner/discovery/discover.js';
import { createDnsClient, type DiscoveryDnsClient } from '../../src/scanner/discovery/dns-client.js';
import { createNameScope } from '../../src/scanner/discovery/scope.js';
import { createWildcardFilter } from '../../src/scanner/discovery/wildcard.js';
import type { DiscoverOptions, DiscoveryReport } from '../../src/scanner/discovery/types.js';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.js';

// Everything on loopback: an authoritative DNS server for perimeter.test (AXFR allowed) and a crt.sh-shaped CT server.
const DOMAIN = 'perimeter.test';
const WORDLIST = ['www', 'api', 'dev', 'old', 'b', 'a', 'mail', 'secret', 'wild', 'nothere', 'staging'];

let server: TestDnsServer;
let ct: http.Server;
let ctUrl: string;
const clients: DiscoveryDnsClient[] = [];

beforeAll(async () => {
  server = await startDnsServer({
    zones: [
      {
        origin: DOMAIN,
        allowTransfer: true,
        records: [
          { name: '@', type: 'A', data: '127.0.0.2' },
          { name: '@', type: 'NS', data: 'ns1.perimeter.test' },
          { name: '@', type: 'MX', data: { preference: 10, exchange: 'mail.perimeter.test' } },
          { name: '@', type: 'TXT', data: 'v=spf1 include:_spf.partner.test a:relay.perimeter.test -all' },
          { name: 'ns1', type: 'A', data: '127.0.0.1' },
          { name: 'mail', type: 'A', data: '127.0.0.25' },
          { name: 'relay', type: 'A', data: '127.0.0.26' },
          { name: 'www', type: 'A', data: '127.0.0.3' },
          { name: 'api', type: 'CNAME', data: 'edge.perimeter.test' },
          { name: 'edge', type: 'A', data: '127.0.0.5' },
          { name: 'old', type: 'CNAME', data: 'gone-app.azurewebsites.net' },
          { name: 'dev', type: 'A', data: '127.0.0.6' },
          { name: 'dev1', type: 'A', data: '127.0.0.7' },
          { name: 'b', type: 'A', data: '127.0.0.8' },
          { name: 'a.b', type: 'A', data: '127.0.0.9' },
          { name: 'wild', type: 'A', data: '127.0.0.10' },
          { name: '*.wild', type: 'A', data: '127.0.0.100' },
          { name: 'secret', type: 'A', data: '127.0.0.11' },
          { name: 'ctonly', type: 'A', data: '127.0.0.12' },
          { name: 'hidden', type: 'A', data: '127.0.0.13' },
        ],
      },
      // The takeover target's zone exists and says NXDOMAIN for the deleted app.
      { origin: 'azurewebsites.net', records: [] },
    ],
  });
  ct = http.createServer((req, res) => {
    if (req.url?.startsWith('/down')) {
      res.statusCode = 503;
      res.end('maintenance');
      return;
    }
    res.setHeader('content-type', 'application/json');
    res.end(
      JSON.stringify([
        { common_name: 'www.perimeter.test', name_value: 'www.perimeter.test\n*.perimeter.test' },
        { common_name: 'ctonly.perimeter.test', name_value: 'ctonly.perimeter.test\nsecret.perimeter.test\nretired.perimeter.test' },
      ]),
    );
  });
  await new Promise<void>((resolve) => ct.listen(0, '127.0.0.1', resolve));
  ctUrl = `http://127.0.0.1:${(ct.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  for (const client of clients) client.close();
  await server.stop();
  ct.closeAllConnections();
  await new Promise<void>((resolve) => ct.close(() => resolve()));
});

function client(target: TestDnsServer = server, overrides: { timeoutMs?: number; tries?: number } = {}): DiscoveryDnsClient {
  const created = createDnsClient({ servers: [target.server], timeoutMs: 1000, authoritativePort: target.port, ...overrides });
  clients.push(created);
  return created;
}

const scope = createNameScope({ roots: [DOMAIN], exclusions: ['secret.perimeter.test'] });

function options(overrides: Partial<DiscoverOptions> = {}): DiscoverOptions {
  return { domain: DOMAIN, inScope: scope.inScope, wordlist: WORDLIST, maxDepth: 1, maxNames: 1000, maxPermutations: 0, ctUrl, ...overrides };
}

const hostNames = (report: DiscoveryReport) => report.hosts.map((host) => host.name);
const originsOf = (report: DiscoveryReport, name: string) => report.hosts.find((host) => host.name === name)?.origins;
const asked = (name: string) => server.queryLog().some((query) => query.name === name);

describe('discover: every source against one zone', () => {
  let report: DiscoveryReport;
  let queriesBefore: number;
  beforeAll(async () => {
    queriesBefore = server.queries();
    report = await discover(options(), { dns: client() });
  });

  it('records the hosts of the zone, sorted, and nothing that does not resolve', () => {
    expect(hostNames(report)).toEqual([
      'a.b.perimeter.test',
      'api.perimeter.test',
      'b.perimeter.test',
      'ctonly.perimeter.test',
      'dev.perimeter.test',
      'dev1.perimeter.test',
      'edge.perimeter.test',
      'hidden.perimeter.test',
      'mail.perimeter.test',
      'ns1.perimeter.test',
      'old.perimeter.test',
      'perimeter.test',
      'relay.perimeter.test',
      'wild.perimeter.test',
      'www.perimeter.test',
    ]);
    expect(report.domain).toBe(DOMAIN);
    expect(report.errors).toEqual([]);
  });

  it('gives each host every origin it was found by', () => {
    expect(originsOf(report, 'www.perimeter.test')).toEqual([
      { source: 'bruteforce', from: DOMAIN },
      { source: 'ct', from: DOMAIN },
      { source: 'axfr', from: 'ns1.perimeter.test' },
    ]);
    expect(originsOf(report, 'perimeter.test')).toContainEqual({ source: 'target' });
    expect(originsOf(report, 'ns1.perimeter.test')).toContainEqual({ source: 'dns', from: 'NS perimeter.test' });
    expect(originsOf(report, 'mail.perimeter.test')).toContainEqual({ source: 'dns', from: 'MX perimeter.test' });
    expect(originsOf(report, 'relay.perimeter.test')).toContainEqual({ source: 'dns', from: 'TXT perimeter.test' });
    expect(originsOf(report, 'ctonly.perimeter.test')).toContainEqual({ source: 'ct', from: DOMAIN });
    expect(originsOf(report, 'hidden.perimeter.test')).toEqual([{ source: 'axfr', from: 'ns1.perimeter.test' }]);
    expect(originsOf(report, 'edge.perimeter.test')).toContainEqual({ source: 'cname', from: 'host:api.perimeter.test' });
  });

  it('keeps the CNAME chain of an alias', () => {
    const api = report.hosts.find((host) => host.name === 'api.perimeter.test')!;
    expect(api.resolution).toMatchObject({ status: 'found', cname: ['edge.perimeter.test'], a: ['127.0.0.5'] });
  });

  it('reports the zone transfer it was allowed', () => {
    expect(report.zoneTransfers).toHaveLength(1);
    expect(report.zoneTransfers[0]).toMatchObject({ zone: DOMAIN, server: 'ns1.perimeter.test', address: '127.0.0.1', ok: true });
  });

  it('keeps a dangling CNAME as a host and reports it as a takeover candidate', () => {
    const old = report.hosts.find((host) => host.name === 'old.perimeter.test')!;
    expect(old.resolution).toMatchObject({ status: 'nxdomain', cname: ['gone-app.azurewebsites.net'] });
    expect(report.takeovers).toEqual([
      {
        name: 'old.perimeter.test',
        chain: ['gone-app.azurewebsites.net'],
        reason: 'dangling-cname',
        service: 'Microsoft Azure',
        evidence: 'CNAME chain ends in NXDOMAIN at gone-app.azurewebsites.net',
      },
    ]);
  });

  it('sets out-of-scope and excluded names aside without resolving them', () => {
    expect(report.outOfScope).toContainEqual({ name: '_spf.partner.test', origin: { source: 'dns', from: 'TXT perimeter.test' } });
    expect(report.outOfScope).toContainEqual({ name: 'gone-app.azurewebsites.net', origin: { source: 'cname', from: 'host:old.perimeter.test' } });
    expect(report.outOfScope).toContainEqual({ name: 'secret.perimeter.test', origin: { source: 'ct', from: DOMAIN } });
    expect(report.outOfScope).toContainEqual({ name: 'secret.perimeter.test', origin: { source: 'axfr', from: 'ns1.perimeter.test' } });
    expect(asked('_spf.partner.test')).toBe(false);
    expect(asked('secret.perimeter.test')).toBe(false);
    expect(hostNames(report)).not.toContain('secret.perimeter.test');
  });

  it('reports a wildcard zone once, never the names it makes up', () => {
    expect(report.wildcards).toEqual([{ zone: 'wild.perimeter.test', answers: ['127.0.0.100'] }]);
    expect(hostNames(report).filter((name) => name.endsWith('.wild.perimeter.test'))).toEqual([]);
  });

  it('counts the brute force of the domain (excluded names are not tried), CT names and questions', () => {
    expect(report.stats.bruteforce.tried).toBe(WORDLIST.length - 1);
    // www api dev old b mail wild
    expect(report.stats.bruteforce.found).toBe(7);
    expect(report.stats.bruteforce.ms).toBeGreaterThanOrEqual(0);
    // perimeter.test (from *.perimeter.test), www, ctonly, secret, retired: CT counts what it returned, in scope or not.
    expect(report.stats.ct.names).toBe(5);
    expect(report.stats.rounds).toBe(1);
    expect(report.stats.truncated).toBe(false);
    expect(report.stats.queries).toBeGreaterThan(0);
    expect(report.stats.queries).toBeLessThanOrEqual(server.queries() - queriesBefore);
  });
});

describe('discover: guessing', () => {
  const guessing = (overrides: Partial<DiscoverOptions>) => options({ sources: { axfr: false, ct: false, dns: false }, ...overrides, ctUrl: undefined });

  it('finds a permutation of a found label (dev → dev1)', async () => {
    const report = await discover(guessing({ maxPermutations: 50 }), { dns: client() });
    expect(originsOf(report, 'dev1.perimeter.test')).toEqual([{ source: 'permutation', from: DOMAIN }]);
    expect(report.stats.permutations.found).toBeGreaterThanOrEqual(1);
    expect(report.stats.permutations.tried).toBeGreaterThan(0);
    expect(report.stats.permutations.tried).toBeLessThanOrEqual(50);
    // Permutations do not count in the brute-force statistics.
    expect(report.stats.bruteforce.tried).toBe(WORDLIST.length - 1);
  });

  it('recurses: maxDepth 2 finds a.b under b, and never brute-forces under a wildcard zone', async () => {
    const shallow = await discover(guessing({}), { dns: client() });
    expect(hostNames(shallow)).not.toContain('a.b.perimeter.test');

    const before = server.queryLog().length;
    const report = await discover(guessing({ maxDepth: 2 }), { dns: client() });
    expect(originsOf(report, 'a.b.perimeter.test')).toEqual([{ source: 'bruteforce', from: 'b.perimeter.test' }]);
    expect(report.stats.rounds).toBe(2);
    expect(report.wildcards.map((zone) => zone.zone)).toEqual(['wild.perimeter.test']);
    expect(hostNames(report).filter((name) => name.endsWith('.wild.perimeter.test'))).toEqual([]);
    const log = server.queryLog().slice(before);
    expect(log.some((query) => query.name === 'www.wild.perimeter.test')).toBe(false);
    expect(log.some((query) => query.name === 'www.b.perimeter.test')).toBe(true);
    // The first round's statistics only.
    expect(report.stats.bruteforce.tried).toBe(WORDLIST.length - 1);
  });

  it('drops guesses under a wildcard domain that only the wildcard answered', async () => {
    const report = await discover(guessing({ domain: 'wild.perimeter.test', wordlist: ['x', 'y', 'z'] }), { dns: client() });
    expect(hostNames(report)).toEqual(['wild.perimeter.test']);
    expect(report.wildcards).toEqual([{ zone: 'wild.perimeter.test', answers: ['127.0.0.100'] }]);
    expect(report.stats.bruteforce.found).toBe(0);
  });
});

describe('discover: bounds and failures', () => {
  it('stops at maxNames and says so', async () => {
    const report = await discover(options({ maxNames: 3 }), { dns: client() });
    expect(report.hosts).toHaveLength(3);
    expect(report.stats.truncated).toBe(true);
  });

  it('records seeds with their origin', async () => {
    const report = await discover(
      options({
        sources: { bruteforce: false, axfr: false, ct: false, dns: false },
        seeds: [{ name: 'Hidden.Perimeter.test.', origin: { source: 'import' } }],
      }),
      {
        dns: client(),
      },
    );
    expect(report.hosts.map((host) => [host.name, host.origins])).toEqual([
      ['hidden.perimeter.test', [{ source: 'import' }]],
      ['perimeter.test', [{ source: 'target' }]],
    ]);
  });

  it('finishes with errors, not a hang, when the DNS server never answers', async () => {
    const dead = await startDnsServer({ zones: [{ origin: DOMAIN, records: [] }], override: () => 'drop' });
    try {
      const started = Date.now();
      const report = await discover(options({ ctUrl: undefined }), { dns: client(dead, { timeoutMs: 200, tries: 1 }) });
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(report.hosts).toEqual([]);
      const codes = report.errors.map((error) => error.code);
      expect(codes).toContain('dns');
      expect(codes).toContain('axfr');
      expect(codes).toContain('dns-unanswered');
      expect(report.errors.find((error) => error.code === 'dns-unanswered')?.message).toMatch(/names got no usable DNS answer/);
    } finally {
      await dead.stop();
    }
  });

  it('records a CT failure as an error and carries on', async () => {
    const report = await discover(options({ ctUrl: `${ctUrl}down` }), { dns: client() });
    expect(report.errors).toEqual([{ code: 'ct', message: `CT source ${ctUrl}down answered HTTP 503`, target: DOMAIN }]);
    expect(hostNames(report)).toContain('www.perimeter.test');
  });

  it('stops when cancelled and says so', async () => {
    const controller = new AbortController();
    controller.abort();
    const report = await discover(options({ signal: controller.signal }), { dns: client() });
    expect(report.errors.map((error) => error.code)).toContain('aborted');
    expect(report.stats.bruteforce.tried).toBe(0);
  });

  it('rejects options that make no sense', async () => {
    const dns = client();
    await expect(discover(options({ domain: 'not a domain' }), { dns })).rejects.toThrow(TypeError);
    await expect(discover(options({ domain: '127.0.0.1' }), { dns })).rejects.toThrow(/not a domain name/);
    await expect(discover(options({ maxDepth: 0 }), { dns })).rejects.toThrow(/maxDepth must be a positive integer/);
    await expect(discover(options({ maxNames: 1.5 }), { dns })).rejects.toThrow(RangeError);
    await expect(discover(options({ wordlist: ['ok', 'bad label'] }), { dns })).rejects.toThrow(/wordlist entry 2/);
  });
});

describe('resolveCandidates', () => {
  it('resolves in-scope names once, sets the others aside, follows CNAMEs and spots dangling ones', async () => {
    const dns = client();
    const before = server.queryLog().length;
    const result = await resolveCandidates(
      [
        { name: 'api.perimeter.test', origin: { source: 'certificate', from: 'certificate:sha256:ab' } },
        { name: 'api.perimeter.test', origin: { source: 'link', from: 'web:https://www.perimeter.test:443' } },
        { name: 'old.perimeter.test', origin: { source: 'link', from: 'web:https://www.perimeter.test:443' } },
        { name: 'cdn.partner.test', origin: { source: 'link', from: 'web:https://www.perimeter.test:443' } },
        { name: 'secret.perimeter.test', origin: { source: 'certificate', from: 'certificate:sha256:ab' } },
        { name: 'nothere.perimeter.test', origin: { source: 'certificate', from: 'certificate:sha256:ab' } },
      ],
      { dns, inScope: scope.inScope },
    );
    expect(result.hosts.map((host) => [host.name, host.origins])).toEqual([
      [
        'api.perimeter.test',
        [
          { source: 'certificate', from: 'certificate:sha256:ab' },
          { source: 'link', from: 'web:https://www.perimeter.test:443' },
        ],
      ],
      ['edge.perimeter.test', [{ source: 'cname', from: 'host:api.perimeter.test' }]],
      ['old.perimeter.test', [{ source: 'link', from: 'web:https://www.perimeter.test:443' }]],
    ]);
    expect(result.outOfScope.map((entry) => entry.name)).toEqual(['cdn.partner.test', 'gone-app.azurewebsites.net', 'secret.perimeter.test']);
    expect(result.takeovers.map((candidate) => candidate.name)).toEqual(['old.perimeter.test']);
    const log = server.queryLog().slice(before);
    // A and AAAA once each, though the name came twice.
    expect(log.filter((query) => query.name === 'api.perimeter.test')).toHaveLength(2);
    expect(log.some((query) => query.name === 'cdn.partner.test' || query.name === 'secret.perimeter.test')).toBe(false);
  });

  it('drops guessed names a wildcard answered, but keeps names something pointed at', async () => {
    const dns = client();
    const result = await resolveCandidates(
      [
        { name: 'guess.wild.perimeter.test', origin: { source: 'permutation', from: 'wild.perimeter.test' } },
        { name: 'linked.wild.perimeter.test', origin: { source: 'link', from: 'web:https://www.perimeter.test:443' } },
      ],
      { dns, inScope: scope.inScope, wildcard: createWildcardFilter(dns) },
    );
    expect(result.hosts.map((host) => host.name)).toEqual(['linked.wild.perimeter.test']);
  });
});
