import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { addTarget, startScan, uploadTemplate, waitForScan, type Client } from './support/scans.js';
import { listen, type Started } from './scanner/helpers.js';

/**
 * Self-contained templates in a scan: a scan of 127.0.0.1 over two web endpoints (two ports) runs the template
 * once, not once per endpoint; its fixed URL carries the workspace's {{token}}; the finding sits on the endpoint
 * the URL names. A template whose URL names 127.0.0.2 (no host of this scan) sends nothing and says so.
 */

const LOOPBACK_ONLY = { SCAN_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128', QUEUE_SUPERVISE_SECONDS: '1' };
const TOKEN = 'sc-scan-token-71c0';

const selfContained = (id: string, url: string) => `id: ${id}
info:
  name: ${id}
  author: tests
  severity: medium
self-contained: true
http:
  - method: GET
    path:
      - "${url}?access_token={{token}}"
    matchers:
      - type: word
        words: ['"login"']
`;

let server: TestApp;
let client: Client;
const sites: Started[] = [];
const seen: string[][] = [[], [], []];

beforeAll(async () => {
  const site = (index: number, host?: string) =>
    listen(
      http.createServer((req, res) => {
        seen[index]!.push(req.url ?? '');
        const url = new URL(req.url ?? '/', 'http://x');
        if (url.pathname === '/api/user' && url.searchParams.get('access_token') === TOKEN) return res.writeHead(200).end('{"login":"alice"}');
        res.writeHead(404, { 'content-type': 'text/html' }).end('<html>nothing here</html>');
      }),
      host,
    );
  sites.push(await site(0), await site(1), await site(2, '127.0.0.2'));
  server = await startTestApp(LOOPBACK_ONLY);
  client = clientFor(server);
});

afterAll(async () => {
  await server?.stop();
  for (const site of sites) await site.close();
});

/** The shared upload (no warning: self-contained is no longer one), and {{token}} is a variable the workspace provides. */
async function upload(user: TestUser, workspaceId: string, fileName: string, content: string) {
  const template = (await uploadTemplate(client, user, workspaceId, fileName, content)) as { id: string; userVariables?: string[] };
  expect(template.userVariables).toEqual(['token']);
}

describe('self-contained templates in a scan', { timeout: 240_000 }, () => {
  it('run once per scan over two endpoints, find once, and never reach a host outside the scan', async () => {
    const owner = await client.signUp('Selfcowner');
    const workspaceId = (await client.createWorkspace(owner)).id;
    const targetId = (await addTarget(client, owner, workspaceId, '127.0.0.1')).id;
    const [a, b, outside] = sites as [Started, Started, Started];
    await upload(owner, workspaceId, 'sc-api.yaml', selfContained('sc-api', `http://127.0.0.1:${a.port}/api/user`));
    await upload(owner, workspaceId, 'sc-elsewhere.yaml', selfContained('sc-elsewhere', `http://127.0.0.2:${outside.port}/api/user`));
    const settings = await client.api('PATCH', `/api/v1/api/workspaces/${workspaceId}/template-settings`, { as: owner, body: { variables: { token: TOKEN } } });
    expect(settings.status).toBe(200);

    const options = { ports: `${a.port},${b.port}`, timeoutMs: 5_000, templateSelection: { includeIds: ['sc-api', 'sc-elsewhere'] } };
    const started = await startScan(client, owner, workspaceId, targetId, options);
    const done = await waitForScan(client, owner, workspaceId, started.id);
    expect(done.status).toBe('COMPLETED');

    // Two endpoints were probed; the template's URL was asked for once, with the workspace's token.
    const web = await server.db.prisma.asset.findMany({ where: { workspaceId, kind: 'web' }, orderBy: { key: 'asc' } });
    expect(web).toHaveLength(2);
    const apiCalls = seen.flat().filter((url) => url.startsWith('/api/user'));
    expect(apiCalls).toEqual([`/api/user?access_token=${TOKEN}`]);
    expect(seen[2]).toEqual([]);

    const findings = await server.db.prisma.finding.findMany({ where: { workspaceId, source: 'nuclei' }, include: { asset: true } });
    expect(findings.map((f) => [f.checkId, f.status, f.asset?.key])).toEqual([['sc-api', 'open', `web:http://127.0.0.1:${a.port}`]]);
    expect(JSON.stringify(findings[0]!.evidence)).not.toContain(TOKEN);

    const step = await server.db.prisma.scanStep.findFirstOrThrow({ where: { scanId: started.id, name: 'checks' } });
    const output = step.output as { checkIds: string[]; errors: { code: string; message: string; target: string }[] };
    expect(output.checkIds).toContain('sc-api');
    expect(output.checkIds).not.toContain('sc-elsewhere');
    expect(output.errors).toEqual([
      {
        code: 'TEMPLATE_OUT_OF_SCOPE',
        message: expect.stringContaining('request not sent: 127.0.0.2 is not a host of this scan'),
        target: 'sc-elsewhere host:127.0.0.1',
      },
    ]);
  });
});
