import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import { encodeGlobalID } from '@pothos/plugin-relay';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { closedPort, listen } from './scanner/helpers.js';

/**
 * MCP server configurations (seed 2.5 / 4.6, plus PUT/DELETE/toggle/ping): validation, encrypted and masked
 * header values, the scans' scope policy at save and at connect, and a ping that really speaks MCP to a
 * server this test runs on loopback (the SDK's server, streamable HTTP and SSE).
 */

const BASE = '/api/v1/api/agents/mcp-configs';
const UPSTREAM_SECRET = 'upstream-secret-value-0123456789';
const LOOPBACK = { SCAN_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128' };

// ---------------------------------------------------------------------------------------------------------
// A real MCP server on loopback: two tools, a required API key, both transports, and a path that never answers.

interface Upstream {
  url: string;
  /** Headers of every request it received. */
  seen: http.IncomingHttpHeaders[];
  close(): Promise<void>;
}

function upstreamServer(): McpServer {
  const server = new McpServer({ name: 'upstream', version: '9.9.9' });
  server.registerTool('echo', { description: 'Says it back', inputSchema: { text: z.string() } }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
  server.registerTool('search', { description: 'Finds things', inputSchema: { q: z.string() } }, async () => ({ content: [{ type: 'text', text: '[]' }] }));
  return server;
}

async function startUpstream(): Promise<Upstream> {
  const seen: http.IncomingHttpHeaders[] = [];
  const sessions = new Map<string, SSEServerTransport>();
  const httpServer = http.createServer(async (req, res) => {
    seen.push(req.headers);
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/slow') return; // never answers
    if (req.headers['x-service-api-key'] !== UPSTREAM_SECRET) return void res.writeHead(401, { 'content-type': 'text/plain' }).end('bad key');
    if (url.pathname === '/mcp') {
      if (req.method !== 'POST') return void res.writeHead(405, { allow: 'POST' }).end();
      const server = upstreamServer();
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => void server.close());
      await server.connect(transport);
      return transport.handleRequest(req, res);
    }
    if (url.pathname === '/sse') {
      const transport = new SSEServerTransport('/messages', res);
      sessions.set(transport.sessionId, transport);
      res.on('close', () => sessions.delete(transport.sessionId));
      return upstreamServer().connect(transport);
    }
    if (url.pathname === '/messages') {
      const transport = sessions.get(url.searchParams.get('sessionId') ?? '');
      if (!transport) return void res.writeHead(404).end();
      return transport.handlePostMessage(req, res);
    }
    res.writeHead(404).end();
  });
  const started = await listen(httpServer);
  return { url: `http://127.0.0.1:${started.port}`, seen, close: started.close };
}

// ---------------------------------------------------------------------------------------------------------

let server: TestApp;
let strict: TestApp;
let client: ReturnType<typeof clientFor>;
let strictClient: ReturnType<typeof clientFor>;
let upstream: Upstream;
let owner: TestUser;
let member: TestUser;
let outsider: TestUser;
let workspaceId: string;

beforeAll(async () => {
  // `server` allows loopback (so the test's MCP server is in scope); `strict` runs the default policy.
  // One after the other: two apps booting at once on a loaded machine only race each other's startup work.
  server = await startTestApp(LOOPBACK);
  strict = await startTestApp();
  upstream = await startUpstream();
  client = clientFor(server);
  strictClient = clientFor(strict);
  owner = await client.signUp('Owner');
  member = await client.signUp('Member');
  outsider = await client.signUp('Outsider');
  workspaceId = (await client.createWorkspace(owner)).id;
  await client.addMember(owner, workspaceId, member);
  await client.createWorkspace(outsider);
});
afterAll(async () => {
  await Promise.all([server?.stop(), strict?.stop(), upstream?.close()]);
});

function put(name: string, body: Record<string, unknown>, as: TestUser = owner, wid = workspaceId) {
  return client.api('PUT', `${BASE}/${name}`, { as, workspaceId: wid, body });
}

const streamable = (extra: Record<string, unknown> = {}) => ({
  url: `${upstream.url}/mcp`,
  transport: 'streamable-http',
  headers: { 'X-Service-Api-Key': UPSTREAM_SECRET, 'X-Tenant': 'acme' },
  ...extra,
});

describe('the seed shape: GET /agents/mcp-configs', () => {
  it('lists the workspace configurations as {servers}, every header value masked', async () => {
    const fresh = await client.createWorkspace(owner);
    expect((await client.api('GET', BASE, { as: owner, workspaceId: fresh.id })).body).toEqual({ servers: [] });

    const created = await put('oasm', streamable({ allowed_tools: ['echo'], timeout: 10, sse_read_timeout: 60 }), owner, fresh.id);
    expect(created.status).toBe(200);
    const expected = {
      name: 'oasm',
      url: `${upstream.url}/mcp`,
      transport: 'streamable-http',
      headers: { 'x-service-api-key': '***', 'x-tenant': '***' },
      disabled: false,
      allowed_tools: ['echo'],
      timeout: 10,
      sse_read_timeout: 60,
    };
    expect(created.body).toEqual(expected);

    const listed = await client.api('GET', BASE, { as: owner, workspaceId: fresh.id });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({ servers: [expected] });
    expect(JSON.stringify(listed.body)).not.toContain(UPSTREAM_SECRET);
  });

  it('absent fields take their defaults (timeouts in seconds: 30 and 300)', async () => {
    const response = await put('defaults', { url: 'https://93.184.216.34/mcp', transport: 'sse' });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      name: 'defaults',
      url: 'https://93.184.216.34/mcp',
      transport: 'sse',
      headers: {},
      disabled: false,
      allowed_tools: [],
      timeout: 30,
      sse_read_timeout: 300,
    });
  });
});

