import https from 'node:https';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen, makeCertificates, type Started, type TestCertificates } from '../scanner/helpers.js';
import { createNodeHttpSender, type HttpSender, type HttpSendRequest } from '../../src/scanner/nuclei/index.js';
import { parseAnnotations, parseGoDuration } from '../../src/scanner/nuclei/engine/annotations.js';
import { header, other, run, server, useEngineServers } from './engine-fixtures.js';

useEngineServers();

/** Both loopback servers listen on 127.0.0.1: `other` is another port of the target's host. */
describe('other ports of the target host', () => {
  it('{{RootURL}}:port and {{BaseURL}}:port send the request to that port, variables carrying it', async () => {
    const before = other.log.length;
    const out = await run(`${header('root-port')}
http:
  - path:
      - "{{RootURL}}:${other.port}/echo?h={{Hostname}}"
      - "{{BaseURL}}:${other.port}/admin"
    matchers:
      - type: status
        status: [200, 401, 403]
`);
    expect(other.log.slice(before).map((r) => r.url)).toEqual([`/echo?h=127.0.0.1:${other.port}`, '/admin']);
    expect(out.results[0].matchedUrl).toBe(`${other.baseUrl}/echo?h=127.0.0.1:${other.port}`);
  });

  it('an absolute URL on {{Host}} with another port is the target; another host name is not', async () => {
    const before = other.log.length;
    const out = await run(`${header('host-port')}
http:
  - path: ["http://{{Host}}:${other.port}/", "http://localhost:${other.port}/"]
    matchers:
      - type: status
        status: [200]
`);
    expect(other.log.slice(before).map((r) => r.url)).toEqual(['/']);
    expect(out.results.map((r) => r.matchedUrl)).toEqual([`http://127.0.0.1:${other.port}/`]);
    expect(out.warnings.some((w) => w.message.includes(`request to http://localhost:${other.port}/ skipped`))).toBe(true);
  });
});

describe('raw request annotations', () => {
  let certs: TestCertificates;
  let tls: Started;
  beforeAll(async () => {
    certs = makeCertificates();
    // lenient parser: the unsafe test below writes LF-only lines, as nuclei templates do
    const server = https.createServer({ ...certs.selfSigned, insecureHTTPParser: true }, (req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' }).end(`sni=${(req.socket as TLSSocket).servername || '-'}`);
    });
    tls = await listen(server);
  });
  afterAll(async () => {
    await tls.close();
    certs.cleanup();
  });

  it('@tls-sni sets the TLS server name (a literal, or request.host = the Host header); none for an IP target', async () => {
    const out = await run(
      `${header('at-sni')}
http:
  - raw:
      - |
        @tls-sni: acme.test
        GET /a HTTP/1.1
        Host: {{Hostname}}

      - |
        @tls-sni: request.host
        GET /b HTTP/1.1
        Host: portal.test:8443

      - |
        GET /c HTTP/1.1
        Host: {{Hostname}}

    extractors:
      - type: regex
        regex: ["sni=[a-z.-]+"]
`,
      {},
      `https://127.0.0.1:${tls.port}`,
    );
    expect(out.results.map((r) => r.extractedResults)).toEqual([['sni=acme.test'], ['sni=portal.test'], ['sni=-']]);
  });

  it('@Host sends the raw request to that host:port, the Host header as written; another host name is skipped', async () => {
    const before = other.log.length;
    const out = await run(`${header('at-host')}
http:
  - raw:
      - |
        @Host: http://127.0.0.1:${other.port}
        GET /echo?x=1 HTTP/1.1
        Host: {{Hostname}}

      - |
        @Host: localhost:${other.port}
        GET /echo?x=2 HTTP/1.1
        Host: {{Hostname}}

    matchers:
      - type: status
        status: [200]
`);
    const seen = other.log.slice(before);
    expect(seen.map((r) => [r.url, r.headers.host])).toEqual([['/echo?x=1', `127.0.0.1:${server.port}`]]);
    expect(out.results).toHaveLength(1);
    expect(out.warnings.some((w) => w.message.includes('skipped: it does not go to the target'))).toBe(true);
  });

  it('unsafe requests go over TLS for an https target, with @tls-sni', async () => {
    const out = await run(
      `${header('unsafe-tls')}
http:
  - raw:
      - |+
        @tls-sni: unsafe.test
        GET /u HTTP/1.1
        Host: {{Hostname}}
        Connection: close

    unsafe: true
    extractors:
      - type: regex
        regex: ["sni=[a-z.-]+"]
`,
      {},
      `https://127.0.0.1:${tls.port}`,
    );
    expect(out.warnings).toEqual([]);
    expect(out.results.map((r) => r.extractedResults)).toEqual([['sni=unsafe.test']]);
  });

  it('@timeout replaces the request timeout (capped at 5 minutes); without it the scan timeout applies', async () => {
    const seen: HttpSendRequest[] = [];
    const sender = createNodeHttpSender();
    const send: HttpSender = (request) => {
      seen.push(request);
      return sender(request);
    };
    await run(
      `${header('at-timeout')}
http:
  - raw:
      - |
        @timeout: 12s
        GET /echo?t=1 HTTP/1.1
        Host: {{Hostname}}

      - |
        @timeout: 2h
        GET /echo?t=2 HTTP/1.1
        Host: {{Hostname}}

      - |
        GET /echo?t=3 HTTP/1.1
        Host: {{Hostname}}

    matchers:
      - type: status
        status: [200]
`,
      { send, timeoutMs: 3000 },
    );
    sender.destroy();
    expect(seen.map((r) => r.timeoutMs)).toEqual([12_000, 300_000, 3000]);
  });

  it('parses Go durations and the annotations as nuclei does', () => {
    expect(parseGoDuration('1m30s')).toBe(90_000);
    expect(parseGoDuration('1.5s')).toBe(1500);
    expect(parseGoDuration('250ms')).toBe(250);
    expect(parseGoDuration('10')).toBeUndefined();
    expect(parseGoDuration('-1s')).toBeUndefined();
    expect(parseAnnotations('@tls-sni: https://example.com\nGET / HTTP/1.1\n')).toEqual({ sni: 'example.com' });
    // case-sensitive, as nuclei's regexes
    expect(parseAnnotations('@host: a.example\n@Timeout: 5s\nGET / HTTP/1.1\n')).toEqual({});
  });
});
