import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { redisUrl, startTestApp, usingPostgres, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { waitFor } from './support/wait.js';

let server: TestApp;
let client: ReturnType<typeof clientFor>;
let owner: TestUser;

const MAX_DEPTH = 5;
const MAX_ALIASES = 5;

beforeAll(async () => {
  server = await startTestApp({ GRAPHQL_MAX_DEPTH: String(MAX_DEPTH), GRAPHQL_MAX_ALIASES: String(MAX_ALIASES) }, { logQueries: true });
  client = clientFor(server);
  owner = await client.signUp('Owner');
});
afterAll(() => server?.stop());

/** Every REST error, whatever went wrong, has this shape. */
function expectErrorShape(body: unknown, statusCode: number, code?: string) {
  expect(body).toMatchObject({ statusCode, error: expect.any(String), code: code ?? expect.any(String), message: expect.any(String) });
}

async function metricsText(): Promise<string> {
  const response = await fetch(`${server.url}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/plain');
  return response.text();
}

describe('operational endpoints', () => {
  it('GET /health answers 200', async () => {
    const response = await client.api('GET', '/health');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ status: 'ok' });
  });

  it('GET /ready answers 200 with the database kind', async () => {
    const response = await client.api('GET', '/ready');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ status: 'ready', database: server.db.kind, ...(redisUrl ? { redis: 'up' } : {}) });
    expect(['pglite', 'postgres']).toContain(response.body.database);
  });

  it.runIf(usingPostgres)("survives PostgreSQL terminating the pool's idle connections, and /ready reconnects", async () => {
    const pool = server.db.pool!;
    await Promise.all([1, 2, 3].map(() => client.api('GET', '/ready')));
    await waitFor(() => pool.idleCount > 0, { what: 'idle pool connections' });
    const { rows } = (await server.db.sql.query('SELECT current_database() AS name')) as { rows: { name: string }[] };
    const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await admin.connect();
    try {
      // Only this test's own database (a fresh one per app).
      const terminated = await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [
        rows[0]!.name,
      ]);
      expect(terminated.rowCount).toBeGreaterThan(0);
    } finally {
      await admin.end();
    }
    // The pool notices (each idle connection errors and is dropped); the process must not crash.
    await waitFor(() => pool.idleCount === 0, { what: 'the pool to drop the terminated connections' });
    const ready = await client.api('GET', '/ready');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready', database: 'postgres', ...(redisUrl ? { redis: 'up' } : {}) });
  });

  it('/metrics counts requests by route with ids collapsed, latency, and GraphQL operations', async () => {
    const workspace = await client.createWorkspace(owner);
    expect((await client.api('GET', `/api/v1/api/workspaces/${workspace.id}`, { as: owner })).status).toBe(200);
    expect((await client.gql('query MetricsProbe { viewer { id } }', { as: owner })).data?.viewer.id).toBe(owner.id);

    const text = await metricsText();
    expect(text).toMatch(/^http_requests_total\{method="GET",route="\/api\/v1\/api\/workspaces\/:id",status="200"\} \d+/m);
    expect(text).toMatch(/^http_requests_total\{method="POST",route="\/api\/v1\/api\/workspaces",status="201"\} \d+/m);
    // No raw id leaks into a label: cardinality stays bounded.
    expect(text).not.toContain(workspace.id);
    expect(text).toMatch(/^http_request_duration_seconds_bucket\{le="[\d.+Inf]+",method="GET",route="\/api\/v1\/api\/workspaces\/:id"\} \d+/m);
    expect(text).toMatch(/^http_request_duration_seconds_count\{method="POST",route="\/graphql"\} \d+/m);
    expect(text).toMatch(/^graphql_operations_total\{type="query",name="MetricsProbe"\} 1$/m);
  });

  it('echoes a safe X-Request-Id and generates one when absent or unsafe', async () => {
    const given = await client.api('GET', '/health', { headers: { 'x-request-id': 'trace-abc.123:XYZ_9' } });
    expect(given.headers.get('x-request-id')).toBe('trace-abc.123:XYZ_9');

    const absent = await client.api('GET', '/health');
    expect(absent.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);

    for (const unsafe of ['has spaces in it', '<script>', 'x'.repeat(200)]) {
      const response = await client.api('GET', '/health', { headers: { 'x-request-id': unsafe } });
      const generated = response.headers.get('x-request-id');
      expect(generated).toMatch(/^[0-9a-f-]{36}$/);
      expect(generated).not.toBe(unsafe);
    }
    // Errors carry it too, so a client can quote it.
    const failed = await client.api('GET', '/nope', { headers: { 'x-request-id': 'req-404' } });
    expect(failed.status).toBe(404);
    expect(failed.headers.get('x-request-id')).toBe('req-404');
  });
});

describe('API documentation', () => {
  it('GET /api/v1/openapi.json is an OpenAPI 3 document with query parameters, bearer auth and the Error schema', async () => {
    const response = await client.api('GET', '/api/v1/openapi.json');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('application/json');
    const doc = response.body;
    expect(doc.openapi).toMatch(/^3\./);
    expect(doc.info.title).toEqual(expect.any(String));

    const list = doc.paths['/api/workspaces'].get;
    const queryParams = list.parameters.filter((p: { in: string }) => p.in === 'query').map((p: { name: string }) => p.name);
    expect(queryParams).toEqual(expect.arrayContaining(['page', 'limit', 'search', 'sortBy', 'sortOrder', 'isArchived']));
    expect(doc.paths['/api/workspaces'].post).toBeDefined();

    const schemes = Object.values(doc.components.securitySchemes) as { type: string; scheme?: string }[];
    expect(schemes).toContainEqual(expect.objectContaining({ type: 'http', scheme: 'bearer' }));
    expect(list.security).toEqual([{ [Object.keys(doc.components.securitySchemes)[0]!]: [] }]);

    expect(doc.components.schemas.Error.required).toEqual(expect.arrayContaining(['statusCode', 'error', 'code', 'message']));
    for (const [status, response] of Object.entries(list.responses) as [string, { content?: Record<string, { schema: unknown }> }][]) {
      if (Number(status) >= 400) expect(response.content?.['application/json']?.schema).toEqual({ $ref: '#/components/schemas/Error' });
    }
    // Every error response of every operation references the one Error schema.
    let errorResponses = 0;
    for (const pathItem of Object.values(doc.paths) as Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>[]) {
      for (const operation of Object.values(pathItem)) {
        for (const [status, resp] of Object.entries(operation.responses)) {
          if (Number(status) < 400 || !resp.content) continue;
          errorResponses += 1;
          expect(resp.content['application/json']?.schema).toEqual({ $ref: '#/components/schemas/Error' });
        }
      }
    }
    expect(errorResponses).toBeGreaterThan(10);
  });

  it('GET /api/v1/docs serves the Swagger UI page and its assets', async () => {
    const page = await fetch(`${server.url}/api/v1/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    const html = await page.text();
    expect(html).toContain('/api/v1/openapi.json');
    const scripts = [...html.matchAll(/src="([^"]+)"/g)].map((m) => m[1]!);
    expect(scripts).toContain('/api/v1/docs/swagger-ui-bundle.js');
    for (const asset of [...scripts, '/api/v1/docs/swagger-ui.css']) {
      const response = await fetch(`${server.url}${asset}`);
      expect(response.status, asset).toBe(200);
      expect((await response.arrayBuffer()).byteLength).toBeGreaterThan(1000);
    }
    const js = await fetch(`${server.url}/api/v1/docs/swagger-ui-bundle.js`);
    expect(js.headers.get('content-type')).toContain('javascript');
    await js.arrayBuffer();
    // Only the known assets: no path traversal into node_modules.
    const traversal = await client.api('GET', '/api/v1/docs/../../package.json');
    expect(traversal.status).toBe(404);
    const other = await client.api('GET', '/api/v1/docs/package.json');
    expect(other.status).toBe(404);
    expectErrorShape(other.body, 404);
  });

  it('GET /graphql with accept: text/html serves GraphiQL', async () => {
    const response = await fetch(`${server.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/html');
    const html = await response.text();
    expect(html).toContain('Perimeter GraphQL');
    expect(html.toLowerCase()).toContain('graphiql');
  });
});

describe('REST bad input: the stable error shape and status, never a 500', () => {
  it('a body that is not JSON → 400', async () => {
    const response = await client.api('POST', '/api/v1/api/workspaces', { as: owner, rawBody: '{"name": ', headers: { 'content-type': 'application/json' } });
    expect(response.status).toBe(400);
    expectErrorShape(response.body, 400, 'BAD_REQUEST');
    expect(response.body.message).toMatch(/JSON/);
  });

  it('a JSON field of the wrong type → 400 naming the field', async () => {
    const response = await client.api('POST', '/api/v1/api/workspaces', { as: owner, body: { name: 5 } });
    expect(response.status).toBe(400);
    expectErrorShape(response.body, 400, 'VALIDATION_FAILED');
    expect(response.body.message).toContain('name');
    expect(response.body.details).toEqual([{ field: 'name', message: expect.any(String) }]);
  });

  it('JSON numbers and booleans are taken as sent, never coerced from strings (query strings still are)', async () => {
    const token = await client.api('POST', '/api/v1/api/users/me/api-tokens', { as: owner, body: { name: 'ci', expiresInDays: '5' } });
    expect(token.status).toBe(400);
    expect(token.body.details).toEqual([{ field: 'expiresInDays', message: expect.any(String) }]);
    const workspace = await client.createWorkspace(owner);
    const archived = await client.api('PATCH', `/api/v1/api/workspaces/${workspace.id}/archived`, { as: owner, body: { isArchived: 'false' } });
    expect(archived.status).toBe(400);
    expect(archived.body.details).toEqual([{ field: 'isArchived', message: expect.any(String) }]);
    const settings = await client.api('PATCH', `/api/v1/api/workspaces/${workspace.id}`, { as: owner, body: { isAssetsDiscovery: 0 } });
    expect(settings.status).toBe(400);
    const listed = await client.api('GET', '/api/v1/api/workspaces?limit=5&isArchived=false', { as: owner });
    expect(listed.status).toBe(200);
    expect(listed.body.limit).toBe(5);
  });

  it('an unknown field → 400 naming it', async () => {
    const response = await client.api('POST', '/api/v1/api/workspaces', { as: owner, body: { name: 'ok', colour: 'red' } });
    expect(response.status).toBe(400);
    expectErrorShape(response.body, 400, 'VALIDATION_FAILED');
    expect(response.body.details).toEqual([{ field: 'colour', message: 'is not a known field' }]);
  });

  it('an oversized body → 413 (declared length and chunked alike)', async () => {
    const small = await startTestApp({ BODY_LIMIT_BYTES: '2048' });
    try {
      const smallClient = clientFor(small);
      const user = await smallClient.signUp('Small');
      const big = JSON.stringify({ name: 'big', description: 'x'.repeat(4096) });
      const declared = await smallClient.api('POST', '/api/v1/api/workspaces', { as: user, rawBody: big, headers: { 'content-type': 'application/json' } });
      expect(declared.status).toBe(413);
      expectErrorShape(declared.body, 413, 'PAYLOAD_TOO_LARGE');

      // Without content-length (chunked), the limit is enforced while reading.
      const encoder = new TextEncoder();
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(encoder.encode(big.slice(0, 2000)));
          controller.enqueue(encoder.encode(big.slice(2000)));
          controller.close();
        },
      });
      const chunked = await fetch(`${small.url}/api/v1/api/workspaces`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${user.token}` },
        body: stream,
        duplex: 'half',
      } as RequestInit);
      expect(chunked.status).toBe(413);
      expectErrorShape(await chunked.json(), 413, 'PAYLOAD_TOO_LARGE');

      // A body under the limit still works on the same app.
      const ok = await smallClient.api('POST', '/api/v1/api/workspaces', { as: user, body: { name: 'fits' } });
      expect(ok.status).toBe(201);
    } finally {
      await small.stop();
    }
  });

  it('a body that is not JSON by content type → 415', async () => {
    const response = await client.api('POST', '/api/v1/api/workspaces', { as: owner, rawBody: 'name=x', headers: { 'content-type': 'text/plain' } });
    expect(response.status).toBe(415);
    expectErrorShape(response.body, 415, 'UNSUPPORTED_MEDIA_TYPE');
    const noType = await fetch(`${server.url}/api/v1/api/workspaces`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.token}` },
      body: new Uint8Array([123, 125]),
    });
    expect(noType.status).toBe(415);
    expectErrorShape(await noType.json(), 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('a JSON content type with a charset is accepted', async () => {
    const response = await client.api('POST', '/api/v1/api/workspaces', {
      as: owner,
      rawBody: JSON.stringify({ name: 'charset' }),
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(response.status).toBe(201);
  });

  it('bad query parameters → 400 naming them', async () => {
    const huge = await client.api('GET', '/api/v1/api/workspaces?limit=1000000', { as: owner });
    expect(huge.status).toBe(400);
    expectErrorShape(huge.body, 400, 'VALIDATION_FAILED');
    expect(huge.body.details).toEqual([{ field: 'limit', message: expect.stringContaining('100') }]);

    for (const query of ['limit=abc', 'limit=-1', 'page=0', 'page=1.5', 'sortBy=password', 'isArchived=maybe', 'unknown=1', 'limit=1e400']) {
      const response = await client.api('GET', `/api/v1/api/workspaces?${query}`, { as: owner });
      expect(response.status, query).toBe(400);
      expectErrorShape(response.body, 400);
      expect(response.body.details?.[0]?.field, query).toBe(query.split('=')[0]);
    }
  });

  it('a malformed uuid in the path → 400', async () => {
    for (const path of ['/api/v1/api/workspaces/not-a-uuid', '/api/v1/api/workspaces/123', "/api/v1/api/workspaces/'%20OR%201=1"]) {
      const response = await client.api('GET', path, { as: owner });
      expect(response.status, path).toBe(400);
      expectErrorShape(response.body, 400, 'VALIDATION_FAILED');
      expect(response.body.details?.[0]?.field).toBe('id');
    }
    const patch = await client.api('PATCH', '/api/v1/api/workspaces/not-a-uuid', { as: owner, body: { name: 'x' } });
    expect(patch.status).toBe(400);
    expectErrorShape(patch.body, 400);
  });

  it('an unknown route, or a known path with a method it does not serve → 404', async () => {
    for (const path of ['/api/v1/api/nope', '/api/v1/nope', '/nope', '/api/v2/api/workspaces']) {
      const response = await client.api('GET', path, { as: owner });
      expect(response.status, path).toBe(404);
      expectErrorShape(response.body, 404, 'NOT_FOUND');
    }
    const wrongMethod = await client.api('PUT', '/api/v1/api/workspaces', { as: owner, body: { name: 'x' } });
    expect(wrongMethod.status).toBe(404);
    expectErrorShape(wrongMethod.body, 404, 'NOT_FOUND');
    expect(wrongMethod.body.message).toBe('No route PUT /api/v1/api/workspaces');
  });

  it('an empty body or a JSON body that is not an object → 400, not a 500', async () => {
    const empty = await client.api('POST', '/api/v1/api/workspaces', { as: owner, rawBody: '', headers: { 'content-type': 'application/json' } });
    expect(empty.status).toBe(400);
    expectErrorShape(empty.body, 400);
    for (const rawBody of ['[1,2]', '"name"', '42']) {
      const response = await client.api('POST', '/api/v1/api/workspaces', { as: owner, rawBody, headers: { 'content-type': 'application/json' } });
      expect(response.status, rawBody).toBe(400);
      expectErrorShape(response.body, 400);
    }
  });
});

describe('GraphQL limits and masking', () => {
  /** Counts the SQL statements sent from now on, Prisma's and the hand-written reads (the app was started with logQueries). */
  function countQueries() {
    let count = 0;
    server.db.onStatement(() => {
      count += 1;
    });
    return () => count;
  }

  const deep = '{ workspaces { edges { node { members { user { id } } } } } }'; // depth 6
  const deepViaFragment = 'query Deep { ...W } fragment W on Query { workspaces { edges { node { members { user { name } } } } } }';
  const aliases = `{ ${Array.from({ length: MAX_ALIASES + 1 }, (_, i) => `a${i}: viewer { id }`).join(' ')} }`;

  it('runs a query within the limits', async () => {
    await client.createWorkspace(owner);
    const withinDepth = await client.gql('{ workspaces { edges { node { owner { id } } } } }', { as: owner });
    expect(withinDepth.errors).toBeUndefined();
    expect(withinDepth.data?.workspaces.edges[0].node.owner.id).toBe(owner.id);
    const withinAliases = await client.gql(`{ ${Array.from({ length: MAX_ALIASES }, (_, i) => `a${i}: viewer { id }`).join(' ')} }`, { as: owner });
    expect(withinAliases.errors).toBeUndefined();
  });

  it('refuses a query deeper than GRAPHQL_MAX_DEPTH, or with too many aliases, at validation: before any resolver or SQL runs', async () => {
    for (const method of ['POST', 'GET'] as const) {
      for (const [query, limit] of [
        [deep, /depth limit of 5 exceeded, found 6/],
        [deepViaFragment, /depth limit of 5 exceeded/],
        [aliases, new RegExp(`Aliases limit of ${MAX_ALIASES} exceeded, found ${MAX_ALIASES + 1}`)],
      ] as const) {
        const queries = countQueries();
        const result = await client.gql(query, { as: owner, method });
        expect(result.data, query).toBeUndefined();
        expect(result.errors).toHaveLength(1);
        expect(result.errors![0]!.message).toMatch(limit);
        expect(result.errors![0]!.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
        expect(result.status).toBe(400);
        // Not even the viewer lookup for the context ran: the operation never reached execution.
        expect(queries()).toBe(0);
      }
    }
  });

  it("bad paging arguments and malformed ids are the client's errors (BAD_USER_INPUT), not masked internals", async () => {
    for (const query of [
      '{ workspaces(first: -1) { totalCount } }',
      '{ workspaces(first: 5, after: "garbage") { edges { node { id } } } }',
      '{ workspace(id: "not-a-global-id") { id } }',
    ]) {
      const result = await client.gql(query, { as: owner });
      expect(result.errors?.length, query).toBeGreaterThan(0);
      expect(result.errors![0]!.extensions?.code, query).toBe('BAD_USER_INPUT');
      expect(result.errors![0]!.message, query).not.toBe('Unexpected error.');
    }
  });

  it('masks unexpected errors (GraphQL and REST) and keeps expected ones', async () => {
    const deps = server.app.deps;
    const real = deps.prisma;
    const realDb = deps.db;
    const secret = 'connect ECONNREFUSED 10.1.2.3:5432 password=hunter2';
    const failing = () => Promise.reject(new Error(secret));
    deps.prisma = new Proxy(real, {
      get(target, property) {
        if (property === 'workspace') return { findMany: failing, count: failing, findFirst: failing, findUnique: failing };
        const value = Reflect.get(target, property, target) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    // The workspace page's own statement (page-sql.ts), read beside Prisma (db/prepared-read.ts).
    deps.db = { ...realDb, read: failing };
    try {
      const gql = await client.gql('{ workspaces { totalCount edges { node { id } } } }', { as: owner });
      expect(gql.errors?.length).toBeGreaterThan(0);
      for (const error of gql.errors!) {
        expect(error.message).toBe('Unexpected error.');
        expect(error.extensions?.code).toBe('INTERNAL');
      }
      expect(JSON.stringify(gql)).not.toContain('hunter2');
      expect(JSON.stringify(gql)).not.toContain('10.1.2.3');

      const rest = await client.api('GET', '/api/v1/api/workspaces', { as: owner });
      expect(rest.status).toBe(500);
      expect(rest.body).toEqual({ statusCode: 500, error: 'Internal Server Error', code: 'INTERNAL', message: 'Internal server error' });
    } finally {
      deps.prisma = real;
      deps.db = realDb;
    }

    // Expected failures keep their message and code.
    const unauthenticated = await client.gql('{ workspaces { edges { node { id } } } }');
    expect(unauthenticated.errors?.[0]).toMatchObject({ extensions: { code: 'UNAUTHENTICATED' } });
    expect(unauthenticated.errors?.[0]?.message).toMatch(/Authentication required/);
  });
});
