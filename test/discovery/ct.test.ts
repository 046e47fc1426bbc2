import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CtSourceError, fetchCtNames } from '../../src/scanner/discovery/ct.js';

// A crt.sh-shaped server on loopback: the answer depends on the path, the query is recorded.
const requests: string[] = [];
let server: http.Server;
let base: string;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/ok') {
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify([
          { issuer_name: 'C=US, O=Test CA', common_name: 'www.example.test', name_value: 'www.example.test\n*.api.example.test\nMAIL.example.test.' },
          { common_name: 'example.test', name_value: 'example.test\nother.test\nnotexample.test\nadmin@example.test' },
          { name_value: '*.example.test\n192.0.2.1\nbad name.example.test\nvpn.example.test' },
          'not an object',
          null,
        ]),
      );
    } else if (path === '/empty') {
      res.end('[]');
    } else if (path === '/error') {
      res.statusCode = 500;
      res.end('upstream broke');
    } else if (path === '/badjson') {
      res.end('<html>rate limited</html>');
    } else if (path === '/object') {
      res.end('{"error":"nope"}');
    } else if (path === '/slow') {
      // Never answers; the client's deadline must end the wait.
    } else if (path === '/huge-declared') {
      res.setHeader('content-length', String(10_000));
      res.end('['.padEnd(10_000, ' '));
    } else if (path === '/huge-streamed') {
      // No content-length: the limit must hold while streaming.
      res.write('[');
      const chunk = `${'{"name_value":"x.example.test"},'.repeat(100)}`;
      let sent = 0;
      const pump = () => {
        while (sent < 200 && res.write(chunk)) sent++;
        if (sent < 200) res.once('drain', pump);
        else res.end('{}]');
      };
      pump();
    } else {
      res.statusCode = 404;
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('fetchCtNames', () => {
  it('asks with q=%25.<domain>&output=json and returns names under the domain, cleaned and sorted', async () => {
    const names = await fetchCtNames('Example.test', { url: `${base}/ok` });
    expect(names).toEqual(['api.example.test', 'example.test', 'mail.example.test', 'vpn.example.test', 'www.example.test']);
    const asked = requests.find((url) => url.startsWith('/ok'))!;
    expect(asked).toBe('/ok?q=%25.example.test&output=json');
  });

  it('keeps query parameters the configured URL already has', async () => {
    await fetchCtNames('example.test', { url: `${base}/empty?exclude=expired` });
    expect(requests).toContain('/empty?exclude=expired&q=%25.example.test&output=json');
  });

  it('returns nothing, without asking, when no URL is configured', async () => {
    const before = requests.length;
    expect(await fetchCtNames('example.test', { url: '' })).toEqual([]);
    expect(await fetchCtNames('example.test', { url: undefined })).toEqual([]);
    expect(requests.length).toBe(before);
  });

  it('returns an empty list for an empty answer', async () => {
    expect(await fetchCtNames('example.test', { url: `${base}/empty` })).toEqual([]);
  });

  it('fails with CtSourceError on a non-200 answer', async () => {
    const error = await fetchCtNames('example.test', { url: `${base}/error` }).catch((err) => err);
    expect(error).toBeInstanceOf(CtSourceError);
    expect(error.message).toBe(`CT source ${base}/error answered HTTP 500`);
  });

  it('fails with CtSourceError on an answer that is not JSON, or not an array', async () => {
    await expect(fetchCtNames('example.test', { url: `${base}/badjson` })).rejects.toThrow(/answered something that is not JSON/);
    await expect(fetchCtNames('example.test', { url: `${base}/object` })).rejects.toThrow(/not an array/);
  });

  it('fails with CtSourceError when the source does not answer in time', async () => {
    const started = Date.now();
    const error = await fetchCtNames('example.test', { url: `${base}/slow`, timeoutMs: 300 }).catch((err) => err);
    expect(error).toBeInstanceOf(CtSourceError);
    expect(error.message).toBe(`CT source ${base}/slow did not answer within 300 ms`);
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('fails with CtSourceError when the answer is larger than allowed (declared or streamed)', async () => {
    await expect(fetchCtNames('example.test', { url: `${base}/huge-declared`, maxBytes: 1_000 })).rejects.toThrow(
      /answer is 10000 bytes, more than the 1000 allowed/,
    );
    const error = await fetchCtNames('example.test', { url: `${base}/huge-streamed`, maxBytes: 50_000 }).catch((err) => err);
    expect(error).toBeInstanceOf(CtSourceError);
    expect(error.message).toMatch(/larger than the 50000 bytes allowed/);
  });

  it('fails with CtSourceError when the caller cancels', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    await expect(fetchCtNames('example.test', { url: `${base}/slow`, signal: controller.signal })).rejects.toThrow(/was cancelled/);
  });

  it('fails with CtSourceError for a URL that cannot be used', async () => {
    await expect(fetchCtNames('example.test', { url: 'not a url' })).rejects.toBeInstanceOf(CtSourceError);
    await expect(fetchCtNames('example.test', { url: 'ftp://127.0.0.1/x' })).rejects.toThrow(/must be http or https/);
  });

  it('fails with CtSourceError when nothing listens', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await expect(fetchCtNames('example.test', { url: `http://127.0.0.1:${port}/` })).rejects.toThrow(/CT source http:\/\/127\.0\.0\.1:\d+\/ failed/);
  });
});
