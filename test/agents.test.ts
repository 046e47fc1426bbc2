import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { globalId } from './support/scans.js';

/**
 * Conversations, messages and the assistant without a language model (deterministic answers from the inventory).
 * The model-backed assistant, its configuration, the SSE stream and the subscriptions are in agents.model.test.ts.
 */
let server: TestApp;
let client: ReturnType<typeof clientFor>;

beforeAll(async () => {
  server = await startTestApp();
  client = clientFor(server);
  await client.signUp('Instance admin'); // the first account administers the instance; tests use others
});
afterAll(() => server?.stop());

const BASE = '/api/v1/api/agents';

function fields(response: { body: any }): string[] {
  return (response.body.details ?? []).map((detail: { field: string }) => detail.field).sort();
}

async function ask(as: TestUser, workspaceId: string, question: string, conversationId?: string) {
  return client.api('POST', `${BASE}/messages`, { as, workspaceId, body: { question, ...(conversationId ? { conversationId } : {}) } });
}

/** A workspace with an owner and a member, two targets, assets of every kind and findings of every severity. */
async function inventory() {
  const owner = await client.signUp('Owner');
  const member = await client.signUp('Member');
  const workspaceId = (await client.createWorkspace(owner)).id;
  await client.addMember(owner, workspaceId, member);
  const prisma = server.db.prisma;
  const web = (await client.api('POST', '/api/v1/api/targets', { as: owner, workspaceId, body: { value: 'web.example.com' } })).body;
  await client.api('POST', '/api/v1/api/targets', { as: owner, workspaceId, body: { value: 'api.example.com' } });
  const assets: [kind: 'host' | 'service' | 'web' | 'certificate', value: string][] = [
    ['host', 'web.example.com'],
    ['host', 'api.example.com'],
    ['service', '10.0.0.7:443'],
    ['web', 'https://web.example.com'],
    ['certificate', 'CN=web.example.com'],
  ];
  for (const [kind, value] of assets) await prisma.asset.create({ data: { workspaceId, targetId: web.id, kind, key: `${kind}:${value}`, value, data: {} } });
  const findings: [name: string, severity: 'critical' | 'high' | 'medium' | 'low' | 'info', status?: 'fixed' | 'dismissed'][] = [
    ['SQL injection', 'critical'],
    ['Exposed admin panel', 'high'],
    ['Old TLS', 'high'],
    ['Missing HSTS', 'medium'],
    ['Server banner', 'info'],
    ['Patched thing', 'high', 'fixed'],
  ];
  for (const [name, severity, status] of findings) {
    await prisma.finding.create({
      data: {
        workspaceId,
        targetId: web.id,
        name,
        severity,
        status,
        fingerprint: `fp-${name}`,
        checkId: name,
        source: 'test',
        description: '',
        remediation: '',
        matcher: '',
        evidence: {},
      },
    });
  }
  return { owner, member, workspaceId, web };
}

