import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { waitFor } from './support/wait.js';
import { assertCan, can } from '../src/auth/authz.js';
import { authenticateWorkspaceApiKey, serviceContextForKey } from '../src/modules/workspace-api-keys/service.js';

/**
 * Our MCP endpoint answering the SDK's own client over a real socket: streamable HTTP at /api/v1/api/mcp and
 * HTTP+SSE at /api/v1/api/mcp/sse, authenticated by a workspace API key that reads its own workspace only.
 * start_scan scans a loopback IP target with the DNS step only (nothing outside this machine is asked).
 */

let server: TestApp;
let api: ReturnType<typeof clientFor>;
let ownerA: TestUser;
let ownerB: TestUser;
let workspaceA: string;
let workspaceB: string;
let keyA: string;
let keyB: string;
let targetA: { id: string; value: string };
let targetB: { id: string; value: string };

const MCP_URL = () => new URL(`${server.url}/api/v1/api/mcp`);
const SSE_URL = () => new URL(`${server.url}/api/v1/api/mcp/sse`);
const READ_TOOLS = ['finding_statistics', 'get_asset', 'get_finding', 'get_scan', 'get_target', 'list_assets', 'list_findings', 'list_scans', 'list_targets'];

async function seedWorkspace(owner: TestUser, label: string) {
  const workspace = await api.createWorkspace(owner, { name: `MCP ${label}` });
  const target = await api.api('POST', '/api/v1/api/targets', { as: owner, workspaceId: workspace.id, body: { value: `${label}.example.test` } });
  expect(target.status).toBe(201);
  // A finding and its asset, through a custom tool's results submission (the front door tools use).
  const tool = await api.api('POST', '/api/v1/api/tools', {
    as: owner,
    workspaceId: workspace.id,
    body: { name: `probe-${label}`, category: 'vulnerability_scanner' },
  });
  const toolKey = (await api.api('POST', `/api/v1/api/tools/${tool.body.id}/api-key/rotate`, { as: owner, workspaceId: workspace.id })).body.apiKey;
  const submitted = await api.api('POST', '/api/v1/api/tools/results', {
    headers: { 'x-tool-api-key': toolKey },
    body: {
      format: 'json',
      findings: [{ checkId: `exposed-admin-${label}`, name: `Exposed admin panel ${label}`, severity: 'high', url: `https://${label}.example.test/admin` }],
    },
  });
  expect(submitted.body.findings.opened).toBe(1);
  const key = await api.api('POST', '/api/v1/api/workspaces/api-keys', { as: owner, workspaceId: workspace.id, body: { name: 'agent' } });
  expect(key.status).toBe(201);
  return { workspaceId: workspace.id, target: target.body as { id: string; value: string }, apiKey: key.body.apiKey as string };
}

