import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { globalId } from './support/scans.js';
import { waitFor } from './support/wait.js';
import { wsClientFor, type WsClient } from './support/ws.js';
import { startFakeOpenAI, textChunks, toolCallChunks, type FakeOpenAI, type FakeRequest } from './support/fake-openai.js';

/**
 * The assistant with a language model: a fake OpenAI-compatible server on loopback answers with streamed tool calls
 * and text, so whole conversations run for real: configuration (and its encrypted key), the tool loop, the SSE stream,
 * the GraphQL subscriptions, and the model's failures.
 */
let server: TestApp;
let client: ReturnType<typeof clientFor>;
let fake: FakeOpenAI;
let admin: TestUser;
const sockets: WsClient[] = [];

const BASE = '/api/v1/api/agents';
const KEY = 'sk-test-0123456789abcdef';

beforeAll(async () => {
  fake = await startFakeOpenAI();
  // Loopback allowed: the fake model lives there (targets the assistant scans here are private addresses, still refused).
  server = await startTestApp({ SCAN_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128' });
  client = clientFor(server);
  admin = await client.signUp('Admin'); // the first account administers the instance
});
afterAll(async () => {
  await Promise.all(sockets.map((ws) => ws.dispose()));
  await server?.stop();
  await fake?.close();
});

/** The fake's default: call count_findings_by_severity, then answer from what the tool returned. */
function findingsConversation() {
  fake.handle((request) => {
    const last = request.body.messages.at(-1)!;
    if (last.role !== 'tool') return { kind: 'stream', chunks: toolCallChunks([{ id: 'call_1', name: 'count_findings_by_severity', args: {} }]) };
    const result = JSON.parse(last.content!) as { open: Record<string, number> };
    return { kind: 'stream', chunks: textChunks(`You have ${result.open.critical} critical and ${result.open.high} high findings open.`) };
  });
}
beforeEach(findingsConversation);

async function workspaceWithModel(options: { apiKey?: string | null; findings?: boolean } = {}) {
  const owner = await client.signUp('Owner');
  const member = await client.signUp('Member');
  const workspaceId = (await client.createWorkspace(owner)).id;
  await client.addMember(owner, workspaceId, member);
  const put = await client.api('PUT', `${BASE}/model-config`, {
    as: owner,
    workspaceId,
    body: { baseUrl: `${fake.url}/`, model: 'fake-model', ...(options.apiKey === undefined ? { apiKey: KEY } : { apiKey: options.apiKey }) },
  });
  expect(put.status).toBe(200);
  if (options.findings !== false) {
    for (const [name, severity] of [
      ['SQL injection', 'critical'],
      ['Admin panel', 'high'],
      ['Old TLS', 'high'],
    ] as const) {
      await server.db.prisma.finding.create({
        data: {
          workspaceId,
          name,
          severity,
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
  }
  return { owner, member, workspaceId };
}

function ask(as: TestUser, workspaceId: string, question: string, conversationId?: string) {
  return client.api('POST', `${BASE}/messages`, { as, workspaceId, body: { question, ...(conversationId ? { conversationId } : {}) } });
}

/** The requests the fake received from now on. */
function requestsFrom(): () => FakeRequest[] {
  const start = fake.requests.length;
  return () => fake.requests.slice(start);
}

/** POSTs to the SSE route and reads the whole stream off a real HTTP response. */
async function stream(as: TestUser | undefined, workspaceId: string | undefined, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${server.url}${BASE}/messages/stream`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(as ? { authorization: `Bearer ${as.token}` } : {}),
      ...(workspaceId ? { 'x-workspace-id': workspaceId } : {}),
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  const isStream = response.headers.get('content-type')?.startsWith('text/event-stream');
  const events = (isStream ? text : '')
    .split('\n\n')
    .filter((block) => block.trim() && !block.startsWith(':'))
    .map((block) => {
      const lines = block.split('\n');
      const event = lines.find((line) => line.startsWith('event: '))?.slice(7);
      const data = JSON.parse(lines.find((line) => line.startsWith('data: '))!.slice(6));
      expect(data.type).toBe(event);
      return data;
    });
  return { status: response.status, headers: response.headers, text, events };
}

describe('model configuration', () => {
  it('stores the key encrypted, never returns it, and lets owners (not members) change it', async () => {
    const { owner, member, workspaceId } = await workspaceWithModel();
    const got = await client.api('GET', `${BASE}/model-config`, { as: member, workspaceId });
    expect(got.status).toBe(200);
    expect(got.body).toEqual({
      scope: 'workspace',
      workspaceId,
      baseUrl: fake.url,
      model: 'fake-model',
      hasApiKey: true,
      apiKeyHint: 'sk-…cdef',
      updatedById: owner.id,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(JSON.stringify(got.body)).not.toContain(KEY);

    const row = await server.db.prisma.modelConfig.findFirstOrThrow({ where: { workspaceId } });
    expect(JSON.stringify(row)).not.toContain(KEY);
    expect(JSON.stringify(row)).not.toContain('0123456789abcdef');
    expect(row.apiKeyEncrypted).toMatch(/^v1\./);
    expect(server.app.deps.secrets.decrypt(row.apiKeyEncrypted!)).toBe(KEY);

    const byMember = await client.api('PUT', `${BASE}/model-config`, { as: member, workspaceId, body: { baseUrl: fake.url, model: 'other' } });
    expect(byMember.status).toBe(403);
    expect((await client.api('DELETE', `${BASE}/model-config`, { as: member, workspaceId })).status).toBe(403);

    // Absent apiKey keeps the key; null removes it.
    const renamed = await client.api('PUT', `${BASE}/model-config`, { as: owner, workspaceId, body: { baseUrl: fake.url, model: 'fake-model-2' } });
    expect(renamed.body).toMatchObject({ model: 'fake-model-2', hasApiKey: true, apiKeyHint: 'sk-…cdef' });
    // Moving the endpoint to another origin must not carry the stored key along.
    const moved = await client.api('PUT', `${BASE}/model-config`, { as: owner, workspaceId, body: { baseUrl: 'http://127.0.0.2:9/v1', model: 'fake-model' } });
    expect(moved.status).toBe(400);
    expect(moved.body.details).toEqual([{ field: 'apiKey', message: expect.stringContaining('another origin') }]);
    const cleared = await client.api('PUT', `${BASE}/model-config`, { as: owner, workspaceId, body: { baseUrl: fake.url, model: 'fake-model', apiKey: null } });
    expect(cleared.body).toMatchObject({ hasApiKey: false, apiKeyHint: null });
    expect((await server.db.prisma.modelConfig.findMany({ where: { workspaceId } })).map((r) => r.apiKeyEncrypted)).toEqual([null]);

    const deleted = await client.api('DELETE', `${BASE}/model-config`, { as: owner, workspaceId });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ id: row.id });
    expect((await client.api('GET', `${BASE}/model-config`, { as: owner, workspaceId })).status).toBe(404);
    expect((await client.api('DELETE', `${BASE}/model-config`, { as: owner, workspaceId })).status).toBe(404);

    // GraphQL shows the same, without the key.
    await client.api('PUT', `${BASE}/model-config`, { as: owner, workspaceId, body: { baseUrl: fake.url, model: 'fake-model', apiKey: KEY } });
    const gql = await client.gql('query($w: ID) { modelConfig(workspaceId: $w) { scope baseUrl model hasApiKey apiKeyHint } }', {
      as: member,
      variables: { w: globalId('Workspace', workspaceId) },
    });
    expect(gql.data.modelConfig).toEqual({ scope: 'workspace', baseUrl: fake.url, model: 'fake-model', hasApiKey: true, apiKeyHint: 'sk-…cdef' });
  });

  it('has an instance-wide model for administrators, used by workspaces without their own', async () => {
    const owner = await client.signUp('Owner');
    const workspaceId = (await client.createWorkspace(owner)).id;
    const path = `${BASE}/model-config/instance`;
    expect((await client.api('PUT', path, { as: owner, body: { baseUrl: fake.url, model: 'instance-model', apiKey: KEY } })).status).toBe(403);
    expect((await client.api('GET', path, { as: owner })).status).toBe(403);
    expect((await client.api('GET', path)).status).toBe(401);
    expect((await client.api('GET', path, { as: admin })).status).toBe(404);

    const put = await client.api('PUT', path, { as: admin, body: { baseUrl: fake.url, model: 'instance-model', apiKey: KEY } });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ scope: 'instance', workspaceId: null, model: 'instance-model', hasApiKey: true });
    expect(JSON.stringify(put.body)).not.toContain(KEY);
    expect((await client.api('GET', path, { as: admin })).body).toEqual(put.body);
    try {
      const received = requestsFrom();
      expect((await ask(owner, workspaceId, 'How many findings?')).body.metadata).toMatchObject({
        source: 'model',
        model: 'instance-model',
        configScope: 'instance',
      });
      expect(received()[0]!.body.model).toBe('instance-model');

      // The workspace's own wins.
      await client.api('PUT', `${BASE}/model-config`, { as: owner, workspaceId, body: { baseUrl: fake.url, model: 'workspace-model' } });
      expect((await ask(owner, workspaceId, 'How many findings?')).body.metadata).toMatchObject({ model: 'workspace-model', configScope: 'workspace' });
      expect(received().at(-1)!.body.model).toBe('workspace-model');
      expect(received().at(-1)!.headers.authorization).toBeUndefined();
    } finally {
      const deleted = await client.api('DELETE', path, { as: admin });
      expect(deleted.status).toBe(200);
    }
    expect((await client.api('GET', path, { as: admin })).status).toBe(404);
  });

  it('refuses base URLs that are not http(s), carry credentials, or point at blocked networks', async () => {
    const owner = await client.signUp('Owner');
    const workspaceId = (await client.createWorkspace(owner)).id;
    const cases: [Record<string, unknown>, string[]][] = [
      [{ baseUrl: 'ftp://models.example/v1', model: 'm' }, ['baseUrl']],
      [{ baseUrl: 'not a url', model: 'm' }, ['baseUrl']],
      [{ baseUrl: 'https://user:secret@models.example/v1', model: 'm' }, ['baseUrl']],
      [{ baseUrl: 'http://169.254.169.254/latest', model: 'm' }, ['baseUrl']],
      [{ baseUrl: 'http://10.0.0.1/v1', model: 'm' }, ['baseUrl']],
      [{ baseUrl: 'http://[fd00::1]/v1', model: 'm' }, ['baseUrl']],
      [{ baseUrl: fake.url, model: '' }, ['model']],
      [{ baseUrl: fake.url, model: 'm', apiKey: '' }, ['apiKey']],
      [{ baseUrl: fake.url, model: 'm', temperature: 2 }, ['temperature']],
      [{ model: 'm' }, ['baseUrl']],
    ];
    for (const [body, expected] of cases) {
      const response = await client.api('PUT', `${BASE}/model-config`, { as: owner, workspaceId, body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(
        response.body.details.map((d: { field: string }) => d.field),
        JSON.stringify(body),
      ).toEqual(expected);
    }
    const metadata = await client.api('PUT', `${BASE}/model-config`, {
      as: owner,
      workspaceId,
      body: { baseUrl: 'http://169.254.169.254/latest', model: 'm' },
    });
    expect(metadata.body.details[0].message).toMatch(/cloud metadata service/);
    expect(await server.db.prisma.modelConfig.count({ where: { workspaceId } })).toBe(0);
  });
});

describe('a conversation with tool calls', () => {
  it('runs the tool the model asks for through the service layer and answers with its result', async () => {
    const { member, workspaceId } = await workspaceWithModel();
    const received = requestsFrom();
    const response = await ask(member, workspaceId, 'How bad is it?');
    expect(response.status).toBe(201);
    const message = response.body;
    expect(message).toMatchObject({
      role: 'assistant',
      messageType: 'text',
      content: 'You have 1 critical and 2 high findings open.',
      metadata: { source: 'model', model: 'fake-model', configScope: 'workspace', rounds: 2, finishReason: 'stop' },
    });
    expect(message.toolCalls).toEqual([
      {
        toolCallId: 'call_1',
        toolName: 'count_findings_by_severity',
        args: {},
        result: { open: { critical: 1, high: 2, medium: 0, low: 0, info: 0 }, totalOpen: 3, byStatus: { open: 3, fixed: 0, dismissed: 0 } },
        isError: false,
      },
    ]);
    expect(message.parts.map((part: { type: string }) => part.type)).toEqual(['tool-call', 'tool-result', 'text']);

    const [first, second] = received();
    expect(received()).toHaveLength(2);
    expect(first!.path).toBe('/v1/chat/completions');
    expect(first!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(first!.body).toMatchObject({ model: 'fake-model', stream: true, tool_choice: 'auto' });
    expect(first!.body.tools!.map((tool) => tool.function.name).sort()).toEqual(
      ['count_assets', 'count_findings_by_severity', 'list_assets', 'list_findings', 'list_recent_scans', 'list_targets', 'start_scan'].sort(),
    );
    expect(first!.body.tools!.find((tool) => tool.function.name === 'start_scan')!.function.parameters).toMatchObject({
      type: 'object',
      properties: { target: { type: 'string' } },
      required: ['target'],
    });
    expect(first!.body.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(first!.body.messages[1]!.content).toBe('How bad is it?');
    // The second round carries the model's tool call and the tool's result.
    const [toolCall, toolResult] = second!.body.messages.slice(2);
    expect(second!.body.messages).toHaveLength(4);
    expect(toolCall).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'count_findings_by_severity', arguments: '{}' } }],
    });
    expect(toolResult).toEqual({ role: 'tool', tool_call_id: 'call_1', content: expect.any(String) });
    expect(JSON.parse(toolResult!.content!)).toEqual(message.toolCalls[0].result);

    // A follow-up in the same conversation gives the model the earlier exchange.
    const followUp = await ask(member, workspaceId, 'And now?', message.conversationId);
    expect(followUp.body.conversationId).toBe(message.conversationId);
    expect(received()[2]!.body.messages.map((m) => [m.role, m.content])).toEqual([
      ['system', expect.any(String)],
      ['user', 'How bad is it?'],
      ['assistant', 'You have 1 critical and 2 high findings open.'],
      ['user', 'And now?'],
    ]);

    const listed = await client.api('GET', `${BASE}/conversations/${message.conversationId}/messages?sortOrder=ASC`, { as: member, workspaceId });
    expect(listed.body.total).toBe(4);
    expect(listed.body.data[1]).toEqual(message);
  });

  it('starts a scan when the model asks, as the caller, and records arguments the model got wrong as tool errors', async () => {
    const { owner, workspaceId } = await workspaceWithModel({ findings: false });
    const target = (await client.api('POST', '/api/v1/api/targets', { as: owner, workspaceId, body: { value: '10.20.30.40' } })).body;
    fake.handle((request) => {
      if (request.body.messages.at(-1)!.role === 'tool') return { kind: 'stream', chunks: textChunks('Done.') };
      return {
        kind: 'stream',
        chunks: toolCallChunks([
          { id: 'a', name: 'start_scan', args: { target: '10.20.30.40' } },
          { id: 'b', name: 'count_assets', args: { kind: 'spaceship' } },
          { id: 'c', name: 'launch_missiles', args: {} },
          { id: 'd', name: 'list_targets', args: 'not json' },
        ]),
      };
    });
    const message = (await ask(owner, workspaceId, 'Scan 10.20.30.40 please')).body;
    expect(message.content).toBe('Done.');
    const [scan, badKind, unknown, badJson] = message.toolCalls;
    expect(scan).toMatchObject({ toolCallId: 'a', toolName: 'start_scan', isError: false, result: { target: '10.20.30.40', status: 'PENDING' } });
    const started = await client.api('GET', `/api/v1/api/scans/${scan.result.scanId}`, { as: owner, workspaceId });
    expect(started.body).toMatchObject({ targetId: target.id, requestedById: owner.id });
    expect(badKind).toMatchObject({
      toolName: 'count_assets',
      args: { kind: 'spaceship' },
      isError: true,
      result: { error: expect.stringMatching(/^Invalid arguments: kind/) },
    });
    expect(unknown).toMatchObject({
      toolName: 'launch_missiles',
      isError: true,
      result: { error: expect.stringContaining('There is no tool named "launch_missiles"') },
    });
    expect(badJson).toMatchObject({
      toolName: 'list_targets',
      args: { raw: 'not json' },
      isError: true,
      result: { error: 'The arguments are not a JSON object' },
    });

    // Text from scanned systems reaches the model through tool results: a question that does not ask to scan starts none.
    const unasked = (await ask(owner, workspaceId, 'What do our targets look like?')).body;
    expect(unasked.toolCalls[0]).toMatchObject({
      toolName: 'start_scan',
      isError: true,
      result: { code: 'FORBIDDEN', error: expect.stringContaining('explicitly asks') },
    });
    const scans = await client.api('GET', '/api/v1/api/scans', { as: owner, workspaceId });
    expect(scans.body.total).toBe(1);
  });

  it('bounds the tool loop at five rounds, the last without tools', async () => {
    const { owner, workspaceId } = await workspaceWithModel();
    let n = 0;
    fake.handle(() => {
      n += 1;
      return { kind: 'stream', chunks: toolCallChunks([{ id: `loop_${n}`, name: 'count_assets', args: {} }]) };
    });
    const received = requestsFrom();
    const message = (await ask(owner, workspaceId, 'Loop forever')).body;
    expect(received()).toHaveLength(5);
    expect(received().map((request) => request.body.tool_choice)).toEqual(['auto', 'auto', 'auto', 'auto', 'none']);
    expect(message.toolCalls.map((call: { toolCallId: string }) => call.toolCallId)).toEqual(['loop_1', 'loop_2', 'loop_3', 'loop_4']);
    expect(message).toMatchObject({ messageType: 'text', metadata: { rounds: 5, finishReason: 'tool_rounds_exhausted' } });
    expect(message.content).toBe('(I stopped after 5 rounds of tool calls without a final answer.)');
  });

  it('bounds what a tool returns to the model', async () => {
    const { owner, workspaceId } = await workspaceWithModel();
    const targets = Array.from({ length: 50 }, (_, i) => ({ value: `${'a'.repeat(60)}-${i}.${'b'.repeat(60)}.example.com` }));
    expect((await client.api('POST', '/api/v1/api/targets/bulk', { as: owner, workspaceId, body: { targets } })).status).toBe(200);
    fake.handle((request) =>
      request.body.messages.at(-1)!.role === 'tool'
        ? { kind: 'stream', chunks: textChunks('Many targets.') }
        : { kind: 'stream', chunks: toolCallChunks([{ id: 'big', name: 'list_targets', args: { limit: 50 } }]) },
    );
    const received = requestsFrom();
    const message = (await ask(owner, workspaceId, 'List all targets')).body;
    const [call] = message.toolCalls;
    expect(call.result).toMatchObject({ total: 50, truncated: true, note: expect.stringMatching(/^Only the first \d+ items are shown\.$/) });
    expect(call.result.items.length).toBeLessThan(50);
    const fed = received()[1]!.body.messages.at(-1)!;
    expect(fed.role).toBe('tool');
    expect(fed.content!.length).toBeLessThanOrEqual(8000);
    expect(JSON.parse(fed.content!)).toEqual(call.result);
  });

  it("keeps the model's reasoning as a thinking part, and accepts a whole (non-streamed) completion or a stream without [DONE]", async () => {
    const { owner, workspaceId } = await workspaceWithModel({ findings: false });
    const reasoning = { choices: [{ index: 0, delta: { reasoning_content: 'The user says hi.' }, finish_reason: null }] };
    fake.handle(() => ({ kind: 'stream', chunks: [reasoning, ...textChunks('Hi!')], done: false }));
    const streamed = (await ask(owner, workspaceId, 'hi')).body;
    expect(streamed).toMatchObject({ messageType: 'text', content: 'Hi!' });
    expect(streamed.parts).toEqual([
      { type: 'thinking', text: 'The user says hi.' },
      { type: 'text', text: 'Hi!' },
    ]);

    fake.handle(() => ({
      kind: 'raw',
      contentType: 'application/json',
      body: JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: 'Whole answer.' }, finish_reason: 'stop' }] }),
    }));
    expect((await ask(owner, workspaceId, 'hi again')).body).toMatchObject({ messageType: 'text', content: 'Whole answer.' });

    // A query on the base URL (as some providers need) stays on the request.
    await client.api('PUT', `${BASE}/model-config`, { as: owner, workspaceId, body: { baseUrl: `${fake.url}?api-version=2024-10-21`, model: 'fake-model' } });
    const received = requestsFrom();
    await ask(owner, workspaceId, 'hi once more');
    expect(received()[0]!.path).toBe('/v1/chat/completions?api-version=2024-10-21');
  });
});

describe('the model failing', () => {
  const failures: [label: string, reply: Parameters<FakeOpenAI['handle']>[0] | 'refused', code: string, text: RegExp][] = [
    [
      'HTTP 500 (its message quoting the key)',
      () => ({ kind: 'status', status: 500, body: JSON.stringify({ error: { message: `Incorrect API key provided: ${KEY}` } }) }),
      'MODEL_HTTP_ERROR',
      /^The language model could not answer: The model endpoint answered HTTP 500: Incorrect API key provided: \[redacted\]$/,
    ],
    [
      'garbage in the stream',
      () => ({ kind: 'raw', contentType: 'text/event-stream', body: 'data: {"choices": [oops\n\n' }),
      'MODEL_BAD_RESPONSE',
      /stream event that is not JSON/,
    ],
    ['an HTML page', () => ({ kind: 'raw', contentType: 'text/html', body: '<h1>Bad gateway</h1>' }), 'MODEL_BAD_RESPONSE', /answered text\/html/],
    ['an empty stream', () => ({ kind: 'stream', chunks: [] }), 'MODEL_BAD_RESPONSE', /ended without an answer/],
    [
      'an error object in the stream',
      () => ({ kind: 'stream', chunks: [{ error: { message: 'Rate limit reached' } }] }),
      'MODEL_HTTP_ERROR',
      /reported an error: Rate limit reached/,
    ],
    ['a refused connection', 'refused', 'MODEL_UNREACHABLE', /could not be reached \(ECONNREFUSED\)/],
  ];

  for (const [label, reply, code, text] of failures) {
    it(`stores an error message and answers cleanly: ${label}`, async () => {
      const { owner, workspaceId } = await workspaceWithModel();
      if (reply === 'refused') {
        // Port 9 on loopback: nothing listens there.
        await client.api('PUT', `${BASE}/model-config`, { as: owner, workspaceId, body: { baseUrl: 'http://127.0.0.1:9/v1', model: 'm', apiKey: KEY } });
      } else {
        fake.handle(reply);
      }
      const response = await ask(owner, workspaceId, 'How bad is it?');
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({ role: 'assistant', messageType: 'error', metadata: { source: 'model', error: { code } } });
      expect(response.body.content).toMatch(text);
      expect(JSON.stringify(response.body)).not.toContain(KEY);
      const listed = await client.api('GET', `${BASE}/conversations/${response.body.conversationId}/messages`, { as: owner, workspaceId });
      expect(listed.body.data.map((m: { role: string; messageType: string }) => `${m.role}/${m.messageType}`)).toEqual(['assistant/error', 'user/text']);
    });
  }

  it('keeps the tool calls made before the model failed', async () => {
    const { owner, workspaceId } = await workspaceWithModel();
    let calls = 0;
    fake.handle(() => {
      calls += 1;
      return calls === 1
        ? { kind: 'stream', chunks: toolCallChunks([{ id: 'call_1', name: 'count_findings_by_severity', args: {} }]) }
        : { kind: 'status', status: 503, body: 'overloaded' };
    });
    const message = (await ask(owner, workspaceId, 'How bad is it?')).body;
    expect(message).toMatchObject({ messageType: 'error', metadata: { error: { code: 'MODEL_HTTP_ERROR' }, rounds: 2 } });
    expect(message.content).toBe('The language model could not answer: The model endpoint answered HTTP 503');
    expect(message.toolCalls).toEqual([expect.objectContaining({ toolName: 'count_findings_by_severity', isError: false })]);
  });

  it('refuses, at connect time, an endpoint the scope guard blocks (stored before the rules changed)', async () => {
    // An instance that does not allow loopback: the stored endpoint is never dialled.
    const strict = await startTestApp();
    try {
      const strictClient = clientFor(strict);
      const owner = await strictClient.signUp('Owner');
      const workspaceId = (await strictClient.createWorkspace(owner)).id;
      const refused = await strictClient.api('PUT', `${BASE}/model-config`, { as: owner, workspaceId, body: { baseUrl: fake.url, model: 'm' } });
      expect(refused.status).toBe(400);
      expect(refused.body.details[0]).toMatchObject({ field: 'baseUrl', message: expect.stringContaining('loopback') });
      const byName = await strictClient.api('PUT', `${BASE}/model-config`, {
        as: owner,
        workspaceId,
        body: { baseUrl: fake.url.replace('127.0.0.1', 'localhost'), model: 'm' },
      });
      expect(byName.status).toBe(400);

      for (const baseUrl of [fake.url, fake.url.replace('127.0.0.1', 'localhost')]) {
        await strict.db.prisma.modelConfig.deleteMany({ where: { workspaceId } });
        await strict.db.prisma.modelConfig.create({ data: { workspaceId, baseUrl, model: 'm' } });
        const received = requestsFrom();
        const response = await strictClient.api('POST', `${BASE}/messages`, { as: owner, workspaceId, body: { question: 'hi' } });
        expect(response.status, baseUrl).toBe(201);
        expect(response.body).toMatchObject({ messageType: 'error', metadata: { error: { code: 'MODEL_OUT_OF_SCOPE' } } });
        expect(response.body.content).toMatch(/out of scan scope: it is in \S+ \(loopback\)/);
        expect(received()).toEqual([]);
      }
    } finally {
      await strict.stop();
    }
  });
});

describe('POST /api/agents/messages/stream', () => {
  it('streams the conversation, the stored question, tool calls and results, text deltas, the stored reply, then done', async () => {
    const { member, workspaceId } = await workspaceWithModel();
    const response = await stream(member, workspaceId, { question: 'How bad is it?' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('no-cache, no-transform');
    const types = response.events.map((event) => event.type);
    expect(types[0]).toBe('conversation');
    expect(types.slice(1, 4)).toEqual(['message', 'tool-call', 'tool-result']);
    expect(types.slice(-2)).toEqual(['message', 'done']);
    expect(new Set(types.slice(4, -2))).toEqual(new Set(['text-delta']));

    const [conversation, question, toolCall, toolResult] = response.events;
    expect(conversation).toEqual({ type: 'conversation', conversationId: expect.any(String), title: 'How bad is it?', created: true });
    expect(response.headers.get('x-conversation-id')).toBe(conversation.conversationId);
    expect(question.message).toMatchObject({ role: 'user', content: 'How bad is it?', conversationId: conversation.conversationId });
    const reply = response.events.at(-2).message;
    expect(toolCall).toEqual({ type: 'tool-call', messageId: reply.id, toolCallId: 'call_1', toolName: 'count_findings_by_severity', args: {} });
    expect(toolResult).toMatchObject({ type: 'tool-result', messageId: reply.id, toolCallId: 'call_1', isError: false, result: { totalOpen: 3 } });
    const deltas = response.events.filter((event) => event.type === 'text-delta');
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.every((event) => event.messageId === reply.id)).toBe(true);
    expect(deltas.map((event) => event.delta).join('')).toBe(reply.content);
    expect(reply).toMatchObject({ role: 'assistant', content: 'You have 1 critical and 2 high findings open.', conversationId: conversation.conversationId });
    expect(response.events.at(-1)).toEqual({ type: 'done', conversationId: conversation.conversationId, messageId: reply.id });

    // What streamed is what was stored.
    const listed = await client.api('GET', `${BASE}/conversations/${conversation.conversationId}/messages`, { as: member, workspaceId });
    expect(listed.body.data[0]).toEqual(reply);

    // Continuing it streams into the same conversation.
    const next = await stream(member, workspaceId, { question: 'And now?', conversationId: conversation.conversationId });
    expect(next.events[0]).toMatchObject({ type: 'conversation', conversationId: conversation.conversationId, created: false });
  });

  it('streams the model failure as an error event before the stored error message', async () => {
    const { owner, workspaceId } = await workspaceWithModel();
    fake.handle(() => ({ kind: 'status', status: 500, body: 'boom' }));
    const response = await stream(owner, workspaceId, { question: 'Hello?' });
    expect(response.status).toBe(200);
    expect(response.events.map((event) => event.type)).toEqual(['conversation', 'message', 'error', 'message', 'done']);
    expect(response.events[2]).toMatchObject({
      code: 'MODEL_HTTP_ERROR',
      message: 'The language model could not answer: The model endpoint answered HTTP 500',
    });
    expect(response.events[3].message).toMatchObject({ messageType: 'error', content: response.events[2].message });
  });

  it('still stores the reply when the client goes away mid-stream', async () => {
    const { owner, workspaceId } = await workspaceWithModel({ findings: false });
    const answer = 'A slow answer that keeps streaming after the reader has left.';
    fake.handle(() => ({ kind: 'stream', chunks: textChunks(answer, 4), delayMs: 20 }));
    const controller = new AbortController();
    const response = await fetch(`${server.url}${BASE}/messages/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${owner.token}`, 'x-workspace-id': workspaceId },
      body: JSON.stringify({ question: 'Take your time' }),
      signal: controller.signal,
    });
    const conversationId = response.headers.get('x-conversation-id')!;
    const reader = response.body!.getReader();
    let seen = '';
    while (!seen.includes('event: text-delta')) seen += new TextDecoder().decode((await reader.read()).value);
    controller.abort();

    const stored = await waitFor(
      async () => {
        const listed = await client.api('GET', `${BASE}/conversations/${conversationId}/messages`, { as: owner, workspaceId });
        return listed.body.total === 2 ? listed.body.data[0] : undefined;
      },
      { what: 'the reply to be stored' },
    );
    expect(stored).toMatchObject({ role: 'assistant', messageType: 'text', content: answer });
  });

  it('streams the deterministic answer when no model is configured', async () => {
    const owner = await client.signUp('Owner');
    const workspaceId = (await client.createWorkspace(owner)).id;
    const response = await stream(owner, workspaceId, { question: 'how many assets?' });
    expect(response.events.map((event) => event.type)).toEqual(['conversation', 'message', 'tool-call', 'tool-result', 'text-delta', 'message', 'done']);
    expect(response.events[5].message).toMatchObject({
      metadata: { source: 'fallback' },
      content: expect.stringMatching(/^The inventory has no assets yet\./),
    });
  });

  it('answers JSON errors, with their status, before the stream starts', async () => {
    const { owner, member, workspaceId } = await workspaceWithModel();
    const mine = (await ask(owner, workspaceId, 'private')).body.conversationId;
    const cases: [string, Awaited<ReturnType<typeof stream>>, number, string][] = [
      ['anonymous', await stream(undefined, workspaceId, { question: 'hi' }), 401, 'UNAUTHENTICATED'],
      ['no workspace', await stream(owner, undefined, { question: 'hi' }), 400, 'WORKSPACE_REQUIRED'],
      ['empty question', await stream(owner, workspaceId, { question: ' ' }), 400, 'VALIDATION_FAILED'],
      ['not JSON', await stream(owner, workspaceId, '{"question"'), 400, 'BAD_REQUEST'],
      [
        'wrong content type',
        await stream(owner, workspaceId, 'question=hi', { 'content-type': 'application/x-www-form-urlencoded' }),
        415,
        'UNSUPPORTED_MEDIA_TYPE',
      ],
      ["another member's conversation", await stream(member, workspaceId, { question: 'hi', conversationId: mine }), 404, 'NOT_FOUND'],
    ];
    for (const [label, response, status, code] of cases) {
      expect(response.status, label).toBe(status);
      expect(JSON.parse(response.text), label).toMatchObject({ statusCode: status, code });
    }
    const wrongMethod = await client.api('GET', `${BASE}/messages/stream`, { as: owner, workspaceId });
    expect(wrongMethod.status).toBe(404); // as for any method a REST path does not serve
  });
});

describe('GraphQL subscriptions over a websocket', () => {
  const ADDED = 'subscription($c: ID!) { messageAdded(conversationId: $c) { id role content messageType toolCalls { toolName isError result } } }';
  const DELTA =
    'subscription($c: ID!) { messageDelta(conversationId: $c) { conversationId messageId kind text toolCall { toolCallId toolName args result isError } } }';

  it('streams partials on messageDelta and stored messages on messageAdded while sendMessage runs', async () => {
    const owner = await client.signUp('Owner');
    const workspaceId = (await client.createWorkspace(owner)).id;
    await server.db.prisma.finding.create({
      data: {
        workspaceId,
        name: 'SQLi',
        severity: 'critical',
        fingerprint: 'fp',
        checkId: 'sqli',
        source: 'test',
        description: '',
        remediation: '',
        matcher: '',
        evidence: {},
      },
    });
    const conversationId = (await client.api('POST', `${BASE}/conversations`, { as: owner, workspaceId, body: { title: 'Live' } })).body.id;
    const ws = wsClientFor(server, owner.token);
    sockets.push(ws);
    const added = ws.subscribe(ADDED, { c: globalId('Conversation', conversationId) });
    const deltas = ws.subscribe(DELTA, { c: globalId('Conversation', conversationId) });

    // No acknowledgement tells when a subscription is live: ask (deterministically, no model yet) until both deliver.
    const deadline = Date.now() + 20_000;
    while (!(added.results.length && deltas.results.length) && Date.now() < deadline) {
      await ask(owner, workspaceId, 'hello', conversationId);
      await waitFor(() => added.results.length && deltas.results.length, { timeoutMs: 300 }).catch(() => undefined);
    }
    expect(added.errors()).toEqual([]);
    expect(deltas.errors()).toEqual([]);
    const addedBefore = added.results.length;
    const deltasBefore = deltas.results.length;
    // The subscription may have gone live between a warm-up question and its reply: wait for the reply itself
    // (each warm-up ask returns once its reply is stored, so the last message to arrive is an assistant's).
    await waitFor(() => added.results.at(-1)?.data?.messageAdded.role === 'assistant', { what: 'the warm-up reply' });

    await client.api('PUT', `${BASE}/model-config`, { as: owner, workspaceId, body: { baseUrl: fake.url, model: 'fake-model', apiKey: KEY } });
    const sent = await client.gql(
      `mutation($w: ID!, $c: ID) { sendMessage(workspaceId: $w, question: "How bad is it?", conversationId: $c) {
        ... on MutationSendMessageSuccess { data { assistantMessage { id content } } } ... on Error { code message } } }`,
      { as: owner, variables: { w: globalId('Workspace', workspaceId), c: globalId('Conversation', conversationId) } },
    );
    expect(sent.errors).toBeUndefined();
    const reply = sent.data.sendMessage.data.assistantMessage;
    expect(reply.content).toBe('You have 1 critical and 0 high findings open.');

    await waitFor(() => added.results.slice(addedBefore).some((result) => result.data?.messageAdded.id === reply.id), { what: 'the reply on messageAdded' });
    const stored = added.results.slice(addedBefore).map((result) => result.data!.messageAdded);
    const fromNow = stored.slice(stored.findIndex((message: { content: string }) => message.content === 'How bad is it?'));
    expect(fromNow).toEqual([
      { id: expect.any(String), role: 'user', content: 'How bad is it?', messageType: 'text', toolCalls: [] },
      {
        id: reply.id,
        role: 'assistant',
        content: reply.content,
        messageType: 'text',
        toolCalls: [{ toolName: 'count_findings_by_severity', isError: false, result: expect.objectContaining({ totalOpen: 1 }) }],
      },
    ]);

    const partials = deltas.results
      .slice(deltasBefore)
      .map((result) => result.data!.messageDelta)
      .filter((delta: { messageId: string }) => delta.messageId === reply.id);
    expect(partials.map((delta: { kind: string }) => delta.kind).slice(0, 2)).toEqual(['tool_call', 'tool_result']);
    expect(partials[0]).toEqual({
      conversationId,
      messageId: reply.id,
      kind: 'tool_call',
      text: null,
      toolCall: { toolCallId: 'call_1', toolName: 'count_findings_by_severity', args: {}, result: null, isError: false },
    });
    expect(partials[1].toolCall.result).toMatchObject({ totalOpen: 1 });
    expect(partials.slice(2).every((delta: { kind: string }) => delta.kind === 'text')).toBe(true);
    expect(
      partials
        .slice(2)
        .map((delta: { text: string }) => delta.text)
        .join(''),
    ).toBe(reply.content);
    expect(added.completed || deltas.completed).toBe(false);
  });

  it("refuses another member's conversation with NOT_FOUND and sends them nothing", async () => {
    const { owner, member, workspaceId } = await workspaceWithModel();
    const conversationId = (await ask(owner, workspaceId, 'mine')).body.conversationId;
    const ws = wsClientFor(server, member.token);
    sockets.push(ws);
    for (const query of [ADDED, DELTA]) {
      const operation = ws.subscribe(query, { c: globalId('Conversation', conversationId) });
      await waitFor(() => operation.error !== undefined || operation.completed, { what: 'the refusal' });
      expect(operation.errors()).toEqual([
        expect.objectContaining({ message: 'Conversation not found', extensions: expect.objectContaining({ code: 'NOT_FOUND' }) }),
      ]);
      expect(operation.results.filter((result) => result.data)).toEqual([]);
    }
  });
});
