import { afterEach, describe, expect, it } from 'vitest';
import { request, Agent, type IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { createTestDatabase, redisUrl, startTestApp, type TestApp } from './support/app.js';
import { clientFor } from './support/client.js';
import { waitFor } from './support/wait.js';
import { wsClientFor } from './support/ws.js';
import { freePort, programStderr, spawnServer, type ServerProcess } from './support/process.js';
import { templatePath } from './support/template.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * A started test app, fully stopped (database disposed too) after the test. Tests time `app.stop()`,
 * the server's own shutdown, which is idempotent: the cleanup's second call only waits for the first.
 */
async function app(env: Record<string, string>): Promise<TestApp> {
  const server = await startTestApp(env);
  cleanups.push(() => server.stop());
  return server;
}

function port(server: TestApp): number {
  return Number(new URL(server.url).port);
}

/** Whether a new TCP connection to the app is refused. */
function refuses(server: TestApp): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port(server), '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

/** A websocket upgrade done by hand; the client then never answers anything (not even the close frame). */
async function unresponsiveWebSocket(server: TestApp): Promise<Socket> {
  const socket = connect(port(server), '127.0.0.1');
  cleanups.push(() => socket.destroy());
  socket.write(
    [
      'GET /graphql HTTP/1.1',
      `Host: 127.0.0.1:${port(server)}`,
      'Upgrade: websocket',
      'Connection: Upgrade',
      `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`,
      'Sec-WebSocket-Version: 13',
      'Sec-WebSocket-Protocol: graphql-transport-ws',
      '',
      '',
    ].join('\r\n'),
  );
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  await waitFor(() => received.includes('\r\n\r\n'), { what: 'the upgrade response' });
  expect(received).toMatch(/^HTTP\/1\.1 101 /);
  return socket;
}

describe('app.stop()', () => {
  it('closes open websockets with 1001 Going Away', async () => {
    const server = await app({ SHUTDOWN_TIMEOUT_MS: '5000' });
    const user = await clientFor(server).signUp('Sock');
    const ws = wsClientFor(server, user.token, { lazy: false });
    cleanups.push(() => ws.dispose());
    const viewer = ws.subscribe('{ viewer { id } }');
    await waitFor(() => viewer.completed, { what: 'a query over the socket' });

    const raw = new WebSocket(`${server.url.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
    await new Promise((resolve, reject) => raw.once('open', resolve).once('error', reject));
    const rawClosed = new Promise<{ code: number; reason: string }>((resolve) =>
      raw.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
    );

    const started = Date.now();
    await server.app.stop();
    expect(Date.now() - started).toBeLessThan(5000);
    expect(await rawClosed).toEqual({ code: 1001, reason: expect.any(String) });
    await waitFor(() => ws.closes.length > 0, { what: 'the graphql-ws client to see the close' });
    expect(ws.closes[0]!.code).toBe(1001);
  });

  it('lets an in-flight request finish, refuses new connections meanwhile, and resolves promptly after', async () => {
    const server = await app({ SHUTDOWN_TIMEOUT_MS: '10000' });
    const user = await clientFor(server).signUp('Slow');
    const agent = new Agent({ keepAlive: true });
    cleanups.push(() => agent.destroy());

    // An in-flight request: headers and half the body are sent, the rest only once stop() is under way.
    const body = JSON.stringify({ name: 'Finished during shutdown' });
    const arrived = new Promise<void>((resolve) => server.app.server.once('request', () => resolve()));
    const req = request(`${server.url}/api/v1/api/workspaces`, {
      method: 'POST',
      agent,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: `Bearer ${user.token}` },
    });
    const responded = new Promise<{ res: IncomingMessage; text: string }>((resolve, reject) => {
      req.once('error', reject);
      req.once('response', (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.once('end', () => resolve({ res, text }));
        res.once('error', reject);
      });
    });
    req.write(body.slice(0, 10));
    await arrived;

    let stoppedAt = 0;
    const stopping = server.app.stop().then(() => (stoppedAt = Date.now()));
    // The listener closes at once: new connections are refused while the request is still in flight.
    await waitFor(() => refuses(server), { what: 'new connections to be refused' });
    expect(stoppedAt).toBe(0);

    req.end(body.slice(10));
    const { res, text } = await responded;
    const respondedAt = Date.now();
    expect(res.statusCode).toBe(201);
    expect(JSON.parse(text)).toMatchObject({ name: 'Finished during shutdown' });
    // The client is told not to reuse the connection, and the server does not wait for it to go idle.
    expect(res.headers.connection).toBe('close');
    await stopping;
    expect(stoppedAt - respondedAt).toBeLessThan(2000);
    expect(await refuses(server)).toBe(true);
  });

  it('resolves within SHUTDOWN_TIMEOUT_MS when a request never completes and a websocket never answers', async () => {
    const timeout = 1500;
    const server = await app({ SHUTDOWN_TIMEOUT_MS: String(timeout) });
    const user = await clientFor(server).signUp('Stuck');

    // A request whose body never finishes arriving.
    const stuck = connect(port(server), '127.0.0.1');
    cleanups.push(() => stuck.destroy());
    stuck.on('error', () => undefined);
    const arrived = new Promise<void>((resolve) => server.app.server.once('request', () => resolve()));
    stuck.write(
      `POST /api/v1/api/workspaces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer ${user.token}\r\nContent-Length: 100\r\n\r\n{"name":`,
    );
    await arrived;
    const silent = await unresponsiveWebSocket(server);
    silent.on('error', () => undefined);

    const started = Date.now();
    await server.app.stop();
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(timeout - 50);
    // The bound is SHUTDOWN_TIMEOUT_MS for connections, plus the few milliseconds the idle queue and database take to close.
    expect(elapsed).toBeLessThan(timeout + 1000);
    await waitFor(() => stuck.destroyed || stuck.readableEnded, { what: 'the stuck request to be cut' });
    await waitFor(() => silent.destroyed || silent.readableEnded, { what: 'the silent websocket to be cut' });
  });
});

/** A POST on its own new connection (as from 30 different clients), its body fully sent; resolves with the status or the socket error. */
function postOnNewConnection(server: TestApp, path: string, token: string, body: unknown): Promise<number | string> {
  const text = JSON.stringify(body);
  return new Promise((resolve) => {
    const req = request(`${server.url}${path}`, {
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), authorization: `Bearer ${token}` },
    });
    req.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    req.once('response', (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
      res.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    });
    req.end(text);
  });
}

describe('draining on shutdown (SHUTDOWN_DRAIN_MS)', () => {
  it('30 POSTs sent just before shutdown all get answers: none is reset or refused', async () => {
    const server = await app({ SHUTDOWN_DRAIN_MS: '1500', SHUTDOWN_TIMEOUT_MS: '10000' });
    const user = await clientFor(server).signUp('Drain');
    const answers = Array.from({ length: 30 }, (_, i) =>
      postOnNewConnection(server, '/api/v1/api/workspaces', user.token, { name: `Sent before shutdown ${i}` }),
    );
    // What the SIGTERM handler does, while the requests are still on their way.
    const stopping = server.app.stop();
    expect(await Promise.all(answers)).toEqual(Array.from({ length: 30 }, () => 201));
    await stopping;
    expect(await refuses(server)).toBe(true);
  });

  it('/ready answers 503 during the drain while other requests still succeed; then the listener closes', async () => {
    const server = await app({ SHUTDOWN_DRAIN_MS: '2000', SHUTDOWN_TIMEOUT_MS: '10000' });
    const client = clientFor(server);
    const user = await client.signUp('Draining');
    expect((await client.api('GET', '/ready')).status).toBe(200);

    let stopped = false;
    const stopping = server.app.stop().then(() => (stopped = true));
    const ready = await client.api('GET', '/ready');
    expect(ready.status).toBe(503);
    expect(ready.body).toEqual({ status: 'shutting-down', database: server.db.kind });
    const created = await client.api('POST', '/api/v1/api/workspaces', { as: user, body: { name: 'Made while draining' } });
    expect(created.status).toBe(201);
    // Clients are told not to reuse the connection, so keep-alive clients move to another instance.
    expect(created.headers.get('connection')).toBe('close');
    expect((await client.api('GET', `/api/v1/api/workspaces/${created.body.id}`, { as: user })).status).toBe(200);
    expect(stopped).toBe(false);
    await stopping;
    expect(await refuses(server)).toBe(true);
  });
});

describe('/ready', () => {
  it('answers while the database is busy with other work (it does not queue behind it)', async () => {
    const server = await app({});
    const client = clientFor(server);
    expect((await client.api('GET', '/ready')).status).toBe(200);

    // Hold the database: every pooled connection (the embedded database's one, or PostgreSQL's), inside a transaction.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const pool = server.db.pool;
    const clients = await Promise.all(Array.from({ length: pool.options.max ?? 5 }, () => pool.connect()));
    for (const c of clients) await c.query('BEGIN');
    const held = gate.then(async () => {
      for (const c of clients) {
        await c.query('COMMIT');
        c.release();
      }
    });
    cleanups.push(() => release());
    // The last check is no longer fresh: this probe starts a new one, which waits behind the held database.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const probe = client.api('GET', '/ready');
    const outcome = await Promise.race([probe.then((r) => r.status), new Promise((resolve) => setTimeout(() => resolve('still waiting'), 3000))]);
    release();
    await held;
    expect(outcome).toBe(200);
    expect((await client.api('GET', '/ready')).status).toBe(200);
  });

  it('reports a database that stopped answering', async () => {
    const database = await createTestDatabase();
    const server = await startTestApp({}, { database });
    cleanups.push(() => server.stop());
    const client = clientFor(server);
    expect((await client.api('GET', '/ready')).status).toBe(200);
    await server.app.deps.queue.stop(1000);
    await database.db.close();
    const unavailable = await waitFor(
      async () => {
        const response = await client.api('GET', '/ready');
        return response.status === 503 ? response : undefined;
      },
      { what: '/ready to report the database', timeoutMs: 15_000, intervalMs: 200 },
    );
    // With Redis configured /ready names it too (it is up here: only the database went away).
    expect(unavailable.body).toEqual({ status: 'unavailable', database: server.db.kind, ...(redisUrl ? { redis: 'up' } : {}) });
  });
});

describe('the server process', () => {
  let child: ServerProcess | undefined;
  afterEach(() => child?.kill());

  it('logs JSON lines and exits 0 on SIGTERM within SHUTDOWN_TIMEOUT_MS', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'perimeter-process-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    // Start from the migrated PGlite template (the data directory's own dump) instead of a wasm initdb.
    mkdirSync(join(dataDir, 'pglite'));
    execFileSync('tar', ['xzf', templatePath(), '-C', join(dataDir, 'pglite')], { stdio: ['ignore', 'ignore', 'pipe'] });
    const listenPort = await freePort();
    const shutdownTimeout = 5000;
    child = spawnServer({
      PORT: String(listenPort),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      AUTH_SECRET: 'process-test-secret-that-is-long-enough-0123',
      LOG_LEVEL: 'info',
      SHUTDOWN_TIMEOUT_MS: String(shutdownTimeout),
    });
    const running = child;
    const lines = () =>
      running
        .stdout()
        .split('\n')
        .filter((line) => line.trim() !== '');

    await waitFor(() => lines().some((line) => line.includes('Perimeter is listening')) || running.child.exitCode !== null, {
      timeoutMs: 60_000,
      what: 'the server to listen',
    });
    expect(running.child.exitCode, programStderr(running.stderr())).toBeNull();
    const health = await fetch(`http://127.0.0.1:${listenPort}/health`);
    expect(health.status).toBe(200);
    const ready = await fetch(`http://127.0.0.1:${listenPort}/ready`);
    expect(await ready.json()).toEqual({ status: 'ready', database: 'pglite' });

    const started = Date.now();
    running.child.kill('SIGTERM');
    const exit = await running.exited;
    const elapsed = Date.now() - started;
    expect(exit).toEqual({ code: 0, signal: null });
    expect(elapsed).toBeLessThan(shutdownTimeout);

    const records = lines().map((line) => JSON.parse(line) as { level: number; time: number; msg: string; service: string; [key: string]: unknown });
    for (const record of records)
      expect(record).toMatchObject({ level: expect.any(Number), time: expect.any(Number), msg: expect.any(String), service: 'perimeter' });
    const messages = records.map((record) => record.msg);
    expect(messages).toContain('Perimeter is listening');
    expect(records.find((record) => record.msg === 'Perimeter is listening')).toMatchObject({ url: `http://127.0.0.1:${listenPort}`, database: 'pglite' });
    expect(records.find((record) => record.msg === 'request' && record.path === '/health')).toMatchObject({ status: 200, method: 'GET' });
    expect(records.find((record) => record.msg === 'shutting down')).toMatchObject({ signal: 'SIGTERM' });
    expect(programStderr(running.stderr())).toBe('');
    // The port is free again.
    await expect(fetch(`http://127.0.0.1:${listenPort}/health`)).rejects.toThrow();
  });
});
