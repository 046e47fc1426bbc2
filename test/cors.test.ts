import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';

const PUBLIC = 'https://asm.example.test';
const CONSOLE = 'https://console.example.test';
const EVIL = 'https://evil.example.test';

let server: TestApp;
let client: ReturnType<typeof clientFor>;
let user: TestUser;
/** The session cookie a browser would hold after signing in. */
let cookie: string;

beforeAll(async () => {
  server = await startTestApp({ PUBLIC_URL: PUBLIC, CORS_ORIGINS: `${CONSOLE},http://localhost:5173` });
  client = clientFor(server);
  const email = `cors.${Date.now()}@example.test`;
  const signUp = await client.api('POST', '/api/v1/api/auth/sign-up/email', { body: { name: 'Browser user', email, password: 'correct horse battery' } });
  expect(signUp.status).toBe(200);
  user = { ...signUp.body.user, token: signUp.body.token };
  cookie = signUp.headers
    .getSetCookie()
    .map((line) => line.split(';')[0])
    .join('; ');
  expect(cookie).toMatch(/session_token=/);
});
afterAll(async () => {
  await server?.stop();
});

async function workspaceNames(): Promise<string[]> {
  const listed = await client.api('GET', '/api/v1/api/workspaces?limit=100', { as: user });
  return listed.body.data.map((item: { name: string }) => item.name);
}

function preflight(path: string, origin: string, method = 'POST') {
  return fetch(`${server.url}${path}`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization, content-type, x-workspace-id' },
  });
}

describe('CORS: PUBLIC_URL and CORS_ORIGINS may make credentialed requests, nobody else', () => {
  it('answers a REST preflight from an allowed origin with 204, the methods and our request headers', async () => {
    for (const origin of [PUBLIC, CONSOLE, 'http://localhost:5173']) {
      const response = await preflight('/api/v1/api/workspaces', origin);
      expect(response.status, origin).toBe(204);
      expect(response.headers.get('access-control-allow-origin')).toBe(origin);
      expect(response.headers.get('access-control-allow-credentials')).toBe('true');
      expect(response.headers.get('access-control-allow-methods')).toContain('PATCH');
      const allowed = response.headers.get('access-control-allow-headers') ?? '';
      for (const header of ['authorization', 'content-type', 'x-workspace-id', 'x-tool-api-key', 'x-service-api-key']) expect(allowed).toContain(header);
      expect(response.headers.get('vary')).toContain('Origin');
    }
  });

  it('gives a disallowed origin no CORS headers, on preflights and requests alike', async () => {
    const response = await preflight('/api/v1/api/workspaces', EVIL);
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    expect(response.headers.get('access-control-allow-methods')).toBeNull();

    const read = await client.api('GET', '/api/v1/api/workspaces', { as: user, headers: { origin: EVIL } });
    expect(read.status).toBe(200);
    expect(read.headers.get('access-control-allow-origin')).toBeNull();
    expect(read.headers.get('access-control-allow-credentials')).toBeNull();
    const gql = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { origin: EVIL, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(gql.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('lets an allowed origin read REST and GraphQL answers (the docs page\'s "Try it out")', async () => {
    const read = await client.api('GET', '/api/v1/api/workspaces', { as: user, headers: { origin: CONSOLE } });
    expect(read.status).toBe(200);
    expect(read.headers.get('access-control-allow-origin')).toBe(CONSOLE);
    expect(read.headers.get('access-control-allow-credentials')).toBe('true');

    const gqlPreflight = await preflight('/graphql', PUBLIC);
    expect(gqlPreflight.status).toBe(204);
    expect(gqlPreflight.headers.get('access-control-allow-origin')).toBe(PUBLIC);
    const gql = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { origin: PUBLIC, cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ viewer { id } }' }),
    });
    expect(gql.headers.get('access-control-allow-origin')).toBe(PUBLIC);
    expect(await gql.json()).toEqual({ data: { viewer: { id: user.id } } });
  });

  it('leaves requests without an Origin (curl, servers) as they were: no CORS headers, served', async () => {
    const read = await client.api('GET', '/api/v1/api/workspaces', { as: user });
    expect(read.status).toBe(200);
    expect(read.headers.get('access-control-allow-origin')).toBeNull();
    const created = await client.api('POST', '/api/v1/api/workspaces', { as: user, body: { name: 'From curl' } });
    expect(created.status).toBe(201);
  });

  it('refuses a cookie-carrying write from a disallowed origin (403) whatever its body, and runs nothing', async () => {
    const attempts: RequestInit[] = [
      { method: 'POST', headers: { origin: EVIL, cookie, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'CSRF json' }) },
      // fetch(url, { method: 'POST', mode: 'no-cors', credentials: 'include' }): no body, no content type, no preflight.
      { method: 'POST', headers: { origin: EVIL, cookie } },
    ];
    for (const init of attempts) {
      const response = await fetch(`${server.url}/api/v1/api/workspaces`, init);
      expect(response.status).toBe(403);
      expect(await response.json()).toMatchObject({ statusCode: 403, error: 'Forbidden', code: 'FORBIDDEN', message: expect.stringContaining(EVIL) });
    }
    const gql = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { origin: EVIL, cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ query: 'mutation { createWorkspace(input: { name: "CSRF form" }) { __typename } }' }).toString(),
    });
    expect(gql.status).toBe(403);
    expect(await workspaceNames()).not.toEqual(expect.arrayContaining(['CSRF json', 'CSRF form']));
    // The same write from an allowed origin goes through.
    const allowed = await fetch(`${server.url}/api/v1/api/workspaces`, {
      method: 'POST',
      headers: { origin: CONSOLE, cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'From the console' }),
    });
    expect(allowed.status).toBe(201);
  });
});

