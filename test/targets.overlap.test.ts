import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { addTarget, globalId, startScan, waitForScan, type Client } from './support/scans.js';
import { listen } from './scanner/helpers.js';

/**
 * Targets that overlap (a site and a path under it) share what scans and tools find: every asset and
 * finding belongs to each target it was seen through, so neither target's view loses it to the other.
 */

const LOOPBACK_ONLY = { SCAN_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128', QUEUE_SUPERVISE_SECONDS: '1' };
const SCAN_TEST_TIMEOUT = 120_000;

/** An old nginx with no security headers and an exposed /.git/HEAD: the built-in checks find something. */
function leakyApp(req: http.IncomingMessage, res: http.ServerResponse) {
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  const headers = { server: 'nginx/1.18.0' };
  if (path === '/.git/HEAD') res.writeHead(200, { ...headers, 'content-type': 'text/plain' }).end('ref: refs/heads/main\n');
  else res.writeHead(200, { ...headers, 'content-type': 'text/html' }).end('<!doctype html><html><head><title>Overlap</title></head><body>hi</body></html>');
}

let web: { port: number; close(): Promise<void> };
let server: TestApp;
let client: Client;

beforeAll(async () => {
  web = await listen(http.createServer(leakyApp));
  server = await startTestApp(LOOPBACK_ONLY);
  client = clientFor(server);
});

afterAll(async () => {
  await server?.stop();
  await web?.close();
});

const TARGET_COUNTS = `query($id: ID!) { target(id: $id) { assetCount findingCount } }`;
const WORKSPACE_VIEWS = `query($id: ID!, $target: ID) { node(id: $id) { ... on Workspace {
  findings(targetId: $target) { totalCount } assets(targetId: $target) { totalCount } } } }`;

describe('overlapping targets', { timeout: SCAN_TEST_TIMEOUT }, () => {
  let owner: TestUser;
  let workspaceId: string;
  let site: { id: string; value: string };
  let path: { id: string; value: string };

  const get = (url: string) => client.api('GET', url, { as: owner, workspaceId });

  async function scanToCompletion(targetId: string) {
    const scan = await startScan(client, owner, workspaceId, targetId, { timeoutMs: 15_000 });
    expect((await waitForScan(client, owner, workspaceId, scan.id)).status).toBe('COMPLETED');
  }

  beforeAll(async () => {
    owner = await client.signUp('Overlap');
    workspaceId = (await client.createWorkspace(owner)).id;
    site = await addTarget(client, owner, workspaceId, `http://127.0.0.1:${web.port}`);
    path = await addTarget(client, owner, workspaceId, `http://127.0.0.1:${web.port}/x`);
  });

  it('a finding both targets scanned shows on each: counts, targetIds filter, REST and GraphQL', async () => {
    await scanToCompletion(site.id);
    await scanToCompletion(path.id);

    const open = await server.db.prisma.finding.count({ where: { workspaceId, status: 'open' } });
    const assets = await server.db.prisma.asset.count({ where: { workspaceId } });
    expect(open).toBeGreaterThan(0);
    expect(assets).toBeGreaterThan(0);

    for (const target of [site, path]) {
      const rest = await get(`/api/v1/api/targets/${target.id}`);
      expect(rest.body, target.value).toMatchObject({ assetCount: assets, findingCount: open });
      const listed = await get(`/api/v1/api/targets?search=${encodeURIComponent(target.value)}`);
      expect(listed.body.data.find((row: { id: string }) => row.id === target.id)).toMatchObject({ assetCount: assets, findingCount: open });
      expect((await get(`/api/v1/api/vulnerabilities?targetIds=${target.id}`)).body.total, target.value).toBe(open);
      expect((await get(`/api/v1/api/vulnerabilities/statistics?targetIds=${target.id}`)).body.byStatus.open).toBe(open);
      expect((await get(`/api/v1/api/assets?targetId=${target.id}`)).body.total, target.value).toBe(assets);

      const counts = await client.gql(TARGET_COUNTS, { as: owner, variables: { id: globalId('Target', target.id) } });
      expect(counts.errors).toBeUndefined();
      expect(counts.data.target).toEqual({ assetCount: assets, findingCount: open });
      const views = await client.gql(WORKSPACE_VIEWS, {
        as: owner,
        variables: { id: globalId('Workspace', workspaceId), target: globalId('Target', target.id) },
      });
      expect(views.errors).toBeUndefined();
      expect(views.data.node).toEqual({ findings: { totalCount: open }, assets: { totalCount: assets } });
    }
  });

  it('a pushed nuclei result is linked to every target whose scope covers it, and only to those', async () => {
    const tools = await get('/api/v1/api/tools');
    const nuclei = tools.body.data.find((tool: { name: string }) => tool.name === 'nuclei-templates').id;
    const { body } = await client.api('POST', `/api/v1/api/tools/${nuclei}/api-key/rotate`, { as: owner, workspaceId });
    const line = (templateId: string, matchedAt: string) =>
      JSON.stringify({
        'template-id': templateId,
        info: { name: templateId, severity: 'high' },
        type: 'http',
        host: `http://127.0.0.1:${web.port}`,
        'matched-at': matchedAt,
      });
    const pushed = await client.api('POST', '/api/v1/api/tools/results', {
      headers: { 'x-tool-api-key': body.apiKey },
      body: {
        format: 'nuclei-jsonl',
        data: [line('pushed-under-path', `http://127.0.0.1:${web.port}/x/secret`), line('pushed-beside-path', `http://127.0.0.1:${web.port}/xy`)].join('\n'),
      },
    });
    expect(pushed.status).toBe(200);
    expect(pushed.body.findings.opened).toBe(2);

    const checksOf = async (targetId: string) =>
      (await get(`/api/v1/api/vulnerabilities?targetIds=${targetId}&q=pushed-&limit=100`)).body.data
        .map((finding: { checkId: string }) => finding.checkId)
        .sort();
    expect(await checksOf(site.id)).toEqual(['pushed-beside-path', 'pushed-under-path']);
    // /xy is not under /x: the path target does not cover it.
    expect(await checksOf(path.id)).toEqual(['pushed-under-path']);

    const findingIds = (await server.db.prisma.finding.findMany({ where: { workspaceId, checkId: { startsWith: 'pushed-' } }, select: { id: true } })).map(
      (row) => row.id,
    );
    const links = await server.db.prisma.findingTarget.findMany({ where: { findingId: { in: findingIds } } });
    expect(links).toHaveLength(3);
  });
});
