import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { encodeGlobalID } from '@pothos/plugin-relay';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';

/**
 * The audit log records every write through every front door once (REST, the auth routes, GraphQL mutation
 * fields, MCP tools that write, tool-key submissions), with who, what, when and from where, and never a read,
 * a body or a secret. Workers are off: the MCP scan this starts must never run (its target is not loopback).
 */

let server: TestApp;
let api: ReturnType<typeof clientFor>;
let owner: TestUser;
let workspaceId: string;

interface Entry {
  id: string;
  at: Date;
  workspaceId: string | null;
  actorKind: string;
  actorId: string | null;
  actorDisplay: string | null;
  surface: string;
  operation: string;
  entityIds: string[];
  outcome: string;
  clientAddress: string;
  requestId: string | null;
}

const entries = (): Promise<Entry[]> => server.app.deps.prisma.auditLog.findMany({ orderBy: [{ at: 'asc' }, { id: 'asc' }] }) as Promise<Entry[]>;
const count = () => server.app.deps.prisma.auditLog.count();

/** The entries a step wrote: everything after the count taken before it. */
async function during(step: () => Promise<unknown>): Promise<Entry[]> {
  const before = (await entries()).map((entry) => entry.id);
  await step();
  return (await entries()).filter((entry) => !before.includes(entry.id));
}

beforeAll(async () => {
  server = await startTestApp({ WORKERS: 'false' });
  api = clientFor(server);
  await api.signUp('Administrator'); // the first account administers the instance
  owner = await api.signUp('Owner');
  workspaceId = (await api.createWorkspace(owner)).id;
});
afterAll(() => server?.stop());

describe('REST', () => {
  it('a mutation leaves one entry: route template, user, workspace, entity ids, success, socket address', async () => {
    let targetId = '';
    const written = await during(async () => {
      const created = await api.api('POST', '/api/v1/api/targets', { as: owner, workspaceId, body: { value: 'audit-one.example.test' } });
      expect(created.status).toBe(201);
      targetId = created.body.id;
    });
    expect(written).toHaveLength(1);
    expect(written[0]).toMatchObject({
      surface: 'rest',
      operation: 'POST /api/targets',
      workspaceId,
      actorKind: 'user',
      actorId: owner.id,
      actorDisplay: owner.email,
      entityIds: [targetId],
      outcome: 'success',
      clientAddress: '127.0.0.1',
    });
    expect(Date.now() - written[0]!.at.getTime()).toBeLessThan(60_000);

    const deleted = await during(() => api.api('DELETE', `/api/v1/api/targets/${targetId}`, { as: owner, workspaceId }));
    expect(deleted.map((e) => [e.operation, e.entityIds, e.outcome])).toEqual([['DELETE /api/targets/{id}', [targetId], 'success']]);
  });

  it('reads leave nothing: REST lists, gets, GraphQL queries', async () => {
    const before = await count();
    expect((await api.api('GET', '/api/v1/api/targets', { as: owner, workspaceId })).status).toBe(200);
    expect((await api.api('GET', `/api/v1/api/workspaces/${workspaceId}`, { as: owner })).status).toBe(200);
    expect((await api.gql('{ viewer { id } workspaces { totalCount } }', { as: owner })).errors).toBeUndefined();
    expect(await count()).toBe(before);
  });

  it('a refused write is recorded with its error code: invalid input, a member forbidden, an anonymous caller', async () => {
    const member = await api.signUp('Member');
    await api.addMember(owner, workspaceId, member);
    const written = await during(async () => {
      expect((await api.api('POST', '/api/v1/api/targets', { as: owner, workspaceId, body: { value: '' } })).status).toBe(400);
      expect((await api.api('DELETE', `/api/v1/api/workspaces/${workspaceId}`, { as: member })).status).toBe(403);
      expect((await api.api('POST', '/api/v1/api/targets', { workspaceId, body: { value: 'x.example.test' } })).status).toBe(401);
    });
    expect(written.map((e) => [e.operation, e.actorKind, e.outcome])).toEqual([
      ['POST /api/targets', 'user', 'VALIDATION_FAILED'],
      ['DELETE /api/workspaces/{id}', 'user', 'FORBIDDEN'],
      ['POST /api/targets', 'anonymous', 'UNAUTHENTICATED'],
    ]);
    expect(written[1]).toMatchObject({ actorId: member.id, workspaceId, entityIds: [workspaceId] });
    // An anonymous caller naming a workspace does not write into its log: that entry is instance-level.
    expect(written[2]!.workspaceId).toBeNull();
  });

  it('naming a stranger’s workspace never writes into its log', async () => {
    const stranger = await api.signUp('Stranger');
    const written = await during(() => api.api('POST', '/api/v1/api/targets', { as: stranger, workspaceId, body: { value: 'y.example.test' } }));
    expect(written).toMatchObject([{ outcome: 'NOT_FOUND', workspaceId: null, actorId: stranger.id }]);
  });

  it('a personal API token is the actor by its prefix', async () => {
    const created = await api.api('POST', '/api/v1/api/users/me/api-tokens', { as: owner, body: { name: 'ci' } });
    expect(created.status).toBe(201);
    const token = { token: created.body.token as string };
    const written = await during(() => api.api('POST', '/api/v1/api/targets', { as: token, workspaceId, body: { value: 'token.example.test' } }));
    expect(written).toMatchObject([
      { actorKind: 'api-token', actorId: created.body.apiToken.id, actorDisplay: created.body.apiToken.prefix, workspaceId, outcome: 'success' },
    ]);
    expect(written[0]!.actorDisplay).toMatch(/^prm_/);
  });
});

