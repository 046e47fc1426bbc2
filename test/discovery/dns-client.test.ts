import dgram from 'node:dgram';
import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createDnsClient, type DiscoveryDnsClient, DnsQueryError, parseDnsServers, reverseName } from '../../src/scanner/discovery/dns-client.js';
import { startDnsServer, type TestDnsServer, type ZoneDefinition } from '../support/dns-server.js';

const zone: ZoneDefinition = {
  origin: 'example.test',
  allowTransfer: true,
  records: [
    { name: '@', type: 'NS', data: 'ns1.example.test' },
    { name: '@', type: 'MX', data: { preference: 10, exchange: 'Mail.Example.Test.' } },
    { name: 'ns1', type: 'A', data: '127.0.0.1' },
    { name: 'www', type: 'A', data: '192.0.2.1' },
    { name: 'www', type: 'A', data: '192.0.2.2' },
    { name: 'www', type: 'AAAA', data: '2001:db8::1' },
    { name: 'v6only', type: 'AAAA', data: '2001:db8::6' },
    { name: 'alias', type: 'CNAME', data: 'www.example.test' },
    { name: 'chain', type: 'CNAME', data: 'alias.example.test' },
    { name: 'dangling', type: 'CNAME', data: 'gone.example.test' },
    { name: 'elsewhere', type: 'CNAME', data: 'app.other.test' },
    { name: 'loop1', type: 'CNAME', data: 'loop2.example.test' },
    { name: 'loop2', type: 'CNAME', data: 'loop1.example.test' },
    ...Array.from({ length: 10 }, (_, index) => ({ name: `hop${index}`, type: 'CNAME' as const, data: `hop${index + 1}.example.test` })),
    { name: 'hop10', type: 'A', data: '192.0.2.10' },
    { name: 'mailonly', type: 'MX', data: { preference: 5, exchange: 'mx.example.test' } },
    { name: 'big', type: 'TXT', data: Array.from({ length: 8 }, () => 'y'.repeat(200)) },
    { name: '*.wild', type: 'A', data: '192.0.2.99' },
  ],
};

let server: TestDnsServer;
/** Serves other.test only: the target of example.test's `elsewhere` alias lives on another server. */
let otherServer: TestDnsServer;
let deadServer: dgram.Socket;
let deadAddress: string;
const clients: DiscoveryDnsClient[] = [];

function client(options: Parameters<typeof createDnsClient>[0] = {}): DiscoveryDnsClient {
  const created = createDnsClient({ servers: [server.server], timeoutMs: 500, ...options });
  clients.push(created);
  return created;
}

beforeAll(async () => {
  server = await startDnsServer({ zones: [zone] });
  otherServer = await startDnsServer({ zones: [{ origin: 'other.test', records: [{ name: 'app', type: 'A', data: '192.0.2.77' }] }] });
  // A name server that is down: the port is bound (so no ICMP unreachable), nothing ever answers.
  deadServer = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => deadServer.bind(0, '127.0.0.1', resolve));
  deadAddress = `127.0.0.1:${deadServer.address().port}`;
});

afterEach(() => {
  for (const created of clients.splice(0)) created.close();
});

afterAll(async () => {
  deadServer?.close();
  await Promise.all([server?.stop(), otherServer?.stop()]);
});