beforeAll(async () => {
  server = await startTestApp({ SCAN_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128', QUEUE_SUPERVISE_SECONDS: '1' });
  api = clientFor(server);
  ownerA = await api.signUp('OwnerA');
  ownerB = await api.signUp('OwnerB');
  ({ workspaceId: workspaceA, target: targetA, apiKey: keyA } = await seedWorkspace(ownerA, 'alpha'));
  ({ workspaceId: workspaceB, target: targetB, apiKey: keyB } = await seedWorkspace(ownerB, 'bravo'));
  // The maker of key A can read workspace B as a person: the key still must not.
  await api.addMember(ownerB, workspaceB, ownerA);
});
afterAll(() => server?.stop());

async function connect(apiKey: string, kind: 'streamable' | 'sse' = 'streamable'): Promise<Client> {
  const client = new Client({ name: 'perimeter-test', version: '1.0.0' });
  const requestInit = { headers: { 'x-service-api-key': apiKey } };
  await client.connect(kind === 'sse' ? new SSEClientTransport(SSE_URL(), { requestInit }) : new StreamableHTTPClientTransport(MCP_URL(), { requestInit }));
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  const result = (await client.callTool({ name, arguments: args })) as { isError?: boolean; content: { type: string; text: string }[] };
  const text = result.content[0]?.text ?? '';
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { isError: Boolean(result.isError), text, json };
}

describe('streamable HTTP with a real SDK client', () => {
  it('lists the tools, each with an input schema', async () => {
    const client = await connect(keyA);
    try {
      expect(client.getServerVersion()?.name).toBe('perimeter');
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual([...READ_TOOLS, 'start_scan'].sort());
      for (const tool of tools) {
        expect(tool.description).toEqual(expect.any(String));
        expect(tool.inputSchema.type).toBe('object');
        expect(tool.annotations?.readOnlyHint).toBe(tool.name !== 'start_scan');
      }
      expect(Object.keys(tools.find((tool) => tool.name === 'list_findings')!.inputSchema.properties ?? {})).toEqual(
        expect.arrayContaining(['page', 'limit', 'severity', 'status', 'targetIds', 'q']),
      );
    } finally {
      await client.close();
    }
  });

  it("every read tool answers from the key's workspace", async () => {
    const client = await connect(keyA);
    try {
      const targets = await call(client, 'list_targets', { limit: 5 });
      expect(targets.isError).toBe(false);
      expect(targets.json).toMatchObject({ total: 1, page: 1, limit: 5 });
      expect(targets.json.data.map((t: { id: string }) => t.id)).toEqual([targetA.id]);
      expect((await call(client, 'list_targets', { search: 'nothing-like-this' })).json.total).toBe(0);
      expect((await call(client, 'get_target', { id: targetA.id })).json).toMatchObject({ id: targetA.id, value: targetA.value });

      const assets = await call(client, 'list_assets', { kind: 'web' });
      expect(assets.json.data.length).toBeGreaterThan(0);
      expect(assets.json.data.every((asset: { workspaceId?: string; value: string }) => asset.value.includes('alpha'))).toBe(true);
      const asset = assets.json.data[0];
      expect((await call(client, 'get_asset', { id: asset.id })).json.id).toBe(asset.id);

      const findings = await call(client, 'list_findings', { severity: ['high', 'critical'] });
      expect(findings.json.data.map((f: { name: string }) => f.name)).toEqual(['Exposed admin panel alpha']);
      const finding = await call(client, 'get_finding', { id: findings.json.data[0].id });
      expect(finding.json).toMatchObject({ id: findings.json.data[0].id, severity: 'high', events: [expect.objectContaining({ type: 'opened' })] });
      expect((await call(client, 'list_findings', { status: 'dismissed' })).json.total).toBe(0);

      const stats = await call(client, 'finding_statistics');
      expect(stats.json.byStatus).toEqual({ open: 1, fixed: 0, dismissed: 0 });
      expect(stats.json.data.find((row: { severity: string }) => row.severity === 'high').count).toBe(1);

      const scans = await call(client, 'list_scans');
      expect(scans.json).toMatchObject({ page: 1 });
    } finally {
      await client.close();
    }
  });

  it("start_scan creates a scan of the target, requested by the key's maker, readable with get_scan and list_scans", async () => {
    const client = await connect(keyA);
    try {
      // A harmless scan: an IP literal on loopback, DNS step only.
      const loopback = (await api.api('POST', '/api/v1/api/targets', { as: ownerA, workspaceId: workspaceA, body: { value: '127.0.0.1' } })).body;
      const started = await call(client, 'start_scan', { targetId: loopback.id, options: { steps: ['dns'] } });
      expect(started.text).not.toMatch(/^[A-Z_]+:/);
      expect(started.isError).toBe(false);
      expect(started.json).toMatchObject({
        workspaceId: workspaceA,
        targetId: loopback.id,
        status: 'PENDING',
        requestedById: ownerA.id,
        steps: [expect.objectContaining({ name: 'dns' })],
      });
      const row = await server.db.prisma.scan.findUniqueOrThrow({ where: { id: started.json.id } });
      expect(row).toMatchObject({ workspaceId: workspaceA, targetId: loopback.id, requestedById: ownerA.id });

      const finished = await waitFor(
        async () => {
          const scan = (await call(client, 'get_scan', { id: started.json.id })).json;
          return scan.status === 'COMPLETED' || scan.status === 'FAILED' ? scan : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 100, what: 'the scan to finish' },
      );
      expect(finished).toMatchObject({ id: started.json.id, status: 'COMPLETED', progress: { stepsDone: 1, stepsTotal: 1 } });
      const listed = await call(client, 'list_scans', { targetId: loopback.id });
      expect(listed.json.data.map((scan: { id: string }) => scan.id)).toEqual([started.json.id]);

      const invalid = await call(client, 'start_scan', { targetId: loopback.id, options: { timeoutMs: 1 } });
      expect(invalid.isError).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('a key cannot read or scan another workspace, even one its maker belongs to', async () => {
    const client = await connect(keyA);
    try {
      const target = await call(client, 'get_target', { id: targetB.id });
      expect(target).toMatchObject({ isError: true, text: expect.stringMatching(/^NOT_FOUND: Target not found/) });

      const bFindings = await api.api('GET', '/api/v1/api/vulnerabilities', { as: ownerB, workspaceId: workspaceB });
      const bFinding = bFindings.body.data[0];
      expect((await call(client, 'get_finding', { id: bFinding.id })).text).toMatch(/^NOT_FOUND/);
      const all = await call(client, 'list_findings', { status: 'all', limit: 50 });
      expect(all.json.data.map((f: { id: string }) => f.id)).not.toContain(bFinding.id);
      expect((await call(client, 'list_findings', { targetIds: [targetB.id] })).json.total).toBe(0);

      const before = await server.db.prisma.scan.count({ where: { workspaceId: workspaceB } });
      const scan = await call(client, 'start_scan', { targetId: targetB.id });
      expect(scan).toMatchObject({ isError: true, text: expect.stringMatching(/^NOT_FOUND/) });
      expect(await server.db.prisma.scan.count({ where: { workspaceId: workspaceB } })).toBe(before);

      // Workspace B's own key sees B (and not A).
      const other = await connect(keyB);
      try {
        expect((await call(other, 'list_targets')).json.data.map((t: { id: string }) => t.id)).toEqual([targetB.id]);
        expect((await call(other, 'get_target', { id: targetA.id })).isError).toBe(true);
      } finally {
        await other.close();
      }
    } finally {
      await client.close();
    }
  });

  it('the key acts at member level in its own workspace and nowhere else', async () => {
    // ownerA owns workspace A and is a member of B; the key is neither an owner in A nor anything in B.
    const principal = await authenticateWorkspaceApiKey(server.app.deps, keyA);
    expect(principal).toMatchObject({ workspaceId: workspaceA, viewer: { id: ownerA.id, role: 'user', via: 'workspace-api-key' } });
    const ctx = serviceContextForKey(server.app.deps, principal, { requestId: 'test', clientIp: '127.0.0.1' });
    await expect(assertCan(ctx, 'finding:read', { workspaceId: workspaceA })).resolves.toBe('member');
    await expect(assertCan(ctx, 'scan:start', { workspaceId: workspaceA })).resolves.toBe('member');
    await expect(assertCan(ctx, 'apikey:manage', { workspaceId: workspaceA })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(assertCan(ctx, 'mcp:manage', { workspaceId: workspaceA })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(assertCan(ctx, 'workspace:read', { workspaceId: workspaceB })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await can(ctx, 'target:read', { workspaceId: workspaceB })).toBe(false);
  });

  it('bad tool input is an error result, not a crash', async () => {
    const client = await connect(keyA);
    try {
      const tooMany = await client
        .callTool({ name: 'list_targets', arguments: { limit: 500 } })
        .catch((error: Error) => ({ isError: true, content: [{ type: 'text', text: error.message }] }));
      expect(tooMany.isError).toBe(true);
      const notUuid = await call(client, 'get_target', { id: 'nope' }).catch((error: Error) => ({ isError: true, text: error.message }));
      expect(notUuid.isError).toBe(true);
    } finally {
      await client.close();
    }
  });
});

describe('authentication', () => {
  it('a missing, wrong or revoked key is 401 (raw HTTP and the SDK client alike)', async () => {
    const initialize = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    const post = (headers: Record<string, string>) =>
      fetch(MCP_URL(), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: initialize,
      });

    const none = await post({});
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ statusCode: 401, code: 'UNAUTHENTICATED', message: expect.stringContaining('x-service-api-key') });
    expect((await post({ 'x-service-api-key': 'pwk_not-a-real-key' })).status).toBe(401);
    expect((await post({ 'x-service-api-key': 'prm_personal-token-is-not-a-workspace-key' })).status).toBe(401);
    // Authorization: Bearer pwk_… is accepted as well.
    expect((await post({ authorization: `Bearer ${keyA}` })).status).toBe(200);

    await expect(connect('pwk_wrong')).rejects.toMatchObject({ code: 401 });

    const { apiKey, key } = (await api.api('POST', '/api/v1/api/workspaces/api-keys', { as: ownerA, workspaceId: workspaceA, body: { name: 'doomed' } })).body;
    const client = await connect(apiKey);
    expect((await call(client, 'list_targets')).isError).toBe(false);
    await api.api('DELETE', `/api/v1/api/workspaces/api-keys/${key.id}`, { as: ownerA, workspaceId: workspaceA });
    // The very next request with the revoked key is refused.
    await expect(client.callTool({ name: 'list_targets', arguments: {} })).rejects.toMatchObject({ code: 401 });
    await client.close();
    await expect(connect(apiKey)).rejects.toMatchObject({ code: 401 });
  });

  it('the stateless endpoint refuses GET and DELETE with 405, and bad JSON with a parse error', async () => {
    const get = await fetch(MCP_URL(), { headers: { 'x-service-api-key': keyA, accept: 'text/event-stream' } });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    expect((await fetch(MCP_URL(), { method: 'DELETE', headers: { 'x-service-api-key': keyA } })).status).toBe(405);
    const bad = await fetch(MCP_URL(), {
      method: 'POST',
      headers: { 'x-service-api-key': keyA, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{nope',
    });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.code).toBe(-32700);
  });
});

describe('HTTP+SSE for older clients', () => {
  it('serves the same tools over SSEClientTransport', async () => {
    const client = await connect(keyA, 'sse');
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toContain('list_targets');
      const targets = await call(client, 'list_targets');
      expect(targets.json.data.map((t: { id: string }) => t.id)).toContain(targetA.id);
      expect(targets.json.data.map((t: { id: string }) => t.id)).not.toContain(targetB.id);
      expect((await call(client, 'get_target', { id: targetB.id })).isError).toBe(true);
      expect((await call(client, 'finding_statistics')).json.byStatus.open).toBe(1);
    } finally {
      await client.close();
    }
  });

  it('refuses a wrong key, and another key posting into the session', async () => {
    await expect(connect('pwk_wrong', 'sse')).rejects.toMatchObject({ code: 401 });

    // Open a session by hand to learn its message endpoint.
    const controller = new AbortController();
    const stream = await fetch(SSE_URL(), { headers: { 'x-service-api-key': keyA, accept: 'text/event-stream' }, signal: controller.signal });
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    let text = '';
    while (!text.includes('\n\n')) text += new TextDecoder().decode((await reader.read()).value);
    const endpoint = /event: endpoint\ndata: (.+)\n/.exec(text)![1]!;
    expect(endpoint).toMatch(/^\/api\/v1\/api\/mcp\/messages\?sessionId=[0-9a-f-]{36}$/);

    const message = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    const post = (apiKey: string, path = endpoint) =>
      fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-service-api-key': apiKey }, body: message });
    expect((await post(keyB)).status).toBe(404);
    expect((await post('pwk_wrong')).status).toBe(401);
    expect((await post(keyA, '/api/v1/api/mcp/messages?sessionId=00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await post(keyA)).status).toBe(202);
    controller.abort();
  });
});
