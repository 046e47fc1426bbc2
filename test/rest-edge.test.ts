import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { addTarget, startScan } from './support/scans.js';
import { restRouter } from '../src/rest/router.js';
import { MAX_INPUT_DEPTH } from '../src/rest/inspect-input.js';

/**
 * The REST edge (src/rest/procedures.ts, handler.ts) is the same for every operation: these tests walk the
 * router's whole list of operations, so an operation added later is covered without being named here.
 */

interface Operation {
  name: string;
  method: string;
  path: string;
  isPublic: boolean;
  workspaceScoped: boolean;
  /** Served by a route of its own beside the REST handler (the assistant's stream; the template import, whose body is an archive). */
  ownRoute: boolean;
  /** Authenticated by a tool's key, not a user. */
  toolKey: boolean;
}

const OPERATIONS: Operation[] = Object.entries(restRouter._def.procedures).map(([name, procedure]) => {
  const openapi = (
    procedure as unknown as {
      _def: { meta: { openapi: { method: string; path: string; protect?: boolean; requestHeaders?: { shape: Record<string, unknown> } } } };
    }
  )._def.meta.openapi;
  return {
    name,
    method: openapi.method,
    path: openapi.path,
    isPublic: openapi.protect === false,
    workspaceScoped: Boolean(openapi.requestHeaders?.shape['x-workspace-id']),
    ownRoute: openapi.path === '/api/agents/messages/stream' || openapi.path === '/api/templates/import',
    toolKey: openapi.path === '/api/tools/results',
  };
});

const takesBody = (op: Operation) => op.method !== 'GET';
/** The path with its parameters filled: well-formed ids that name nothing. */
const concrete = (op: Operation) =>
  `/api/v1${op.path
    .replace('{step}', 'dns')
    .replace('{name}', 'edge-server')
    .replace(/\{\w+\}/g, randomUUID())}`;

let server: TestApp;
let client: ReturnType<typeof clientFor>;
let admin: TestUser;
let workspaceId: string;

beforeAll(async () => {
  // No workers: a started scan stays pending, so cancel and retry have something to act on.
  server = await startTestApp({ WORKERS: 'false' });
  client = clientFor(server);
  admin = await client.signUp('Admin');
  workspaceId = (await client.createWorkspace(admin)).id;
});
afterAll(() => server?.stop());

