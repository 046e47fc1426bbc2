import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestApp, usingPostgres, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { projectRoot } from './support/process.js';
import { ownRedis, type OwnRedis } from './support/redis.js';
import { waitFor } from './support/wait.js';
import { wsClientFor, type WsClient } from './support/ws.js';
import { addTarget, globalId, SCAN_UPDATED, startScan, stepOf, waitForScan } from './support/scans.js';
import { listen } from './scanner/helpers.js';

/**
 * Redis carries live events between processes. Losing it may delay events; it must never stop a process,
 * lose a scan or need a restart. Each suite runs its own redis-server, kills it mid-scan and starts it again
 * on the same port.
 */

const SCAN_ENV = { SCAN_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128', QUEUE_SUPERVISE_SECONDS: '1' };

/** A loopback site whose `/` hangs until the gate opens: the scan sits inside its http step. */
async function gatedSite() {
  const state = { open: false, waiting: [] as (() => void)[], stalled: 0 };
  const site = await listen(
    http.createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const answer = () => res.writeHead(200, { 'content-type': 'text/html', server: 'nginx/1.18.0' }).end('<title>Gated</title>');
      if (path !== '/') return void res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      if (state.open) return answer();
      state.stalled += 1;
      state.waiting.push(answer);
    }),
  );
  return {
    port: site.port,
    get stalled() {
      return state.stalled;
    },
    open() {
      state.open = true;
      for (const answer of state.waiting.splice(0)) answer();
    },
    close() {
      state.open = false;
      state.stalled = 0;
    },
    stop: () => {
      state.open = true;
      for (const answer of state.waiting.splice(0)) answer();
      return site.close();
    },
  };
}