describe('auth routes', () => {
  it('sign-up, sign-in, change-password and sign-out are recorded with the user, a failed sign-in as anonymous', async () => {
    const email = `audit.auth.${Date.now()}@example.test`;
    let user = { id: '', token: '' };
    const signUp = await during(async () => {
      const response = await api.api('POST', '/api/v1/api/auth/sign-up/email', { body: { name: 'Auth', email, password: 'first password 123' } });
      expect(response.status).toBe(200);
      user = { id: response.body.user.id, token: response.body.token };
    });
    expect(signUp).toMatchObject([{ operation: 'POST /api/auth/sign-up/email', actorKind: 'user', actorId: user.id, actorDisplay: email, outcome: 'success' }]);
    expect(signUp[0]!.entityIds).toContain(user.id);

    const rest = await during(async () => {
      expect((await api.api('POST', '/api/v1/api/auth/sign-in/email', { body: { email, password: 'wrong password 123' } })).status).toBe(401);
      expect((await api.api('POST', '/api/v1/api/auth/sign-in/email', { body: { email, password: 'first password 123' } })).status).toBe(200);
      const changed = await api.api('POST', '/api/v1/api/auth/change-password', {
        as: { token: user.token },
        body: { currentPassword: 'first password 123', newPassword: 'second password 456' },
      });
      expect(changed.status).toBe(200);
      expect((await api.api('POST', '/api/v1/api/auth/sign-out', { as: { token: user.token } })).status).toBe(200);
    });
    expect(rest.map((e) => [e.operation, e.actorKind, e.actorId, e.outcome])).toEqual([
      ['POST /api/auth/sign-in/email', 'anonymous', null, 'UNAUTHENTICATED'],
      ['POST /api/auth/sign-in/email', 'user', user.id, 'success'],
      ['POST /api/auth/change-password', 'user', user.id, 'success'],
      ['POST /api/auth/sign-out', 'user', user.id, 'success'],
    ]);
  });
});

describe('GraphQL', () => {
  it('one entry per mutation field executed, with decoded ids; a typed error result records its code', async () => {
    const globalWorkspaceId = encodeGlobalID('Workspace', workspaceId);
    let ids: string[] = [];
    const written = await during(async () => {
      const result = await api.gql(
        `mutation ($w: ID!) {
          a: addTarget(workspaceId: $w, value: "gql-a.example.test") { __typename ... on MutationAddTargetSuccess { data { databaseId } } }
          b: addTarget(workspaceId: $w, value: "gql-b.example.test") { __typename ... on MutationAddTargetSuccess { data { databaseId } } }
          c: addTarget(workspaceId: $w, value: "not a target at all") { __typename }
        }`,
        { as: owner, variables: { w: globalWorkspaceId } },
      );
      expect(result.errors).toBeUndefined();
      ids = [result.data.a.data.databaseId, result.data.b.data.databaseId];
      expect(result.data.c.__typename).toBe('ValidationError');
    });
    expect(written.map((e) => [e.surface, e.operation, e.outcome])).toEqual([
      ['graphql', 'mutation addTarget', 'success'],
      ['graphql', 'mutation addTarget', 'success'],
      ['graphql', 'mutation addTarget', 'VALIDATION_FAILED'],
    ]);
    for (const [index, entry] of written.entries()) {
      expect(entry).toMatchObject({ workspaceId, actorKind: 'user', actorId: owner.id, clientAddress: '127.0.0.1' });
      // The workspace's global id is decoded to its UUID; a created target adds its own id.
      expect(entry.entityIds).toContain(workspaceId);
      if (index < 2) expect(entry.entityIds).toContain(ids[index]);
    }
  });
});

