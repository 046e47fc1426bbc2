import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScopeGuard, httpRequest, inspectTls, isScopeError, parseCidrList, probeHttp, scanPorts, ScopeError } from '../../src/scanner/index.js';
import { installTripwire, startHttpServer, type Started, type Tripwire } from './helpers.js';

const closedGuard = createScopeGuard({ allowedNetworks: [] });
const loopbackGuard = createScopeGuard({ allowedNetworks: ['127.0.0.0/8', '::1/128'] });

let tripwire: Tripwire;
beforeAll(() => {
  tripwire = installTripwire();
});
afterAll(() => tripwire.restore());

describe('default block list', () => {
  it.each([
    ['127.0.0.1', '127.0.0.0/8'],
    ['127.255.0.9', '127.0.0.0/8'],
    ['::1', '::1/128'],
    ['0.0.0.0', '0.0.0.0/8'],
    ['::', '::/128'],
    ['10.1.2.3', '10.0.0.0/8'],
    ['172.16.0.1', '172.16.0.0/12'],
    ['172.31.255.255', '172.16.0.0/12'],
    ['192.168.1.1', '192.168.0.0/16'],
    ['100.64.0.1', '100.64.0.0/10'],
    ['169.254.1.1', '169.254.0.0/16'],
    ['169.254.169.254', '169.254.169.254/32'],
    ['100.100.100.200', '100.100.100.200/32'],
    ['fd00:ec2::254', 'fd00:ec2::254/128'],
    ['fc00::1', 'fc00::/7'],
    ['fd12:3456::1', 'fc00::/7'],
    ['fe80::1', 'fe80::/10'],
    ['fe80::1%eth0', 'fe80::/10'],
    ['224.0.0.1', '224.0.0.0/4'],
    ['ff02::1', 'ff00::/8'],
    ['240.0.0.1', '240.0.0.0/4'],
    ['255.255.255.255', '240.0.0.0/4'],
    ['192.0.2.10', '192.0.2.0/24'],
    ['::ffff:127.0.0.1', '127.0.0.0/8'],
    ['::ffff:7f00:1', '127.0.0.0/8'],
    ['::ffff:169.254.169.254', '169.254.169.254/32'],
    ['64:ff9b::a9fe:a9fe', '169.254.169.254/32'],
  ])('blocks %s (in %s)', (ip, range) => {
    const decision = closedGuard.check(ip);
    expect(decision).toMatchObject({ allowed: false, range });
    expect(() => closedGuard.assertAddressAllowed(ip)).toThrow(ScopeError);
  });

  it.each(['93.184.215.14', '1.1.1.1', '2606:4700:4700::1111', '172.32.0.1', '100.128.0.1', '::ffff:8.8.8.8'])('allows public %s', (ip) => {
    expect(closedGuard.isAllowed(ip)).toBe(true);
  });

  it('names the address, the range and the fix in the error', () => {
    let caught: unknown;
    try {
      closedGuard.assertAddressAllowed('169.254.169.254');
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ScopeError);
    const err = caught as ScopeError;
    expect(err.code).toBe('SCOPE_BLOCKED');
    expect(err.message).toContain('169.254.169.254');
    expect(err.message).toContain('169.254.169.254/32');
    expect(err.message).toContain('cloud metadata');
    expect(err.message).toContain('SCAN_ALLOWED_NETWORKS');
  });

  it('refuses things that are not IP addresses instead of guessing', () => {
    expect(() => closedGuard.assertAddressAllowed('localhost')).toThrow(TypeError);
    expect(() => closedGuard.assertAddressAllowed('127.1')).toThrow(TypeError);
  });
});

