import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor } from './support/client.js';
import { globalId, SCAN_UPDATED, WORKSPACE_EVENTS } from './support/scans.js';
import { waitFor } from './support/wait.js';
import { wsClientFor, type WsClient } from './support/ws.js';

let server: TestApp;
let client: ReturnType<typeof clientFor>;
const sockets: WsClient[] = [];

beforeAll(async () => {
  // Scans of loopback only, so the one scan here finishes quickly and touches nothing else.
  server = await startTestApp({ SCAN_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128' });
  client = clientFor(server);
});
afterAll(async () => {
  await Promise.all(sockets.map((ws) => ws.dispose()));
  await server?.stop();
});
afterEach(() => {
  vi.restoreAllMocks();
});

function socket(token: string): WsClient {
  const ws = wsClientFor(server, token);
  sockets.push(ws);
  return ws;
}

/** A workspace with a target, an asset and a finding (the last two as a scan would leave them). */
async function fixture(label = 'Owner') {
  const owner = await client.signUp(label);
  const workspaceId = (await client.createWorkspace(owner)).id as string;
  const target = await client.api('POST', '/api/v1/api/targets', { as: owner, workspaceId, body: { value: `${label.toLowerCase()}.example.com` } });
  expect(target.status, JSON.stringify(target.body)).toBe(201);
  const prisma = server.db.prisma;
  const asset = await prisma.asset.create({
    data: { workspaceId, targetId: target.body.id, kind: 'host', key: `host:${label}.example.com`, value: `${label}.example.com`, data: {} },
  });
  const finding = await prisma.finding.create({
    data: {
      workspaceId,
      targetId: target.body.id,
      assetId: asset.id,
      source: 'nuclei',
      checkId: 'x',
      name: 'X',
      severity: 'low',
      description: '',
      remediation: '',
      matcher: 'm',
      evidence: {},
      fingerprint: `fp-${randomUUID()}`,
    },
  });
  return { owner, workspaceId, targetId: target.body.id as string, assetId: asset.id, findingId: finding.id };
}

const NODE =
  'query($id: ID!) { node(id: $id) { __typename id ... on Workspace { databaseId } ... on Target { databaseId } ... on Scan { databaseId } ... on Asset { databaseId } ... on Finding { databaseId } ... on Conversation { databaseId } } }';

describe('REST resources carry their GraphQL global id', () => {
  it('workspaces, targets, scans, assets, findings and conversations answer nodeId, and node(nodeId) is the same object', async () => {
    const fx = await fixture('Nodes');
    const { owner, workspaceId } = fx;
    const scan = await client.api('POST', '/api/v1/api/scans', { as: owner, workspaceId, body: { targetId: fx.targetId, options: { steps: ['dns'] } } });
    expect(scan.status, JSON.stringify(scan.body)).toBe(201);
    const conversation = await client.api('POST', '/api/v1/api/agents/conversations', { as: owner, workspaceId, body: { title: 'ids' } });
    expect(conversation.status, JSON.stringify(conversation.body)).toBe(201);

    const reads: [type: string, path: string][] = [
      ['Workspace', `/api/v1/api/workspaces/${workspaceId}`],
      ['Target', `/api/v1/api/targets/${fx.targetId}`],
      ['Scan', `/api/v1/api/scans/${scan.body.id}`],
      ['Asset', `/api/v1/api/assets/${fx.assetId}`],
      ['Finding', `/api/v1/api/vulnerabilities/${fx.findingId}`],
      ['Conversation', `/api/v1/api/agents/conversations/${conversation.body.id}`],
    ];
    // Writes answer it too.
    expect(scan.body.nodeId).toBe(globalId('Scan', scan.body.id));
    expect(conversation.body.nodeId).toBe(globalId('Conversation', conversation.body.id));
    for (const [type, path] of reads) {
      const response = await client.api('GET', path, { as: owner, workspaceId });
      expect(response.status, `${path} ${JSON.stringify(response.body)}`).toBe(200);
      expect(response.body.nodeId, path).toBe(globalId(type, response.body.id));
      const node = await client.gql(NODE, { as: owner, variables: { id: response.body.nodeId } });
      expect(node.errors, JSON.stringify(node.errors)).toBeUndefined();
      expect(node.data.node).toEqual({ __typename: type, id: response.body.nodeId, databaseId: response.body.id });
    }

    // Lists carry it as well.
    const listed = await client.api('GET', '/api/v1/api/targets', { as: owner, workspaceId });
    expect(listed.body.data.map((t: { id: string; nodeId: string }) => t.nodeId)).toEqual([globalId('Target', fx.targetId)]);
  });
});

describe('id arguments take either form for their type', () => {
  let fx: Awaited<ReturnType<typeof fixture>>;
  beforeAll(async () => {
    fx = await fixture('Either');
  });

  it('queries read by UUID or global id alike, and refuse the global id of another type (BAD_USER_INPUT)', async () => {
    for (const id of [fx.workspaceId, globalId('Workspace', fx.workspaceId)]) {
      const result = await client.gql('query($id: ID!) { workspace(id: $id) { databaseId } findingStatistics(workspaceId: $id) { byStatus { open } } }', {
        as: fx.owner,
        variables: { id },
      });
      expect(result.errors, JSON.stringify(result.errors)).toBeUndefined();
      expect(result.data).toEqual({ workspace: { databaseId: fx.workspaceId }, findingStatistics: { byStatus: { open: 1 } } });
    }
    for (const [query, id] of [
      ['query($id: ID!) { target(id: $id) { databaseId } }', fx.targetId],
      ['query($id: ID!) { asset(id: $id) { databaseId } }', fx.assetId],
      ['query($id: ID!) { finding(id: $id) { databaseId } }', fx.findingId],
      ['query($id: ID!) { node(id: $id) { ... on Target { databaseId } } }', fx.targetId],
    ] as const) {
      const result = await client.gql(query, { as: fx.owner, variables: { id } });
      expect(result.errors, query).toBeUndefined();
      expect(Object.values(result.data)[0], query).toEqual({ databaseId: id });
    }

    const wrongType = await client.gql('query($id: ID!) { workspace(id: $id) { id } }', { as: fx.owner, variables: { id: globalId('Target', fx.targetId) } });
    expect(wrongType.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(wrongType.errors?.[0]?.message).toMatch(/id: is not a Workspace id/);
  });

  it('mutations take the UUID of a workspace as well as its global id', async () => {
    const ADD = `mutation($workspaceId: ID!, $value: String!) {
      addTarget(workspaceId: $workspaceId, value: $value) { __typename ... on MutationAddTargetSuccess { data { value workspace { databaseId } } } }
    }`;
    for (const [workspaceId, value] of [
      [fx.workspaceId, 'by-uuid.example.com'],
      [globalId('Workspace', fx.workspaceId), 'by-global-id.example.com'],
    ]) {
      const result = await client.gql(ADD, { as: fx.owner, variables: { workspaceId, value } });
      expect(result.errors, JSON.stringify(result.errors)).toBeUndefined();
      expect(result.data.addTarget).toEqual({ __typename: 'MutationAddTargetSuccess', data: { value, workspace: { databaseId: fx.workspaceId } } });
    }
  });

  it('a scan started over REST is watched by scanUpdated with the UUID of its Location, or its nodeId', async () => {
    const started = await client.api('POST', '/api/v1/api/vulnerabilities/scan', {
      as: fx.owner,
      workspaceId: fx.workspaceId,
      body: { targetId: fx.targetId },
    });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const uuid = started.headers.get('location')!.split('/').at(-1)!;
    const ws = socket(fx.owner.token);
    for (const id of [uuid, globalId('Scan', uuid)]) {
      const updates = ws.subscribe(SCAN_UPDATED, { id });
      await waitFor(() => updates.results.length > 0 || updates.error !== undefined, { timeoutMs: 20_000, what: 'the first scanUpdated event' });
      expect(updates.errors()).toEqual([]);
      expect(updates.results[0]!.data!.scanUpdated).toMatchObject({ id: globalId('Scan', uuid), databaseId: uuid });
      updates.dispose();
    }
  });

  it('workspaceEvents takes the UUID and names the workspace and what changed by global id', async () => {
    const ws = socket(fx.owner.token);
    const events = ws.subscribe(WORKSPACE_EVENTS, { workspaceId: fx.workspaceId });
    const renamed = () => events.results.find((r) => r.data?.workspaceEvents.type === 'workspace.updated');
    // No acknowledgement tells when a subscription is live: rename until the event arrives.
    let renames = 0;
    await waitFor(
      async () => {
        renames += 1;
        await client.api('PATCH', `/api/v1/api/workspaces/${fx.workspaceId}`, { as: fx.owner, body: { description: `live ${renames}` } });
        return waitFor(() => renamed() ?? events.error, { timeoutMs: 250 }).catch(() => false);
      },
      { timeoutMs: 20_000, what: 'the workspace event subscription to be live' },
    );
    expect(events.errors()).toEqual([]);
    const workspaceNodeId = globalId('Workspace', fx.workspaceId);
    expect(renamed()!.data!.workspaceEvents).toMatchObject({ workspaceId: workspaceNodeId, entityId: workspaceNodeId });

    const target = await client.api('POST', '/api/v1/api/targets', { as: fx.owner, workspaceId: fx.workspaceId, body: { value: 'evented.example.com' } });
    const created = await waitFor(() => events.results.find((r) => r.data?.workspaceEvents.type === 'target.created'), {
      timeoutMs: 10_000,
      what: 'target.created',
    });
    expect(created.data.workspaceEvents).toMatchObject({ workspaceId: workspaceNodeId, entityId: target.body.nodeId });
    expect(target.body.nodeId).toBe(globalId('Target', target.body.id));
  });
});

describe('node(id:)', () => {
  it('is null, without an error or an error log, for a well-formed id of an object that is gone or never was', async () => {
    const fx = await fixture('Gone');
    const deleted = await client.api('DELETE', `/api/v1/api/targets/${fx.targetId}`, { as: fx.owner, workspaceId: fx.workspaceId });
    expect(deleted.status).toBe(200);
    const logged = vi.spyOn(server.app.deps.log, 'error');
    const ids = [
      globalId('Target', fx.targetId),
      fx.targetId,
      ...['Workspace', 'Target', 'Scan', 'Asset', 'Finding', 'Conversation'].map((type) => globalId(type, randomUUID())),
      randomUUID(),
    ];
    for (const id of ids) {
      const result = await client.gql(NODE, { as: fx.owner, variables: { id } });
      expect(result.errors, `${id} ${JSON.stringify(result.errors)}`).toBeUndefined();
      expect(result.data, id).toEqual({ node: null });
    }
    const many = await client.gql('query($ids: [ID!]!) { nodes(ids: $ids) { id } }', {
      as: fx.owner,
      variables: { ids: [globalId('Asset', fx.assetId), globalId('Target', fx.targetId)] },
    });
    expect(many.errors).toBeUndefined();
    expect(many.data.nodes).toEqual([{ id: globalId('Asset', fx.assetId) }, null]);
    expect(logged).not.toHaveBeenCalled();
  });

  it('answers BAD_USER_INPUT for an id that is neither a UUID nor the global id of a Node', async () => {
    const owner = await client.signUp('Malformed');
    for (const id of ['garbage', globalId('Target', 'not-a-uuid'), globalId('User', randomUUID()), globalId('Nope', randomUUID()), '']) {
      const result = await client.gql(NODE, { as: owner, variables: { id } });
      expect(result.errors?.[0]?.extensions?.code, id).toBe('BAD_USER_INPUT');
      expect(result.errors?.[0]?.message, id).toMatch(/Invalid id/);
    }
  });
});

describe('malformed ids in mutations', () => {
  let fx: Awaited<ReturnType<typeof fixture>>;
  beforeAll(async () => {
    fx = await fixture('Mutations');
  });

  it('one undecodable id in a multi-mutation request keeps the earlier results and answers a ValidationError naming the field', async () => {
    const result = await client.gql(
      `mutation($workspaceId: ID!) {
        first: addTarget(workspaceId: $workspaceId, value: "first.example.com") { __typename ... on MutationAddTargetSuccess { data { value } } }
        second: addTarget(workspaceId: "not-an-id", value: "second.example.com") { __typename ... on ValidationError { code details { field message } } }
      }`,
      { as: fx.owner, variables: { workspaceId: globalId('Workspace', fx.workspaceId) } },
    );
    expect(result.errors, JSON.stringify(result.errors)).toBeUndefined();
    expect(result.data.first).toEqual({ __typename: 'MutationAddTargetSuccess', data: { value: 'first.example.com' } });
    expect(result.data.second).toEqual({
      __typename: 'ValidationError',
      code: 'VALIDATION_FAILED',
      details: [{ field: 'workspaceId', message: expect.stringMatching(/is not a Workspace id/) }],
    });
    // The first one committed; the second changed nothing.
    const listed = await client.api('GET', '/api/v1/api/targets?limit=100', { as: fx.owner, workspaceId: fx.workspaceId });
    expect(listed.body.data.map((t: { value: string }) => t.value)).toContain('first.example.com');
    expect(listed.body.data.map((t: { value: string }) => t.value)).not.toContain('second.example.com');
  });

  it('names each bad argument: the global id of another type, a member id that is no UUID, a bad entry of an id list', async () => {
    const fields = async (mutation: string, variables: Record<string, unknown>) => {
      const result = await client.gql(mutation, { as: fx.owner, variables });
      expect(result.errors, JSON.stringify(result.errors)).toBeUndefined();
      const payload = Object.values(result.data)[0] as { __typename: string; details?: { field: string }[] };
      expect(payload.__typename, mutation).toBe('ValidationError');
      return payload.details!.map((detail) => detail.field);
    };
    const onError = '{ __typename ... on ValidationError { details { field } } }';
    expect(await fields(`mutation($id: ID!) { deleteTarget(id: $id) ${onError} }`, { id: globalId('Workspace', fx.workspaceId) })).toEqual(['id']);
    expect(await fields(`mutation($w: ID!) { removeWorkspaceMember(workspaceId: $w, memberId: "42") ${onError} }`, { w: fx.workspaceId })).toEqual([
      'memberId',
    ]);
    expect(
      await fields(`mutation($w: ID!, $ids: [ID!]!) { dismissFindings(workspaceId: $w, ids: $ids, reason: false_positive) ${onError} }`, {
        w: fx.workspaceId,
        ids: [fx.findingId, 'nope', globalId('Asset', fx.assetId)],
      }),
    ).toEqual(['ids.1', 'ids.2']);
    // Nothing was dismissed.
    const finding = await client.api('GET', `/api/v1/api/vulnerabilities/${fx.findingId}`, { as: fx.owner, workspaceId: fx.workspaceId });
    expect(finding.body.status).toBe('open');
  });
});

describe('standard error members', () => {
  it('every mutation result offers ValidationError, UnauthenticatedError, ForbiddenError, NotFoundError, ConflictError, RateLimitedError and AppError', async () => {
    const owner = await client.signUp('Introspector');
    const result = await client.gql('{ __schema { mutationType { fields { name type { kind name ofType { kind name possibleTypes { name } } } } } } }', {
      as: owner,
    });
    expect(result.errors, JSON.stringify(result.errors)).toBeUndefined();
    const fields = result.data.__schema.mutationType.fields as { name: string; type: { ofType: { kind: string; possibleTypes: { name: string }[] } | null } }[];
    expect(fields.length).toBeGreaterThan(30);
    for (const field of fields) {
      expect(field.type.ofType?.kind, field.name).toBe('UNION');
      const members = field.type.ofType!.possibleTypes.map((type) => type.name);
      expect(members, field.name).toEqual(
        expect.arrayContaining(['ValidationError', 'UnauthenticatedError', 'ForbiddenError', 'NotFoundError', 'ConflictError', 'RateLimitedError', 'AppError']),
      );
    }
  });
});
