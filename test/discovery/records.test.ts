import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createDnsClient, type DiscoveryDnsClient } from '../../src/scanner/discovery/dns-client.js';
import { ptrNames, recordNames, spfNames, zoneTransfers } from '../../src/scanner/discovery/records.js';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.js';

let server: TestDnsServer;
const clients: DiscoveryDnsClient[] = [];

/** Zone transfers go to the test server's port; every NS name below resolves to 127.0.0.1 or ::1. */
function client(servers = [server.server]): DiscoveryDnsClient {
  const created = createDnsClient({ servers, timeoutMs: 300, authoritativePort: server.port });
  clients.push(created);
  return created;
}

beforeAll(async () => {
  server = await startDnsServer({
    zones: [
      {
        origin: 'open.test',
        allowTransfer: true,
        records: [
          { name: '@', type: 'SOA', data: { mname: 'Primary.Open.Test.', rname: 'hostmaster.open.test' } },
          { name: '@', type: 'NS', data: 'ns1.open.test' },
          { name: '@', type: 'NS', data: 'ns2.open.test' },
          { name: '@', type: 'MX', data: { preference: 10, exchange: 'mx1.open.test' } },
          { name: '@', type: 'MX', data: { preference: 20, exchange: 'mx.mailhost.example' } },
          {
            name: '@',
            type: 'TXT',
            data: 'v=spf1 ip4:192.0.2.0/24 include:_spf.open.test a:web.open.test/24 mx:relay.open.test//64 ~exists:%{i}.bl.open.test exists:check.open.test redirect=spf.provider.example -all',
          },
          { name: '@', type: 'TXT', data: 'google-site-verification=include:not-spf.open.test' },
          { name: 'ns1', type: 'A', data: '127.0.0.1' },
          // Same address as ns1: asked once.
          { name: 'ns2', type: 'A', data: '127.0.0.1' },
          { name: 'ns2', type: 'AAAA', data: '::1' },
          { name: 'secret-admin', type: 'A', data: '192.0.2.10' },
          { name: 'db.internal', type: 'A', data: '192.0.2.11' },
        ],
      },
      {
        origin: 'closed.test',
        records: [
          { name: '@', type: 'NS', data: 'ns.closed.test' },
          { name: '@', type: 'NS', data: 'ghost.closed.test' },
          { name: 'ns', type: 'A', data: '127.0.0.1' },
        ],
      },
      {
        origin: '0.0.127.in-addr.arpa',
        records: [
          { name: '1', type: 'PTR', data: 'localhost.open.test' },
          { name: '2', type: 'PTR', data: 'Host-Two.Open.Test.' },
          { name: '2', type: 'PTR', data: 'alias-two.open.test' },
        ],
      },
    ],
  });
});

afterEach(() => {
  for (const created of clients.splice(0)) created.close();
});

afterAll(async () => {
  await server?.stop();
});

describe('recordNames', () => {
  it('returns the names in NS, MX, SOA and SPF records, each with the record it came from', async () => {
    const { names, errors } = await recordNames('Open.Test', client());
    expect(errors).toEqual([]);
    const byOrigin = (from: string) =>
      names
        .filter((entry) => entry.origin.from === from)
        .map((entry) => entry.name)
        .sort();
    expect(names.every((entry) => entry.origin.source === 'dns')).toBe(true);
    expect(byOrigin('NS open.test')).toEqual(['ns1.open.test', 'ns2.open.test']);
    expect(byOrigin('MX open.test')).toEqual(['mx.mailhost.example', 'mx1.open.test']);
    expect(byOrigin('SOA open.test')).toEqual(['primary.open.test']); // the mailbox (rname) is not a host
    expect(byOrigin('TXT open.test')).toEqual(['_spf.open.test', 'check.open.test', 'relay.open.test', 'spf.provider.example', 'web.open.test']);
  });

  it('reports lookups no server answered as errors and still returns the rest', async () => {
    const failing = await startDnsServer({
      zones: [{ origin: 'half.test', records: [{ name: '@', type: 'NS', data: 'ns.half.test' }] }],
      override: (query) => (query.type === 'MX' ? 'SERVFAIL' : undefined),
    });
    try {
      const { names, errors } = await recordNames('half.test', client([failing.server]));
      expect(names.map((entry) => entry.name)).toEqual(['ns.half.test', 'ns1.half.test']); // NS, and the made-up SOA's primary
      expect(errors).toEqual([{ code: 'dns', target: 'MX half.test', message: expect.stringMatching(/MX half\.test: .* answered SERVFAIL/) }]);
    } finally {
      await failing.stop();
    }
  });
});

