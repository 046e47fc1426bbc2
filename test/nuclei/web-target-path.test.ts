import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTemplate } from '../../src/scanner/nuclei/index.js';
import { endpointBaseUrl, runTemplatesOnWeb } from '../../src/scanner/nuclei/run-on-web.js';
import { createScopeGuard, LOOPBACK_NETWORKS, type WebObservation } from '../../src/scanner/index.js';
import { startServer, type TestServer } from './server.js';

/** A URL target's path and query reach the templates run on the endpoint that URL names (nuclei's input). */

let server: TestServer;
const guard = createScopeGuard({ allowedNetworks: LOOPBACK_NETWORKS });

beforeAll(async () => {
  server = await startServer({
    '/app/': (_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('app home'),
    '/app/login.php': (req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(`login page ${req.url}`),
  });
});
afterAll(() => server.close());

function webOf(port: number): WebObservation {
  const url = `http://127.0.0.1:${port}/`;
  return {
    kind: 'web',
    host: '127.0.0.1',
    address: '127.0.0.1',
    port,
    scheme: 'http',
    url,
    finalUrl: url,
    status: 200,
    headers: {},
    bodyExcerpt: '',
    bodyBytesRead: 0,
    bodyTruncated: false,
    bodySha256: '',
    redirectChain: [],
    technologies: [],
    responseTimeMs: 1,
  };
}

const template = parseTemplate(`id: app-login
info:
  name: App login
  severity: info
http:
  - method: GET
    path: ["{{BaseURL}}/login.php"]
    matchers:
      - type: word
        words: ["login page /app/login.php?k=v"]
`).template!;

describe('templates on a URL target', () => {
  it('run at the target URL path and query on the endpoint it names', async () => {
    const before = server.log.length;
    const result = await runTemplatesOnWeb([{ template }], [webOf(server.port)], {
      guard,
      timeoutMs: 5_000,
      targetUrl: `${server.baseUrl}/app/?k=v#frag`,
    });
    expect(server.log.slice(before).map((r) => r.url)).toEqual(['/app/login.php?k=v']);
    expect(result.findings.map((f) => f.evidence.url)).toEqual([`${server.baseUrl}/app/login.php?k=v`]);
  });

  it('run at / on an endpoint the target URL does not name (another port)', async () => {
    const before = server.log.length;
    const result = await runTemplatesOnWeb([{ template }], [webOf(server.port)], {
      guard,
      timeoutMs: 5_000,
      targetUrl: `http://127.0.0.1:${server.port === 65535 ? 65534 : server.port + 1}/app/?k=v`,
    });
    expect(server.log.slice(before).map((r) => r.url)).toEqual(['/login.php']);
    expect(result.findings).toEqual([]);
  });

  it('endpointBaseUrl keeps the probed URL for a bare origin and compares host names case-insensitively', () => {
    const web = { scheme: 'https' as const, host: 'Example.COM', port: 443, url: 'https://example.com/' };
    expect(endpointBaseUrl(web, 'https://example.com')).toBe('https://example.com/');
    expect(endpointBaseUrl(web, 'https://EXAMPLE.com:443/a/b?x=1')).toBe('https://EXAMPLE.com:443/a/b?x=1');
    expect(endpointBaseUrl(web, 'http://example.com/a/')).toBe('https://example.com/');
    expect(endpointBaseUrl(web, undefined)).toBe('https://example.com/');
  });
});