describe('createDnsClient: resolve', () => {
  it('finds A and AAAA of a name, normalising case and the trailing dot', async () => {
    const dns = client();
    expect(await dns.resolve('WWW.Example.TEST.')).toEqual({
      name: 'www.example.test',
      status: 'found',
      a: ['192.0.2.1', '192.0.2.2'],
      aaaa: ['2001:db8::1'],
      cname: [],
    });
    expect(await dns.resolve('v6only.example.test')).toMatchObject({ status: 'found', a: [], aaaa: ['2001:db8::6'] });
    expect(dns.stats()).toEqual({ queries: 4, timeouts: 0, errors: 0 });
  });

  it('tells a name that does not exist from one without addresses', async () => {
    const dns = client();
    expect(await dns.resolve('missing.example.test')).toEqual({ name: 'missing.example.test', status: 'nxdomain', a: [], aaaa: [], cname: [] });
    expect(await dns.resolve('mailonly.example.test')).toEqual({ name: 'mailonly.example.test', status: 'nodata', a: [], aaaa: [], cname: [] });
  });

  it('reports CNAME chains first hop first, and a chain ending nowhere as nxdomain (dangling)', async () => {
    const dns = client();
    expect(await dns.resolve('chain.example.test')).toMatchObject({
      status: 'found',
      a: ['192.0.2.1', '192.0.2.2'],
      cname: ['alias.example.test', 'www.example.test'],
    });
    expect(await dns.resolve('dangling.example.test')).toMatchObject({ status: 'nxdomain', a: [], cname: ['gone.example.test'] });
    expect(await dns.resolve('x.wild.example.test')).toMatchObject({ status: 'found', a: ['192.0.2.99'] });
  });

  it('asks again for a CNAME target the server is not authoritative for', async () => {
    // Each server refuses the other's zone; the client moves on to the next server.
    const dns = client({ servers: [server.server, otherServer.server], tries: 2 });
    expect(await dns.resolve('elsewhere.example.test')).toMatchObject({ status: 'found', a: ['192.0.2.77'], cname: ['app.other.test'] });
    const single = client();
    const refused = await single.resolve('elsewhere.example.test');
    expect(refused).toMatchObject({ status: 'error', cname: ['app.other.test'] });
    expect(refused.error).toMatch(/REFUSED/);
  });

  it('stops at CNAME loops and chains longer than 8 hops', async () => {
    const dns = client();
    const loop = await dns.resolve('loop1.example.test');
    expect(loop.status).toBe('error');
    expect(loop.error).toMatch(/CNAME loop/);
    const long = await dns.resolve('hop0.example.test');
    expect(long.status).toBe('error');
    expect(long.error).toMatch(/longer than 8/);
  });

  it('gives status error, within the timeout, when the only server never answers', async () => {
    const dns = client({ servers: [deadAddress], timeoutMs: 200, tries: 2 });
    const started = Date.now();
    const result = await dns.resolve('www.example.test');
    const elapsed = Date.now() - started;
    expect(result.status).toBe('error');
    expect(result.error).toMatch(/no answer from 127\.0\.0\.1:\d+ within 200 ms/);
    expect(elapsed).toBeGreaterThanOrEqual(380);
    expect(elapsed).toBeLessThan(1500);
    expect(dns.stats()).toEqual({ queries: 4, timeouts: 4, errors: 0 });
    await expect(dns.ns('example.test')).rejects.toBeInstanceOf(DnsQueryError);
  });

  it('fails over to the next server when one does not answer', async () => {
    const dns = client({ servers: [deadAddress, server.server], timeoutMs: 200, tries: 2 });
    const results = await Promise.all(['www', 'alias', 'v6only', 'chain'].map((label) => dns.resolve(`${label}.example.test`)));
    expect(results.map((result) => result.status)).toEqual(['found', 'found', 'found', 'found']);
    expect(dns.stats().timeouts).toBeGreaterThan(0);
  });

  it('reports SERVFAIL as an error after trying again', async () => {
    const failing = await startDnsServer({ zones: [zone], override: (query) => (query.name === 'www.example.test' ? 'SERVFAIL' : undefined) });
    try {
      const dns = client({ servers: [failing.server], tries: 2 });
      const result = await dns.resolve('www.example.test');
      expect(result).toMatchObject({ status: 'error', a: [], aaaa: [] });
      expect(result.error).toMatch(/answered SERVFAIL/);
      expect(failing.queries()).toBe(4); // A and AAAA, twice each
      expect(dns.stats().errors).toBe(4);
    } finally {
      await failing.stop();
    }
  });

  it('keeps at most concurrencyPerServer questions in flight per server', async () => {
    const slow = await startDnsServer({ zones: [zone], delayMs: 40 });
    try {
      const dns = client({ servers: [slow.server], concurrencyPerServer: 3 });
      const results = await Promise.all(Array.from({ length: 12 }, (_, index) => dns.resolve(`n${index}.wild.example.test`)));
      expect(results.every((result) => result.status === 'found')).toBe(true);
      expect(slow.queries()).toBe(24);
      expect(slow.maxInFlight()).toBe(3);
    } finally {
      await slow.stop();
    }
  });

  it('starts at most queriesPerSecondPerServer questions per second per server', async () => {
    const dns = client({ queriesPerSecondPerServer: 20 });
    const started = Date.now();
    await Promise.all(Array.from({ length: 15 }, (_, index) => dns.resolve(`r${index}.wild.example.test`)));
    // 30 questions: a burst of 20, then 10 more at 20/s.
    expect(Date.now() - started).toBeGreaterThanOrEqual(450);
  });

  it('retries a truncated answer over TCP', async () => {
    const dns = client();
    const [text] = await dns.txt('big.example.test');
    expect(text).toBe('y'.repeat(1600));
    expect(dns.stats().queries).toBe(2);
  });

  it('answers within the timeout after close instead of hanging', async () => {
    const dns = client();
    dns.close();
    expect(await dns.resolve('www.example.test')).toMatchObject({ status: 'error', error: 'DNS client is closed' });
  });

  it('works with an IPv6 name server', async (context) => {
    const v6 = await startDnsServer({ zones: [zone], host: '::1' }).catch(() => undefined);
    if (!v6) return context.skip('no IPv6 loopback on this machine');
    try {
      const dns = client({ servers: [v6.server] });
      expect(v6.server).toMatch(/^\[::1\]:\d+$/);
      expect(await dns.resolve('www.example.test')).toMatchObject({ status: 'found', a: ['192.0.2.1', '192.0.2.2'] });
    } finally {
      await v6.stop();
    }
  });
});