describe('spfNames', () => {
  it('reads include, a, mx, exists and redirect, skipping macros, addresses and non-SPF text', () => {
    expect(spfNames('v=spf1 +include:Spf.Example.com. a mx a:1.2.3.4 exists:%{ir}.x.example.com redirect=_spf.example.net')).toEqual([
      'spf.example.com',
      '_spf.example.net',
    ]);
    expect(spfNames('include:spf.example.com')).toEqual([]);
    expect(spfNames('V=SPF1 ?mx:mail.example.com/28 -all')).toEqual(['mail.example.com']);
  });
});

describe('zoneTransfers', () => {
  it('transfers an open zone from each distinct name server address and lists its names', async () => {
    const { results, errors } = await zoneTransfers('open.test', client());
    expect(errors).toEqual([]);
    // ns1 and ns2 share 127.0.0.1 (asked once); ns2 also has ::1.
    expect(results.map((result) => result.address).sort()).toEqual(['127.0.0.1', '::1'].sort());
    const v4 = results.find((result) => result.address === '127.0.0.1')!;
    expect(v4).toMatchObject({ zone: 'open.test', server: 'ns1.open.test', ok: true, records: 12 }); // SOA once, 11 others
    // The test server listens on 127.0.0.1 only: ::1 refuses the connection, which is a failed attempt, not an error.
    expect(results.find((result) => result.address === '::1')).toMatchObject({ server: 'ns2.open.test', ok: false, reason: expect.any(String) });
    expect(v4.names).toEqual(expect.arrayContaining(['open.test', 'ns1.open.test', 'ns2.open.test', 'secret-admin.open.test', 'db.internal.open.test']));
  });

  it('gives a refused transfer as a result with its reason, and a name server that does not resolve as an error', async () => {
    const { results, errors } = await zoneTransfers('closed.test', client());
    expect(results).toEqual([
      { zone: 'closed.test', server: 'ns.closed.test', address: '127.0.0.1', ok: false, names: [], records: 0, reason: expect.stringMatching(/REFUSED/) },
    ]);
    expect(errors).toEqual([{ code: 'axfr', target: 'ghost.closed.test', message: 'name server ghost.closed.test: no such name' }]);
  });

  it('reports an NS lookup nobody answered as an error, with no results', async () => {
    const { results, errors } = await zoneTransfers('elsewhere.example', client());
    expect(results).toEqual([]);
    expect(errors).toEqual([{ code: 'axfr', target: 'NS elsewhere.example', message: expect.stringMatching(/REFUSED/) }]);
  });

  it('tries at most 10 name server addresses', async () => {
    const many = await startDnsServer({
      zones: [
        {
          origin: 'many.test',
          allowTransfer: true,
          records: Array.from({ length: 14 }, (_, index) => [
            { name: '@', type: 'NS' as const, data: `ns${index}.many.test` },
            { name: `ns${index}`, type: 'A' as const, data: `127.0.0.${index + 1}` },
          ]).flat(),
        },
      ],
    });
    try {
      const dns = createDnsClient({ servers: [many.server], timeoutMs: 300, authoritativePort: many.port, zoneTransferTimeoutMs: 500 });
      clients.push(dns);
      const { results } = await zoneTransfers('many.test', dns);
      expect(results).toHaveLength(10);
      expect(results.find((result) => result.address === '127.0.0.1')).toMatchObject({ ok: true });
      expect(results.filter((result) => result.address !== '127.0.0.1').every((result) => !result.ok && result.reason)).toBe(true);
    } finally {
      await many.stop();
    }
  });
});

describe('ptrNames', () => {
  it('returns the reverse names of addresses, with the address they came from', async () => {
    const found = await ptrNames(['127.0.0.1', '127.0.0.2', '127.0.0.3', '127.0.0.1'], client(), { concurrency: 2 });
    expect(found.sort((a, b) => a.name.localeCompare(b.name))).toEqual([
      { name: 'alias-two.open.test', origin: { source: 'ptr', from: '127.0.0.2' } },
      { name: 'host-two.open.test', origin: { source: 'ptr', from: '127.0.0.2' } },
      { name: 'localhost.open.test', origin: { source: 'ptr', from: '127.0.0.1' } },
    ]);
  });

  it('skips addresses whose reverse zone does not answer, and rejects things that are not addresses', async () => {
    expect(await ptrNames(['192.0.2.1'], client())).toEqual([]); // REFUSED: not a zone of the server
    await expect(ptrNames(['127.0.0.1', 'www.open.test'], client())).rejects.toThrow(/"www.open.test" is not an IP address/);
    await expect(ptrNames([], client(), { concurrency: 0 })).rejects.toThrow(/concurrency/);
  });
});
