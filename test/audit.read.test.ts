import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { encodeGlobalID } from '@pothos/plugin-relay';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { deleteExpiredAuditLogs } from '../src/modules/audit/service.js';
import { AUDIT_RETENTION_INTERVAL_MS, startAuditRetention, stopAuditRetention } from '../src/modules/audit/retention.js';

/**
 * Reading the audit log (owners their workspace's, administrators the instance's, members nobody's), its
 * filters and paging on REST and GraphQL, retention, and the promise that no secret ever reaches the table.
 */

const LOGS = '/api/v1/api/audit-logs';
let server: TestApp;
let api: ReturnType<typeof clientFor>;
let admin: TestUser;
let owner: TestUser;
let member: TestUser;
let workspaceId: string;
let otherWorkspaceId: string;

beforeAll(async () => {
  server = await startTestApp({ WORKERS: 'false', SCAN_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128' });
  api = clientFor(server);
  admin = await api.signUp('Administrator'); // the first account administers the instance
  owner = await api.signUp('Owner');
  member = await api.signUp('Member');
  workspaceId = (await api.createWorkspace(owner)).id;
  otherWorkspaceId = (await api.createWorkspace(admin)).id;
  await api.addMember(owner, workspaceId, member);
  for (const value of ['r1.example.test', 'r2.example.test', 'r3.example.test']) {
    expect((await api.api('POST', '/api/v1/api/targets', { as: owner, workspaceId, body: { value } })).status).toBe(201);
  }
  expect((await api.api('POST', '/api/v1/api/targets', { as: admin, workspaceId: otherWorkspaceId, body: { value: 'other.example.test' } })).status).toBe(201);
});
afterAll(() => server?.stop());

describe('GET /api/v1/api/audit-logs', () => {
  it("owners read their workspace's entries only, newest first", async () => {
    const response = await api.api('GET', LOGS, { as: owner, workspaceId });
    expect(response.status).toBe(200);
    const operations = response.body.data.map((entry: { operation: string }) => entry.operation);
    expect(operations.filter((op: string) => op === 'POST /api/targets')).toHaveLength(3);
    expect(operations).toContain('POST /api/workspaces/{id}/members');
    expect(response.body.data.every((entry: { workspaceId: string }) => entry.workspaceId === workspaceId)).toBe(true);
    const times = response.body.data.map((entry: { at: string }) => Date.parse(entry.at));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    expect(response.body.data[0]).toMatchObject({ actorKind: 'user', surface: 'rest', outcome: 'success', clientAddress: '127.0.0.1' });
  });

  it('members, strangers, anonymous callers and workspace keys are refused', async () => {
    expect((await api.api('GET', LOGS, { as: member, workspaceId })).status).toBe(403);
    expect((await api.api('GET', LOGS, { as: owner, workspaceId: otherWorkspaceId })).status).toBe(404);
    expect((await api.api('GET', LOGS, { workspaceId })).status).toBe(401);
    expect((await api.api('GET', LOGS, { as: owner })).status).toBe(400);
    expect((await api.api('GET', `${LOGS}?scope=instance`, { as: owner })).status).toBe(403);
    const key = await api.api('POST', '/api/v1/api/workspaces/api-keys', { as: owner, workspaceId, body: { name: 'reader' } });
    expect((await api.api('GET', LOGS, { headers: { authorization: `Bearer ${key.body.apiKey}` }, workspaceId })).status).toBe(401);
  });

  it('administrators read the whole instance with scope=instance, instance-level entries included', async () => {
    const response = await api.api('GET', `${LOGS}?scope=instance&limit=100`, { as: admin });
    expect(response.status).toBe(200);
    const workspaces = new Set(response.body.data.map((entry: { workspaceId: string | null }) => entry.workspaceId));
    expect(workspaces).toEqual(new Set([workspaceId, otherWorkspaceId, null]));
    expect(response.body.data.some((entry: { operation: string }) => entry.operation === 'POST /api/auth/sign-up/email')).toBe(true);
  });

  it('filters by time, actor, operation and outcome, and pages', async () => {
    const all = (await api.api('GET', `${LOGS}?limit=100`, { as: owner, workspaceId })).body.data as { at: string; operation: string }[];
    const targets = await api.api(
      'GET',
      `${LOGS}?operation=${encodeURIComponent('post /api/targets')}&actor=${encodeURIComponent(owner.email.toUpperCase())}`,
      {
        as: owner,
        workspaceId,
      },
    );
    expect(targets.body.total).toBe(3);
    const byId = await api.api('GET', `${LOGS}?actor=${member.id}`, { as: owner, workspaceId });
    expect(byId.body.total).toBe(0);

    const oldest = all[all.length - 1]!.at;
    const since = await api.api('GET', `${LOGS}?since=${encodeURIComponent(new Date(Date.parse(oldest) + 1).toISOString())}&limit=100`, {
      as: owner,
      workspaceId,
    });
    expect(since.body.total).toBe(all.length - 1);
    const until = await api.api('GET', `${LOGS}?until=${encodeURIComponent(new Date(Date.parse(oldest) + 1).toISOString())}`, { as: owner, workspaceId });
    expect(until.body.total).toBe(1);

    const page1 = await api.api('GET', `${LOGS}?limit=2&page=1`, { as: owner, workspaceId });
    const page2 = await api.api('GET', `${LOGS}?limit=2&page=2`, { as: owner, workspaceId });
    expect(page1.body).toMatchObject({ total: all.length, limit: 2, page: 1, hasNextPage: true });
    expect(page2.body.data.map((entry: { id: string }) => entry.id)).toEqual(all.slice(2, 4).map((entry) => (entry as unknown as { id: string }).id));

    expect((await api.api('GET', `${LOGS}?outcome=FORBIDDEN`, { as: owner, workspaceId })).body.total).toBe(0);
  });

  it('bad filters answer 400 naming the field', async () => {
    for (const [query, field] of [
      ['since=yesterday', 'since'],
      ['since=2026-11-24T06:00:00Z&until=2026-11-23T06:00:00Z', 'until'],
      ['scope=galaxy', 'scope'],
      ['actorKind=robot', 'actorKind'],
      ['limit=0', 'limit'],
    ]) {
      const response = await api.api('GET', `${LOGS}?${query}`, { as: owner, workspaceId });
      expect(response.status, query).toBe(400);
      expect(response.body.details.map((detail: { field: string }) => detail.field)).toContain(field);
    }
  });
});

describe('GraphQL', () => {
  it('Workspace.auditLogs for owners (FORBIDDEN for members), root auditLogs for administrators', async () => {
    const query = `query ($id: ID!) { workspace(id: $id) { auditLogs(first: 2, operation: "targets") { totalCount edges { node { operation actorKind surface entityIds } } } } }`;
    const asOwner = await api.gql(query, { as: owner, variables: { id: encodeGlobalID('Workspace', workspaceId) } });
    expect(asOwner.errors).toBeUndefined();
    expect(asOwner.data.workspace.auditLogs.totalCount).toBe(3);
    expect(asOwner.data.workspace.auditLogs.edges).toHaveLength(2);
    expect(asOwner.data.workspace.auditLogs.edges[0].node).toMatchObject({ operation: 'POST /api/targets', actorKind: 'USER', surface: 'REST' });

    const asMember = await api.gql(query, { as: member, variables: { id: workspaceId } });
    expect(asMember.data.workspace.auditLogs).toBeNull();
    expect(asMember.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');

    const root = `{ auditLogs(first: 100, actorKind: USER) { totalCount edges { node { workspaceId } } } }`;
    const asAdmin = await api.gql(root, { as: admin });
    expect(asAdmin.errors).toBeUndefined();
    expect(asAdmin.data.auditLogs.edges.some((edge: { node: { workspaceId: string } }) => edge.node.workspaceId === otherWorkspaceId)).toBe(true);
    expect((await api.gql(root, { as: owner })).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });
});

describe('retention', () => {
  it('the cleanup removes entries older than AUDIT_RETENTION_DAYS and keeps the rest', async () => {
    const { prisma, env } = server.app.deps;
    expect(env.AUDIT_RETENTION_DAYS).toBe(90);
    const day = 86_400_000;
    const base = { actorKind: 'system', surface: 'rest', operation: 'retention probe', entityIds: [], outcome: 'success', clientAddress: 'test' };
    await prisma.auditLog.createMany({
      data: [
        { ...base, at: new Date(Date.now() - 91 * day) },
        { ...base, at: new Date(Date.now() - 400 * day) },
        { ...base, at: new Date(Date.now() - 89 * day) },
      ],
    });
    const before = await prisma.auditLog.count();
    expect(await deleteExpiredAuditLogs(server.app.deps)).toBe(2);
    expect(await prisma.auditLog.count()).toBe(before - 2);
    expect(await prisma.auditLog.count({ where: { operation: 'retention probe' } })).toBe(1);
    // With a shorter retention the younger probe goes too; the entries of this run (minutes old) stay.
    expect(await deleteExpiredAuditLogs({ prisma, env: { ...env, AUDIT_RETENTION_DAYS: 30 } })).toBe(1);
    expect(await prisma.auditLog.count()).toBe(before - 3);
  });
});

describe('periodic retention', () => {
  it('the workers’ timer runs a pass a minute after start and then every interval, until stopped', async () => {
    const { prisma, env, log } = server.app.deps;
    const old = { actorKind: 'system', surface: 'rest', operation: 'timer probe', entityIds: [], outcome: 'success', clientAddress: 'test' };
    const plant = () => prisma.auditLog.create({ data: { ...old, at: new Date(Date.now() - 100 * 86_400_000) } });
    const planted = () => prisma.auditLog.count({ where: { operation: 'timer probe' } });
    const deps = { prisma, env, log };
    vi.useFakeTimers({ toFake: ['setTimeout', 'setInterval', 'clearTimeout', 'clearInterval'] });
    try {
      await plant();
      startAuditRetention(deps);
      await vi.advanceTimersByTimeAsync(59_000);
      expect(await planted()).toBe(1);
      await vi.advanceTimersByTimeAsync(1_000);
      await vi.waitFor(async () => expect(await planted()).toBe(0), { interval: 20 });
      await plant();
      await vi.advanceTimersByTimeAsync(AUDIT_RETENTION_INTERVAL_MS);
      await vi.waitFor(async () => expect(await planted()).toBe(0), { interval: 20 });
      await plant();
      stopAuditRetention(deps);
      await vi.advanceTimersByTimeAsync(2 * AUDIT_RETENTION_INTERVAL_MS);
      expect(await planted()).toBe(1);
    } finally {
      vi.useRealTimers();
      stopAuditRetention(deps);
      await prisma.auditLog.deleteMany({ where: { operation: 'timer probe' } });
    }
  });
});

describe('no secrets', () => {
  it('passwords, tokens, keys and MCP header values never reach the audit table', async () => {
    const secrets: string[] = [];
    const email = `secret.${Date.now()}@example.test`;
    const password = 'planted-password-Zq81xv!';
    const signUp = await api.api('POST', '/api/v1/api/auth/sign-up/email', { body: { name: 'Secretive', email, password } });
    expect(signUp.status).toBe(200);
    const session = { token: signUp.body.token as string };
    secrets.push(password, session.token);
    const newPassword = 'planted-new-password-Wm42yk!';
    expect((await api.api('POST', '/api/v1/api/auth/change-password', { as: session, body: { currentPassword: password, newPassword } })).status).toBe(200);
    secrets.push(newPassword);
    // A wrong password on sign-in and change-password is recorded as an attempt, never as what was typed.
    const wrong = 'planted-wrong-password-Hx77!';
    await api.api('POST', '/api/v1/api/auth/sign-in/email', { body: { email, password: wrong } });
    secrets.push(wrong);

    const apiToken = await api.api('POST', '/api/v1/api/users/me/api-tokens', { as: owner, body: { name: 'planted' } });
    secrets.push(apiToken.body.token);
    const wsKey = await api.api('POST', '/api/v1/api/workspaces/api-keys', { as: owner, workspaceId, body: { name: 'planted' } });
    secrets.push(wsKey.body.apiKey);
    const tool = await api.api('POST', '/api/v1/api/tools', { as: owner, workspaceId, body: { name: 'secret-probe', category: 'vulnerability_scanner' } });
    const toolKey = await api.api('POST', `/api/v1/api/tools/${tool.body.id}/api-key/rotate`, { as: owner, workspaceId });
    secrets.push(toolKey.body.apiKey);
    await api.api('POST', '/api/v1/api/tools/results', { headers: { 'x-tool-api-key': toolKey.body.apiKey }, body: { format: 'json', findings: [] } });

    const headerValue = 'planted-mcp-header-value-5c1f9e';
    const mcpConfig = await api.api('PUT', '/api/v1/api/agents/mcp-configs/planted', {
      as: owner,
      workspaceId,
      body: { url: 'http://127.0.0.1:9/mcp', transport: 'streamable-http', headers: { authorization: `Bearer ${headerValue}` } },
    });
    expect(mcpConfig.status).toBeLessThan(500);
    secrets.push(headerValue);
    const gqlKey = await api.gql(
      `mutation ($w: ID!) { rotateWorkspaceApiKey(workspaceId: $w) { ... on MutationRotateWorkspaceApiKeySuccess { data { apiKey } } } }`,
      {
        as: owner,
        variables: { w: workspaceId },
      },
    );
    secrets.push(gqlKey.data.rotateWorkspaceApiKey.data.apiKey);

    // An MCP call with the (rotated) key: its header value is a secret too.
    const client = new Client({ name: 'audit-secrets', version: '1.0.0' });
    const mcpKey = gqlKey.data.rotateWorkspaceApiKey.data.apiKey as string;
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/api/v1/api/mcp`), { requestInit: { headers: { 'x-service-api-key': mcpKey } } }),
    );
    const target = await api.api('POST', '/api/v1/api/targets', { as: owner, workspaceId, body: { value: 'secret-scan.example.test' } });
    await client.callTool({ name: 'start_scan', arguments: { targetId: target.body.id } });
    await client.close();

    expect(secrets.every((secret) => typeof secret === 'string' && secret.length >= 20)).toBe(true);
    const rows = (await server.db.sql.query('SELECT t::text AS row FROM audit_log t')) as { rows: { row: string }[] };
    const table = rows.rows.map((r) => r.row).join('\n');
    // The writes above were recorded (so the search below searched something)…
    for (const operation of [
      'POST /api/auth/change-password',
      'POST /api/users/me/api-tokens',
      'PUT /api/agents/mcp-configs/{name}',
      'mutation rotateWorkspaceApiKey',
      'mcp start_scan',
    ]) {
      expect(table).toContain(operation);
    }
    // …and no secret, nor its unique middle part, is anywhere in the table.
    for (const secret of secrets) {
      expect(table).not.toContain(secret);
      expect(table).not.toContain(secret.slice(8, 24));
    }
  });
});