describe('secret header values', () => {
  it('are encrypted in the row, all masked when read whatever their name, and never in clear anywhere', async () => {
    const headers = {
      Authorization: 'Bearer bearer-secret',
      'x-service-api-key': UPSTREAM_SECRET,
      cookie: 'sid=cookie-secret',
      'x-client-token': 'token-secret',
      'X-Region': 'eu-west',
    };
    const response = await put('secrets', { url: `${upstream.url}/mcp`, transport: 'streamable-http', headers });
    expect(response.body.headers).toEqual({
      authorization: '***',
      'x-service-api-key': '***',
      cookie: '***',
      'x-client-token': '***',
      'x-region': '***',
    });

    const row = await server.db.prisma.mcpServerConfig.findFirstOrThrow({ where: { workspaceId, name: 'secrets' } });
    const stored = row.headersEncrypted as Record<string, string>;
    expect(Object.keys(stored).sort()).toEqual(['authorization', 'cookie', 'x-client-token', 'x-region', 'x-service-api-key']);
    // Every value is sealed, the harmless ones too.
    for (const value of Object.values(stored)) expect(value).toMatch(/^v1\.[A-Za-z0-9_-]+$/);
    const rowText = JSON.stringify(row);
    for (const secret of ['bearer-secret', UPSTREAM_SECRET, 'cookie-secret', 'token-secret', 'eu-west']) expect(rowText).not.toContain(secret);
    expect(server.app.deps.secrets.decrypt(stored['x-service-api-key']!)).toBe(UPSTREAM_SECRET);

    const graphql = await client.gql(`query($id: ID!) { node(id: $id) { ... on Workspace { mcpServers { name headers } } } }`, {
      as: member,
      variables: { id: encodeGlobalID('Workspace', workspaceId) },
    });
    expect(JSON.stringify(graphql.data)).not.toContain('bearer-secret');
    expect(graphql.data?.node.mcpServers.find((s: { name: string }) => s.name === 'secrets').headers.authorization).toBe('***');
  });

  it('round-trip: a PUT of what GET returned keeps the stored secrets; the mask for an unknown header is a 400', async () => {
    await put('roundtrip', streamable());
    const before = await server.db.prisma.mcpServerConfig.findFirstOrThrow({ where: { workspaceId, name: 'roundtrip' } });
    const read = (await client.api('GET', BASE, { as: owner, workspaceId })).body.servers.find((s: { name: string }) => s.name === 'roundtrip');
    expect(read.headers['x-service-api-key']).toBe('***');

    const again = await put('roundtrip', { ...read, timeout: 5 });
    expect(again.status).toBe(200);
    expect(again.body.timeout).toBe(5);
    const after = await server.db.prisma.mcpServerConfig.findFirstOrThrow({ where: { workspaceId, name: 'roundtrip' } });
    const sealed = after.headersEncrypted as Record<string, string>;
    // The masked value kept the very same sealed value; the clear one was sealed anew.
    expect(sealed['x-service-api-key']).toBe((before.headersEncrypted as Record<string, string>)['x-service-api-key']);
    expect(server.app.deps.secrets.decrypt(sealed['x-tenant']!)).toBe('acme');
    // …and it still reaches the server with the real key.
    expect((await client.api('GET', `${BASE}/roundtrip/ping`, { as: owner, workspaceId })).body.ok).toBe(true);

    const unknownMask = await put('roundtrip', { ...read, headers: { ...read.headers, 'x-new-token': '***' } });
    expect(unknownMask.status).toBe(400);
    expect(unknownMask.body.details).toEqual([{ field: 'headers.x-new-token', message: expect.stringContaining('no value is stored') }]);

    // Replacing a secret with a new clear value works; leaving a header out removes it.
    await put('roundtrip', { ...read, headers: { 'x-service-api-key': 'a-new-secret' } });
    const replaced = await server.db.prisma.mcpServerConfig.findFirstOrThrow({ where: { workspaceId, name: 'roundtrip' } });
    const replacedHeaders = replaced.headersEncrypted as Record<string, string>;
    expect(Object.keys(replacedHeaders)).toEqual(['x-service-api-key']);
    expect(server.app.deps.secrets.decrypt(replacedHeaders['x-service-api-key']!)).toBe('a-new-secret');
  });
});

