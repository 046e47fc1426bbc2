import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScopeGuard, resolveDns } from '../../src/scanner/index.js';
import { startDnsServer } from './helpers.js';

// All resolution goes to a DNS server of our own on 127.0.0.1, or to /etc/hosts: nothing leaves the machine.
let dns: Awaited<ReturnType<typeof startDnsServer>>;
let deadDns: Awaited<ReturnType<typeof startDnsServer>>;

beforeAll(async () => {
  dns = await startDnsServer({
    'app.perimeter.test': { a: ['127.0.0.10', '127.0.0.11'], aaaa: ['::1'] },
    'www.perimeter.test': { cname: 'app.perimeter.test' },
    'v6only.perimeter.test': { aaaa: ['::1'] },
    'internal.perimeter.test': { a: ['10.0.0.7', '127.0.0.1'] },
  });
  deadDns = await startDnsServer({}, { silent: true });
});
afterAll(async () => {
  await dns.close();
  await deadDns.close();
});

describe('resolveDns', () => {
  it('reads A and AAAA records from DNS', async () => {
    const result = await resolveDns('App.Perimeter.test.', { servers: [dns.server], timeoutMs: 1_000 });
    expect(result).toEqual({
      kind: 'host',
      host: 'app.perimeter.test',
      addresses: ['127.0.0.10', '127.0.0.11', '::1'],
      a: ['127.0.0.10', '127.0.0.11'],
      aaaa: ['::1'],
      cname: [],
      resolvedVia: 'dns',
      outOfScope: [],
    });
  });

  it('reports the CNAME and the addresses it leads to', async () => {
    const result = await resolveDns('www.perimeter.test', { servers: [dns.server], timeoutMs: 1_000 });
    expect(result.cname).toEqual(['app.perimeter.test']);
    expect(result.a).toEqual(['127.0.0.10', '127.0.0.11']);
  });

  it('handles IPv6-only names', async () => {
    const result = await resolveDns('v6only.perimeter.test', { servers: [dns.server], timeoutMs: 1_000 });
    expect(result.a).toEqual([]);
    expect(result.aaaa).toEqual(['::1']);
  });

  it('answers localhost from the system resolver without asking DNS (RFC 6761)', async () => {
    const result = await resolveDns('localhost', { servers: [deadDns.server], timeoutMs: 1_000 });
    expect(result.resolvedVia).toBe('system');
    expect(result.addresses).toContain('127.0.0.1');
  });

  it('returns IP literals as they are, without asking anyone', async () => {
    expect(await resolveDns('127.0.0.1', { servers: [deadDns.server] })).toMatchObject({ a: ['127.0.0.1'], aaaa: [], resolvedVia: 'literal' });
    expect(await resolveDns('[::1]', { servers: [deadDns.server] })).toMatchObject({ host: '::1', a: [], aaaa: ['::1'], resolvedVia: 'literal' });
  });

  it('lists the addresses the scope guard refuses', async () => {
    const guard = createScopeGuard({ allowedNetworks: ['127.0.0.0/8'] });
    const result = await resolveDns('internal.perimeter.test', { servers: [dns.server], timeoutMs: 1_000, guard });
    expect(result.addresses).toEqual(['10.0.0.7', '127.0.0.1']);
    expect(result.outOfScope).toEqual([{ address: '10.0.0.7', reason: '10.0.0.0/8 (private network (RFC 1918))' }]);
  });

  it('fails (retryably) on a silent name server within the timeout, instead of answering "no addresses"', async () => {
    const started = Date.now();
    await expect(resolveDns('nothing.perimeter.test', { servers: [deadDns.server], timeoutMs: 300 })).rejects.toMatchObject({ code: expect.any(String) });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('rejects strings that cannot be host names', async () => {
    await expect(resolveDns('not a host', {})).rejects.toThrow(/not a valid host name/);
    await expect(resolveDns('', {})).rejects.toThrow(/not a valid host name/);
  });
});
