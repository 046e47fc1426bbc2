/**
 * Loopback-only test fixtures for the scanner: real servers on 127.0.0.1 port 0, certificates made
 * with openssl in a temp dir, and a tripwire that makes any connection to a non-loopback address
 * fail loudly instead of leaving the machine.
 */
import { execFileSync } from 'node:child_process';
import dgram from 'node:dgram';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const LOOPBACK = '127.0.0.1';

// ---------------------------------------------------------------------------------------------
// Tripwire: every socket connect is recorded; anything not aimed at loopback throws before any packet.

export interface Tripwire {
  /** Every connect target seen, as host:port. */
  attempts: string[];
  restore(): void;
}

const LOOPBACK_TARGET = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

export function installTripwire(): Tripwire {
  const original = net.Socket.prototype.connect;
  const attempts: string[] = [];
  net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]) {
    // Node passes either (options, cb), (port, host, cb) or an internal normalized [options, cb] array.
    const first = Array.isArray(args[0]) ? args[0][0] : args[0];
    const options = (typeof first === 'object' && first !== null ? first : { port: first, host: args[1] }) as { host?: string; port?: number; path?: string };
    if (!options.path) {
      // http passes path: null; a real path means a unix socket
      const host = options.host ?? 'localhost';
      attempts.push(`${host}:${options.port}`);
      if (!LOOPBACK_TARGET.test(host)) throw new Error(`TRIPWIRE: test tried to connect to non-loopback ${host}:${options.port}`);
    }
    return (original as (...a: unknown[]) => net.Socket).apply(this, args);
  } as typeof original;
  return {
    attempts,
    restore: () => {
      net.Socket.prototype.connect = original;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Servers

export interface Started {
  port: number;
  close(): Promise<void>;
}

export async function listen(server: net.Server, host = LOOPBACK): Promise<Started> {
  const sockets = new Set<net.Socket>();
  server.on('connection', (socket) => {
    socket.on('error', () => {}); // the scanner hangs up abruptly by design
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('secureConnection', (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const { port } = server.address() as net.AddressInfo;
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

export type Routes = Record<string, (req: http.IncomingMessage, res: http.ServerResponse) => void>;

/** Routes by exact path; `*` is the fallback (404 when absent). Counts requests in `hits`. */
export function routeHandler(routes: Routes, hits: string[] = []) {
  return (req: http.IncomingMessage, res: http.ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    hits.push(path);
    const route = routes[path] ?? routes['*'];
    if (route) return route(req, res);
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  };
}

export async function startHttpServer(routes: Routes, host = LOOPBACK): Promise<Started & { hits: string[] }> {
  const hits: string[] = [];
  const started = await listen(http.createServer(routeHandler(routes, hits)), host);
  return { ...started, hits };
}

export async function startHttpsServer(cert: CertPair, routes: Routes): Promise<Started & { hits: string[] }> {
  const hits: string[] = [];
  const started = await listen(https.createServer({ key: cert.key, cert: cert.cert }, routeHandler(routes, hits)));
  return { ...started, hits };
}

/** A service that speaks first, like SSH. */
export async function startBannerServer(banner: string): Promise<Started> {
  return listen(net.createServer((socket) => socket.end(banner)));
}

/** The lowest port the kernel hands out for `listen(0)` and outgoing connections. */
function ephemeralPortFloor(): number {
  try {
    const floor = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(floor) && floor > 4096 ? floor : 32768;
  } catch {
    return 32768;
  }
}

/**
 * A port nothing listens on: connects to it are refused. It is taken below the kernel's ephemeral range,
 * because every other test server listens on port 0: a port from that range, closed again, can be handed
 * to a test file running beside this one before the test connects to it (CI saw that once).
 */
export async function closedPort(): Promise<number> {
  const ceiling = ephemeralPortFloor();
  // From 20000 up, or the upper half when the ephemeral range starts lower: never inside it.
  const lowest = Math.min(20_000, Math.floor(ceiling / 2));
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = lowest + Math.floor(Math.random() * (ceiling - lowest));
    const server = net.createServer();
    const free = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, LOOPBACK, () => resolve(true));
    });
    if (!free) continue;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return port;
  }
  throw new Error('no free port below the ephemeral range');
}

// ---------------------------------------------------------------------------------------------
// Certificates (openssl is on the machine; Node cannot create X.509 itself)

export interface CertPair {
  key: string;
  cert: string;
}

export interface TestCertificates {
  /** Self-signed, valid for ten years, CN=localhost, SAN localhost + 127.0.0.1. */
  selfSigned: CertPair;
  /** Self-signed, valid January 2020 only. */
  expired: CertPair;
  /** Issued by `ca`, currently valid. */
  caSigned: CertPair;
  ca: CertPair;
  dir: string;
  cleanup(): void;
}

export function makeCertificates(): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'perimeter-scanner-certs-'));
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  const read = (name: string) => readFileSync(join(dir, name), 'utf8');

  openssl(
    'req',
    '-x509',
    ...ecKey,
    '-keyout',
    'self.key',
    '-out',
    'self.crt',
    '-days',
    '3650',
    '-subj',
    '/CN=localhost/O=Perimeter Test',
    '-addext',
    'subjectAltName=DNS:localhost,IP:127.0.0.1',
  );

  // `openssl ca` is the OpenSSL 3.0 way to pick arbitrary validity dates (x509 -not_before arrived in 3.4).
  writeFileSync(join(dir, 'index.txt'), '');
  writeFileSync(join(dir, 'serial'), '1000\n');
  writeFileSync(
    join(dir, 'ca.cnf'),
    [
      '[ca]',
      'default_ca = d',
      '[d]',
      'database = index.txt',
      'new_certs_dir = .',
      'serial = serial',
      'default_md = sha256',
      'policy = p',
      'unique_subject = no',
      'copy_extensions = copy',
      '[p]',
      'commonName = supplied',
      'organizationName = optional',
      '',
    ].join('\n'),
  );
  openssl('req', '-new', ...ecKey, '-keyout', 'expired.key', '-out', 'expired.csr', '-subj', '/CN=expired.localhost');
  openssl(
    'ca',
    '-batch',
    '-config',
    'ca.cnf',
    '-selfsign',
    '-keyfile',
    'expired.key',
    '-in',
    'expired.csr',
    '-out',
    'expired.crt',
    '-startdate',
    '20200101000000Z',
    '-enddate',
    '20200201000000Z',
    '-notext',
  );

  openssl('req', '-x509', ...ecKey, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '3650', '-subj', '/CN=Perimeter Test CA');
  openssl('req', '-new', ...ecKey, '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', '/CN=localhost');
  writeFileSync(join(dir, 'leaf.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  openssl(
    'x509',
    '-req',
    '-in',
    'leaf.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '825',
    '-out',
    'leaf.crt',
    '-extfile',
    'leaf.ext',
  );

  return {
    selfSigned: { key: read('self.key'), cert: read('self.crt') },
    expired: { key: read('expired.key'), cert: read('expired.crt') },
    caSigned: { key: read('leaf.key'), cert: read('leaf.crt') },
    ca: { key: read('ca.key'), cert: read('ca.crt') },
    dir,
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

// ---------------------------------------------------------------------------------------------
// A tiny authoritative DNS server on loopback, so the Resolver path is tested without leaving the machine.

export interface ZoneRecord {
  a?: string[];
  aaaa?: string[];
  cname?: string;
}

export async function startDnsServer(
  zone: Record<string, ZoneRecord>,
  options: { silent?: boolean } = {},
): Promise<{ server: string; close(): Promise<void> }> {
  const socket = dgram.createSocket('udp4');
  socket.on('message', (query, peer) => {
    if (options.silent) return; // a dead name server: never answers
    socket.send(answer(query, zone), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, LOOPBACK, resolve));
  return {
    server: `${LOOPBACK}:${socket.address().port}`,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

function answer(query: Buffer, zone: Record<string, ZoneRecord>): Buffer {
  let offset = 12;
  const labels: string[] = [];
  while (query[offset] !== 0) {
    labels.push(query.toString('ascii', offset + 1, offset + 1 + query[offset]));
    offset += query[offset] + 1;
  }
  const question = query.subarray(12, offset + 5);
  const type = query.readUInt16BE(offset + 1);
  const name = labels.join('.').toLowerCase();
  const record = zone[name];
  const answers: Buffer[] = [];
  const rr = (rtype: number, data: Buffer) => {
    const head = Buffer.alloc(12);
    head.writeUInt16BE(0xc00c, 0); // pointer to the question name
    head.writeUInt16BE(rtype, 2);
    head.writeUInt16BE(1, 4);
    head.writeUInt32BE(60, 6);
    head.writeUInt16BE(data.length, 10);
    answers.push(head, data);
  };
  let count = 0;
  if (record?.cname && (type === 5 || type === 1 || type === 28)) {
    rr(5, encodeName(record.cname));
    count++;
    const target = zone[record.cname];
    // Real servers add the target's records; the resolver follows the chain from them.
    if (target && type !== 5) {
      for (const ip of (type === 1 ? target.a : target.aaaa) ?? []) {
        const head = Buffer.alloc(2);
        head.writeUInt16BE(0xc000 | (12 + question.length + 12), 0); // pointer to the CNAME target name (first answer's data)
        const data = type === 1 ? Buffer.from(ip.split('.').map(Number)) : ipv6Bytes(ip);
        const rest = Buffer.alloc(10);
        rest.writeUInt16BE(type, 0);
        rest.writeUInt16BE(1, 2);
        rest.writeUInt32BE(60, 4);
        rest.writeUInt16BE(data.length, 8);
        answers.push(head, rest, data);
        count++;
      }
    }
  } else if (record && type === 1) {
    for (const ip of record.a ?? []) rr(1, Buffer.from(ip.split('.').map(Number))), count++;
  } else if (record && type === 28) {
    for (const ip of record.aaaa ?? []) rr(28, ipv6Bytes(ip)), count++;
  }
  const header = Buffer.alloc(12);
  query.copy(header, 0, 0, 2); // id
  header.writeUInt16BE(0x8180 | (record ? 0 : 3), 2); // response, recursion available, NXDOMAIN when unknown
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(count, 6);
  return Buffer.concat([header, question, ...answers]);
}

function encodeName(name: string): Buffer {
  return Buffer.concat([...name.split('.').map((label) => Buffer.concat([Buffer.from([label.length]), Buffer.from(label)])), Buffer.from([0])]);
}

function ipv6Bytes(ip: string): Buffer {
  const [head, tail = ''] = ip.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  const buf = Buffer.alloc(16);
  for (const [i, g] of groups.entries()) buf.writeUInt16BE(parseInt(g, 16), i * 2);
  return buf;
}

// ---------------------------------------------------------------------------------------------
// Web apps with known properties, so tests can say both "found what is there" and "nothing else".

export const VULNERABLE_HOME = `<!doctype html>
<html><head><title>Perimeter &amp; Friends Test App</title>
<link rel="stylesheet" href="/static/bootstrap-5.3.2.min.css">
<script src="/static/jquery-3.6.0.min.js"></script></head>
<body><h1>Welcome</h1><a href="/files/">Shared files</a> <a href="/about">About</a></body></html>`;

export const DIRECTORY_LISTING = `<html><head><title>Index of /files/</title></head><body><h1>Index of /files/</h1><hr><pre>
<a href="../">../</a>
<a href="backup.sql">backup.sql</a>                 01-Jan-2024 10:00   1234
<a href="id_rsa">id_rsa</a>                     01-Jan-2024 10:00    411
</pre><hr></body></html>`;

/** nginx/1.18.0 + PHP version headers, no security headers, exposed .git, listing at /files/. */
export const vulnerableRoutes: Routes = {
  '/': (_req, res) => {
    res.writeHead(200, {
      'content-type': 'text/html; charset=utf-8',
      server: 'nginx/1.18.0',
      'x-powered-by': 'PHP/8.1.2',
      'set-cookie': 'PHPSESSID=abc; path=/',
    });
    res.end(VULNERABLE_HOME);
  },
  '/.git/HEAD': (_req, res) => res.writeHead(200, { 'content-type': 'text/plain', server: 'nginx/1.18.0' }).end('ref: refs/heads/main\n'),
  '/files/': (_req, res) => res.writeHead(200, { 'content-type': 'text/html', server: 'nginx/1.18.0' }).end(DIRECTORY_LISTING),
};

export const SECURITY_HEADERS = {
  'strict-transport-security': 'max-age=63072000; includeSubDomains',
  'content-security-policy': "default-src 'self'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
};

/** Every security header, a version-less Server header, and a catch-all 200 (so status alone proves nothing). */
export const hardenedRoutes: Routes = {
  '*': (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html', server: 'nginx', ...SECURITY_HEADERS });
    res.end('<!doctype html><html><head><title>Hardened</title></head><body><div id="app"></div></body></html>');
  },
};