describe('conversations over REST', () => {
  let fx: Awaited<ReturnType<typeof inventory>>;
  beforeAll(async () => {
    fx = await inventory();
  });

  it('creates, lists, gets, renames and deletes a conversation', async () => {
    const created = await client.api('POST', `${BASE}/conversations`, { as: fx.owner, workspaceId: fx.workspaceId, body: { title: 'Weekly review' } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      nodeId: globalId('Conversation', created.body.id),
      workspaceId: fx.workspaceId,
      title: 'Weekly review',
      createdById: fx.owner.id,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const untitled = await client.api('POST', `${BASE}/conversations`, { as: fx.owner, workspaceId: fx.workspaceId });
    expect(untitled.status).toBe(201);
    expect(untitled.body.title).toBe('New conversation');

    const got = await client.api('GET', `${BASE}/conversations/${created.body.id}`, { as: fx.owner, workspaceId: fx.workspaceId });
    expect(got.body).toEqual(created.body);

    const renamed = await client.api('PATCH', `${BASE}/conversations/${created.body.id}`, {
      as: fx.owner,
      workspaceId: fx.workspaceId,
      body: { title: '  Monthly review ' },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body.title).toBe('Monthly review');

    const listed = await client.api('GET', `${BASE}/conversations?sortBy=title&sortOrder=ASC`, { as: fx.owner, workspaceId: fx.workspaceId });
    expect(listed.status).toBe(200);
    expect(listed.body).toMatchObject({ total: 2, page: 1, limit: 10, hasNextPage: false, pageCount: 1 });
    expect(listed.body.data.map((c: { title: string }) => c.title)).toEqual(['Monthly review', 'New conversation']);
    const searched = await client.api('GET', `${BASE}/conversations?search=monthly`, { as: fx.owner, workspaceId: fx.workspaceId });
    expect(searched.body.data.map((c: { id: string }) => c.id)).toEqual([created.body.id]);

    const deleted = await client.api('DELETE', `${BASE}/conversations/${created.body.id}`, { as: fx.owner, workspaceId: fx.workspaceId });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ id: created.body.id });
    expect((await client.api('GET', `${BASE}/conversations/${created.body.id}`, { as: fx.owner, workspaceId: fx.workspaceId })).status).toBe(404);
    expect((await client.api('DELETE', `${BASE}/conversations/${created.body.id}`, { as: fx.owner, workspaceId: fx.workspaceId })).status).toBe(404);
    await client.api('DELETE', `${BASE}/conversations/${untitled.body.id}`, { as: fx.owner, workspaceId: fx.workspaceId });
  });

  it('keeps a conversation private to its creator: another member, another workspace and outsiders get 404', async () => {
    const mine = (await ask(fx.owner, fx.workspaceId, 'How many findings are open?')).body.conversationId as string;
    const member = { as: fx.member, workspaceId: fx.workspaceId };
    for (const [method, path, body] of [
      ['GET', `${BASE}/conversations/${mine}`],
      ['PATCH', `${BASE}/conversations/${mine}`, { title: 'Mine now' }],
      ['DELETE', `${BASE}/conversations/${mine}`],
      ['GET', `${BASE}/conversations/${mine}/messages`],
      ['POST', `${BASE}/messages`, { question: 'hello', conversationId: mine }],
    ] as const) {
      const response = await client.api(method, path, { ...member, body });
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(response.body).toMatchObject({ code: 'NOT_FOUND', message: 'Conversation not found' });
    }
    const theirList = await client.api('GET', `${BASE}/conversations`, member);
    expect(theirList.body.data.map((c: { id: string }) => c.id)).not.toContain(mine);

    // The creator, but naming another workspace of theirs: still not found there.
    const otherWorkspace = (await client.createWorkspace(fx.owner)).id;
    const elsewhere = await client.api('GET', `${BASE}/conversations/${mine}/messages`, { as: fx.owner, workspaceId: otherWorkspace });
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body.message).toBe('Conversation not found');

    // Someone outside the workspace is told the workspace does not exist.
    const outsider = await client.signUp('Outsider');
    const outside = await client.api('GET', `${BASE}/conversations/${mine}`, { as: outsider, workspaceId: fx.workspaceId });
    expect(outside.status).toBe(404);
    expect(outside.body.message).toBe('Workspace not found');

    // And a member who leaves loses their own conversations with the workspace.
    const leaver = await client.signUp('Leaver');
    const membership = await client.addMember(fx.owner, fx.workspaceId, leaver);
    const theirs = (await ask(leaver, fx.workspaceId, 'How many assets?')).body.conversationId;
    expect((await client.api('DELETE', `/api/v1/api/workspaces/members/${membership.id}`, { as: fx.owner, workspaceId: fx.workspaceId })).status).toBe(200);
    expect((await client.api('GET', `${BASE}/conversations/${theirs}`, { as: leaver, workspaceId: fx.workspaceId })).status).toBe(404);
    expect((await client.api('GET', `${BASE}/conversations/${mine}`, { as: fx.owner, workspaceId: fx.workspaceId })).status).toBe(200);
  });

  it('needs a signed-in caller and a workspace', async () => {
    expect((await client.api('GET', `${BASE}/conversations`, { workspaceId: fx.workspaceId })).status).toBe(401);
    expect((await client.api('POST', `${BASE}/messages`, { workspaceId: fx.workspaceId, body: { question: 'hi' } })).status).toBe(401);
    const noWorkspace = await client.api('GET', `${BASE}/conversations`, { as: fx.owner });
    expect(noWorkspace.status).toBe(400);
    expect(noWorkspace.body.code).toBe('WORKSPACE_REQUIRED');
    // The wid cookie names the workspace as well.
    const byCookie = await client.api('GET', `${BASE}/conversations`, { as: fx.owner, headers: { cookie: `wid=${fx.workspaceId}` } });
    expect(byCookie.status).toBe(200);
  });

  it('refuses bad input with 400 naming the fields', async () => {
    const as = { as: fx.owner, workspaceId: fx.workspaceId };
    const id = (await client.api('POST', `${BASE}/conversations`, { ...as, body: {} })).body.id;
    const cases: [string, string, unknown, string[]][] = [
      ['PATCH', `${BASE}/conversations/${id}`, { title: '   ' }, ['title']],
      ['PATCH', `${BASE}/conversations/${id}`, { title: 'x'.repeat(201) }, ['title']],
      ['PATCH', `${BASE}/conversations/${id}`, { title: 'ok', pinned: true }, ['pinned']],
      ['PATCH', `${BASE}/conversations/not-a-uuid`, { title: 'ok' }, ['id']],
      ['POST', `${BASE}/conversations`, { title: 42 }, ['title']],
      ['POST', `${BASE}/messages`, { question: '' }, ['question']],
      ['POST', `${BASE}/messages`, { question: 'x'.repeat(8001) }, ['question']],
      ['POST', `${BASE}/messages`, { question: 'hi', conversationId: 'nope' }, ['conversationId']],
      ['POST', `${BASE}/messages`, { question: 'hi', model: 'gpt' }, ['model']],
      ['POST', `${BASE}/messages`, {}, ['question']],
      ['GET', `${BASE}/conversations/${id}/messages?page=0&limit=101&sortBy=role&sortOrder=sideways`, undefined, ['limit', 'page', 'sortBy', 'sortOrder']],
      ['GET', `${BASE}/conversations?sortBy=model`, undefined, ['sortBy']],
    ];
    for (const [method, path, body, expected] of cases) {
      const response = await client.api(method, path, { ...as, body });
      expect(response.status, `${method} ${path} ${JSON.stringify(body)}`).toBe(400);
      expect(fields(response), `${method} ${path}`).toEqual(expected);
    }
    const notJson = await client.api('POST', `${BASE}/messages`, { ...as, rawBody: '{"question":', headers: { 'content-type': 'application/json' } });
    expect(notJson.status).toBe(400);
    const unknownConversation = await ask(fx.owner, fx.workspaceId, 'hi', '00000000-0000-4000-8000-000000000000');
    expect(unknownConversation.status).toBe(404);
  });
});