describe('validation', () => {
  const fieldsOf = (body: { details?: { field: string }[] }) => (body.details ?? []).map((d) => d.field).sort();

  it('refuses bad fields with 400 naming each of them', async () => {
    const bad = await put('valid-name', {
      url: 'ftp://files.example.test/mcp',
      transport: 'websocket',
      headers: { 'bad header': 'x', 'x-ok': 'line\r\nbreak', Host: 'evil' },
      allowed_tools: ['echo', ''],
      timeout: 0,
      sse_read_timeout: 3601,
    });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('VALIDATION_FAILED');
    expect(fieldsOf(bad.body)).toEqual([
      'allowed_tools.1',
      'headers.Host',
      'headers.bad header',
      'headers.x-ok',
      'sse_read_timeout',
      'timeout',
      'transport',
      'url',
    ]);

    const more = await put('valid-name', { url: 'http://user:pass@93.184.216.34/', transport: 'sse', timeout: 301, disabled: 'false', extra: 1 });
    expect(more.status).toBe(400);
    expect(fieldsOf(more.body)).toEqual(['disabled', 'extra', 'timeout', 'url']);

    // Numbers are JSON numbers: "30" is not coerced.
    const text = await put('valid-name', { url: 'https://93.184.216.34/', transport: 'sse', timeout: '30', sse_read_timeout: 1.5 });
    expect(fieldsOf(text.body)).toEqual(['sse_read_timeout', 'timeout']);

    const missing = await put('valid-name', {});
    expect(fieldsOf(missing.body)).toEqual(['transport', 'url']);

    const manyHeaders = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`x-h${i}`, 'v']));
    expect(fieldsOf((await put('valid-name', { url: 'https://93.184.216.34/', transport: 'sse', headers: manyHeaders })).body)).toEqual(['headers']);
    const twice = await put('valid-name', { url: 'https://93.184.216.34/', transport: 'sse', headers: { 'X-A': '1', 'x-a': '2' } });
    expect(twice.status).toBe(400);
    expect(twice.body.message).toMatch(/given twice/);
  });

  it('names: a pattern and a length, and unique per workspace regardless of case', async () => {
    for (const name of ['-leading', 'a'.repeat(65), 'sp%20ace']) {
      const response = await put(name, { url: 'https://93.184.216.34/', transport: 'sse' });
      expect(response.status).toBe(400);
      expect(fieldsOf(response.body)).toEqual(['name']);
    }
    expect((await put('Search_1.v2', { url: 'https://93.184.216.34/', transport: 'sse' })).status).toBe(200);
    const clash = await put('search_1.V2', { url: 'https://93.184.216.34/', transport: 'sse' });
    expect(clash.status).toBe(409);
    expect(clash.body.message).toContain('Search_1.v2');
    // The same name again replaces it: still one.
    expect((await put('Search_1.v2', { url: 'https://93.184.216.34/other', transport: 'streamable-http' })).body.url).toBe('https://93.184.216.34/other');
    expect(await server.db.prisma.mcpServerConfig.count({ where: { workspaceId, name: { in: ['Search_1.v2', 'search_1.V2'] } } })).toBe(1);
    // A name in the body is ignored: the path names the configuration.
    expect((await put('path-wins', { name: 'body-name', url: 'https://93.184.216.34/', transport: 'sse' })).body.name).toBe('path-wins');
  });
});

