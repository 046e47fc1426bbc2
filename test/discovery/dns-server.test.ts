import dgram from 'node:dgram';
import net from 'node:net';
import dnsPacket, { type DecodedPacket, type RecordType } from 'dns-packet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.js';

/** Raw questions, so the server is checked on its own, without the client under test in between. */
type Reply = DecodedPacket & { rcode: string };

let server: TestDnsServer;
let socket: dgram.Socket;
let nextId = 1;
const waiting = new Map<number, (reply: Reply) => void>();

function askUdp(name: string, type: RecordType): Promise<Reply> {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer to ${type} ${name}`)), 2000);
    waiting.set(id, (reply) => {
      clearTimeout(timer);
      resolve(reply);
    });
    socket.send(dnsPacket.encode({ type: 'query', id, questions: [{ name, type }] }), server.port, '127.0.0.1');
  });
}

/** One TCP question; collects every framed message until `count` arrived or the server closes. */
function askTcp(name: string, type: RecordType, until: (messages: Reply[]) => boolean): Promise<Reply[]> {
  return new Promise((resolve, reject) => {
    const connection = net.connect(server.port, '127.0.0.1');
    const messages: Reply[] = [];
    let buffered = Buffer.alloc(0);
    const timer = setTimeout(() => {
      connection.destroy();
      reject(new Error(`TCP ${type} ${name}: incomplete after 2 s (${messages.length} messages)`));
    }, 2000);
    connection.on('connect', () => connection.write(dnsPacket.streamEncode({ type: 'query', id: 77, questions: [{ name, type }] })));
    connection.on('data', (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
        messages.push(dnsPacket.decode(buffered.subarray(2, 2 + buffered.readUInt16BE(0))) as Reply);
        buffered = buffered.subarray(2 + buffered.readUInt16BE(0));
      }
      if (until(messages)) {
        clearTimeout(timer);
        connection.destroy();
        resolve(messages);
      }
    });
    connection.on('error', reject);
  });
}

const records = (reply: Reply) => (reply.answers ?? []).map((answer) => `${answer.name} ${answer.type} ${String((answer as { data?: unknown }).data)}`);

beforeAll(async () => {
  server = await startDnsServer({
    transferRecordsPerMessage: 4,
    zones: [
      {
        origin: 'example.test',
        allowTransfer: true,
        records: [
          { name: '@', type: 'NS', data: 'ns1.example.test' },
          { name: 'ns1', type: 'A', data: '127.0.0.1' },
          { name: 'www', type: 'A', data: '192.0.2.1' },
          { name: 'www', type: 'AAAA', data: '2001:db8::1' },
          { name: 'alias', type: 'CNAME', data: 'www.example.test' },
          { name: 'chain', type: 'CNAME', data: 'alias.example.test' },
          { name: 'cross', type: 'CNAME', data: 'host.other.test.' },
          { name: 'outside', type: 'CNAME', data: 'somewhere.elsewhere.invalid' },
          { name: 'dangling', type: 'CNAME', data: 'gone.example.test' },
          { name: 'a.b.deep', type: 'A', data: '192.0.2.2' },
          { name: '*.wild', type: 'A', data: '192.0.2.9' },
          { name: 'txt-only.wild', type: 'TXT', data: 'not wild' },
          { name: 'big', type: 'TXT', data: Array.from({ length: 8 }, (_, index) => `${index}`.repeat(200)) },
        ],
      },
      { origin: 'other.test', records: [{ name: 'host', type: 'A', data: '192.0.2.50' }] },
    ],
  });
  socket = dgram.createSocket({ type: 'udp4', recvBufferSize: 4 * 1024 * 1024 });
  socket.on('message', (message) => {
    const reply = dnsPacket.decode(message) as Reply;
    waiting.get(reply.id!)?.(reply);
    waiting.delete(reply.id!);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  socket?.close();
  await server?.stop();
});

describe('test DNS server', () => {
  it('answers names in its zones authoritatively, any case, and logs the questions', async () => {
    const reply = await askUdp('WWW.Example.Test', 'A');
    expect(reply.rcode).toBe('NOERROR');
    expect(reply.flag_aa).toBe(true);
    expect(records(reply)).toEqual(['www.example.test A 192.0.2.1']);
    expect(records(await askUdp('www.example.test', 'AAAA'))).toEqual(['www.example.test AAAA 2001:db8::1']);
    expect(server.queryLog()).toContainEqual({ name: 'www.example.test', type: 'A', transport: 'udp' });
  });

  it('follows CNAME chains through its own zones and stops at targets it does not serve', async () => {
    expect(records(await askUdp('chain.example.test', 'A'))).toEqual([
      'chain.example.test CNAME alias.example.test',
      'alias.example.test CNAME www.example.test',
      'www.example.test A 192.0.2.1',
    ]);
    expect(records(await askUdp('cross.example.test', 'A'))).toEqual(['cross.example.test CNAME host.other.test', 'host.other.test A 192.0.2.50']);
    const outside = await askUdp('outside.example.test', 'A');
    expect(outside.rcode).toBe('NOERROR');
    expect(records(outside)).toEqual(['outside.example.test CNAME somewhere.elsewhere.invalid']);
    const dangling = await askUdp('dangling.example.test', 'A');
    expect(dangling.rcode).toBe('NXDOMAIN');
    expect(records(dangling)).toEqual(['dangling.example.test CNAME gone.example.test']);
  });

  it('tells NXDOMAIN from NODATA, with the SOA in the authority section, and treats empty non-terminals as existing', async () => {
    const missing = await askUdp('missing.example.test', 'A');
    expect(missing.rcode).toBe('NXDOMAIN');
    expect(missing.authorities?.map((record) => `${record.name} ${record.type}`)).toEqual(['example.test SOA']);
    const nodata = await askUdp('www.example.test', 'MX');
    expect(nodata.rcode).toBe('NOERROR');
    expect(nodata.answers).toEqual([]);
    expect(nodata.authorities?.[0]?.type).toBe('SOA');
    expect((await askUdp('b.deep.example.test', 'A')).rcode).toBe('NOERROR'); // empty non-terminal
    expect((await askUdp('deep.example.test', 'A')).rcode).toBe('NOERROR');
    expect((await askUdp('x.b.deep.example.test', 'A')).rcode).toBe('NXDOMAIN');
  });

  it('answers wildcards for names that do not exist, at any depth, but not for names that do', async () => {
    expect(records(await askUdp('random123.wild.example.test', 'A'))).toEqual(['random123.wild.example.test A 192.0.2.9']);
    expect(records(await askUdp('a.b.wild.example.test', 'A'))).toEqual(['a.b.wild.example.test A 192.0.2.9']);
    const existing = await askUdp('txt-only.wild.example.test', 'A');
    expect(existing.rcode).toBe('NOERROR');
    expect(existing.answers).toEqual([]);
    // The wildcard covers only names below wild.example.test.
    expect((await askUdp('random123.example.test', 'A')).rcode).toBe('NXDOMAIN');
  });

  it('refuses names outside its zones', async () => {
    const reply = await askUdp('example.com', 'A');
    expect(reply.rcode).toBe('REFUSED');
    expect(reply.flag_aa).toBe(false);
  });

  it('truncates answers too big for UDP, and gives them whole over TCP', async () => {
    const udp = await askUdp('big.example.test', 'TXT');
    expect(udp.flag_tc).toBe(true);
    expect(udp.answers).toEqual([]);
    const [tcp] = await askTcp('big.example.test', 'TXT', (messages) => messages.length === 1);
    expect(tcp.flag_tc).toBe(false);
    expect(tcp.answers).toHaveLength(1);
  });

  it('transfers an open zone over TCP: SOA, every record, SOA, across several messages', async () => {
    const messages = await askTcp('example.test', 'AXFR', (so) => so.flatMap((message) => message.answers ?? []).filter((a) => a.type === 'SOA').length === 2);
    const answers = messages.flatMap((message) => message.answers ?? []);
    expect(messages.length).toBeGreaterThan(1);
    expect(answers[0].type).toBe('SOA');
    expect(answers.at(-1)?.type).toBe('SOA');
    expect(answers).toHaveLength(15); // 13 records + SOA twice
    expect(new Set(answers.map((answer) => answer.name))).toContain('a.b.deep.example.test');
  });

  it('refuses AXFR of closed zones, of zones it does not have, and over UDP', async () => {
    const [closed] = await askTcp('other.test', 'AXFR', (messages) => messages.length === 1);
    expect(closed.rcode).toBe('REFUSED');
    const [unknown] = await askTcp('nowhere.test', 'AXFR', (messages) => messages.length === 1);
    expect(unknown.rcode).toBe('REFUSED');
    expect((await askUdp('example.test', 'AXFR')).rcode).toBe('REFUSED');
  });

  it('keeps up with thousands of concurrent questions', async () => {
    const before = server.queries();
    const started = Date.now();
    const replies = await Promise.all(Array.from({ length: 2000 }, (_, index) => askUdp(`n${index}.wild.example.test`, 'A')));
    expect(replies.every((reply) => reply.rcode === 'NOERROR' && reply.answers?.length === 1)).toBe(true);
    expect(server.queries() - before).toBe(2000);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('can delay, fail or drop chosen questions, and reports how many wait at once', async () => {
    const hooked = await startDnsServer({
      zones: [{ origin: 'hook.test', records: [{ name: 'www', type: 'A', data: '192.0.2.1' }] }],
      delayMs: 50,
      override: (query) => (query.name.startsWith('fail.') ? 'SERVFAIL' : query.name.startsWith('drop.') ? 'drop' : undefined),
    });
    const original = server;
    server = hooked;
    try {
      const replies = await Promise.all([askUdp('www.hook.test', 'A'), askUdp('www.hook.test', 'AAAA'), askUdp('fail.hook.test', 'A')]);
      expect(replies.map((reply) => reply.rcode)).toEqual(['NOERROR', 'NOERROR', 'SERVFAIL']);
      expect(hooked.maxInFlight()).toBe(3);
      await expect(askUdp('drop.hook.test', 'A')).rejects.toThrow(/no answer/);
    } finally {
      server = original;
      await hooked.stop();
    }
  });
});
