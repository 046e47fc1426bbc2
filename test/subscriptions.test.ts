import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisUrl, startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { waitFor } from './support/wait.js';
import { wsClientFor, type Operation, type WsClient } from './support/ws.js';

const EVENTS = 'subscription($workspaceId: ID!) { workspaceEvents(workspaceId: $workspaceId) { type workspaceId entityId at } }';

let server: TestApp;
let client: ReturnType<typeof clientFor>;
const sockets: WsClient[] = [];

function socket(app: TestApp, token?: string, options?: { lazy?: boolean }): WsClient {
  const ws = wsClientFor(app, token, options);
  sockets.push(ws);
  return ws;
}

beforeAll(async () => {
  server = await startTestApp({ GRAPHQL_MAX_DEPTH: '5', GRAPHQL_MAX_ALIASES: '3' });
  client = clientFor(server);
});
afterAll(async () => {
  await Promise.all(sockets.map((ws) => ws.dispose()));
  await server?.stop();
});

/** A workspace with its REST id and its GraphQL global id. */
async function workspaceOf(api: ReturnType<typeof clientFor>, owner: TestUser) {
  const created = await api.createWorkspace(owner);
  const listed = await api.gql('{ workspaces { edges { node { id databaseId } } } }', { as: owner });
  const node = listed
    .data!.workspaces.edges.map((edge: { node: { id: string; databaseId: string } }) => edge.node)
    .find((n: { databaseId: string }) => n.databaseId === created.id);
  expect(node).toBeDefined();
  return { id: created.id as string, globalId: node.id as string };
}

/**
 * The server gives no acknowledgement that a subscription is live, so write, wait briefly for the event,
 * and write again until it arrives (bounded). Returns the first result that carries data.
 */
async function writeUntilEvent<T>(operation: Operation<T>, write: () => Promise<void>, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    await write();
    const got = await waitFor(() => operation.results.find((result) => result.data) ?? operation.error ?? operation.completed, {
      timeoutMs: 250,
      what: 'event',
    }).catch(() => undefined);
    if (got) break;
  }
  expect(operation.error).toBeUndefined();
  expect(operation.completed).toBe(false);
  const result = operation.results.find((r) => r.data);
  expect(result, 'no event arrived').toBeDefined();
  return result!;
}

/** Waits until the operation ended (error message, or a result with errors and completion). */
async function settled(operation: Operation) {
  await waitFor(() => operation.error !== undefined || operation.completed, { what: 'the operation to end' });
  return operation.errors();
}