describe('toggle and delete', () => {
  it('PATCH …/toggle sets disabled; DELETE removes; unknown names are 404', async () => {
    await put('toggled', { url: 'https://93.184.216.34/', transport: 'sse' });
    const off = await client.api('PATCH', `${BASE}/toggled/toggle`, { as: owner, workspaceId, body: { disabled: true } });
    expect(off.status).toBe(200);
    expect(off.body).toMatchObject({ name: 'toggled', disabled: true });
    const on = await client.api('PATCH', `${BASE}/toggled/toggle`, { as: owner, workspaceId, body: { disabled: false } });
    expect(on.body.disabled).toBe(false);
    expect((await client.api('PATCH', `${BASE}/toggled/toggle`, { as: owner, workspaceId, body: { disabled: 'true' } })).status).toBe(400);
    expect((await client.api('PATCH', `${BASE}/toggled/toggle`, { as: owner, workspaceId, body: {} })).status).toBe(400);
    expect((await client.api('PATCH', `${BASE}/nope/toggle`, { as: owner, workspaceId, body: { disabled: true } })).status).toBe(404);

    const deleted = await client.api('DELETE', `${BASE}/toggled`, { as: owner, workspaceId });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ name: 'toggled' });
    const names = (await client.api('GET', BASE, { as: owner, workspaceId })).body.servers.map((s: { name: string }) => s.name);
    expect(names).not.toContain('toggled');
    expect((await client.api('DELETE', `${BASE}/toggled`, { as: owner, workspaceId })).status).toBe(404);
    expect((await client.api('GET', `${BASE}/toggled/ping`, { as: owner, workspaceId })).status).toBe(404);
  });
});

describe('who may read and manage', () => {
  it('members read and ping; only owners change; other workspaces 404; anonymous 401; no workspace 400', async () => {
    await put('shared', streamable());
    const read = await client.api('GET', BASE, { as: member, workspaceId });
    expect(read.status).toBe(200);
    expect(read.body.servers.map((s: { name: string }) => s.name)).toContain('shared');
    expect((await client.api('GET', `${BASE}/shared/ping`, { as: member, workspaceId })).body.ok).toBe(true);

    for (const response of [
      await put('shared', streamable(), member),
      await put('members-own', streamable(), member),
      await client.api('PATCH', `${BASE}/shared/toggle`, { as: member, workspaceId, body: { disabled: true } }),
      await client.api('DELETE', `${BASE}/shared`, { as: member, workspaceId }),
    ]) {
      expect(response.status).toBe(403);
    }
    expect((await client.api('GET', BASE, { as: owner, workspaceId })).body.servers.find((s: { name: string }) => s.name === 'shared').disabled).toBe(false);

    expect((await client.api('GET', BASE, { as: outsider, workspaceId })).status).toBe(404);
    expect((await put('shared', streamable(), outsider)).status).toBe(404);
    expect((await client.api('GET', `${BASE}/shared/ping`, { as: outsider, workspaceId })).status).toBe(404);
    expect((await client.api('GET', BASE, { workspaceId })).status).toBe(401);
    expect((await client.api('GET', BASE, { as: owner })).body.code).toBe('WORKSPACE_REQUIRED');
  });
});