async function ready(url: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${url}/ready`);
  return { status: response.status, body: await response.json() };
}

/** Seconds in which ioredis (default retry strategy) has given up on commands at least a few times over. */
const OUTAGE_MS = 2500;

describe('a Redis outage with workers inside the API', { timeout: 120_000 }, () => {
  let redis: OwnRedis;
  let server: TestApp;
  let client: ReturnType<typeof clientFor>;
  let site: Awaited<ReturnType<typeof gatedSite>>;
  const sockets: WsClient[] = [];

  beforeAll(async () => {
    redis = await ownRedis();
    await redis.start();
    site = await gatedSite();
    server = await startTestApp({ REDIS_URL: redis.url, ...SCAN_ENV });
    client = clientFor(server);
  });

  afterAll(async () => {
    await Promise.all(sockets.map((ws) => ws.dispose()));
    await server?.stop();
    await site?.stop();
    await redis?.kill();
  });

  it('Redis stopped mid-scan: the API keeps serving, the scan completes, /ready says redis is down, and events flow again once Redis is back', async () => {
    const owner: TestUser = await client.signUp('Outage');
    const workspaceId = (await client.createWorkspace(owner)).id;
    const target = await addTarget(client, owner, workspaceId, '127.0.0.1');
    expect(await ready(server.url)).toEqual({ status: 200, body: expect.objectContaining({ status: 'ready', redis: 'up' }) });

    const first = await startScan(client, owner, workspaceId, target.id, { ports: String(site.port), timeoutMs: 30_000 });
    await waitForScan(client, owner, workspaceId, first.id, {
      until: (scan) => stepOf(scan, 'http').status === 'IN_PROGRESS' && site.stalled > 0,
      what: 'the http step to wait on the site',
    });
    const ws = wsClientFor(server, owner.token);
    sockets.push(ws);
    const watching = ws.subscribe(SCAN_UPDATED, { id: globalId('Scan', first.id) });
    await waitFor(() => watching.results.length > 0 || watching.error !== undefined, { timeoutMs: 20_000, what: 'the current state over the subscription' });

    await redis.kill();
    // Long enough for ioredis to give up on queued commands several times over (the old crash).
    await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
    site.open();

    // The scan does not depend on Redis: it completes while Redis is down, and the API answers throughout.
    const done = await waitForScan(client, owner, workspaceId, first.id, { what: 'the scan to complete without Redis' });
    expect(done).toMatchObject({ status: 'COMPLETED', error: null });
    // Still serving and ready (delayed events are no reason to take the API out of rotation), naming Redis as down.
    expect(await ready(server.url)).toEqual({ status: 200, body: expect.objectContaining({ status: 'ready', redis: 'down' }) });
    expect((await client.api('GET', `/api/v1/api/scans/${first.id}`, { as: owner, workspaceId })).status).toBe(200);
    expect(watching.errors()).toEqual([]);

    await redis.start();
    await waitFor(async () => (await ready(server.url)).body.redis === 'up', { timeoutMs: 20_000, intervalMs: 100, what: '/ready to report Redis up again' });

    // The subscriber that watched through the outage gets the events held while Redis was down.
    await waitFor(() => watching.completed || watching.error !== undefined, { timeoutMs: 20_000, what: 'the held updates to reach the subscriber' });
    expect(watching.errors()).toEqual([]);
    expect(watching.results.at(-1)!.data!.scanUpdated).toMatchObject({ status: 'COMPLETED' });

    // A new scan watched live: its updates cross Redis again.
    site.close();
    const second = await startScan(client, owner, workspaceId, target.id, { ports: String(site.port), timeoutMs: 30_000 });
    await waitForScan(client, owner, workspaceId, second.id, {
      until: (scan) => stepOf(scan, 'http').status === 'IN_PROGRESS' && site.stalled > 0,
      what: 'the second scan to wait on the site',
    });
    const live = ws.subscribe(SCAN_UPDATED, { id: globalId('Scan', second.id) });
    await waitFor(() => live.results.length > 0 || live.error !== undefined, { timeoutMs: 20_000, what: 'the second scan over the subscription' });
    site.open();
    await waitFor(() => live.completed || live.error !== undefined, { timeoutMs: 30_000, what: 'the second scan to stream through to COMPLETED' });
    expect(live.errors()).toEqual([]);
    const seen = live.results.map((r) => r.data!.scanUpdated);
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(seen.at(-1)).toMatchObject({ status: 'COMPLETED' });
  });
});

// ---------------------------------------------------------------------------------------------
// A standalone worker process (PostgreSQL only: the embedded database lives inside one process).

interface WorkerProcess {
  child: ChildProcess;
  output: () => string;
}

const describeWithPostgres = usingPostgres ? describe : describe.skip;
if (!usingPostgres) console.info('test/redis-outage.test.ts: the standalone worker suite needs PostgreSQL (TEST_DATABASE_URL); skipped.');

describeWithPostgres('a Redis outage with a standalone worker process', { timeout: 180_000 }, () => {
  let redis: OwnRedis;
  let server: TestApp;
  let client: ReturnType<typeof clientFor>;
  let site: Awaited<ReturnType<typeof gatedSite>>;
  let worker: WorkerProcess | undefined;
  const dataDir = mkdtempSync(join(tmpdir(), 'perimeter-worker-'));
  const sockets: WsClient[] = [];

  beforeAll(async () => {
    redis = await ownRedis();
    await redis.start();
    site = await gatedSite();
    server = await startTestApp({ WORKERS: 'false', REDIS_URL: redis.url, ...SCAN_ENV });
    client = clientFor(server);
  });

  afterAll(async () => {
    if (worker && worker.child.exitCode === null && worker.child.signalCode === null) {
      const exited = new Promise((resolve) => worker!.child.once('exit', resolve));
      worker.child.kill('SIGKILL');
      await exited;
    }
    await Promise.all(sockets.map((ws) => ws.dispose()));
    await server?.stop();
    await site?.stop();
    await redis?.kill();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('Redis stopped mid-scan: the worker process survives, finishes the scan, and its updates reach the API once Redis is back', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/worker.ts'], {
      cwd: projectRoot,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        NODE_ENV: 'test',
        LOG_LEVEL: 'info',
        DATA_DIR: dataDir,
        DATABASE_URL: server.databaseUrl!,
        REDIS_URL: redis.url,
        AUTH_SECRET: 'test-secret-that-is-long-enough-0123456789',
        ...SCAN_ENV,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    worker = { child, output: () => output };
    await waitFor(() => output.includes('worker ready') || child.exitCode !== null, { timeoutMs: 60_000, intervalMs: 50, what: 'the worker to start' });
    expect(child.exitCode, output).toBeNull();

    const owner: TestUser = await client.signUp('Worker outage');
    const workspaceId = (await client.createWorkspace(owner)).id;
    const target = await addTarget(client, owner, workspaceId, '127.0.0.1');
    const scan = await startScan(client, owner, workspaceId, target.id, { ports: String(site.port), timeoutMs: 30_000 });
    await waitForScan(client, owner, workspaceId, scan.id, {
      until: (s) => stepOf(s, 'http').status === 'IN_PROGRESS' && site.stalled > 0,
      what: 'the worker to wait on the site',
    });
    const ws = wsClientFor(server, owner.token);
    sockets.push(ws);
    const watching = ws.subscribe(SCAN_UPDATED, { id: globalId('Scan', scan.id) });
    await waitFor(() => watching.results.length > 0 || watching.error !== undefined, { timeoutMs: 20_000, what: 'the current state over the subscription' });

    await redis.kill();
    await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
    site.open();
    const done = await waitForScan(client, owner, workspaceId, scan.id, { what: 'the worker to complete the scan without Redis' });
    expect(done).toMatchObject({ status: 'COMPLETED', error: null });
    expect(child.exitCode, output).toBeNull();
    expect(child.signalCode).toBeNull();

    await redis.start();
    await waitFor(() => watching.completed || watching.error !== undefined, {
      timeoutMs: 30_000,
      what: "the worker's held updates to reach the API's subscriber",
    });
    expect(watching.errors()).toEqual([]);
    expect(watching.results.at(-1)!.data!.scanUpdated).toMatchObject({ status: 'COMPLETED' });
    expect(child.exitCode, output).toBeNull();
  });
});