describe('IPv6 transition prefixes are judged by the IPv4 address they embed', () => {
  it.each([
    // 6to4 2002::/16: the IPv4 address in bits 16-47
    ['2002:7f00:1::', '127.0.0.0/8', 'loopback'],
    ['2002:7f00:0001:0:0:0:0:1', '127.0.0.0/8', 'loopback'],
    ['2002:a9fe:a9fe::1', '169.254.169.254/32', 'cloud metadata'],
    ['2002:a00:1::', '10.0.0.0/8', 'private network'],
    ['2002:c0a8:101::', '192.168.0.0/16', 'private network'],
    // Teredo 2001::/32: the client's address, inverted, in the last 32 bits (server 65.54.227.120 in bits 32-63)
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', '127.0.0.0/8', 'loopback'],
    ['2001:0:4136:e378::f5ff:fffe', '10.0.0.0/8', 'private network'],
    ['2001::5601:5601', '169.254.169.254/32', 'cloud metadata'],
    // NAT64 64:ff9b::/96 and local-use NAT64 64:ff9b:1::/48: the last 32 bits
    ['64:ff9b::7f00:1', '127.0.0.0/8', 'loopback'],
    ['64:ff9b::10.0.0.1', '10.0.0.0/8', 'private network'],
    ['64:ff9b:1::a9fe:a9fe', '169.254.169.254/32', 'cloud metadata'],
    ['64:ff9b:1:2:3:4:c0a8:1', '192.168.0.0/16', 'private network'],
    // SIIT ::ffff:0:a.b.c.d (and IPv4-mapped ::ffff:a.b.c.d)
    ['::ffff:0:127.0.0.1', '127.0.0.0/8', 'loopback'],
    ['::ffff:0:a9fe:a9fe', '169.254.169.254/32', 'cloud metadata'],
    ['::ffff:0:172.16.0.1', '172.16.0.0/12', 'private network'],
  ])('refuses %s (embeds an address in %s)', (ip, range, label) => {
    const decision = closedGuard.check(ip);
    expect(decision).toMatchObject({ allowed: false, range, label: expect.stringContaining(label) });
    expect(() => closedGuard.assertAddressAllowed(ip)).toThrow(ScopeError);
  });

  it('names the mechanism and the IPv4 network to allow in the error', () => {
    expect(() => closedGuard.assertAddressAllowed('2002:7f00:1::')).toThrow(
      /2002:7f00:1:: is out of scan scope: it is in 127\.0\.0\.0\/8 \(loopback, embedded in this 6to4 \(2002::\/16\) address\).*e\.g\. 127\.0\.0\.1\/32/,
    );
    expect(closedGuard.check('2001::5601:5601')).toMatchObject({ label: expect.stringContaining('Teredo') });
    expect(closedGuard.check('::ffff:0:7f00:1')).toMatchObject({ label: expect.stringContaining('SIIT') });
    expect(closedGuard.check('64:ff9b:1::7f00:1')).toMatchObject({ label: expect.stringContaining('local-use NAT64') });
  });

  it.each([
    ['2002:5db8:d70e::1', '93.184.215.14'],
    ['2002:101:101::', '1.1.1.1'],
    ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', '8.8.8.8'],
    ['64:ff9b::808:808', '8.8.8.8'],
    ['64:ff9b:1::101:101', '1.1.1.1'],
    ['::ffff:0:8.8.8.8', '8.8.8.8'],
  ])('follows the public rule for %s (embeds public %s)', (ip) => {
    expect(closedGuard.check(ip)).toEqual({ allowed: true, address: ip });
  });

  it('lets SCAN_ALLOWED_NETWORKS admit them, by the embedded IPv4 network or by the IPv6 prefix itself', () => {
    expect(loopbackGuard.check('2002:7f00:1::')).toEqual({ allowed: true, address: '2002:7f00:1::', allowedBy: '127.0.0.0/8' });
    expect(loopbackGuard.check('64:ff9b::7f00:1')).toMatchObject({ allowed: true, allowedBy: '127.0.0.0/8' });
    expect(loopbackGuard.isAllowed('2002:a00:1::')).toBe(false);
    const nat64 = createScopeGuard({ allowedNetworks: ['64:ff9b:1::/48'] });
    expect(nat64.check('64:ff9b:1::a00:1')).toEqual({ allowed: true, address: '64:ff9b:1::a00:1', allowedBy: '64:ff9b:1::/48' });
    expect(nat64.isAllowed('64:ff9b::a00:1')).toBe(false);
  });
});

describe('allowed networks', () => {
  it('override the block list, and only for what they cover', () => {
    expect(loopbackGuard.check('127.0.0.1')).toEqual({ allowed: true, address: '127.0.0.1', allowedBy: '127.0.0.0/8' });
    expect(loopbackGuard.isAllowed('::1')).toBe(true);
    expect(loopbackGuard.isAllowed('::ffff:127.0.0.1')).toBe(true);
    expect(loopbackGuard.isAllowed('10.0.0.1')).toBe(false);
    expect(loopbackGuard.isAllowed('169.254.169.254')).toBe(false);
    const narrow = createScopeGuard({ allowedNetworks: ['127.0.0.1/32'] });
    expect(narrow.isAllowed('127.0.0.1')).toBe(true);
    expect(narrow.isAllowed('127.0.0.2')).toBe(false);
  });
});

describe('parseCidrList', () => {
  it('parses and normalises a comma-separated list', () => {
    expect(parseCidrList('127.0.0.0/8, ::1/128,,10.0.0.5')).toEqual(['127.0.0.0/8', '::1/128', '10.0.0.5/32']);
    expect(parseCidrList('')).toEqual([]);
    expect(parseCidrList('FD00::/8')).toEqual(['fd00::/8']);
  });

  it.each([
    ['127.0.0.0/33', /prefix length must be a whole number from 0 to 32/],
    ['::1/129', /from 0 to 128/],
    ['127.0.0.0/x', /prefix length/],
    ['localhost/8', /"localhost" is not an IPv4 or IPv6 address/],
    ['300.1.1.1/8', /not an IPv4 or IPv6 address/],
  ])('rejects %s with a clear message', (text, message) => {
    expect(() => parseCidrList(text)).toThrow(message);
  });

  it('is what createScopeGuard validates with', () => {
    expect(() => createScopeGuard({ allowedNetworks: ['not-a-cidr'] })).toThrow(/Invalid network "not-a-cidr"/);
  });
});

