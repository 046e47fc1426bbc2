import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { encodeGlobalID } from '@pothos/plugin-relay';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';

/**
 * Workspace API keys (the credential of our MCP endpoint): owners make, list, revoke and rotate them; only
 * a SHA-256 is stored and the secret is shown once. Whether a key really opens the MCP endpoint (and stops
 * at once when revoked or rotated away) is asked of the endpoint itself here too.
 */

let server: TestApp;
let client: ReturnType<typeof clientFor>;
let owner: TestUser;
let member: TestUser;
let outsider: TestUser;
let workspaceId: string;
let otherWorkspaceId: string;

const BASE = '/api/v1/api/workspaces';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

beforeAll(async () => {
  server = await startTestApp({ WORKERS: 'false' });
  client = clientFor(server);
  owner = await client.signUp('Owner');
  member = await client.signUp('Member');
  outsider = await client.signUp('Outsider');
  workspaceId = (await client.createWorkspace(owner)).id;
  await client.addMember(owner, workspaceId, member);
  otherWorkspaceId = (await client.createWorkspace(outsider)).id;
});
afterAll(() => server?.stop());

/** One MCP tools/list over the streamable HTTP endpoint: the status says whether the key is accepted. */
async function mcpStatus(apiKey: string): Promise<number> {
  const response = await fetch(`${server.url}/api/v1/api/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-service-api-key': apiKey },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
  await response.text();
  return response.status;
}

describe('creating and listing keys', () => {
  it('shows the secret once, stores only its SHA-256, and lists metadata only', async () => {
    const created = await client.api('POST', `${BASE}/api-keys`, { as: owner, workspaceId, body: { name: 'claude desktop' } });
    expect(created.status).toBe(201);
    const { apiKey, key } = created.body;
    expect(apiKey).toMatch(/^pwk_[A-Za-z0-9_-]{43}$/);
    expect(key).toEqual({
      id: expect.any(String),
      workspaceId,
      name: 'claude desktop',
      prefix: apiKey.slice(0, 12),
      createdById: owner.id,
      createdAt: expect.any(String),
      lastUsedAt: null,
      revokedAt: null,
    });

    const stored = await server.db.prisma.workspaceApiKey.findUniqueOrThrow({ where: { id: key.id } });
    expect(stored.keyHash).toBe(sha256(apiKey));
    expect(JSON.stringify(stored)).not.toContain(apiKey);

    const listed = await client.api('GET', `${BASE}/api-keys`, { as: owner, workspaceId });
    expect(listed.status).toBe(200);
    expect(listed.body.map((k: { id: string }) => k.id)).toContain(key.id);
    expect(JSON.stringify(listed.body)).not.toContain(apiKey);

    const current = await client.api('GET', `${BASE}/api-key`, { as: owner, workspaceId });
    expect(current.status).toBe(200);
    expect(current.body.key).toMatchObject({ id: key.id, prefix: key.prefix });
    expect(JSON.stringify(current.body)).not.toContain(apiKey);

    expect(await mcpStatus(apiKey)).toBe(200);
    const used = await server.db.prisma.workspaceApiKey.findUniqueOrThrow({ where: { id: key.id } });
    expect(used.lastUsedAt).toBeInstanceOf(Date);
  });

  it('refuses bad input with 400 naming the field, and a missing workspace header with 400', async () => {
    const empty = await client.api('POST', `${BASE}/api-keys`, { as: owner, workspaceId, body: { name: '  ' } });
    expect(empty.status).toBe(400);
    expect(empty.body.details).toEqual([{ field: 'name', message: 'must not be empty' }]);
    const unknown = await client.api('POST', `${BASE}/api-keys`, { as: owner, workspaceId, body: { name: 'x', scope: 'all' } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.details).toEqual([{ field: 'scope', message: 'is not a known field' }]);
    const noHeader = await client.api('POST', `${BASE}/api-keys`, { as: owner, body: { name: 'x' } });
    expect(noHeader.status).toBe(400);
    expect(noHeader.body.code).toBe('WORKSPACE_REQUIRED');
  });

  it('the static paths are not taken by GET /workspaces/{id}', async () => {
    // Route order: /api/workspaces/api-key(s) are served by their own procedures, not 400 "id: must be a UUID".
    const none = await client.api('GET', `${BASE}/api-key`, { as: outsider, workspaceId: otherWorkspaceId });
    expect(none.status).toBe(200);
    expect(none.body).toEqual({ key: null });
    const list = await client.api('GET', `${BASE}/api-keys`, { as: outsider, workspaceId: otherWorkspaceId });
    expect(list.status).toBe(200);
    expect(list.body).toEqual([]);
    // …and a workspace is still served by its own route.
    expect((await client.api('GET', `${BASE}/${otherWorkspaceId}`, { as: outsider })).body.id).toBe(otherWorkspaceId);
  });

  it('anonymous callers get 401', async () => {
    expect((await client.api('GET', `${BASE}/api-keys`, { workspaceId })).status).toBe(401);
    expect((await client.api('POST', `${BASE}/${workspaceId}/api-key/rotate`)).status).toBe(401);
  });
});

describe('who may manage keys', () => {
  it('members get 403 on every key operation', async () => {
    const key = (await client.api('POST', `${BASE}/api-keys`, { as: owner, workspaceId, body: { name: 'for the member test' } })).body.key;
    const calls = [
      client.api('GET', `${BASE}/api-key`, { as: member, workspaceId }),
      client.api('GET', `${BASE}/api-keys`, { as: member, workspaceId }),
      client.api('POST', `${BASE}/api-keys`, { as: member, workspaceId, body: { name: 'mine' } }),
      client.api('DELETE', `${BASE}/api-keys/${key.id}`, { as: member, workspaceId }),
      client.api('POST', `${BASE}/${workspaceId}/api-key/rotate`, { as: member }),
    ];
    for (const response of await Promise.all(calls)) {
      expect(response.status).toBe(403);
      expect(response.body.code).toBe('FORBIDDEN');
    }
    const stored = await server.db.prisma.workspaceApiKey.findUniqueOrThrow({ where: { id: key.id } });
    expect(stored.revokedAt).toBeNull();
  });

  it("another workspace's keys answer 404, as if they did not exist", async () => {
    const key = (await client.api('POST', `${BASE}/api-keys`, { as: owner, workspaceId, body: { name: 'private' } })).body.key;
    expect((await client.api('GET', `${BASE}/api-keys`, { as: outsider, workspaceId })).status).toBe(404);
    expect((await client.api('POST', `${BASE}/api-keys`, { as: outsider, workspaceId, body: { name: 'intruder' } })).status).toBe(404);
    expect((await client.api('POST', `${BASE}/${workspaceId}/api-key/rotate`, { as: outsider })).status).toBe(404);
    // Named through the outsider's own workspace, our key is not found either.
    const crossRevoke = await client.api('DELETE', `${BASE}/api-keys/${key.id}`, { as: outsider, workspaceId: otherWorkspaceId });
    expect(crossRevoke.status).toBe(404);
    expect((await server.db.prisma.workspaceApiKey.findUniqueOrThrow({ where: { id: key.id } })).revokedAt).toBeNull();
  });
});

describe('revoking and rotating', () => {
  it('a revoked key stops working at once; revoking again keeps the first time', async () => {
    const { apiKey, key } = (await client.api('POST', `${BASE}/api-keys`, { as: owner, workspaceId, body: { name: 'short-lived' } })).body;
    expect(await mcpStatus(apiKey)).toBe(200);
    const revoked = await client.api('DELETE', `${BASE}/api-keys/${key.id}`, { as: owner, workspaceId });
    expect(revoked.status).toBe(200);
    expect(revoked.body.revokedAt).toEqual(expect.any(String));
    expect(await mcpStatus(apiKey)).toBe(401);

    const again = await client.api('DELETE', `${BASE}/api-keys/${key.id}`, { as: owner, workspaceId });
    expect(again.body.revokedAt).toBe(revoked.body.revokedAt);
    const active = await client.api('GET', `${BASE}/api-keys`, { as: owner, workspaceId });
    expect(active.body.map((k: { id: string }) => k.id)).not.toContain(key.id);
    const all = await client.api('GET', `${BASE}/api-keys?includeRevoked=true`, { as: owner, workspaceId });
    expect(all.body.find((k: { id: string }) => k.id === key.id).revokedAt).toBe(revoked.body.revokedAt);

    expect((await client.api('DELETE', `${BASE}/api-keys/not-a-uuid`, { as: owner, workspaceId })).status).toBe(400);
    expect((await client.api('DELETE', `${BASE}/api-keys/00000000-0000-4000-8000-000000000000`, { as: owner, workspaceId })).status).toBe(404);
  });

  it('rotation replaces the current key (same name), revoking the previous one immediately', async () => {
    const { workspace: fresh } = { workspace: await client.createWorkspace(owner) };
    const first = await client.api('POST', `${BASE}/${fresh.id}/api-key/rotate`, { as: owner });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ apiKey: expect.stringMatching(/^pwk_/), key: { name: 'default', workspaceId: fresh.id }, revokedKeyId: null });
    expect(await mcpStatus(first.body.apiKey)).toBe(200);

    const named = (await client.api('POST', `${BASE}/api-keys`, { as: owner, workspaceId: fresh.id, body: { name: 'ci' } })).body;
    // The current key is now the newest one: "ci".
    expect((await client.api('GET', `${BASE}/api-key`, { as: owner, workspaceId: fresh.id })).body.key.id).toBe(named.key.id);

    const second = await client.api('POST', `${BASE}/${fresh.id}/api-key/rotate`, { as: owner });
    expect(second.status).toBe(201);
    expect(second.body.revokedKeyId).toBe(named.key.id);
    expect(second.body.key.name).toBe('ci');
    expect(second.body.apiKey).not.toBe(named.apiKey);
    expect(await mcpStatus(named.apiKey)).toBe(401);
    expect(await mcpStatus(second.body.apiKey)).toBe(200);
    // The other key was not the current one: it still works.
    expect(await mcpStatus(first.body.apiKey)).toBe(200);

    const current = await client.api('GET', `${BASE}/api-key`, { as: owner, workspaceId: fresh.id });
    expect(current.body.key).toMatchObject({ id: second.body.key.id, prefix: second.body.apiKey.slice(0, 12), revokedAt: null });
    expect(JSON.stringify(current.body)).not.toContain(second.body.apiKey);
    const stored = await server.db.prisma.workspaceApiKey.findUniqueOrThrow({ where: { id: second.body.key.id } });
    expect(stored.keyHash).toBe(sha256(second.body.apiKey));
  });

  it('concurrent rotations each replace one key: exactly one of the rotated keys is left valid', async () => {
    const fresh = await client.createWorkspace(owner);
    await client.api('POST', `${BASE}/${fresh.id}/api-key/rotate`, { as: owner });
    const results = await Promise.all(Array.from({ length: 4 }, () => client.api('POST', `${BASE}/${fresh.id}/api-key/rotate`, { as: owner })));
    expect(results.map((r) => r.status)).toEqual([201, 201, 201, 201]);
    const active = await server.db.prisma.workspaceApiKey.count({ where: { workspaceId: fresh.id, revokedAt: null } });
    expect(active).toBe(1);
  });

  it('a key stops working when the member who made it leaves the workspace', async () => {
    const coOwner = await client.signUp('CoOwner');
    const fresh = await client.createWorkspace(owner);
    const membership = await client.addMember(owner, fresh.id, coOwner, 'owner');
    const { apiKey } = (await client.api('POST', `${BASE}/api-keys`, { as: coOwner, workspaceId: fresh.id, body: { name: 'theirs' } })).body;
    expect(await mcpStatus(apiKey)).toBe(200);
    expect((await client.api('DELETE', `${BASE}/members/${membership.id}`, { as: owner, workspaceId: fresh.id })).status).toBe(200);
    expect(await mcpStatus(apiKey)).toBe(401);
  });
});

describe('GraphQL', () => {
  it('creates, lists (owners only), rotates and revokes keys', async () => {
    const wid = encodeGlobalID('Workspace', workspaceId);
    const created = await client.gql(
      `mutation($wid: ID!) { createWorkspaceApiKey(workspaceId: $wid, name: "graphql") { __typename ... on MutationCreateWorkspaceApiKeySuccess { data { apiKey key { id name prefix revokedAt } } } } }`,
      { as: owner, variables: { wid } },
    );
    const { apiKey, key } = created.data.createWorkspaceApiKey.data;
    expect(apiKey).toMatch(/^pwk_/);
    expect(key).toMatchObject({ name: 'graphql', prefix: apiKey.slice(0, 12), revokedAt: null });

    const query = `query($wid: ID!) { node(id: $wid) { ... on Workspace { apiKeys { id name prefix } } } }`;
    const asOwner = await client.gql(query, { as: owner, variables: { wid } });
    expect(asOwner.data?.node.apiKeys.map((k: { id: string }) => k.id)).toContain(key.id);
    expect(JSON.stringify(asOwner.data)).not.toContain(apiKey);
    const asMember = await client.gql(query, { as: member, variables: { wid } });
    expect(asMember.data?.node.apiKeys).toBeNull();

    const forbidden = await client.gql(`mutation($wid: ID!) { rotateWorkspaceApiKey(workspaceId: $wid) { __typename ... on Error { code } } }`, {
      as: member,
      variables: { wid },
    });
    expect(forbidden.data?.rotateWorkspaceApiKey).toEqual({ __typename: 'ForbiddenError', code: 'FORBIDDEN' });

    const rotated = await client.gql(
      `mutation($wid: ID!) { rotateWorkspaceApiKey(workspaceId: $wid) { __typename ... on MutationRotateWorkspaceApiKeySuccess { data { apiKey key { id name } } } } }`,
      { as: owner, variables: { wid } },
    );
    expect(rotated.data?.rotateWorkspaceApiKey.data.key.name).toBe('graphql');
    expect(await mcpStatus(apiKey)).toBe(401);

    const newKey = rotated.data?.rotateWorkspaceApiKey.data;
    const revoked = await client.gql(
      `mutation($wid: ID!, $id: ID!) { revokeWorkspaceApiKey(workspaceId: $wid, id: $id) { __typename ... on MutationRevokeWorkspaceApiKeySuccess { data { id revokedAt } } } }`,
      { as: owner, variables: { wid, id: newKey.key.id } },
    );
    expect(revoked.data?.revokeWorkspaceApiKey.data).toEqual({ id: newKey.key.id, revokedAt: expect.any(String) });
    expect(await mcpStatus(newKey.apiKey)).toBe(401);

    const invalid = await client.gql(
      `mutation($wid: ID!) { createWorkspaceApiKey(workspaceId: $wid, name: "") { __typename ... on ValidationError { details { field } } } }`,
      { as: owner, variables: { wid } },
    );
    expect(invalid.data?.createWorkspaceApiKey).toEqual({ __typename: 'ValidationError', details: [{ field: 'name' }] });
  });
});