describe("scope: the scans' policy at save and at connect", () => {
  let strictOwner: TestUser;
  let strictWorkspace: string;
  beforeAll(async () => {
    strictOwner = await strictClient.signUp('StrictOwner');
    strictWorkspace = (await strictClient.createWorkspace(strictOwner)).id;
  });
  const strictPut = (name: string, url: string) =>
    strictClient.api('PUT', `${BASE}/${name}`, { as: strictOwner, workspaceId: strictWorkspace, body: { url, transport: 'streamable-http' } });

  it('without SCAN_ALLOWED_NETWORKS, loopback, private, link-local and metadata addresses are refused (names resolved first)', async () => {
    for (const url of [
      `${upstream.url}/mcp`,
      'http://localhost:8080/mcp',
      'http://10.0.0.5/mcp',
      'http://192.168.1.10/mcp',
      'http://169.254.169.254/latest',
      'http://[::1]:9000/mcp',
    ]) {
      const response = await strictPut('private', url);
      expect(response.status, url).toBe(400);
      expect(response.body.details).toEqual([{ field: 'url', message: expect.stringContaining('SCAN_ALLOWED_NETWORKS') }]);
    }
    expect((await strictPut('public', 'https://93.184.216.34/mcp')).status).toBe(200);
  });

  it('with it, loopback is accepted', async () => {
    expect((await put('loopback', { url: `${upstream.url}/mcp`, transport: 'streamable-http' })).status).toBe(200);
    expect((await put('localhost-name', { url: `http://localhost:${new URL(upstream.url).port}/mcp`, transport: 'streamable-http' })).status).toBe(200);
  });

  it('a stored URL that became out of scope is refused when connecting, without dialling', async () => {
    // As if DNS had changed since the save: the row now points at the loopback server.
    await strictClient.api('PUT', `${BASE}/rebound`, {
      as: strictOwner,
      workspaceId: strictWorkspace,
      body: { ...streamable(), url: 'https://93.184.216.34/mcp' },
    });
    await strict.db.prisma.mcpServerConfig.updateMany({ where: { workspaceId: strictWorkspace, name: 'rebound' }, data: { url: `${upstream.url}/mcp` } });
    const connectionsBefore = upstream.seen.length;
    const ping = await strictClient.api('GET', `${BASE}/rebound/ping`, { as: strictOwner, workspaceId: strictWorkspace });
    expect(ping.status).toBe(200);
    expect(ping.body).toMatchObject({ ok: false, error: expect.stringContaining('SCAN_ALLOWED_NETWORKS') });
    expect(upstream.seen.length).toBe(connectionsBefore);
  });
});

