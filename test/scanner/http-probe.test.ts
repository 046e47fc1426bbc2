import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHostRateLimiter, createScopeGuard, extractTitle, httpRequest, HttpRequestError, probeHttp, ScopeError } from '../../src/scanner/index.js';
import {
  closedPort,
  installTripwire,
  LOOPBACK,
  makeCertificates,
  startHttpServer,
  startHttpsServer,
  vulnerableRoutes,
  type Started,
  type TestCertificates,
  type Tripwire,
} from './helpers.js';

const guard = createScopeGuard({ allowedNetworks: ['127.0.0.0/8', '::1/128'] });
type Server = Started & { hits: string[] };

let tripwire: Tripwire;
let certs: TestCertificates;
let app: Server;
let secure: Server;
let elsewhere: Server; // on 127.0.0.2: "another host" for redirect tests
let redirecting: Server; // 127.0.0.1 → 127.0.0.2
let toMetadata: Server; // 127.0.0.1 → 169.254.169.254
let sameHost: Server; // / → /final on the same host

beforeAll(async () => {
  tripwire = installTripwire();
  certs = makeCertificates();
  app = await startHttpServer({
    ...vulnerableRoutes,
    '/big': (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      let sent = 0;
      const pump = () => {
        while (sent < 5_000 && res.write(chunk)) sent++;
        if (sent < 5_000) res.once('drain', pump);
        else res.end();
      };
      pump();
    },
    '/echo': (req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () =>
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ method: req.method, body, header: req.headers['x-test'] })),
      );
    },
  });
  secure = await startHttpsServer(certs.selfSigned, {
    '/': (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<title>Secure Area</title>'),
  });
  elsewhere = await startHttpServer({ '/landing': (_req, res) => res.writeHead(200, { server: 'Caddy' }).end('<title>Landed</title>') }, '127.0.0.2');
  redirecting = await startHttpServer({ '/': (_req, res) => res.writeHead(302, { location: `http://127.0.0.2:${elsewhere.port}/landing` }).end() });
  toMetadata = await startHttpServer({ '/': (_req, res) => res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end() });
  sameHost = await startHttpServer({
    '/': (_req, res) => res.writeHead(301, { location: '/final?x=1' }).end(),
    '/final': (req, res) => res.end(`<title>Final for ${req.headers.host}</title>`),
  });
});
afterAll(async () => {
  await Promise.all([app.close(), secure.close(), elsewhere.close(), redirecting.close(), toMetadata.close(), sameHost.close()]);
  certs.cleanup();
  tripwire.restore();
});