describe('messages', () => {
  it('pages a conversation: page, limit, sortBy createdAt, sortOrder, and the envelope arithmetic', async () => {
    const fx = await inventory();
    const first = await ask(fx.owner, fx.workspaceId, 'How many findings?');
    const conversationId = first.body.conversationId;
    await ask(fx.owner, fx.workspaceId, 'How many assets?', conversationId);
    await ask(fx.owner, fx.workspaceId, 'List the targets', conversationId);
    const path = `${BASE}/conversations/${conversationId}/messages`;
    const as = { as: fx.owner, workspaceId: fx.workspaceId };

    const newest = await client.api('GET', `${path}?page=1&limit=4&sortBy=createdAt&sortOrder=DESC`, as);
    expect(newest.status).toBe(200);
    expect(newest.body).toMatchObject({ total: 6, page: 1, limit: 4, hasNextPage: true, pageCount: 2 });
    expect(newest.body.data.map((m: { role: string; content: string }) => [m.role, m.content.split('\n')[0]])).toEqual([
      ['assistant', expect.stringMatching(/^Targets \(2\)/)],
      ['user', 'List the targets'],
      ['assistant', expect.stringMatching(/^Assets:/)],
      ['user', 'How many assets?'],
    ]);
    const rest = await client.api('GET', `${path}?page=2&limit=4&sortBy=createdAt&sortOrder=DESC`, as);
    expect(rest.body).toMatchObject({ total: 6, page: 2, limit: 4, hasNextPage: false, pageCount: 2 });
    expect(rest.body.data.map((m: { role: string }) => m.role)).toEqual(['assistant', 'user']);
    expect(rest.body.data[1].content).toBe('How many findings?');

    const oldest = await client.api('GET', `${path}?sortOrder=asc`, as);
    expect(oldest.body).toMatchObject({ total: 6, page: 1, limit: 10, hasNextPage: false, pageCount: 1 });
    expect(oldest.body.data.map((m: { id: string }) => m.id)).toEqual([...newest.body.data, ...rest.body.data].map((m: { id: string }) => m.id).reverse());
    const times = oldest.body.data.map((m: { createdAt: string }) => Date.parse(m.createdAt));
    expect(times).toEqual([...times].sort((a, b) => a - b));

    const beyond = await client.api('GET', `${path}?page=3&limit=4`, as);
    expect(beyond.body).toMatchObject({ data: [], total: 6, page: 3, hasNextPage: false, pageCount: 2 });

    // The seed's message shape (2.4).
    const [question, answer] = oldest.body.data;
    expect(question).toEqual({
      id: expect.any(String),
      conversationId,
      role: 'user',
      content: 'How many findings?',
      messageType: 'text',
      createdAt: expect.any(String),
      metadata: {},
      parts: [],
      toolCalls: [],
    });
    expect(Object.keys(answer).sort()).toEqual(['content', 'conversationId', 'createdAt', 'id', 'messageType', 'metadata', 'parts', 'role', 'toolCalls']);
    // The conversation moved to the top of the list when it was last answered.
    const conversation = (await client.api('GET', `${BASE}/conversations/${conversationId}`, as)).body;
    expect(Date.parse(conversation.updatedAt)).toBe(Date.parse(oldest.body.data[5].createdAt));
  });
});

