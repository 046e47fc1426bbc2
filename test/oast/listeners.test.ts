import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import dgram from 'node:dgram';
import net from 'node:net';
import dnsPacket from 'dns-packet';
import { createOastClient, type OastClientHandle } from '../../src/oast/client.js';
import { OastRegistry } from '../../src/oast/registry.js';
import { OAST_DOMAIN, askDns, fetchOast, startOast, type OastFixture } from './fixtures.js';

/**
 * The self-hosted OAST listeners (src/oast): a registered id's HTTP and DNS callbacks are recorded and reach the
 * client that registered it; unknown ids and names outside the domain are answered but not recorded; the
 * per-id cap holds; garbage does not take the listeners down.
 */

let oast: OastFixture;
const clients: OastClientHandle[] = [];

function client(cooldownMs = 150): OastClientHandle {
  const c = createOastClient({ pubsub: oast.pubsub, domain: OAST_DOMAIN, cooldownMs, refreshMs: 60_000 });
  clients.push(c);
  return c;
}

beforeAll(async () => {
  oast = await startOast({ maxInteractionsPerId: 3 });
});

afterAll(async () => {
  for (const c of clients) await c.close();
  await oast?.stop();
});

describe('OAST listeners', { timeout: 20_000 }, () => {
  it('records an HTTP callback with its raw request and answers with the reversed id', async () => {
    const c = client();
    const url = c.newUrl();
    expect(url).toMatch(/^[a-z0-9]{33}\.oast\.test$/);
    const uniqueId = url.split('.')[0];
    // any depth, any case: a target may prefix a label or upper-case the name
    const res = await fetchOast(oast.service.httpPort, `data.${url.toUpperCase()}:80`, '/x?leak=1');
    expect(res).toEqual({ status: 200, body: `<html><head></head><body>${[...uniqueId].reverse().join('')}</body></html>` });
    const seen = await c.interactions([url], { cooldownMs: 100 });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ protocol: 'http', uniqueId, fullId: `data.${uniqueId}`, remoteAddress: '127.0.0.1' });
    expect(seen[0].rawRequest).toMatch(/^GET \/x\?leak=1 HTTP\/1\.1\r\n/);
    expect(seen[0].rawRequest).toContain('user-agent: victim/1.0');
    expect(seen[0].rawResponse).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(Date.parse(seen[0].timestamp)).not.toBeNaN();
    // collected once
    expect(await c.interactions([url], { cooldownMs: 10 })).toEqual([]);
  });

  it('answers DNS questions under the domain with OAST_PUBLIC_IP and records them with their type', async () => {
    const c = client();
    const url = c.newUrl();
    const a = await askDns(oast.service.dnsPort, url);
    expect(a?.rcode).toBe('NOERROR');
    expect(a?.answers).toMatchObject([{ name: url, type: 'A', data: '192.0.2.7' }]);
    const txt = await askDns(oast.service.dnsPort, url, 'TXT');
    expect(txt?.answers).toEqual([]);
    const seen = await c.interactions([url], { cooldownMs: 100 });
    expect(seen.map((i) => [i.protocol, i.qType])).toEqual([
      ['dns', 'A'],
      ['dns', 'TXT'],
    ]);
    expect(seen[0].rawRequest).toContain(`;${url}.\tIN\t A`);
    expect(seen[0].rawResponse).toContain(`${url}.\t60\tIN\tA\t192.0.2.7`);
  });

  it('answers DNS over TCP too', async () => {
    const c = client();
    const url = c.newUrl();
    const query = dnsPacket.encode({ type: 'query', id: 7, questions: [{ type: 'A', name: url }] });
    const framed = Buffer.concat([Buffer.from([query.length >> 8, query.length & 0xff]), query]);
    const reply = await new Promise<Buffer>((resolve, reject) => {
      const socket = net.connect(oast.service.dnsPort, '127.0.0.1', () => socket.write(framed));
      let got = Buffer.alloc(0);
      socket.on('data', (chunk) => {
        got = Buffer.concat([got, chunk]);
        if (got.length >= 2 && got.length >= 2 + got.readUInt16BE(0)) {
          socket.end();
          resolve(got.subarray(2));
        }
      });
      socket.on('error', reject);
    });
    expect(dnsPacket.decode(reply).answers).toMatchObject([{ type: 'A', data: '192.0.2.7' }]);
    expect((await c.interactions([url], { cooldownMs: 100 })).map((i) => i.protocol)).toEqual(['dns']);
  });

  it('ignores ids nobody registered and names outside the domain', async () => {
    const c = client();
    const stranger = `${'z'.repeat(20)}${'q'.repeat(13)}.${OAST_DOMAIN}`;
    expect((await fetchOast(oast.service.httpPort, stranger)).body).toBe('<html><head></head><body></body></html>');
    expect((await askDns(oast.service.dnsPort, stranger))?.answers).toHaveLength(1);
    const elsewhere = await askDns(oast.service.dnsPort, `${c.newUrl().split('.')[0]}.example.com`);
    expect(elsewhere?.rcode).toBe('REFUSED');
    expect((await fetchOast(oast.service.httpPort, `${c.newUrl().split('.')[0]}.example.com`)).status).toBe(404);
    // a client sees only its own URLs' interactions
    const mine = c.newUrl();
    const other = client();
    await askDns(oast.service.dnsPort, other.newUrl());
    expect(await c.interactions([mine], { cooldownMs: 100 })).toEqual([]);
  });

  it('records at most OAST_MAX_INTERACTIONS_PER_ID per correlation id', async () => {
    const c = client();
    const url = c.newUrl();
    for (let i = 0; i < 6; i++) await askDns(oast.service.dnsPort, url);
    expect(await c.interactions([url], { cooldownMs: 100 })).toHaveLength(3);
  });

  it('forgets an id when its client closes', async () => {
    const c = client();
    const url = c.newUrl();
    const id = c.correlationId;
    await c.close();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(oast.service.registry.match(url)).toBeUndefined();
    expect(id).toHaveLength(20);
  });

  it('survives packets that are not DNS and HTTP that is not HTTP', async () => {
    const socket = dgram.createSocket('udp4');
    for (const junk of [Buffer.alloc(0), Buffer.from('hello'), Buffer.alloc(600, 0xff), dnsPacket.encode({ type: 'response', id: 1, questions: [] })]) {
      await new Promise<void>((resolve) => socket.send(junk, oast.service.dnsPort, '127.0.0.1', () => resolve()));
    }
    socket.close();
    await new Promise<void>((resolve) => {
      const raw = net.connect(oast.service.httpPort, '127.0.0.1', () => raw.end('\x00\x01 garbage \r\n\r\n'));
      raw.on('close', () => resolve());
      raw.on('error', () => resolve());
    });
    await new Promise<void>((resolve) => {
      const raw = net.connect(oast.service.dnsPort, '127.0.0.1', () => raw.end(Buffer.from([0, 5, 1, 2, 3, 4, 5])));
      raw.on('close', () => resolve());
      raw.on('error', () => resolve());
    });
    const c = client();
    const url = c.newUrl();
    expect((await askDns(oast.service.dnsPort, url))?.answers).toHaveLength(1);
    expect((await fetchOast(oast.service.httpPort, url)).status).toBe(200);
    expect(await c.interactions([url], { cooldownMs: 100 })).toHaveLength(2);
  });
});

