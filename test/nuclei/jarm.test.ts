/**
 * JARM fingerprints (jarm/) and the `jarm()` helper of network templates, against node:tls servers on loopback.
 *
 * Expected fingerprints: obtained once, by hand, with salesforce/jarm's jarm.py (commit e00ad79, python3) run as
 * `python3 jarm.py 127.0.0.1 -p <port> -v` against the two server configurations below, started by a scratch copy
 * of this file (Node 20.20.2, OpenSSL 3.0.19, EC P-256 certificate from makeCertificates). Our code gave the same
 * hashes and the same raw per-probe strings. A Node with another OpenSSL may answer some probes differently; then
 * these constants change (run jarm.py again), the algorithm does not.
 */
import net from 'node:net';
import type { Duplex } from 'node:stream';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createNodeNetworkConnector,
  createNodeTlsConnector,
  type NetworkConnector,
  parseTemplate,
  runSslTemplatesDetailed,
} from '../../src/scanner/nuclei/index.js';
import { buildClientHello, computeJarm, JARM_PROBES, jarmHash, readServerHello, ZERO_JARM } from '../../src/scanner/nuclei/jarm/index.js';
import { reorder } from '../../src/scanner/nuclei/jarm/probes.js';
import { closedPort as closedPortBelowEphemeralRange, makeCertificates, type TestCertificates } from '../scanner/helpers.js';
import { run, tcpTemplate } from './network-servers.js';

/** Default node:tls server (TLS 1.2-1.3) with ALPN h2 / http/1.1. */
const JARM_DEFAULT_H2 = '27d27d27d00000000042d42d000000592e3a5efc1c92ee4819fe43787a9444';
/** TLS 1.2 at most, two ECDSA ciphers only. */
const JARM_TLS12_TWO_CIPHERS = '28d28d28d00028d00028d28d28d28d02098c5f1b1aef82f7daaf9fed36c4e8';
/** jarm.py -v's raw probes for the first server. */
const RAW_DEFAULT_H2 = [
  'c02b|0303|h2|ff01-0001-000b-0023-0010-0017',
  'c02b|0303|h2|ff01-0001-000b-0023-0010-0017',
  'c02b|0303|h2|ff01-0001-000b-0023-0010-0017',
  '|||',
  '|||',
  '|||',
  '1302|0303||002b-0033',
  '1302|0303||002b-0033',
  '|||',
  '|||',
];

let certs: TestCertificates;
const servers: net.Server[] = [];
let h2Port: number;
let tls12Port: number;
let silentPort: number;
let closingPort: number;
let closedPort: number;

const sockets = new Set<net.Socket>();

