import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bruteforce } from '../../src/scanner/discovery/bruteforce.js';
import { createDnsClient, type DiscoveryDnsClient } from '../../src/scanner/discovery/dns-client.js';
import { createWildcardFilter, detectWildcard, randomLabel } from '../../src/scanner/discovery/wildcard.js';
import type { NameResolution } from '../../src/scanner/discovery/types.js';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.js';

// A real authoritative server on loopback: wildcards answer like real ones (RFC 4592).
let server: TestDnsServer;
let dns: DiscoveryDnsClient;

beforeAll(async () => {
  server = await startDnsServer({
    delayMs: 2,
    zones: [
      {
        origin: 'example.test',
        records: [
          { name: '@', type: 'A', data: '127.0.0.2' },
          { name: 'www', type: 'A', data: '127.0.0.3' },
          { name: 'api', type: 'A', data: '127.0.0.4' },
          { name: 'alias', type: 'CNAME', data: 'www.example.test' },
          // *.wild answers everything under wild with one address; real.wild has its own.
          { name: 'wild', type: 'A', data: '127.0.0.9' },
          { name: '*.wild', type: 'A', data: '127.0.0.100' },
          { name: 'real.wild', type: 'A', data: '127.0.0.50' },
          { name: 'same.wild', type: 'A', data: '127.0.0.100' },
          // *.cdn answers with an alias to a load balancer.
          { name: '*.cdn', type: 'CNAME', data: 'lb.example.test' },
          { name: 'lb', type: 'A', data: '127.0.0.70' },
          { name: 'shop.cdn', type: 'CNAME', data: 'www.example.test' },
        ],
      },
    ],
  });
  dns = createDnsClient({ servers: [server.server], timeoutMs: 1000 });
});

afterAll(async () => {
  dns.close();
  await server.stop();
});

const resolution = (name: string, a: string[], cname: string[] = []): NameResolution => ({ name, status: 'found', a, aaaa: [], cname });

describe('randomLabel', () => {
  it('makes 16 lower-case letters and digits, different every time', () => {
    const labels = new Set(Array.from({ length: 50 }, () => randomLabel()));
    expect(labels.size).toBe(50);
    for (const label of labels) expect(label).toMatch(/^[a-z0-9]{16}$/);
  });
});

describe('detectWildcard', () => {
  it('finds the wildcard of a zone and what it answers', async () => {
    expect(await detectWildcard('wild.example.test', dns)).toEqual({ zone: 'wild.example.test', answers: ['127.0.0.100'] });
  });

  it('includes the CNAME target a wildcard alias leads to', async () => {
    const found = await detectWildcard('cdn.example.test', dns, { probes: 2 });
    expect(found?.answers).toEqual(['127.0.0.70', 'lb.example.test']);
  });

  it('returns null for a zone without a wildcard, after asking random labels only', async () => {
    const before = server.queryLog().length;
    expect(await detectWildcard('example.test', dns, { probes: 3 })).toBeNull();
    const asked = server.queryLog().slice(before);
    const names = new Set(asked.map((query) => query.name));
    expect(names.size).toBe(3);
    for (const name of names) expect(name).toMatch(/^[a-z0-9]{16}\.example\.test$/);
  });
});

describe('createWildcardFilter', () => {
  it('calls a name noise when its parent is a wildcard and it got only the wildcard answers', async () => {
    const filter = createWildcardFilter(dns);
    expect(await filter.isWildcardNoise('anything.wild.example.test', resolution('anything.wild.example.test', ['127.0.0.100']))).toBe(true);
    expect(await filter.isWildcardNoise('real.wild.example.test', resolution('real.wild.example.test', ['127.0.0.50']))).toBe(false);
    // A name in a wildcard's zone, answered by the wildcard's CNAME target, is noise; its own alias is not.
    expect(await filter.isWildcardNoise('x.cdn.example.test', resolution('x.cdn.example.test', ['127.0.0.70'], ['lb.example.test']))).toBe(true);
    expect(await filter.isWildcardNoise('shop.cdn.example.test', resolution('shop.cdn.example.test', ['127.0.0.3'], ['www.example.test']))).toBe(false);
    // No wildcard above: never noise.
    expect(await filter.isWildcardNoise('www.example.test', resolution('www.example.test', ['127.0.0.3']))).toBe(false);
    expect(filter.wildcards().map((zone) => zone.zone)).toEqual(['cdn.example.test', 'wild.example.test']);
  });

  it('asks once per zone, even for concurrent callers', async () => {
    const filter = createWildcardFilter(dns, { probes: 2 });
    const before = server.queries();
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => filter.isWildcardNoise(`n${i}.wild.example.test`, resolution(`n${i}.wild.example.test`, ['127.0.0.100']))),
    );
    // Two random labels, A and AAAA each.
    expect(server.queries() - before).toBe(4);
    expect(await filter.zone('wild.example.test')).toEqual({ zone: 'wild.example.test', answers: ['127.0.0.100'] });
    expect(server.queries() - before).toBe(4);
  });

  it('never calls a name that did not resolve noise, and asks nothing for it', async () => {
    const filter = createWildcardFilter(dns);
    const before = server.queries();
    expect(await filter.isWildcardNoise('gone.example.test', { name: 'gone.example.test', status: 'nxdomain', a: [], aaaa: [], cname: [] })).toBe(false);
    expect(server.queries()).toBe(before);
  });
});