/** A request with exactly the headers and body given (fetch would add Content-Length or Content-Type). */
function rawRequest(method: string, path: string, headers: Record<string, string>, chunks: string[] = []): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}${path}`, { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    for (const chunk of chunks) req.write(chunk);
    req.end();
  });
}

describe('who you are is checked before what you sent', () => {
  const guarded = OPERATIONS.filter((op) => !op.isPublic);

  it('covers every operation but the public ones', () => {
    expect(
      OPERATIONS.filter((op) => op.isPublic)
        .map((op) => op.path)
        .sort(),
    ).toEqual(['/api/auth/get-session', '/api/auth/sign-in/email', '/api/auth/sign-up/email', '/api/system-configs/public', '/api/version']);
    expect(guarded.length).toBeGreaterThan(60);
  });

  it.each(guarded.map((op) => [op.method, op.path, op] as const))('anonymous %s %s with a bad body or query answers 401', async (_method, _path, op) => {
    const path = concrete(op).replace(/[0-9a-f]{8}-[0-9a-f-]{27}/, 'not-a-uuid');
    const response = takesBody(op)
      ? await client.api(op.method, path, { body: { 'no-such-field': true, name: 42, targetId: 'nope' }, workspaceId })
      : await client.api(op.method, `${path}?page=zero&no-such-field=1`, { workspaceId });
    expect(response.status).toBe(401);
    expect(response.body).toMatchObject({ statusCode: 401, code: 'UNAUTHENTICATED' });
  });

  it('anonymous POST /api/scans with a bad body answers 401, not 400', async () => {
    const response = await client.api('POST', '/api/v1/api/scans', { body: { targetId: 42 }, workspaceId });
    expect(response.status).toBe(401);
  });
});

describe('a workspace id that cannot exist', () => {
  const scoped = OPERATIONS.filter((op) => op.workspaceScoped && !op.toolKey && !op.ownRoute);

  it.each(scoped.map((op) => [op.method, op.path, op] as const))('X-Workspace-Id "not-a-uuid" on %s %s answers 404', async (_method, _path, op) => {
    const response = await client.api(op.method, concrete(op), { as: admin, workspaceId: 'not-a-uuid', ...(takesBody(op) ? { body: {} } : {}) });
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ statusCode: 404, code: 'NOT_FOUND' });
  });

  it('covers the scan routes', () => {
    expect(scoped.filter((op) => op.path.startsWith('/api/scans')).length).toBe(7);
  });
});

describe('a body must be the JSON object the operation declares', () => {
  const withBody = OPERATIONS.filter((op) => takesBody(op) && !op.isPublic && !op.toolKey && !op.ownRoute);

  it.each(withBody.map((op) => [op.method, op.path, op] as const))('%s %s refuses [], "text", 3 and null with 400', async (_method, _path, op) => {
    for (const rawBody of ['[]', '"text"', '3', 'null', '[{"name":"x"}]']) {
      const response = await client.api(op.method, concrete(op), { as: admin, workspaceId, rawBody, headers: { 'content-type': 'application/json' } });
      expect(response.status, `${rawBody} → ${JSON.stringify(response.body)}`).toBe(400);
      expect(response.body.message).toMatch(/must be a JSON object/);
    }
  });

  it('refuses a non-object body on the public operations too', async () => {
    const response = await client.api('POST', '/api/v1/api/auth/sign-in/email', {
      rawBody: '["a@example.test","pw"]',
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(400);
    expect(response.body.message).toBe('The request body must be a JSON object, not an array');
  });
});

describe('NUL characters and deep nesting are refused at the edge', () => {
  it('a NUL character in a body string is a 400 naming the field, and nothing is stored', async () => {
    const response = await client.api('POST', '/api/v1/api/workspaces', { as: admin, body: { name: 'Evil\u0000Corp' } });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ field: 'name', message: 'must not contain NUL characters (\\u0000)' }] });
    const list = await client.api('GET', '/api/v1/api/workspaces?limit=100', { as: admin });
    expect(list.body.data.map((w: { name: string }) => w.name)).not.toContain('Evil\u0000Corp');
  });

  it('a NUL character deep in a body, in a key, or in a query string is a 400 naming where', async () => {
    const nested = await client.api('PUT', '/api/v1/api/agents/mcp-configs/nul-test', {
      as: admin,
      workspaceId,
      body: { url: 'https://mcp.example.test/mcp', headers: { 'x-team': 'a\u0000b' } },
    });
    expect(nested.status).toBe(400);
    expect(nested.body.details).toEqual([{ field: 'headers.x-team', message: 'must not contain NUL characters (\\u0000)' }]);

    const key = await client.api('PUT', '/api/v1/api/agents/mcp-configs/nul-test', {
      as: admin,
      workspaceId,
      body: { url: 'https://mcp.example.test/mcp', headers: { 'x-\u0000': 'b' } },
    });
    expect(key.status).toBe(400);
    expect(key.body.details[0].field).toBe('headers.x-\\u0000');

    const query = await client.api('GET', '/api/v1/api/targets?search=a%00b', { as: admin, workspaceId });
    expect(query.status).toBe(400);
    expect(query.body.details).toEqual([{ field: 'search', message: 'must not contain NUL characters (\\u0000)' }]);
  });

  it(`JSON nested deeper than ${MAX_INPUT_DEPTH} levels is a 400, thousands deep too`, async () => {
    for (const depth of [MAX_INPUT_DEPTH + 1, 5000, 100_000]) {
      const deep = `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
      const response = await client.api('POST', '/api/v1/api/workspaces', {
        as: admin,
        rawBody: `{"name":"Deep","description":${deep}}`,
        headers: { 'content-type': 'application/json' },
      });
      expect(response.status, String(depth)).toBe(400);
      expect(response.body.message).toMatch(new RegExp(`nests deeper than ${MAX_INPUT_DEPTH} levels`));
    }
    const arrays = await client.api('POST', '/api/v1/api/targets/bulk', {
      as: admin,
      workspaceId,
      rawBody: `{"values":${'['.repeat(3000)}${']'.repeat(3000)}}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(arrays.status).toBe(400);
  });

  it("the assistant's stream route (served beside the REST handler) refuses them the same way", async () => {
    const stream = '/api/v1/api/agents/messages/stream';
    const nul = await client.api('POST', stream, { as: admin, workspaceId, body: { question: 'why\u0000' } });
    expect(nul.status).toBe(400);
    expect(nul.body.details).toEqual([{ field: 'question', message: 'must not contain NUL characters (\\u0000)' }]);
    const array = await client.api('POST', stream, { as: admin, workspaceId, rawBody: '["why"]', headers: { 'content-type': 'application/json' } });
    expect(array.status).toBe(400);
    expect(array.body.message).toMatch(/must be a JSON object/);
    expect((await client.api('POST', stream, { rawBody: '["why"]', headers: { 'content-type': 'application/json' }, workspaceId })).status).toBe(401);
  });

  it('nesting within the limit is judged by the schema as usual', async () => {
    const response = await client.api('POST', '/api/v1/api/workspaces', { as: admin, body: { name: 'Shallow', description: { a: { b: 1 } } } });
    expect(response.status).toBe(400);
    expect(response.body.details[0].field).toBe('description');
  });
});

describe('GraphQL refuses NUL characters the same way', () => {
  const CREATE = 'mutation($name: String!) { createWorkspace(input: { name: $name }) { __typename } }';

  it('in a variable: a VALIDATION_FAILED error naming it, not INTERNAL, and nothing stored', async () => {
    const response = await client.gql(CREATE, { as: admin, variables: { name: 'Nul\u0000Corp' } });
    expect(response.errors?.[0]?.extensions).toMatchObject({
      code: 'VALIDATION_FAILED',
      details: [{ field: 'name', message: 'must not contain NUL characters (\\u0000)' }],
    });
    expect(await server.db.prisma.workspace.count({ where: { name: { startsWith: 'Nul' } } })).toBe(0);
  });

  it('in a string literal of the document', async () => {
    const response = await client.gql('mutation { createWorkspace(input: { name: "Nul\\u0000Corp" }) { __typename } }', { as: admin });
    expect(response.errors?.[0]?.extensions).toMatchObject({ code: 'VALIDATION_FAILED' });
  });
});

describe('body-less operations accept a missing or empty body', () => {
  const variants: [string, Record<string, string>, string[]][] = [
    ['no body and no Content-Type', {}, []],
    ['no body with Content-Type application/json', { 'content-type': 'application/json' }, []],
    ['an empty chunked body', { 'transfer-encoding': 'chunked' }, ['']],
    ['an empty chunked body with Content-Type application/json', { 'transfer-encoding': 'chunked', 'content-type': 'application/json' }, ['']],
    ['Content-Length: 0 with a text Content-Type', { 'content-length': '0', 'content-type': 'text/plain' }, []],
  ];

  it.each(variants)('cancel and retry a scan with %s', async (_label, headers, chunks) => {
    const target = await addTarget(client, admin, workspaceId, `edge-${randomUUID().slice(0, 8)}.example.test`);
    const scan = await startScan(client, admin, workspaceId, target.id);
    const auth = { authorization: `Bearer ${admin.token}`, 'x-workspace-id': workspaceId, ...headers };
    const cancelled = await rawRequest('POST', `/api/v1/api/scans/${scan.id}/cancel`, auth, chunks);
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    expect(cancelled.body.status).toBe('CANCELLED');
    const retried = await rawRequest('POST', `/api/v1/api/scans/${scan.id}/retry`, auth, chunks);
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
  });

  it.each(variants)("rotate the workspace's API key with %s", async (_label, headers, chunks) => {
    const rotated = await rawRequest(
      'POST',
      `/api/v1/api/workspaces/${workspaceId}/api-key/rotate`,
      { authorization: `Bearer ${admin.token}`, ...headers },
      chunks,
    );
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(201);
    expect(rotated.body.apiKey).toMatch(/^pwk_/);
  });

  it.each(variants)('sign out with %s', async (_label, headers, chunks) => {
    const user = await client.signUp('Leaving');
    const signedOut = await rawRequest('POST', '/api/v1/api/auth/sign-out', { authorization: `Bearer ${user.token}`, ...headers }, chunks);
    expect(signedOut.status, JSON.stringify(signedOut.body)).toBe(200);
    expect((await client.api('GET', '/api/v1/api/users/me', { as: user })).status).toBe(401);
  });

  it('a non-empty body still has to say it is JSON', async () => {
    const response = await rawRequest(
      'POST',
      `/api/v1/api/workspaces/${workspaceId}/api-key/rotate`,
      { authorization: `Bearer ${admin.token}`, 'content-type': 'text/plain' },
      ['{}'],
    );
    expect(response.status).toBe(415);
  });
});

describe('client mistakes are logged below error', () => {
  it('no REST 4xx, whatever the mistake, leaves an error-level log entry', async () => {
    const { pino } = await import('pino');
    const entries: { level: number; msg?: string }[] = [];
    const log = pino({ level: 'debug' }, { write: (line: string) => void entries.push(JSON.parse(line)) });
    const server = await startTestApp({ LOG_LEVEL: 'debug', WORKERS: 'false' }, { log });
    const own = clientFor(server);
    try {
      await own.signUp('Administrator'); // the first account administers the instance
      const user = await own.signUp('Logged');
      const json = { 'content-type': 'application/json' };
      const mistakes: [string, string, Parameters<typeof own.api>[2]][] = [
        ['POST', '/api/v1/api/scans', { body: { targetId: 1 } }],
        ['POST', '/api/v1/api/workspaces', { as: user, rawBody: '{"name":', headers: json }],
        ['POST', '/api/v1/api/workspaces', { as: user, rawBody: 'name=x', headers: { 'content-type': 'text/plain' } }],
        ['POST', '/api/v1/api/workspaces', { as: user, rawBody: '[]', headers: json }],
        ['POST', '/api/v1/api/workspaces', { as: user, body: { name: 'a\u0000b' } }],
        ['POST', '/api/v1/api/workspaces', { as: user, rawBody: `{"name":${'['.repeat(5000)}${']'.repeat(5000)}}`, headers: json }],
        ['GET', '/api/v1/api/scans', { as: user, workspaceId: 'not-a-uuid' }],
        ['GET', `/api/v1/api/scans/${randomUUID()}`, { as: user, workspaceId: randomUUID() }],
        ['GET', '/api/v1/api/system-configs', { as: user }],
        ['POST', '/api/v1/api/system-configs/logo', { as: user, body: { contentType: '__proto__', dataBase64: 'AAAA' } }],
        ['GET', '/api/v1/api/no-such-route', { as: user }],
      ];
      for (const [method, path, options] of mistakes) {
        const response = await own.api(method, path, options);
        expect(response.status, `${method} ${path}`).toBeGreaterThanOrEqual(400);
        expect(response.status, `${method} ${path}`).toBeLessThan(500);
      }
      expect(entries.filter((entry) => entry.level >= 50)).toEqual([]);
      expect(entries.some((entry) => entry.msg === 'request')).toBe(true);
    } finally {
      await server.stop();
    }
  });
});