async function listen(server: net.Server): Promise<number> {
  servers.push(server);
  server.on('connection', (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as net.AddressInfo).port;
}

function tlsServer(options: tls.TlsOptions): tls.Server {
  const server = tls.createServer({ key: certs.selfSigned.key, cert: certs.selfSigned.cert, ...options }, (socket) => socket.end());
  server.on('tlsClientError', () => {});
  return server;
}

/** Records every connection the JARM code asks for, and opens it over the default connector. */
function recording(): { connect: NetworkConnector; asked: Array<{ host: string; port: number; tls: boolean }> } {
  const base = createNodeNetworkConnector();
  const asked: Array<{ host: string; port: number; tls: boolean }> = [];
  return {
    asked,
    connect: (req) => {
      asked.push({ host: req.host, port: req.port, tls: req.tls });
      return base(req);
    },
  };
}

beforeAll(async () => {
  certs = makeCertificates();
  h2Port = await listen(tlsServer({ ALPNProtocols: ['h2', 'http/1.1'] }));
  tls12Port = await listen(tlsServer({ maxVersion: 'TLSv1.2', ciphers: 'ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305' }));
  // plain TCP: one never answers, one closes at once
  silentPort = await listen(net.createServer((s) => s.on('error', () => {})));
  closingPort = await listen(net.createServer((s) => s.end()));
  closedPort = await closedPortBelowEphemeralRange();
});

afterAll(async () => {
  for (const s of sockets) s.destroy();
  await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  certs.cleanup();
});

describe('JARM probes and hash', () => {
  it('reorders lists as the reference', () => {
    expect(reorder([1, 2, 3, 4, 5], 'REVERSE')).toEqual([5, 4, 3, 2, 1]);
    expect(reorder([1, 2, 3, 4, 5], 'BOTTOM_HALF')).toEqual([4, 5]);
    expect(reorder([1, 2, 3, 4, 5], 'TOP_HALF')).toEqual([3, 2, 1]);
    expect(reorder([1, 2, 3, 4, 5], 'MIDDLE_OUT')).toEqual([3, 4, 2, 5, 1]);
    expect(reorder([1, 2, 3, 4], 'MIDDLE_OUT')).toEqual([3, 2, 4, 1]);
    expect(reorder([1, 2, 3, 4], 'TOP_HALF')).toEqual([2, 1]);
  });

  it('builds ClientHellos with consistent lengths, the cipher list and the extensions of each probe', () => {
    for (const [i, probe] of JARM_PROBES.entries()) {
      const hello = buildClientHello(probe, 'example.com');
      expect(hello[0]).toBe(0x16);
      expect(hello.readUInt16BE(3)).toBe(hello.length - 5);
      expect(hello[5]).toBe(0x01);
      expect(hello.readUIntBE(6, 3)).toBe(hello.length - 9);
      expect(hello.readUInt16BE(1)).toBe(probe.version === 'tls11' ? 0x0302 : probe.version === 'tls12' ? 0x0303 : 0x0301);
      expect(hello.readUInt16BE(9)).toBe(probe.version === 'tls11' ? 0x0302 : 0x0303);
      expect(hello[43]).toBe(32);
      const cipherLength = hello.readUInt16BE(76);
      const expectedCiphers = (probe.ciphers === 'all' ? 69 : 64) * 2;
      const halved =
        probe.cipherOrder === 'TOP_HALF' || probe.cipherOrder === 'BOTTOM_HALF' ? (probe.cipherOrder === 'TOP_HALF' ? 35 : 34) * 2 : expectedCiphers;
      expect(cipherLength, `probe ${i}`).toBe(halved + (probe.grease ? 2 : 0));
      const afterCiphers = 78 + cipherLength;
      expect([...hello.subarray(afterCiphers, afterCiphers + 2)]).toEqual([0x01, 0x00]);
      expect(hello.readUInt16BE(afterCiphers + 2)).toBe(hello.length - afterCiphers - 4);
      const types: string[] = [];
      for (let at = afterCiphers + 4; at < hello.length; at += 4 + hello.readUInt16BE(at + 2)) types.push(hello.subarray(at, at + 2).toString('hex'));
      const expected = ['0000', '0017', '0001', 'ff01', '000a', '000b', '0023', '0010', '000d', '0033', '002d'];
      if (probe.version === 'tls13' || probe.versions === '1.2') expected.push('002b');
      expect(probe.grease ? types.slice(1) : types, `probe ${i}`).toEqual(expected);
      if (probe.grease) expect(types[0]).toMatch(/^([0-9a-f])a\1a$/);
    }
    // first probe: TLS 1.2, ciphers forward (0x0016 first), SNI as given
    const first = buildClientHello(JARM_PROBES[0]!, 'example.com');
    expect(first.subarray(78, 80).toString('hex')).toBe('0016');
    expect(first.includes(Buffer.from('\u0000\u000bexample.com'))).toBe(true);
  });

  it('hashes raw probes as jarm.py (its own -v output and hash)', () => {
    expect(jarmHash(RAW_DEFAULT_H2)).toBe(JARM_DEFAULT_H2);
    expect(jarmHash(Array(10).fill('|||'))).toBe(ZERO_JARM);
  });

  it('reads a ServerHello: cipher, version, ALPN and extension types; alerts and other bytes fail the probe', () => {
    const exts = Buffer.from('ff01000100' + '0010000500030268' + '32' + '00170000', 'hex');
    const body = Buffer.concat([
      Buffer.from('0303', 'hex'),
      Buffer.alloc(32, 7),
      Buffer.from([0]),
      Buffer.from('c02f00', 'hex'),
      Buffer.from([0, exts.length]),
      exts,
    ]);
    const hello = Buffer.concat([Buffer.from([0x16, 0x03, 0x03, 0, body.length + 4, 0x02, 0, 0, body.length]), body]);
    expect(readServerHello(hello)).toBe('c02f|0303|h2|ff01-0010-0017');
    expect(readServerHello(Buffer.from('15030300020228', 'hex'))).toBe('|||');
    expect(readServerHello(Buffer.from('HTTP/1.1 400 Bad Request\r\n'))).toBe('|||');
    expect(readServerHello(Buffer.alloc(0))).toBe('|||');
    expect(readServerHello(hello.subarray(0, 30))).toBe('|||');
  });
});

describe('computeJarm on loopback', () => {
  it('gives jarm.py fingerprint of a default TLS 1.3 server with ALPN, the same on a second run, over ten plain TCP connections', async () => {
    const { connect, asked } = recording();
    const first = await computeJarm('127.0.0.1', h2Port, { connect, timeoutMs: 3000 });
    expect(first.hash).toBe(JARM_DEFAULT_H2);
    expect(first.raw).toEqual(RAW_DEFAULT_H2);
    expect(asked).toHaveLength(10);
    expect(asked.every((a) => a.host === '127.0.0.1' && a.port === h2Port && a.tls === false)).toBe(true);
    expect((await computeJarm('127.0.0.1', h2Port, { connect, timeoutMs: 3000 })).hash).toBe(JARM_DEFAULT_H2);
  });

  it('tells a TLS 1.2-only server with other ciphers apart', async () => {
    const r = await computeJarm('127.0.0.1', tls12Port, { connect: createNodeNetworkConnector(), timeoutMs: 3000 });
    expect(r.hash).toBe(JARM_TLS12_TWO_CIPHERS);
    expect(r.hash).not.toBe(JARM_DEFAULT_H2);
  });

  it('is 62 zeros for a closed port, a TCP service that closes, and one that never answers (timeout)', async () => {
    const connect = createNodeNetworkConnector();
    const closed = await computeJarm('127.0.0.1', closedPort, { connect, timeoutMs: 1000 });
    expect(closed.hash).toBe(ZERO_JARM);
    expect(closed.errors.join(' ')).toContain('ECONNREFUSED');
    expect((await computeJarm('127.0.0.1', closingPort, { connect, timeoutMs: 1000 })).hash).toBe(ZERO_JARM);
    const started = Date.now();
    const silent = await computeJarm('127.0.0.1', silentPort, { connect, timeoutMs: 200 });
    expect(silent.hash).toBe(ZERO_JARM);
    // jarm.py gives up at the first timeout rather than waiting on all ten probes
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('goes through the connector only: one that refuses (the scope guard) fails every probe, 62 zeros', async () => {
    const refuse: NetworkConnector = () => Promise.reject(new Error('address 127.0.0.1 is out of scope'));
    const r = await computeJarm('127.0.0.1', h2Port, { connect: refuse as (req: Parameters<NetworkConnector>[0]) => Promise<Duplex> });
    expect(r.hash).toBe(ZERO_JARM);
    expect(r.errors).toEqual(['address 127.0.0.1 is out of scope']);
  });
});

describe('jarm() in network templates', () => {
  const template = (expr: string) =>
    tcpTemplate(
      `  - inputs:\n      - data: 2E\n        type: hex\n    host:\n      - "{{Hostname}}"\n    matchers:\n      - type: dsl\n        dsl:\n          - "${expr}"\n`,
    );

  it('parses without warnings', () => {
    const r = parseTemplate(template(`jarm(Hostname) == '${JARM_DEFAULT_H2}'`));
    expect(r.errors).toEqual([]);
    expect(r.warnings).toEqual([]);
    expect(r.template!.network![0]!.matchers[0]!.unsupported).toBeUndefined();
  });

  it('matches the server it fingerprints, not another hash; one fingerprint per host:port and run', async () => {
    const { connect, asked } = recording();
    const hit = await run(template(`jarm(Hostname) == '${JARM_DEFAULT_H2}'`), { host: '127.0.0.1', port: h2Port }, { connect, jarmTimeoutMs: 3000 });
    // the TLS server waits for a whole record after the template's one byte: the read times out (nuclei too)
    expect(hit.warnings.map((w) => w.message)).toEqual([expect.stringMatching(/^no answer from 127\.0\.0\.1:\d+: read timed out/)]);
    expect(hit.results).toHaveLength(1);
    expect(asked.filter((a) => a.port === h2Port)).toHaveLength(11);
    const miss = await run(template(`jarm(Hostname) == '${JARM_TLS12_TWO_CIPHERS}'`), { host: '127.0.0.1', port: h2Port }, { jarmTimeoutMs: 3000 });
    expect(miss.results).toEqual([]);
    const both = await run(
      [template(`jarm(Hostname) == '${JARM_DEFAULT_H2}'`), template(`jarm(Hostname) != '${ZERO_JARM}'`)].map((t) => parseTemplate(t).template!),
      { host: '127.0.0.1', port: h2Port },
      { connect, jarmTimeoutMs: 3000 },
    );
    expect(both.results).toHaveLength(2);
    // two templates, two input connections, one fingerprint (ten probes)
    expect(asked.filter((a) => a.port === h2Port)).toHaveLength(11 + 12);
  });

  it('does not fingerprint another host than the target (warning, no match, no connection)', async () => {
    const { connect, asked } = recording();
    const out = await run(template(`jarm('192.0.2.1:443') != ''`), { host: '127.0.0.1', port: h2Port }, { connect, jarmTimeoutMs: 3000 });
    expect(out.results).toEqual([]);
    expect(out.warnings.map((w) => w.message)).toContain('jarm("192.0.2.1:443") not computed: it is not the target 127.0.0.1');
    expect(asked.every((a) => a.host === '127.0.0.1')).toBe(true);
  });
});

describe('ssl jarm_hash', () => {
  const sslTemplate = (expr: string, id = 'ssl-jarm') =>
    `id: ${id}\ninfo:\n  name: T\n  author: a\n  severity: info\nssl:\n  - address: "{{Host}}:{{Port}}"\n    matchers:\n      - type: dsl\n        dsl:\n          - "${expr}"\n`;

  it('parses without the "not computed" warning', () => {
    const r = parseTemplate(sslTemplate(`jarm_hash == '${JARM_DEFAULT_H2}'`));
    expect(r.warnings).toEqual([]);
    expect(r.template!.ssl![0]!.matchers[0]!.unsupported).toBeUndefined();
  });

  it('is the JARM of the address when a block reads it, through jarmConnect; without it: warning, no match', async () => {
    const { connect: jarmConnect, asked } = recording();
    const template = parseTemplate(sslTemplate(`jarm_hash == '${JARM_DEFAULT_H2}'`)).template!;
    const other = parseTemplate(sslTemplate(`jarm_hash == '${JARM_TLS12_TWO_CIPHERS}'`, 'ssl-other')).template!;
    const plain = parseTemplate(sslTemplate(`tls_version == 'tls13'`, 'ssl-tls13')).template!;
    const target = { host: '127.0.0.1', port: h2Port };
    const out = await runSslTemplatesDetailed([template, other, plain], target, { connect: createNodeTlsConnector(), jarmConnect, jarmTimeoutMs: 3000 });
    expect(out.results.map((r) => r.templateId).sort()).toEqual(['ssl-jarm', 'ssl-tls13']);
    // one fingerprint for both templates reading jarm_hash, none for the one that does not
    expect(asked).toHaveLength(10);
    const without = await runSslTemplatesDetailed([template], target, { connect: createNodeTlsConnector() });
    expect(without.results).toEqual([]);
    expect(without.warnings.map((w) => w.message)).toContain('jarm_hash not computed: this run has no plain TCP connector for JARM probes (jarmConnect)');
  });
});
