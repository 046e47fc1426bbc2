import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { addTarget, startScan, waitForScan, type Client, uploadTemplate } from './support/scans.js';
import { listen, SECURITY_HEADERS } from './scanner/helpers.js';

/**
 * A URL target with a path: its templates run at that path and query (nuclei's input URL), through the scan's
 * front door: the app lives under /shop/ and only answers its login page there with the query it was given.
 */

const LOOPBACK_ONLY = { SCAN_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128', QUEUE_SUPERVISE_SECONDS: '1' };

const SHOP_LOGIN = `id: shop-login-exposed
info:
  name: Shop login exposed
  author: tests
  severity: low
http:
  - method: GET
    path: ["{{BaseURL}}/login.php"]
    matchers:
      - type: word
        words: ["Shop login for tenant acme"]
`;

let server: TestApp;
let client: Client;
let site: { port: number; close(): Promise<void> };
const hits: string[] = [];

beforeAll(async () => {
  site = await listen(
    http.createServer((req, res) => {
      hits.push(req.url ?? '');
      const url = new URL(req.url ?? '/', 'http://x');
      const body = url.pathname === '/shop/login.php' ? `Shop login for tenant ${url.searchParams.get('tenant')}` : 'not found';
      res.writeHead(url.pathname === '/shop/login.php' ? 200 : 404, { 'content-type': 'text/html', ...SECURITY_HEADERS }).end(body);
    }),
  );
  server = await startTestApp(LOOPBACK_ONLY);
  client = clientFor(server);
});

afterAll(async () => {
  await server?.stop();
  await site?.close();
});

describe('templates on a URL target with a path', { timeout: 120_000 }, () => {
  let owner: TestUser;

  it('run at the target URL path and query', async () => {
    owner = await client.signUp('Shopkeeper');
    const workspaceId = (await client.createWorkspace(owner)).id;
    const target = await addTarget(client, owner, workspaceId, `http://127.0.0.1:${site.port}/shop/?tenant=acme`);
    await uploadTemplate(client, owner, workspaceId, 'shop-login.yaml', SHOP_LOGIN);
    const started = await startScan(client, owner, workspaceId, target.id, { timeoutMs: 10_000 });
    const done = await waitForScan(client, owner, workspaceId, started.id);
    expect(done).toMatchObject({ status: 'COMPLETED', error: null });
    expect(hits).toContain('/shop/login.php?tenant=acme');
    expect(hits).not.toContain('/login.php');
    const findings = await server.db.prisma.finding.findMany({ where: { workspaceId, checkId: 'shop-login-exposed' } });
    expect(findings.map((f) => (f.evidence as { url: string }).url)).toEqual([`http://127.0.0.1:${site.port}/shop/login.php?tenant=acme`]);
  });
});
