/**
 * The default network connector: the injected lookup (scope guard) decides every connection, IP literals
 * included; TLS; abort. And IPv6 targets end to end.
 */
import dns from 'node:dns';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodeNetworkConnector } from '../../src/scanner/nuclei/index.js';
import { makeCertificates, type TestCertificates } from '../scanner/helpers.js';
import { bannerHandler, run, startTcpService, startTlsService, tcpTemplate, type TcpService, until } from './network-servers.js';

let plain: TcpService;
let secure: TcpService;
let certs: TestCertificates;
/** SNI the TLS service saw, per connection ('' for none). */
const servernames: string[] = [];

beforeAll(async () => {
  certs = makeCertificates();
  plain = await startTcpService(bannerHandler('hello\r\n'));
  secure = await startTlsService(certs.selfSigned, (socket) => {
    servernames.push((socket as unknown as { servername?: string | false }).servername || '');
    socket.write('secure hello\r\n');
  });
});

afterAll(async () => {
  await Promise.all([plain, secure].map((s) => s?.close()));
  certs?.cleanup();
});

/** A lookup that records what it was asked and refuses `blocked` (as a scope guard would). */
function guard(blocked: string[]) {
  const asked: string[] = [];
  const lookup: net.LookupFunction = (hostname, options, callback) => {
    asked.push(hostname);
    if (blocked.includes(hostname)) {
      callback(Object.assign(new Error(`${hostname} is out of scope`), { code: 'EOUTOFSCOPE' }), '', 4);
      return;
    }
    dns.lookup(hostname, options, callback as never);
  };
  return { asked, lookup };
}

describe('createNodeNetworkConnector', () => {
  it('asks the lookup for IP literals too, and a refusal stops the connection', async () => {
    const g = guard(['127.0.0.1']);
    const before = plain.connections;
    const connect = createNodeNetworkConnector({ lookup: g.lookup });
    await expect(connect({ host: '127.0.0.1', port: plain.port, tls: false, timeoutMs: 1000 })).rejects.toThrow('out of scope');
    expect(g.asked).toEqual(['127.0.0.1']);
    expect(plain.connections).toBe(before);
  });

  it('connects when the lookup allows it, for names through the lookup itself', async () => {
    const g = guard([]);
    const connect = createNodeNetworkConnector({ lookup: g.lookup });
    const socket = await connect({ host: 'localhost', port: plain.port, tls: false, timeoutMs: 1000 });
    socket.destroy();
    expect(g.asked).toContain('localhost');
    const refused = guard(['localhost']);
    await expect(createNodeNetworkConnector({ lookup: refused.lookup })({ host: 'localhost', port: plain.port, tls: false, timeoutMs: 1000 })).rejects.toThrow(
      'out of scope',
    );
  });

  it('speaks TLS without verifying the certificate, with SNI for names only', async () => {
    const connect = createNodeNetworkConnector();
    const byName = await connect({ host: 'localhost', port: secure.port, tls: true, timeoutMs: 2000 });
    await until(() => servernames.length === 1);
    byName.destroy();
    const byIp = await connect({ host: '127.0.0.1', port: secure.port, tls: true, timeoutMs: 2000 });
    await until(() => servernames.length === 2);
    byIp.destroy();
    expect(servernames).toEqual(['localhost', '']);
  });

  it('an aborted signal refuses to connect', async () => {
    const controller = new AbortController();
    controller.abort();
    const before = plain.connections;
    await expect(createNodeNetworkConnector()({ host: '127.0.0.1', port: plain.port, tls: false, timeoutMs: 1000, signal: controller.signal })).rejects.toThrow(
      'aborted',
    );
    expect(plain.connections).toBe(before);
  });
});

describe('network: IPv6 targets', () => {
  let v6: net.Server;
  let port: number;
  beforeAll(async () => {
    v6 = net.createServer((s) => s.end('SSH-2.0-OpenSSH_9.6\r\n'));
    await new Promise<void>((resolve) => v6.listen(0, '::1', resolve));
    port = (v6.address() as net.AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => v6.close(() => resolve())));

  const yaml = (word: string) => tcpTemplate(`  - host:\n      - "{{Hostname}}"\n    matchers:\n      - type: word\n        words: ["${word}"]\n`);

  it('{{Hostname}} is [::1]:port and connects to ::1', async () => {
    const out = await run(yaml('OpenSSH_9'), { host: '::1', port });
    expect(out.results.map((r) => r.matchedUrl)).toEqual([`[::1]:${port}`]);
    expect((await run(yaml('Dropbear'), { host: '::1', port })).results).toEqual([]);
  });
});
