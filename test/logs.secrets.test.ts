import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.js';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor } from './support/client.js';

/**
 * The product's own logger (createLogger, redaction and all) over real requests: a credential sent in a header,
 * a body or a query string never appears in a log line, and every request still leaves its `request` line.
 * The request line is written without the logger's redaction (app.ts: it only ever holds the fields below).
 */
const lines: string[] = [];
let server: TestApp;

beforeAll(async () => {
  const log = createLogger('debug', { write: (line: string) => void lines.push(line) });
  server = await startTestApp({ LOG_LEVEL: 'debug', WORKERS: 'false' }, { log });
});

afterAll(async () => {
  await server?.stop();
});

describe('log lines', () => {
  it('carry no credential, from a header, a body or a query string, and one request line per request', async () => {
    const client = clientFor(server);
    const user = await client.signUp('Logged Secrets');
    const querySecret = 'query-secret-4e1f0c9a';
    const wrongToken = 'wrong-token-7d2b9e31';
    const before = lines.length;
    const listed = await client.api('GET', `/api/v1/api/workspaces?limit=5&search=${querySecret}`, { as: user });
    expect(listed.status).toBe(200);
    // An unknown parameter is refused (400), and the refusal is logged: without the value either.
    const unknown = await client.api('GET', `/api/v1/api/workspaces?token=${querySecret}`, { as: user });
    expect(unknown.status).toBe(400);
    const refused = await fetch(`${server.url}/api/v1/api/workspaces`, { headers: { authorization: `Bearer ${wrongToken}` } });
    expect(refused.status).toBe(401);
    const graphql = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(graphql.status).toBe(200);

    const all = lines.join('\n');
    for (const secret of [user.token, 'correct horse battery', querySecret, wrongToken]) expect(all).not.toContain(secret);
    const requests = lines
      .slice(before)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((entry) => entry.msg === 'request');
    expect(requests.map(({ method, path, status }) => ({ method, path, status }))).toEqual([
      { method: 'GET', path: '/api/v1/api/workspaces', status: 200 },
      { method: 'GET', path: '/api/v1/api/workspaces', status: 400 },
      { method: 'GET', path: '/api/v1/api/workspaces', status: 401 },
      { method: 'POST', path: '/graphql', status: 200 },
    ]);
    for (const entry of requests) {
      expect(entry).toMatchObject({ level: 30, service: 'perimeter', reqId: expect.any(String), ms: expect.any(Number) });
      expect(Object.keys(entry).sort()).toEqual(['level', 'method', 'ms', 'msg', 'path', 'reqId', 'service', 'status', 'time']);
    }
  });
});