describe('the assistant without a language model', () => {
  let fx: Awaited<ReturnType<typeof inventory>>;
  beforeAll(async () => {
    fx = await inventory();
  });

  it('counts open findings by severity through the statistics tool, recording the call', async () => {
    const response = await ask(fx.member, fx.workspaceId, 'How many findings do we have by severity?');
    expect(response.status).toBe(201);
    const message = response.body;
    expect(message).toMatchObject({ role: 'assistant', messageType: 'text', metadata: { source: 'fallback' }, conversationId: expect.any(String) });
    expect(message.content).toContain('Open findings: 1 critical, 2 high, 1 medium, 0 low, 1 info (5 in total). 1 finding fixed and 0 dismissed.');
    expect(message.content).toContain('without a language model');
    expect(message.toolCalls).toEqual([
      {
        toolCallId: 'fallback_1',
        toolName: 'count_findings_by_severity',
        args: {},
        result: { open: { critical: 1, high: 2, medium: 1, low: 0, info: 1 }, totalOpen: 5, byStatus: { open: 5, fixed: 1, dismissed: 0 } },
        isError: false,
      },
    ]);
    expect(message.parts.map((part: { type: string }) => part.type)).toEqual(['tool-call', 'tool-result', 'text']);
    const conversation = (await client.api('GET', `${BASE}/conversations/${message.conversationId}`, { as: fx.member, workspaceId: fx.workspaceId })).body;
    expect(conversation).toMatchObject({ title: 'How many findings do we have by severity?', createdById: fx.member.id });
  });

  it('answers assets by kind, recent scans and targets, and an overview with all of them', async () => {
    const assets = (await ask(fx.owner, fx.workspaceId, 'How many hosts and services are in the inventory?')).body;
    expect(assets.content).toMatch(/^Assets: 2 hosts, 1 service, 1 web application, 1 certificate \(5 in total\)\./);
    expect(assets.toolCalls[0]).toMatchObject({ toolName: 'count_assets', result: { total: 5, byKind: { host: 2, service: 1, web: 1, certificate: 1 } } });

    const scans = (await ask(fx.owner, fx.workspaceId, 'Show me the recent scans')).body;
    expect(scans.toolCalls.map((call: { toolName: string }) => call.toolName)).toEqual(['list_recent_scans']);
    expect(scans.content).toMatch(/^No scans have been run yet\./);

    const targets = (await ask(fx.owner, fx.workspaceId, 'which targets do we have?')).body;
    expect(targets.content).toMatch(/^Targets \(2\): (web|api)\.example\.com \(domain\), (web|api)\.example\.com \(domain\)\./);

    const overview = (await ask(fx.owner, fx.workspaceId, 'Give me an overview')).body;
    expect(overview.toolCalls.map((call: { toolName: string }) => call.toolName)).toEqual([
      'count_findings_by_severity',
      'count_assets',
      'list_recent_scans',
      'list_targets',
    ]);
  });

  it('starts a scan when asked ("scan <target>"), and says why when it cannot', async () => {
    // A private address: the scanner refuses it (no SCAN_ALLOWED_NETWORKS here), so the scan ends without traffic.
    const target = (await client.api('POST', '/api/v1/api/targets', { as: fx.owner, workspaceId: fx.workspaceId, body: { value: '10.9.8.7' } })).body;
    const started = (await ask(fx.member, fx.workspaceId, 'scan 10.9.8.7')).body;
    expect(started.toolCalls).toHaveLength(1);
    const [call] = started.toolCalls;
    expect(call).toMatchObject({ toolName: 'start_scan', args: { target: '10.9.8.7' }, isError: false, result: { target: '10.9.8.7', status: 'PENDING' } });
    expect(started.content).toMatch(/^Started a scan of 10\.9\.8\.7 \(scan [0-9a-f-]{36}, PENDING\)\./);
    const scan = await client.api('GET', `/api/v1/api/scans/${call.result.scanId}`, { as: fx.member, workspaceId: fx.workspaceId });
    expect(scan.status).toBe(200);
    expect(scan.body).toMatchObject({ targetId: target.id, requestedById: fx.member.id });

    const recent = (await ask(fx.member, fx.workspaceId, 'any recent scans?')).body;
    expect(recent.content).toMatch(/^Recent scans \(1 in total\):\n- 10\.9\.8\.7: [A-Z_]+ \(\d+%\)/);

    const unknown = (await ask(fx.member, fx.workspaceId, 'Please start a scan of nothing.example.org')).body;
    expect(unknown.toolCalls[0]).toMatchObject({ toolName: 'start_scan', isError: true, result: { code: 'NOT_FOUND' } });
    expect(unknown.content).toMatch(/^I could not start the scan: No target "nothing\.example\.org" in this workspace/);
  });

  it('says plainly that anything else needs a language model, without calling tools', async () => {
    const response = await ask(fx.owner, fx.workspaceId, 'Write a poem about the sea');
    expect(response.status).toBe(201);
    expect(response.body.toolCalls).toEqual([]);
    expect(response.body.content).toMatch(/^No language model is configured for this workspace/);
    expect(response.body.content).toContain('PUT /api/v1/api/agents/model-config');
  });

  it('continues a conversation, and titles a new one after the question, shortened', async () => {
    const long = `Tell me about ${'the exposure of our external perimeter '.repeat(6)}`;
    const first = (await ask(fx.owner, fx.workspaceId, long)).body;
    const conversation = (await client.api('GET', `${BASE}/conversations/${first.conversationId}`, { as: fx.owner, workspaceId: fx.workspaceId })).body;
    expect(conversation.title).toHaveLength(80);
    expect(conversation.title.endsWith('…')).toBe(true);
    expect(long.startsWith(conversation.title.slice(0, -1))).toBe(true);

    const second = (await ask(fx.owner, fx.workspaceId, 'and the findings?', first.conversationId)).body;
    expect(second.conversationId).toBe(first.conversationId);
    const messages = await client.api('GET', `${BASE}/conversations/${first.conversationId}/messages`, { as: fx.owner, workspaceId: fx.workspaceId });
    expect(messages.body.total).toBe(4);
  });
});

