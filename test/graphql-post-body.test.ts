import { Readable } from 'node:stream';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { preReadGraphQLBody } from '../src/graphql/post-body.js';

const LIMIT = 2048;
let server: TestApp;
let user: TestUser;

beforeAll(async () => {
  server = await startTestApp({ BODY_LIMIT_BYTES: String(LIMIT) });
  user = await clientFor(server).signUp('Poster');
});
afterAll(() => server?.stop());

function post(body: BodyInit, headers: Record<string, string> = {}, init: Record<string, unknown> = {}) {
  return fetch(`${server.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${user.token}`, ...headers },
    body,
    ...init,
  } as RequestInit);
}

function chunked(text: string): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  return new ReadableStream({
    start(controller) {
      controller.enqueue(bytes.slice(0, 10));
      controller.enqueue(bytes.slice(10));
      controller.close();
    },
  });
}

const VIEWER = JSON.stringify({ query: 'query Who { viewer { id } }' });

describe('GraphQL POST bodies', () => {
  it('a declared JSON body within BODY_LIMIT_BYTES runs, and its variables are still inspected', async () => {
    const response = await post(VIEWER);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { viewer: { id: user.id } } });

    const nul = await post(JSON.stringify({ query: 'query($q: String) { workspaces(search: $q) { totalCount } }', variables: { q: 'a\u0000b' } }));
    const answer = await nul.json();
    expect(answer.errors?.[0]?.extensions?.code).toBe('VALIDATION_FAILED');
  });

  it('a chunked body (no Content-Length) still runs through yoga', async () => {
    const response = await post(chunked(VIEWER), {}, { duplex: 'half' });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { viewer: { id: user.id } } });
  });

  it('a body larger than BODY_LIMIT_BYTES still goes to yoga as before (importTemplates carries archives), declared or chunked', async () => {
    const big = JSON.stringify({ query: `query Big { viewer { id } } # ${'x'.repeat(LIMIT)}` });
    for (const response of [await post(big), await post(chunked(big), {}, { duplex: 'half' })]) {
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ data: { viewer: { id: user.id } } });
    }
  });

  it('bodies that are not a non-empty JSON object get the answers yoga gives them, never a 500', async () => {
    const invalid = await post('{"query": ');
    expect(invalid.status).toBe(400);
    expect((await invalid.json()).errors?.[0]?.message).toBe('POST body sent invalid JSON.');
    const answers: Record<string, unknown> = {};
    for (const body of ['[]', '{}', '"text"', 'null']) {
      const response = await post(body);
      const answer = (await response.json()) as { errors: Array<{ message: string; extensions: { code: string } }> };
      answers[body] = [response.status, answer.errors.map(({ message, extensions }) => `${extensions.code}: ${message}`)];
    }
    // As yoga answers them itself (checked against the app before graphql/post-body.ts existed).
    expect(answers).toEqual({
      '[]': [400, ['BAD_REQUEST: Batching is not supported.']],
      '{}': [200, ['BAD_REQUEST: Must provide query string.']],
      '"text"': [400, ['BAD_REQUEST: POST body is expected to be object but received string']],
      null: [400, ['BAD_REQUEST: POST body is expected to be object but received null']],
    });
    const form = await post('query=%7B__typename%7D', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(form.status).toBe(415);
  });
});

describe('preReadGraphQLBody', () => {
  function request(body: string, headers: Record<string, string>, method = 'POST'): IncomingMessage & { body?: unknown } {
    return Object.assign(Readable.from([Buffer.from(body)]), { method, headers }) as unknown as IncomingMessage & { body?: unknown };
  }
  const res = { destroy() {} } as unknown as ServerResponse;

  it('hands a declared JSON object over parsed, so yoga neither streams nor re-wraps it', async () => {
    const req = request(VIEWER, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(VIEWER)) });
    expect(await preReadGraphQLBody(req, res, LIMIT)).toBe(true);
    expect(req.body).toEqual({ query: 'query Who { viewer { id } }' });
  });

  it('passes other JSON on as its bytes, and leaves alone what it must not read', async () => {
    const array = request('[1]', { 'content-type': 'application/json', 'content-length': '3' });
    await preReadGraphQLBody(array, res, LIMIT);
    expect(Buffer.isBuffer(array.body) && array.body.toString()).toBe('[1]');
    const untouched = [
      request(VIEWER, { 'content-type': 'application/json' }), // chunked
      request(VIEWER, { 'content-type': 'application/json', 'content-length': String(LIMIT + 1) }),
      request(VIEWER, { 'content-type': 'application/json', 'content-length': '1, 2' }),
      request(VIEWER, { 'content-type': 'text/plain', 'content-length': String(Buffer.byteLength(VIEWER)) }),
      request('', { 'content-type': 'application/json', 'content-length': '0' }),
      request('', { 'content-type': 'application/json' }, 'GET'),
    ];
    for (const req of untouched) {
      expect(await preReadGraphQLBody(req, res, LIMIT)).toBe(true);
      expect(req.body).toBeUndefined();
      expect(req.readableEnded).toBe(false);
    }
  });
  it('answers false and closes the response when the client goes away while sending, with or without an error', async () => {
    for (const cause of [undefined, new Error('socket hang up')]) {
      const req = Object.assign(new Readable({ read() {} }), {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': '100' },
      }) as unknown as IncomingMessage & Readable & { body?: unknown };
      req.push(Buffer.from('{"query":'));
      let destroyed = false;
      const pending = preReadGraphQLBody(req, { destroy: () => (destroyed = true) } as unknown as ServerResponse, LIMIT);
      setImmediate(() => req.destroy(cause));
      expect(await pending).toBe(false);
      expect(destroyed).toBe(true);
      expect(req.body).toBeUndefined();
    }
  });
});
