import type { LookupFunction } from 'node:net';
import dns from 'node:dns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodeHttpSender, parseTemplate, runTemplatesDetailed } from '../../src/scanner/nuclei/index.js';
import { FAVICON, startServer, type TestServer } from './server.js';

let server: TestServer;

beforeAll(async () => {
  server = await startServer({
    '/big': (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.end('A'.repeat(50_000));
    },
    '/hang': () => {
      // never answers
    },
  });
});
afterAll(async () => {
  await server.close();
});

const base = {
  headers: {},
  followRedirects: false,
  maxRedirects: 0,
  timeoutMs: 3000,
};

describe('createNodeHttpSender', () => {
  it('returns status, headers, body, raw request/response', async () => {
    const send = createNodeHttpSender();
    const res = await send({ ...base, method: 'POST', url: `${server.baseUrl}/echo?q=1`, headers: { 'X-Test': 'yes' }, body: 'abc' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(JSON.parse(res.body)).toMatchObject({ method: 'POST', url: '/echo?q=1', body: 'abc' });
    expect(res.rawRequest).toContain('POST /echo?q=1 HTTP/1.1\r\nHost: 127.0.0.1:');
    expect(res.rawRequest).toContain('X-Test: yes');
    expect(res.rawResponse).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(res.rawResponse).toContain('Content-Type: application/json');
    expect(res.finalUrl).toBe(`${server.baseUrl}/echo?q=1`);
    expect(res.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('keeps binary bodies byte-exact', async () => {
    const { encodeString } = await import('../../src/scanner/nuclei/index.js');
    const res = await createNodeHttpSender()({ ...base, method: 'GET', url: `${server.baseUrl}/favicon.ico` });
    expect(encodeString(res.body).equals(FAVICON)).toBe(true);
  });

  it('bounds the body size', async () => {
    const res = await createNodeHttpSender({ maxBodyBytes: 1000 })({ ...base, method: 'GET', url: `${server.baseUrl}/big` });
    expect(res.body.length).toBe(1000);
    expect(res.bodyTruncated).toBe(true);
    const smaller = await createNodeHttpSender()({ ...base, method: 'GET', url: `${server.baseUrl}/big`, maxBodyBytes: 10 });
    expect(smaller.body).toBe('A'.repeat(10));
  });

  it('times out', async () => {
    await expect(createNodeHttpSender()({ ...base, method: 'GET', url: `${server.baseUrl}/hang`, timeoutMs: 200 })).rejects.toThrow(/timed out/);
  });

  it('follows redirects within max-redirects and reports the final URL', async () => {
    const send = createNodeHttpSender();
    const res = await send({ ...base, method: 'GET', url: `${server.baseUrl}/redirect/2`, followRedirects: true, maxRedirects: 5 });
    expect(res.status).toBe(200);
    expect(res.finalUrl).toBe(`${server.baseUrl}/redirect/0`);
    expect(res.rawRequest).toContain('GET /redirect/2 HTTP/1.1');
    const stopped = await send({ ...base, method: 'GET', url: `${server.baseUrl}/redirect/2`, followRedirects: true, maxRedirects: 1 });
    expect(stopped.status).toBe(302);
    expect(stopped.finalUrl).toBe(`${server.baseUrl}/redirect/1`);
  });

  it('runs the injected lookup for IP literals and names, and a refusing guard blocks the request', async () => {
    const seen: string[] = [];
    const allowing: LookupFunction = (hostname, options, callback) => {
      seen.push(hostname);
      dns.lookup(hostname, options, callback as never);
    };
    const ok = await createNodeHttpSender({ lookup: allowing })({ ...base, method: 'GET', url: `${server.baseUrl}/` });
    expect(ok.status).toBe(200);
    expect(seen).toContain('127.0.0.1');
    const byName = await createNodeHttpSender({ lookup: allowing })({ ...base, method: 'GET', url: `http://localhost:${server.port}/` }).catch(
      (err: Error) => err,
    );
    expect(seen).toContain('localhost');
    void byName; // localhost may resolve to ::1 where nothing listens; only the lookup call matters here

    const refusing: LookupFunction = (hostname, _options, callback) => {
      callback(Object.assign(new Error(`scope guard: ${hostname} is out of scope`), { code: 'EOUTOFSCOPE' }), '', 4);
    };
    const before = server.log.length;
    const template = parseTemplate(`id: guarded
info: { name: guarded, author: x, severity: info }
http:
  - path: ["{{BaseURL}}/"]
    matchers:
      - type: status
        status: [200]
`).template!;
    const out = await runTemplatesDetailed([template], { baseUrl: server.baseUrl }, { send: createNodeHttpSender({ lookup: refusing }) });
    expect(out.results).toEqual([]);
    expect(out.stats.requestsFailed).toBe(1);
    expect(out.warnings[0].message).toContain('out of scope');
    expect(server.log.length).toBe(before);
  });
});