describe('bruteforce', () => {
  const labels = ['www', 'api', 'alias', 'nothere', 'wild', 'mail', 'ftp'];

  it('finds the names of a wordlist that exist, with counts', async () => {
    const found: string[] = [];
    const result = await bruteforce('example.test', labels, dns, { onFound: (hit) => found.push(hit.name) });
    expect(result.hits.map((hit) => hit.name).sort()).toEqual(['alias.example.test', 'api.example.test', 'wild.example.test', 'www.example.test']);
    expect(found.sort()).toEqual(result.hits.map((hit) => hit.name).sort());
    expect(result).toMatchObject({ tried: 7, found: 4, errors: 0, wildcardNoise: 0, stopped: false });
    expect(result.hits.find((hit) => hit.name === 'alias.example.test')?.cname).toEqual(['www.example.test']);
  });

  it('drops wildcard noise under a wildcard zone but keeps names with answers of their own', async () => {
    const wildcard = createWildcardFilter(dns);
    const result = await bruteforce('wild.example.test', ['real', 'same', 'www', 'api', 'dev', 'x1', 'x2'], dns, { wildcard });
    expect(result.hits.map((hit) => hit.name)).toEqual(['real.wild.example.test']);
    // same.wild has a record of its own, but its answer is the wildcard's: indistinguishable, so dropped too.
    expect(result.wildcardNoise).toBe(6);
  });

  it('skips names out of scope without asking', async () => {
    const before = server.queryLog().length;
    const result = await bruteforce('example.test', labels, dns, { inScope: (name) => !name.startsWith('api.') });
    expect(result.tried).toBe(6);
    expect(result.hits.map((hit) => hit.name)).not.toContain('api.example.test');
    expect(
      server
        .queryLog()
        .slice(before)
        .some((query) => query.name === 'api.example.test'),
    ).toBe(false);
  });

  it('keeps at most `concurrency` names in flight and still asks them all', async () => {
    const many = Array.from({ length: 300 }, (_, i) => `host${i}`);
    const slow = await startDnsServer({ zones: [{ origin: 'example.test', records: [{ name: 'host7', type: 'A', data: '127.0.0.7' }] }], delayMs: 20 });
    const slowClient = createDnsClient({ servers: [slow.server], timeoutMs: 2000, concurrencyPerServer: 1000, queriesPerSecondPerServer: 100_000 });
    try {
      const result = await bruteforce('example.test', many, slowClient, { concurrency: 10 });
      expect(result.tried).toBe(300);
      expect(result.hits.map((hit) => hit.name)).toEqual(['host7.example.test']);
      // A and AAAA per name: at most 2 × 10 questions at once.
      expect(slow.maxInFlight()).toBeLessThanOrEqual(20);
      expect(slow.maxInFlight()).toBeGreaterThanOrEqual(10);
    } finally {
      slowClient.close();
      await slow.stop();
    }
  });

  it('stops when the signal aborts, or at maxTried', async () => {
    const many = Array.from({ length: 200 }, (_, i) => `n${i}`);
    const controller = new AbortController();
    controller.abort();
    const aborted = await bruteforce('example.test', many, dns, { signal: controller.signal });
    expect(aborted).toMatchObject({ tried: 0, stopped: true });
    const bounded = await bruteforce('example.test', many, dns, { maxTried: 50, concurrency: 8 });
    expect(bounded.tried).toBe(50);
    expect(bounded.stopped).toBe(true);
  });

  it('counts names the server could not answer as errors', async () => {
    const failing = await startDnsServer({ zones: [{ origin: 'example.test', records: [] }], override: () => 'SERVFAIL' });
    const client = createDnsClient({ servers: [failing.server], timeoutMs: 500, tries: 1 });
    try {
      const result = await bruteforce('example.test', ['a', 'b', 'c'], client);
      expect(result).toMatchObject({ tried: 3, found: 0, errors: 3 });
      expect(result.firstError).toMatch(/SERVFAIL/);
    } finally {
      client.close();
      await failing.stop();
    }
  });
});