describe('OAST registry', () => {
  it('drops ids idle past the eviction time and keeps at most maxIds', () => {
    let now = 0;
    const registry = new OastRegistry({ domain: 'OAST.test.', maxInteractionsPerId: 5, idleMs: 1_000, maxIds: 2, now: () => now });
    const ids = ['a', 'b', 'c'].map((ch) => ch.repeat(20));
    registry.register(ids[0]);
    now = 500;
    registry.register(ids[1]);
    expect(registry.match(`${ids[0]}${'n'.repeat(13)}.oast.test`)?.uniqueId).toBe(`${ids[0]}${'n'.repeat(13)}`);
    now = 1_200;
    // ids[0] idle for 1.2 s: gone; ids[1] stays
    expect(registry.match(`${ids[0]}${'n'.repeat(13)}.oast.test`)).toBeUndefined();
    expect(registry.size).toBe(1);
    registry.register(ids[2]);
    registry.register(ids[0]);
    // three registered, at most two kept: the least recently seen (ids[1]) goes
    expect(registry.size).toBe(2);
    expect(registry.match(`${ids[1]}${'n'.repeat(13)}.oast.test`)).toBeUndefined();
    // not an id: too short, or not [a-z0-9]
    registry.register('short');
    registry.register('_'.repeat(20));
    expect(registry.size).toBe(2);
    expect(registry.match(`${ids[2]}.oast.test`)).toBeUndefined();
  });
});