describe('MCP and tool keys', () => {
  it('an MCP tool that writes is recorded with the key as actor; reading tools are not', async () => {
    const target = await api.api('POST', '/api/v1/api/targets', { as: owner, workspaceId, body: { value: 'mcp.example.test' } });
    const key = await api.api('POST', '/api/v1/api/workspaces/api-keys', { as: owner, workspaceId, body: { name: 'agent' } });
    expect(key.status).toBe(201);
    const client = new Client({ name: 'audit-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/api/v1/api/mcp`), { requestInit: { headers: { 'x-service-api-key': key.body.apiKey } } }),
    );
    try {
      const reads = await during(() => client.callTool({ name: 'list_targets', arguments: {} }));
      expect(reads).toEqual([]);
      const written = await during(async () => {
        const started = (await client.callTool({ name: 'start_scan', arguments: { targetId: target.body.id } })) as { isError?: boolean };
        expect(started.isError).toBeFalsy();
        const refused = (await client.callTool({ name: 'start_scan', arguments: { targetId: '00000000-0000-4000-8000-000000000000' } })) as {
          isError?: boolean;
        };
        expect(refused.isError).toBe(true);
      });
      expect(written.map((e) => [e.surface, e.operation, e.outcome])).toEqual([
        ['mcp', 'mcp start_scan', 'success'],
        ['mcp', 'mcp start_scan', 'NOT_FOUND'],
      ]);
      expect(written[0]).toMatchObject({ workspaceId, actorKind: 'workspace-key', actorId: key.body.key.id, actorDisplay: key.body.key.prefix });
      expect(written[0]!.entityIds).toContain(target.body.id);
      expect(written[0]!.entityIds).toHaveLength(2); // the target and the scan it started
    } finally {
      await client.close();
    }
  });

  it('a tool-key submission is recorded with the key as actor, in the key’s workspace', async () => {
    const tool = await api.api('POST', '/api/v1/api/tools', { as: owner, workspaceId, body: { name: 'audit-probe', category: 'vulnerability_scanner' } });
    const rotated = await api.api('POST', `/api/v1/api/tools/${tool.body.id}/api-key/rotate`, { as: owner, workspaceId });
    expect(rotated.status).toBe(201);
    const written = await during(async () => {
      const submitted = await api.api('POST', '/api/v1/api/tools/results', {
        headers: { 'x-tool-api-key': rotated.body.apiKey },
        body: { format: 'json', findings: [{ checkId: 'audit-check', name: 'Audit check', severity: 'low', url: 'https://tool.example.test/' }] },
      });
      expect(submitted.status).toBe(200);
      expect((await api.api('POST', '/api/v1/api/tools/results', { headers: { 'x-tool-api-key': 'ptk_wrong' }, body: { format: 'json' } })).status).toBe(401);
    });
    expect(written.map((e) => [e.operation, e.actorKind, e.actorDisplay, e.workspaceId, e.outcome])).toEqual([
      ['POST /api/tools/results', 'tool-key', rotated.body.prefix, workspaceId, 'success'],
      ['POST /api/tools/results', 'anonymous', null, null, 'UNAUTHENTICATED'],
    ]);
  });
});

describe('the assistant stream route', () => {
  it('a message sent on the SSE route is recorded once, with the conversation and reply ids', async () => {
    let text = '';
    const written = await during(async () => {
      const response = await fetch(`${server.url}/api/v1/api/agents/messages/stream`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${owner.token}`, 'x-workspace-id': workspaceId },
        body: JSON.stringify({ question: 'What is open?' }),
      });
      expect(response.status).toBe(200);
      text = await response.text();
      const refused = await fetch(`${server.url}/api/v1/api/agents/messages/stream`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(refused.status).toBe(401);
    });
    const done = JSON.parse(
      text
        .split('\n\n')
        .find((block) => block.startsWith('event: done'))!
        .split('data: ')[1]!,
    );
    expect(written.map((e) => [e.operation, e.actorKind, e.outcome])).toEqual([
      ['POST /api/agents/messages/stream', 'user', 'success'],
      ['POST /api/agents/messages/stream', 'anonymous', 'UNAUTHENTICATED'],
    ]);
    expect(written[0]).toMatchObject({ workspaceId, actorId: owner.id });
    expect(written[0]!.entityIds.sort()).toEqual([done.conversationId, done.messageId].sort());
  });
});

describe('client address', () => {
  it('X-Forwarded-For is ignored without TRUST_PROXY and honoured with it', async () => {
    const spoofed = await during(() =>
      api.api('POST', '/api/v1/api/targets', { as: owner, workspaceId, body: { value: 'xff.example.test' }, headers: { 'x-forwarded-for': '203.0.113.9' } }),
    );
    expect(spoofed[0]!.clientAddress).toBe('127.0.0.1');

    const proxied = await startTestApp({ WORKERS: 'false', TRUST_PROXY: '1' });
    try {
      const client = clientFor(proxied);
      const user = await client.signUp('Proxied');
      await client.api('POST', '/api/v1/api/workspaces', { as: user, body: { name: 'Behind a proxy' }, headers: { 'x-forwarded-for': '198.51.100.4' } });
      const rows = await proxied.app.deps.prisma.auditLog.findMany({ where: { operation: 'POST /api/workspaces' } });
      expect(rows.map((row) => row.clientAddress)).toEqual(['198.51.100.4']);
    } finally {
      await proxied.stop();
    }
  });
});