describe('probeHttp', () => {
  it('captures status, title, headers, excerpt and technologies of a plain HTTP server (auto falls back from TLS)', async () => {
    const web = await probeHttp({ host: 'localhost', address: LOOPBACK, port: app.port, guard, timeoutMs: 2_000 });
    expect(web).toMatchObject({
      kind: 'web',
      scheme: 'http',
      host: 'localhost',
      address: LOOPBACK,
      port: app.port,
      url: `http://localhost:${app.port}/`,
      finalUrl: `http://localhost:${app.port}/`,
      status: 200,
      title: 'Perimeter & Friends Test App',
      server: 'nginx/1.18.0',
      contentType: 'text/html; charset=utf-8',
      redirectChain: [],
      bodyTruncated: false,
    });
    expect(web.headers).toMatchObject({ server: 'nginx/1.18.0', 'x-powered-by': 'PHP/8.1.2', 'set-cookie': 'PHPSESSID=<redacted>; path=/' });
    expect(web.headers.date).toBeUndefined(); // only selected headers are kept
    expect(web.bodyExcerpt).toContain('<h1>Welcome</h1>');
    expect(web.bodySha256).toMatch(/^[0-9a-f]{64}$/);
    expect(web.tls).toBeUndefined();
    expect(web.technologies).toEqual([
      { name: 'Bootstrap', version: '5.3.2', evidence: 'body' },
      { name: 'jQuery', version: '3.6.0', evidence: 'body' },
      { name: 'nginx', version: '1.18.0', evidence: 'header:server' },
      { name: 'PHP', version: '8.1.2', evidence: 'header:x-powered-by' },
    ]);
    // The Host header carries the name, while the connection went to the address.
    expect(app.hits).toContain('/');
  });

  it('probes HTTPS with a self-signed certificate (inspecting, not trusting)', async () => {
    const web = await probeHttp({ host: 'localhost', address: LOOPBACK, port: secure.port, guard, timeoutMs: 2_000 });
    expect(web).toMatchObject({ scheme: 'https', status: 200, title: 'Secure Area', url: `https://localhost:${secure.port}/` });
    expect(web.tls?.protocol).toMatch(/^TLSv1\.[23]$/);
    expect(web.technologies).toEqual([]);
  });

  it('honours tls: true / false', async () => {
    await expect(probeHttp({ host: LOOPBACK, address: LOOPBACK, port: app.port, tls: true, guard, timeoutMs: 2_000 })).rejects.toBeInstanceOf(HttpRequestError);
    await expect(probeHttp({ host: LOOPBACK, address: LOOPBACK, port: secure.port, tls: false, guard, timeoutMs: 2_000 })).rejects.toThrow();
  });

  it('follows a redirect to another host the guard allows', async () => {
    const web = await probeHttp({ host: LOOPBACK, address: LOOPBACK, port: redirecting.port, guard, timeoutMs: 2_000 });
    expect(web.finalUrl).toBe(`http://127.0.0.2:${elsewhere.port}/landing`);
    expect(web.title).toBe('Landed');
    expect(web.redirectChain).toEqual([{ url: `http://127.0.0.1:${redirecting.port}/`, status: 302, location: web.finalUrl }]);
    expect(web.redirectStopped).toBeUndefined();
  });

  it('does not follow a redirect to a host the guard refuses', async () => {
    const narrow = createScopeGuard({ allowedNetworks: ['127.0.0.1/32'] });
    const hitsBefore = elsewhere.hits.length;
    const web = await probeHttp({ host: LOOPBACK, address: LOOPBACK, port: redirecting.port, guard: narrow, timeoutMs: 2_000 });
    expect(web.status).toBe(302);
    expect(web.finalUrl).toBe(`http://127.0.0.1:${redirecting.port}/`);
    expect(web.redirectChain).toEqual([]);
    expect(web.redirectStopped?.url).toBe(`http://127.0.0.2:${elsewhere.port}/landing`);
    expect(web.redirectStopped?.reason).toMatch(/127\.0\.0\.2 is out of scan scope/);
    expect(elsewhere.hits.length).toBe(hitsBefore);
  });

  it('does not follow a redirect to the metadata service, and never dials it', async () => {
    const before = tripwire.attempts.length;
    const web = await probeHttp({ host: LOOPBACK, address: LOOPBACK, port: toMetadata.port, guard, timeoutMs: 2_000 });
    expect(web.status).toBe(302);
    expect(web.redirectChain).toEqual([]);
    expect(web.redirectStopped).toMatchObject({ url: 'http://169.254.169.254/latest/meta-data/' });
    expect(web.redirectStopped?.reason).toMatch(/169\.254\.169\.254\/32 \(cloud metadata/);
    // Only the loopback server was dialled (a TLS attempt, then plain HTTP); the metadata address never was.
    expect(new Set(tripwire.attempts.slice(before))).toEqual(new Set([`127.0.0.1:${toMetadata.port}`]));
  });

  it('follows same-host redirects on the address already checked, keeping the Host name', async () => {
    const web = await probeHttp({ host: 'localhost', address: LOOPBACK, port: sameHost.port, guard, timeoutMs: 2_000 });
    expect(web.finalUrl).toBe(`http://localhost:${sameHost.port}/final?x=1`);
    expect(web.title).toBe(`Final for localhost:${sameHost.port}`);
    expect(web.redirectChain).toEqual([{ url: `http://localhost:${sameHost.port}/`, status: 301, location: web.finalUrl }]);
  });

  it('stops at the redirect limit', async () => {
    const server = await startHttpServer({
      '/': (_req, res) => res.writeHead(302, { location: '/loop' }).end(),
      '/loop': (_req, res) => res.writeHead(301, { location: '/loop' }).end(),
    });
    try {
      const web = await probeHttp({ host: LOOPBACK, address: LOOPBACK, port: server.port, guard, maxRedirects: 3, timeoutMs: 2_000 });
      expect(web.redirectChain).toHaveLength(3);
      expect(web.redirectStopped?.reason).toBe('redirect limit of 3 reached');
      expect(server.hits).toHaveLength(4);
    } finally {
      await server.close();
    }
  });

  it('goes through the per-host limiter', async () => {
    const limiter = createHostRateLimiter({ maxConcurrentPerHost: 1, maxPerSecondPerHost: 1_000 });
    const results = await Promise.all(
      Array.from({ length: 4 }, () => probeHttp({ host: LOOPBACK, address: LOOPBACK, port: app.port, tls: false, guard, limiter, timeoutMs: 2_000 })),
    );
    expect(results.every((web) => web.status === 200)).toBe(true);
    expect(limiter.active(LOOPBACK)).toBe(0);
  });

  it('fails cleanly on a port that is not HTTP', async () => {
    const port = await closedPort();
    await expect(probeHttp({ host: LOOPBACK, address: LOOPBACK, port, guard, timeoutMs: 1_000 })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});

describe('httpRequest', () => {
  it('sends method, headers and body, and returns a bounded response', async () => {
    const response = await httpRequest({
      url: `http://localhost:${app.port}/echo`,
      method: 'post',
      headers: { 'X-Test': 'yes' },
      body: 'hello',
      guard,
    });
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ method: 'POST', body: 'hello', header: 'yes' });
    expect(response.remoteAddress).toBe('127.0.0.1');
  });

  it('never reads more than maxBodyBytes of a huge body', async () => {
    const response = await httpRequest({ url: `http://127.0.0.1:${app.port}/big`, maxBodyBytes: 1_000, guard });
    expect(response.bodyBuffer.length).toBe(1_000);
    expect(response.truncated).toBe(true);
  });

  it('times out a server that never answers', async () => {
    const silent = http.createServer(() => {});
    const { port, close } = await (await import('./helpers.js')).listen(silent);
    try {
      await expect(httpRequest({ url: `http://127.0.0.1:${port}/`, timeoutMs: 150, guard })).rejects.toMatchObject({ code: 'ETIMEDOUT' });
    } finally {
      await close();
    }
  });

  it('refuses out-of-scope literals synchronously and names by DNS answer', async () => {
    const closed = createScopeGuard({ allowedNetworks: [] });
    expect(() => httpRequest({ url: 'http://127.0.0.1/', guard: closed })).toThrow(ScopeError);
    await expect(httpRequest({ url: `http://localhost:${app.port}/`, guard: closed })).rejects.toBeInstanceOf(ScopeError);
    expect(() => httpRequest({ url: 'ftp://127.0.0.1/', guard })).toThrow(/Unsupported URL scheme/);
  });
});

describe('extractTitle', () => {
  it('decodes entities and collapses whitespace', () => {
    expect(extractTitle('<TITLE lang="en">\n  A &lt;b&gt; &#38; &#x43;\n</TITLE>')).toBe('A <b> & C');
    expect(extractTitle('<p>no title</p>')).toBeUndefined();
  });
});