describe('ping: a real MCP connection', () => {
  it('over streamable HTTP: connects with the stored headers and lists the tools', async () => {
    await put('live', streamable({ allowed_tools: ['echo'] }));
    upstream.seen.length = 0;
    const ping = await client.api('GET', `${BASE}/live/ping`, { as: owner, workspaceId });
    expect(ping.status).toBe(200);
    expect(ping.body).toEqual({
      ok: true,
      latencyMs: expect.any(Number),
      server: { name: 'upstream', version: '9.9.9' },
      tools: [
        { name: 'echo', description: 'Says it back', allowed: true },
        { name: 'search', description: 'Finds things', allowed: false },
      ],
    });
    // The decrypted values went to the server (and only there).
    expect(upstream.seen.length).toBeGreaterThan(0);
    expect(upstream.seen.every((headers) => headers['x-service-api-key'] === UPSTREAM_SECRET && headers['x-tenant'] === 'acme')).toBe(true);
  });

  it('over SSE', async () => {
    await put('live-sse', streamable({ url: `${upstream.url}/sse`, transport: 'sse' }));
    const ping = await client.api('GET', `${BASE}/live-sse/ping`, { as: member, workspaceId });
    expect(ping.status).toBe(200);
    expect(ping.body).toMatchObject({ ok: true, server: { name: 'upstream' } });
    expect(ping.body.tools.map((tool: { name: string; allowed: boolean }) => [tool.name, tool.allowed])).toEqual([
      ['echo', true],
      ['search', true],
    ]);
  });

  it('failures are {ok: false, error}, never a 500: closed port, wrong key, not answering within the timeout', async () => {
    const port = await closedPort();
    await put('closed', { url: `http://127.0.0.1:${port}/mcp`, transport: 'streamable-http' });
    const closed = await client.api('GET', `${BASE}/closed/ping`, { as: owner, workspaceId });
    expect(closed.status).toBe(200);
    expect(closed.body).toEqual({ ok: false, latencyMs: expect.any(Number), error: expect.stringMatching(/ECONNREFUSED|fetch failed|connect/i) });

    await put('closed-sse', { url: `http://127.0.0.1:${port}/sse`, transport: 'sse' });
    expect((await client.api('GET', `${BASE}/closed-sse/ping`, { as: owner, workspaceId })).body.ok).toBe(false);

    await put('wrong-key', streamable({ headers: { 'x-service-api-key': 'not-the-key' } }));
    const wrong = await client.api('GET', `${BASE}/wrong-key/ping`, { as: owner, workspaceId });
    expect(wrong.body).toMatchObject({ ok: false, error: expect.stringContaining('401') });
    expect(wrong.body.error).not.toContain('not-the-key');

    await put('slow', { url: `${upstream.url}/slow`, transport: 'streamable-http', timeout: 1 });
    const started = Date.now();
    const slow = await client.api('GET', `${BASE}/slow/ping`, { as: owner, workspaceId });
    expect(slow.status).toBe(200);
    expect(slow.body).toMatchObject({ ok: false, error: expect.any(String) });
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe('GraphQL', () => {
  it('upserts, reads through Workspace.mcpServers, toggles and deletes', async () => {
    const wid = encodeGlobalID('Workspace', workspaceId);
    const upsert = await client.gql(
      `mutation($wid: ID!, $input: McpServerConfigInput!) { upsertMcpServerConfig(workspaceId: $wid, name: "gql", input: $input) {
        __typename ... on MutationUpsertMcpServerConfigSuccess { data { name url transport headers disabled allowedTools timeout sseReadTimeout } } } }`,
      {
        as: owner,
        variables: {
          wid,
          input: { url: `${upstream.url}/mcp`, transport: 'streamable-http', headers: { 'x-api-key': 'gql-secret' }, allowedTools: ['echo'], timeout: 12 },
        },
      },
    );
    expect(upsert.data?.upsertMcpServerConfig.data).toEqual({
      name: 'gql',
      url: `${upstream.url}/mcp`,
      transport: 'streamable-http',
      headers: { 'x-api-key': '***' },
      disabled: false,
      allowedTools: ['echo'],
      timeout: 12,
      sseReadTimeout: 300,
    });

    const toggled = await client.gql(
      `mutation($wid: ID!) { toggleMcpServerConfig(workspaceId: $wid, name: "gql", disabled: true) { __typename ... on MutationToggleMcpServerConfigSuccess { data { disabled } } } }`,
      { as: owner, variables: { wid } },
    );
    expect(toggled.data?.toggleMcpServerConfig.data.disabled).toBe(true);

    const forbidden = await client.gql(`mutation($wid: ID!) { deleteMcpServerConfig(workspaceId: $wid, name: "gql") { __typename ... on Error { code } } }`, {
      as: member,
      variables: { wid },
    });
    expect(forbidden.data?.deleteMcpServerConfig).toEqual({ __typename: 'ForbiddenError', code: 'FORBIDDEN' });

    const invalid = await client.gql(
      `mutation($wid: ID!, $input: McpServerConfigInput!) { upsertMcpServerConfig(workspaceId: $wid, name: "gql", input: $input) { __typename ... on ValidationError { details { field } } } }`,
      { as: owner, variables: { wid, input: { url: 'gopher://x', transport: 'sse', timeout: 0, sseReadTimeout: 0, allowedTools: [''] } } },
    );
    expect(invalid.data?.upsertMcpServerConfig.__typename).toBe('ValidationError');
    expect(invalid.data?.upsertMcpServerConfig.details.map((d: { field: string }) => d.field).sort()).toEqual([
      'allowedTools.0',
      'sseReadTimeout',
      'timeout',
      'url',
    ]);

    const deleted = await client.gql(
      `mutation($wid: ID!) { deleteMcpServerConfig(workspaceId: $wid, name: "gql") { __typename ... on MutationDeleteMcpServerConfigSuccess { data } } }`,
      {
        as: owner,
        variables: { wid },
      },
    );
    expect(deleted.data?.deleteMcpServerConfig.data).toBe('gql');
    const listed = await client.gql(`query($id: ID!) { node(id: $id) { ... on Workspace { mcpServers { name } } } }`, { as: member, variables: { id: wid } });
    expect(listed.data?.node.mcpServers.map((s: { name: string }) => s.name)).not.toContain('gql');
  });
});