describe('conversations over GraphQL', () => {
  it('creates, reads, sends, renames and deletes, each caller seeing only their own', async () => {
    const fx = await inventory();
    const workspaceGid = globalId('Workspace', fx.workspaceId);
    const created = await client.gql(
      `mutation($w: ID!) { createConversation(workspaceId: $w, title: "GraphQL chat") { __typename ... on MutationCreateConversationSuccess { data { id databaseId title } } } }`,
      { as: fx.owner, variables: { w: workspaceGid } },
    );
    expect(created.errors).toBeUndefined();
    const conversation = created.data.createConversation.data;
    expect(conversation).toMatchObject({ title: 'GraphQL chat', id: globalId('Conversation', conversation.databaseId) });

    const sent = await client.gql(
      `mutation($w: ID!, $c: ID) { sendMessage(workspaceId: $w, question: "how many critical findings?", conversationId: $c) {
        ... on MutationSendMessageSuccess { data { created conversation { databaseId title }
          userMessage { role content messageType }
          assistantMessage { id conversationId role messageType content metadata toolCalls { toolCallId toolName args result isError } } } } } }`,
      { as: fx.owner, variables: { w: workspaceGid, c: conversation.id } },
    );
    expect(sent.errors).toBeUndefined();
    const payload = sent.data.sendMessage.data;
    expect(payload).toMatchObject({
      created: false,
      conversation: { databaseId: conversation.databaseId, title: 'GraphQL chat' },
      userMessage: { role: 'user', messageType: 'text' },
    });
    expect(payload.assistantMessage).toMatchObject({
      role: 'assistant',
      messageType: 'text',
      conversationId: conversation.databaseId,
      metadata: { source: 'fallback' },
    });
    expect(payload.assistantMessage.toolCalls).toEqual([
      { toolCallId: 'fallback_1', toolName: 'count_findings_by_severity', args: {}, result: expect.objectContaining({ totalOpen: 5 }), isError: false },
    ]);

    const fresh = await client.gql(
      `mutation($w: ID!) { sendMessage(workspaceId: $w, question: "hello there") { ... on MutationSendMessageSuccess { data { created conversation { title } assistantMessage { content } } } } }`,
      { as: fx.member, variables: { w: workspaceGid } },
    );
    expect(fresh.data.sendMessage.data).toMatchObject({ created: true, conversation: { title: 'hello there' } });

    const read = `query($w: ID!, $c: ID!) {
      workspace(id: $w) { conversations(first: 3) { totalCount edges { node { databaseId title messages(first: 4) { totalCount edges { node { role content } } } } } } }
      conversation(id: $c) { title }
    }`;
    const mine = await client.gql(read, { as: fx.owner, variables: { w: workspaceGid, c: conversation.id } });
    expect(mine.errors).toBeUndefined();
    expect(mine.data.workspace.conversations.totalCount).toBe(1);
    const node = mine.data.workspace.conversations.edges[0].node;
    expect(node).toMatchObject({ databaseId: conversation.databaseId, messages: { totalCount: 2 } });
    expect(node.messages.edges.map((edge: { node: { role: string } }) => edge.node.role)).toEqual(['user', 'assistant']);
    expect(mine.data.conversation).toEqual({ title: 'GraphQL chat' });

    // The member sees their own conversation only; mine is null for them, by node(id) as well.
    const theirs = await client.gql(read, { as: fx.member, variables: { w: workspaceGid, c: conversation.id } });
    expect(theirs.data.workspace.conversations.totalCount).toBe(1);
    expect(theirs.data.workspace.conversations.edges[0].node.title).toBe('hello there');
    expect(theirs.data.conversation).toBeNull();
    const byNode = await client.gql('query($id: ID!) { node(id: $id) { id } }', { as: fx.member, variables: { id: conversation.id } });
    expect(byNode.data.node).toBeNull();
    const stolen = await client.gql(`mutation($id: ID!) { renameConversation(id: $id, title: "mine") { __typename ... on Error { code } } }`, {
      as: fx.member,
      variables: { id: conversation.id },
    });
    expect(stolen.data.renameConversation).toEqual({ __typename: 'NotFoundError', code: 'NOT_FOUND' });

    const renamed = await client.gql(
      `mutation($id: ID!) { renameConversation(id: $id, title: "") { __typename ... on ValidationError { details { field } } } }`,
      { as: fx.owner, variables: { id: conversation.id } },
    );
    expect(renamed.data.renameConversation).toEqual({ __typename: 'ValidationError', details: [{ field: 'title' }] });
    const deleted = await client.gql(`mutation($id: ID!) { deleteConversation(id: $id) { ... on MutationDeleteConversationSuccess { data } } }`, {
      as: fx.owner,
      variables: { id: conversation.id },
    });
    expect(deleted.data.deleteConversation.data).toBe(conversation.databaseId);
    expect((await client.gql(read, { as: fx.owner, variables: { w: workspaceGid, c: conversation.id } })).data.conversation).toBeNull();
  });
});