describe('createDnsClient: other records', () => {
  it('reads NS, MX, SOA and TXT, lower-case without trailing dots', async () => {
    const dns = client();
    expect(await dns.ns('example.test')).toEqual(['ns1.example.test']);
    expect(await dns.mx('example.test')).toEqual(['mail.example.test']);
    expect(await dns.soa('example.test')).toEqual({ mname: 'ns1.example.test', rname: 'hostmaster.example.test' });
    expect(await dns.soa('www.example.test')).toBeNull();
    expect(await dns.mx('missing.example.test')).toEqual([]);
    await expect(dns.ns('example.com')).rejects.toThrow(/REFUSED/);
    await expect(dns.ns('not a name')).rejects.toThrow(TypeError);
  });

  it('builds reverse names for IPv4 and IPv6', () => {
    expect(reverseName('192.0.2.1')).toBe('1.2.0.192.in-addr.arpa');
    expect(reverseName('::ffff:192.0.2.1')).toBe('1.2.0.192.in-addr.arpa');
    expect(reverseName('2001:db8::1')).toBe('1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa');
    expect(() => reverseName('192.0.2')).toThrow(TypeError);
    expect(() => reverseName('www.example.test')).toThrow(/not an IP address/);
  });
});

describe('createDnsClient: zone transfers', () => {
  it('lists the names of an open zone', async () => {
    const dns = client({ authoritativePort: server.port });
    const result = await dns.zoneTransfer('Example.Test.', { name: 'ns1.example.test', address: '127.0.0.1' });
    expect(result).toMatchObject({ zone: 'example.test', server: 'ns1.example.test', address: '127.0.0.1', ok: true });
    expect(result.records).toBe(zone.records.length + 1); // and the SOA
    expect(result.names).toContain('hop10.example.test');
    expect(result.names).toContain('*.wild.example.test');
    expect(result.reason).toBeUndefined();
  });

  it('reports refusals, unknown zones and silent servers as failures with a reason', async () => {
    const dns = client({ authoritativePort: server.port, zoneTransferTimeoutMs: 300 });
    expect(await dns.zoneTransfer('nowhere.test', { name: 'ns1', address: '127.0.0.1' })).toMatchObject({
      ok: false,
      names: [],
      reason: expect.stringMatching(/REFUSED/),
    });
    const silent = net.createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const silentPort = (silent.address() as net.AddressInfo).port;
      const result = await client({ authoritativePort: silentPort, zoneTransferTimeoutMs: 300 }).zoneTransfer('example.test', {
        name: 'ns1',
        address: '127.0.0.1',
      });
      expect(result).toMatchObject({ ok: false, reason: expect.stringMatching(/within 300 ms/) });
    } finally {
      silent.close();
    }
    expect(await dns.zoneTransfer('example.test', { name: 'ns1', address: 'not-an-ip' })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/not an IP/),
    });
  });

  it('stops transfers bigger than the cap', async () => {
    const dns = client({ authoritativePort: server.port, zoneTransferMaxRecords: 5 });
    expect(await dns.zoneTransfer('example.test', { name: 'ns1', address: '127.0.0.1' })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/larger than 5 records/),
    });
  });
});

describe('parseDnsServers', () => {
  it('reads ip, ip:port, [v6] and [v6]:port', () => {
    expect(parseDnsServers(['192.0.2.53', ' 127.0.0.1:5353 ', '::1', '[2001:db8::53]:8053', '[::1]']).map((entry) => entry.key)).toEqual([
      '192.0.2.53:53',
      '127.0.0.1:5353',
      '[::1]:53',
      '[2001:db8::53]:8053',
      '[::1]:53',
    ]);
  });

  it.each(['dns.example.com', '1.2.3', '127.0.0.1:0', '127.0.0.1:70000', '127.0.0.1:53x', '[::1', '[127.0.0.1]:53', ''])('rejects %j', (entry) => {
    expect(() => parseDnsServers([entry])).toThrow(TypeError);
  });

  it('makes createDnsClient fail on a bad server or limit, naming it', () => {
    expect(() => createDnsClient({ servers: ['127.0.0.1', 'resolver.local'] })).toThrow(/"resolver.local" is not an IP address/);
    expect(() => createDnsClient({ servers: ['127.0.0.1'], timeoutMs: 0 })).toThrow(/timeoutMs must be a positive number/);
    expect(() => createDnsClient({ servers: ['127.0.0.1'], tries: 0 })).toThrow(/tries/);
  });

  it('uses the system resolvers when no server is configured', () => {
    const dns = createDnsClient({});
    clients.push(dns);
    expect(dns.servers.length).toBeGreaterThan(0);
  });
});