describe('resolveHost', () => {
  it('refuses 127.0.0.1 and localhost with an empty allow-list', async () => {
    await expect(closedGuard.resolveHost('127.0.0.1')).rejects.toBeInstanceOf(ScopeError);
    const err = await closedGuard.resolveHost('localhost').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ScopeError);
    expect((err as ScopeError).host).toBe('localhost');
    expect((err as ScopeError).message).toMatch(/^localhost resolves to 127\.0\.0\.1, which is out of scan scope/);
  });

  it('returns the addresses when they are allowed', async () => {
    expect(await loopbackGuard.resolveHost('localhost')).toContain('127.0.0.1');
    expect(await loopbackGuard.resolveHost('[::1]')).toEqual(['::1']);
  });
});

describe('connect-time enforcement', () => {
  let server: Started & { hits: string[] };
  beforeAll(async () => {
    server = await startHttpServer({ '/': (_req, res) => res.end('hello') });
  });
  afterAll(() => server.close());

  it('guardedLookup blocks a name whose DNS answer is blocked, at connect time', async () => {
    const before = server.hits.length;
    const err = await new Promise<unknown>((resolve) => {
      const req = http.get({ host: 'localhost', port: server.port, lookup: closedGuard.guardedLookup, agent: false }, () => resolve('connected'));
      req.on('error', resolve);
    });
    expect(isScopeError(err)).toBe(true);
    expect(server.hits.length).toBe(before);
  });

  it('guardedLookup lets an allowed name through (net.connect, both lookup modes)', async () => {
    for (const autoSelectFamily of [true, false]) {
      const socket = net.connect({ host: 'localhost', port: server.port, lookup: loopbackGuard.guardedLookup, autoSelectFamily });
      await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
      socket.destroy();
    }
    // The tripwire sees these connects, so its silence in the metadata test below means something.
    expect(tripwire.attempts).toContain(`localhost:${server.port}`);
  });

  it('connectOptions checks IP literals immediately (Node skips lookup for them)', () => {
    expect(() => closedGuard.connectOptions('127.0.0.1')).toThrow(ScopeError);
    expect(loopbackGuard.connectOptions('127.0.0.1')).toEqual({ host: '127.0.0.1' });
    expect(loopbackGuard.connectOptions('localhost')).toEqual({ host: 'localhost', lookup: loopbackGuard.guardedLookup });
  });

  it('every probe refuses the cloud metadata address before opening a socket', async () => {
    const before = tripwire.attempts.length;
    const metadata = '169.254.169.254';
    const common = { guard: loopbackGuard, timeoutMs: 200 };
    await expect(scanPorts({ ...common, address: metadata, ports: [80] })).rejects.toBeInstanceOf(ScopeError);
    await expect(probeHttp({ ...common, host: metadata, address: metadata, port: 80 })).rejects.toBeInstanceOf(ScopeError);
    await expect(inspectTls({ ...common, host: metadata, address: metadata, port: 443 })).rejects.toBeInstanceOf(ScopeError);
    expect(() => httpRequest({ ...common, url: `http://${metadata}/latest/meta-data/` })).toThrow(ScopeError);
    expect(() => httpRequest({ ...common, url: 'http://[::ffff:169.254.169.254]/' })).toThrow(ScopeError);
    await expect(loopbackGuard.resolveHost(metadata)).rejects.toBeInstanceOf(ScopeError);
    expect(tripwire.attempts.slice(before)).toEqual([]);
  });

  it('an empty allow-list refuses loopback probes too', async () => {
    await expect(probeHttp({ guard: closedGuard, host: 'localhost', address: '127.0.0.1', port: server.port, timeoutMs: 500 })).rejects.toBeInstanceOf(
      ScopeError,
    );
    await expect(scanPorts({ guard: closedGuard, address: '127.0.0.1', ports: [server.port] })).rejects.toBeInstanceOf(ScopeError);
    expect(() => httpRequest({ guard: closedGuard, url: `http://127.0.0.1:${server.port}/` })).toThrow(ScopeError);
    // By name: refused once DNS has answered, at connect time.
    await expect(httpRequest({ guard: closedGuard, url: `http://localhost:${server.port}/` })).rejects.toBeInstanceOf(ScopeError);
  });
});