describe('workspaceEvents over graphql-ws', () => {
  it('delivers workspace.updated to members after a REST PATCH', async () => {
    const owner = await client.signUp('Owner');
    const member = await client.signUp('Member');
    const workspace = await workspaceOf(client, owner);
    await client.addMember(owner, workspace.id, member);

    const ownerOp = socket(server, owner.token).subscribe(EVENTS, { workspaceId: workspace.globalId });
    const memberOp = socket(server, member.token).subscribe(EVENTS, { workspaceId: workspace.globalId });

    let n = 0;
    const patch = async () => {
      n += 1;
      const response = await client.api('PATCH', `/api/v1/api/workspaces/${workspace.id}`, { as: owner, body: { name: `Renamed ${n}` } });
      expect(response.status).toBe(200);
    };
    const event = await writeUntilEvent(ownerOp, patch);
    expect(event.errors).toBeUndefined();
    expect(event.data).toEqual({
      workspaceEvents: { type: 'workspace.updated', workspaceId: workspace.globalId, entityId: workspace.globalId, at: expect.any(String) },
    });
    expect(Number.isNaN(Date.parse(event.data!.workspaceEvents.at))).toBe(false);

    const memberEvent = await writeUntilEvent(memberOp, patch);
    expect(memberEvent.data.workspaceEvents).toMatchObject({ type: 'workspace.updated', workspaceId: workspace.globalId });
  });

  it('refuses a user of another workspace with NOT_FOUND, and never sends them events', async () => {
    const owner = await client.signUp('Owner');
    const outsider = await client.signUp('Outsider');
    await client.createWorkspace(outsider);
    const workspace = await workspaceOf(client, owner);

    const operation = socket(server, outsider.token).subscribe(EVENTS, { workspaceId: workspace.globalId });
    const errors = await settled(operation);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ message: 'Workspace not found', extensions: { code: 'NOT_FOUND' } });

    expect((await client.api('PATCH', `/api/v1/api/workspaces/${workspace.id}`, { as: owner, body: { name: 'Secret rename' } })).status).toBe(200);
    expect(operation.results.filter((result) => result.data)).toEqual([]);
  });

  it('closes an unauthenticated or forged socket at connection_init (4403), before any operation runs', async () => {
    const owner = await client.signUp('Owner');
    const workspace = await workspaceOf(client, owner);
    for (const token of [undefined, 'forged-token']) {
      const ws = socket(server, token);
      const operation = ws.subscribe(EVENTS, { workspaceId: workspace.globalId });
      await settled(operation);
      expect(ws.closes, String(token)).toEqual([{ code: 4403, reason: 'Forbidden' }]);
      expect(operation.results).toEqual([]);
    }
  });

  it('ends the subscription of a member removed from the workspace: no event after the removal', async () => {
    const owner = await client.signUp('Owner');
    const member = await client.signUp('Member');
    const workspace = await workspaceOf(client, owner);
    const membership = await client.addMember(owner, workspace.id, member);
    const memberOp = socket(server, member.token).subscribe(EVENTS, { workspaceId: workspace.globalId });
    let n = 0;
    const patch = async () => {
      n += 1;
      expect((await client.api('PATCH', `/api/v1/api/workspaces/${workspace.id}`, { as: owner, body: { name: `Before ${n}` } })).status).toBe(200);
    };
    await writeUntilEvent(memberOp, patch);
    const seenBefore = memberOp.results.length;

    const removed = await client.api('DELETE', `/api/v1/api/workspaces/members/${membership.id}`, { as: owner, workspaceId: workspace.id });
    expect(removed.status).toBe(200);
    expect((await client.api('PATCH', `/api/v1/api/workspaces/${workspace.id}`, { as: owner, body: { name: 'After removal' } })).status).toBe(200);
    const errors = await settled(memberOp);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ message: 'Workspace not found', extensions: { code: 'NOT_FOUND' } });
    expect(memberOp.results).toHaveLength(seenBefore);
  });

  it('closes the socket of a user who signed out (4403) when the next event comes', async () => {
    const owner = await client.signUp('Owner');
    const workspace = await workspaceOf(client, owner);
    const ws = socket(server, owner.token);
    const operation = ws.subscribe(EVENTS, { workspaceId: workspace.globalId });
    const second = await client.api('POST', '/api/v1/api/auth/sign-in/email', { body: { email: owner.email, password: 'correct horse battery' } });
    expect(second.status).toBe(200);
    // A second session of the same user writes: signing out ends only the socket's session.
    const writer = { token: second.body.token as string };
    let n = 0;
    await writeUntilEvent(operation, async () => {
      n += 1;
      expect((await client.api('PATCH', `/api/v1/api/workspaces/${workspace.id}`, { as: writer, body: { name: `Live ${n}` } })).status).toBe(200);
    });
    const seenBefore = operation.results.length;

    expect((await client.api('POST', '/api/v1/api/auth/sign-out', { as: owner })).status).toBe(200);
    expect((await client.api('PATCH', `/api/v1/api/workspaces/${workspace.id}`, { as: writer, body: { name: 'After sign-out' } })).status).toBe(200);
    await waitFor(() => ws.closes.length > 0, { what: 'the socket to close' });
    expect(ws.closes[0]).toEqual({ code: 4403, reason: 'Session ended' });
    expect(operation.results).toHaveLength(seenBefore);
  });

  it('applies the depth and alias limits (and reports bad documents) without closing the socket', async () => {
    const owner = await client.signUp('Owner');
    const workspace = await workspaceOf(client, owner);
    const ws = socket(server, owner.token, { lazy: false });

    const deep = ws.subscribe('{ workspaces { edges { node { members { user { id } } } } } }');
    expect((await settled(deep))[0]?.message).toMatch(/depth limit of 5 exceeded, found 6/);
    expect(deep.results).toEqual([]);

    const aliases = ws.subscribe('subscription($workspaceId: ID!) { workspaceEvents(workspaceId: $workspaceId) { a: type b: type c: type d: type } }', {
      workspaceId: workspace.globalId,
    });
    expect((await settled(aliases))[0]?.message).toMatch(/Aliases limit of 3 exceeded, found 4/);
    expect(aliases.results).toEqual([]);

    const syntax = ws.subscribe('subscription { workspaceEvents(');
    expect((await settled(syntax))[0]?.message).toMatch(/Syntax Error/);

    // The same socket still serves operations: a bad one did not take the connection down.
    expect(ws.closes).toEqual([]);
    const query = ws.subscribe('{ viewer { id } }');
    await waitFor(() => query.completed, { what: 'the query to complete' });
    expect(query.results).toEqual([{ data: { viewer: { id: owner.id } } }]);
    const live = ws.subscribe(EVENTS, { workspaceId: workspace.globalId });
    const event = await writeUntilEvent(live, async () => {
      expect((await client.api('PATCH', `/api/v1/api/workspaces/${workspace.id}`, { as: owner, body: { description: 'still here' } })).status).toBe(200);
    });
    expect(event.data.workspaceEvents.type).toBe('workspace.updated');
    expect(ws.closes).toEqual([]);
  });
});