describe('GraphQL runs operations only from JSON POSTs and GET queries', () => {
  const mutation = (name: string) => `mutation { createWorkspace(input: { name: "${name}" }) { __typename } }`;

  it('refuses form-encoded, multipart and text/plain POSTs with 415 before running them', async () => {
    const form = new FormData();
    form.set('operations', JSON.stringify({ query: mutation('Via multipart') }));
    const bodies: [string, RequestInit][] = [
      [
        'form',
        { headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ query: mutation('Via form') }).toString() },
      ],
      ['multipart', { headers: { cookie }, body: form }],
      ['text', { headers: { cookie, 'content-type': 'text/plain' }, body: JSON.stringify({ query: mutation('Via text') }) }],
      ['graphql', { headers: { cookie, 'content-type': 'application/graphql' }, body: mutation('Via graphql') }],
    ];
    for (const [label, init] of bodies) {
      const response = await fetch(`${server.url}/graphql`, { method: 'POST', ...init });
      expect(response.status, label).toBe(415);
      const body = (await response.json()) as { errors: { message: string; extensions: { code: string } }[] };
      expect(body.errors[0], label).toMatchObject({ message: expect.stringContaining('application/json'), extensions: { code: 'UNSUPPORTED_MEDIA_TYPE' } });
    }
    expect(await workspaceNames()).not.toEqual(expect.arrayContaining(['Via form', 'Via multipart', 'Via text', 'Via graphql']));
  });

  it('accepts application/json with a charset and a graphql-response accept header', async () => {
    const response = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json; charset=utf-8', accept: 'application/graphql-response+json' },
      body: JSON.stringify({ query: '{ viewer { id } }' }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { viewer: { id: user.id } } });
  });

  it('runs queries over GET but refuses mutations over GET (405), without running them', async () => {
    const query = await client.gql('{ viewer { id } }', { as: user, method: 'GET' });
    expect(query.data).toEqual({ viewer: { id: user.id } });
    const response = await fetch(`${server.url}/graphql?${new URLSearchParams({ query: mutation('Via GET') })}`, {
      headers: { cookie, accept: 'application/json' },
    });
    expect(response.status).toBe(405);
    expect(await workspaceNames()).not.toContain('Via GET');
  });
});

describe('websocket upgrades check Origin', () => {
  function upgrade(origin?: string): Promise<{ opened: boolean; status?: number }> {
    return new Promise((resolve) => {
      const socket = new WebSocket(`${server.url.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws', origin ? { origin } : {});
      socket.once('open', () => {
        socket.close();
        resolve({ opened: true });
      });
      socket.once('unexpected-response', (_req, res) => {
        resolve({ opened: false, status: res.statusCode });
        socket.terminate();
      });
      socket.once('error', () => resolve({ opened: false }));
    });
  }

  it('refuses a disallowed Origin with 403 and accepts allowed origins and clients without one', async () => {
    expect(await upgrade(EVIL)).toEqual({ opened: false, status: 403 });
    expect(await upgrade(PUBLIC)).toEqual({ opened: true });
    expect(await upgrade(CONSOLE)).toEqual({ opened: true });
    expect(await upgrade(undefined)).toEqual({ opened: true });
  });
});