describe('cross-instance fan-out through Redis', () => {
  let first: TestApp;
  let second: TestApp;
  const url = redisUrl ?? 'redis://127.0.0.1:6379';

  beforeAll(async () => {
    first = await startTestApp({ REDIS_URL: url });
    second = await startTestApp({ REDIS_URL: url }, { database: { db: first.db, dispose: async () => {} } });
  });
  afterAll(async () => {
    await second?.stop();
    await first?.stop();
  });

  it('a subscriber on instance B receives an event written through instance A', async () => {
    expect(first.app.deps.db).toBe(second.app.deps.db);
    const a = clientFor(first);
    const b = clientFor(second);
    const owner = await a.signUp('Owner');
    const workspace = await workspaceOf(a, owner);
    // The same account and workspace are visible through B: one database.
    expect((await b.api('GET', `/api/v1/api/workspaces/${workspace.id}`, { as: owner })).status).toBe(200);

    const onB = socket(second, owner.token).subscribe(EVENTS, { workspaceId: workspace.globalId });
    let n = 0;
    const event = await writeUntilEvent(onB, async () => {
      n += 1;
      expect((await a.api('PATCH', `/api/v1/api/workspaces/${workspace.id}`, { as: owner, body: { name: `Via A ${n}` } })).status).toBe(200);
    });
    expect(event.data.workspaceEvents).toMatchObject({ type: 'workspace.updated', workspaceId: workspace.globalId, entityId: workspace.globalId });

    // And the other way round, on a socket to A for a write through B.
    const onA = socket(first, owner.token).subscribe(EVENTS, { workspaceId: workspace.globalId });
    const back = await writeUntilEvent(onA, async () => {
      expect((await b.api('PATCH', `/api/v1/api/workspaces/${workspace.id}`, { as: owner, body: { description: 'via B' } })).status).toBe(200);
    });
    expect(back.data.workspaceEvents.type).toBe('workspace.updated');
  });
});

describe('scanUpdated re-checks access before each update', () => {
  let app: TestApp;
  beforeAll(async () => {
    // No workers: the scan waits in PENDING until the owner cancels it, which is the one update we watch.
    app = await startTestApp({ WORKERS: 'false', SCAN_ALLOWED_NETWORKS: '127.0.0.0/8' });
  });
  afterAll(async () => {
    await app?.stop();
  });

  it('a member removed while watching a scan gets NOT_FOUND instead of its next update', async () => {
    const api = clientFor(app);
    const owner = await api.signUp('Scan owner');
    const member = await api.signUp('Scan watcher');
    const workspace = await workspaceOf(api, owner);
    const membership = await api.addMember(owner, workspace.id, member);
    const target = await api.api('POST', '/api/v1/api/targets', { as: owner, workspaceId: workspace.id, body: { value: '127.0.0.1' } });
    expect(target.status).toBe(201);
    const scan = await api.api('POST', '/api/v1/api/scans', { as: owner, workspaceId: workspace.id, body: { targetId: target.body.id } });
    expect(scan.status).toBe(201);

    const SCAN_UPDATED = 'subscription($id: ID!) { scanUpdated(id: $id) { databaseId status } }';
    const operation = socket(app, member.token).subscribe(SCAN_UPDATED, { id: Buffer.from(`Scan:${scan.body.id}`).toString('base64') });
    await waitFor(() => operation.results.length > 0 || operation.error, { what: 'the current state' });
    expect(operation.results).toEqual([{ data: { scanUpdated: { databaseId: scan.body.id, status: 'PENDING' } } }]);

    expect((await api.api('DELETE', `/api/v1/api/workspaces/members/${membership.id}`, { as: owner, workspaceId: workspace.id })).status).toBe(200);
    expect((await api.api('POST', `/api/v1/api/scans/${scan.body.id}/cancel`, { as: owner, workspaceId: workspace.id })).status).toBe(200);
    const errors = await settled(operation);
    expect(errors).toEqual([expect.objectContaining({ message: 'Scan not found', extensions: { code: 'NOT_FOUND' } })]);
    expect(operation.results).toHaveLength(1);
  });
});
