import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import { redisUrl, startTestApp, usingPostgres, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { workerProcesses } from './support/process.js';
import { waitFor } from './support/wait.js';
import { wsClientFor, type WsClient } from './support/ws.js';
import { addTarget, globalId, SCAN_UPDATED, startScan, stepOf, waitForScan } from './support/scans.js';
import { listen } from './scanner/helpers.js';

/**
 * Crash recovery with standalone workers (`src/worker.ts` in child processes): the API instance runs no
 * workers; a worker is killed with SIGKILL in the middle of a step; another worker takes the step over once
 * its lease expires. Needs PostgreSQL (PGlite lives inside one process) and Redis (events cross processes).
 */

const AUTH_SECRET = 'test-secret-that-is-long-enough-0123456789';
const REDIS = redisUrl ?? 'redis://127.0.0.1:6379';
const SCAN_ENV = {
  SCAN_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128',
  SCAN_STEP_TIMEOUT_SECONDS: '4',
  SCAN_STEP_RETRIES: '3',
  QUEUE_SUPERVISE_SECONDS: '1',
};

const workers = workerProcesses();
const WORKER_ENV = (databaseUrl: string) => ({ DATABASE_URL: databaseUrl, REDIS_URL: REDIS, AUTH_SECRET, WORKER_CONCURRENCY: '2', ...SCAN_ENV });

const describeWithPostgres = usingPostgres ? describe : describe.skip;
if (!usingPostgres) {
  // Visible in the run's output, so a skipped suite is never mistaken for a passing one.
  console.info(
    'test/scans.worker.test.ts skipped: standalone workers need PostgreSQL; set TEST_DATABASE_URL (and Redis on TEST_REDIS_URL or 127.0.0.1:6379) to run it.',
  );
}

describeWithPostgres('standalone workers (PostgreSQL + Redis; skipped without TEST_DATABASE_URL)', { timeout: 180_000 }, () => {
  let server: TestApp;
  let client: ReturnType<typeof clientFor>;
  const sockets: WsClient[] = [];
  const stall = { enabled: true, stalled: 0, hits: [] as string[] };
  let site: { port: number; close(): Promise<void> };

  beforeAll(async () => {
    // `/` hangs while `stall.enabled` (the request is never answered), and answers at once afterwards.
    site = await listen(
      http.createServer((req, res) => {
        const path = new URL(req.url ?? '/', 'http://x').pathname;
        stall.hits.push(path);
        if (path === '/' && stall.enabled) {
          stall.stalled += 1;
          return;
        }
        if (path === '/') return res.writeHead(200, { 'content-type': 'text/html', server: 'nginx/1.18.0' }).end('<title>Recovered</title>');
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      }),
    );
    server = await startTestApp({ WORKERS: 'false', REDIS_URL: REDIS, ...SCAN_ENV });
    client = clientFor(server);
  });

  afterAll(async () => {
    await workers.stop();
    await Promise.all(sockets.map((ws) => ws.dispose()));
    await server?.stop();
    await site?.close();
  });

  it('a worker killed mid-step: another worker takes the step over and the scan completes once, watched live on the API', async () => {
    expect(server.databaseUrl).toEqual(expect.stringMatching(/^postgres/));
    const owner: TestUser = await client.signUp('Recovery');
    const workspaceId = (await client.createWorkspace(owner)).id;
    const target = await addTarget(client, owner, workspaceId, '127.0.0.1');

    const first = workers.spawn(WORKER_ENV(server.databaseUrl!));
    await workers.ready(first);
    const started = await startScan(client, owner, workspaceId, target.id, { ports: String(site.port), timeoutMs: 25_000 });

    // The first worker is inside the http step, its request hanging on the site.
    const stuck = await waitForScan(client, owner, workspaceId, started.id, {
      until: (scan) => stepOf(scan, 'http').status === 'IN_PROGRESS' && stall.stalled > 0,
      what: 'the http step to hang in the first worker',
    });
    expect(stepOf(stuck, 'http').attempts).toBe(1);

    // Watch from the API instance: it runs no workers, so every update crosses processes through Redis.
    const ws = wsClientFor(server, owner.token);
    sockets.push(ws);
    const updates = ws.subscribe(SCAN_UPDATED, { id: globalId('Scan', started.id) });
    await waitFor(() => updates.results.length > 0 || updates.error !== undefined, { timeoutMs: 20_000, what: 'the current state over the subscription' });
    expect(updates.results[0]!.data!.scanUpdated).toMatchObject({ status: 'IN_PROGRESS', stepsDone: 2 });

    first.child.kill('SIGKILL');
    expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });
    stall.enabled = false;
    const second = workers.spawn(WORKER_ENV(server.databaseUrl!));
    await workers.ready(second);

    const done = await waitForScan(client, owner, workspaceId, started.id, { timeoutMs: 90_000, what: 'the scan to complete on the second worker' });
    expect(done).toMatchObject({ status: 'COMPLETED', error: null, progress: { stepsDone: 5, stepsTotal: 5 } });
    const http = stepOf(done, 'http');
    expect(http.status).toBe('COMPLETED');
    expect(http.attempts).toBeGreaterThanOrEqual(2);

    // Nothing twice: one host, one service, one web app, each row once.
    const assets = await server.db.prisma.asset.findMany({ where: { workspaceId }, orderBy: { key: 'asc' } });
    expect(assets.map((a) => a.key)).toEqual(['host:127.0.0.1', `service:127.0.0.1:${site.port}/tcp`, `web:http://127.0.0.1:${site.port}`]);
    expect((assets[2]!.data as { title?: string }).title).toBe('Recovered');
    const findings = await server.db.prisma.finding.findMany({ where: { workspaceId }, select: { fingerprint: true, occurrences: true } });
    expect(findings.length).toBeGreaterThan(0);
    expect(new Set(findings.map((f) => f.fingerprint)).size).toBe(findings.length);
    expect(findings.every((f) => f.occurrences === 1)).toBe(true);

    // The subscriber on the API saw the other process's progress through to COMPLETED, and the stream ended.
    await waitFor(() => updates.completed || updates.error !== undefined, { timeoutMs: 20_000, what: 'the scanUpdated stream to complete' });
    expect(updates.errors()).toEqual([]);
    const seen = updates.results.map((r) => r.data!.scanUpdated);
    expect(seen.at(-1)).toMatchObject({ status: 'COMPLETED', stepsDone: 5, progress: 1 });
    expect(seen.length).toBeGreaterThanOrEqual(3);
    const progress = seen.map((s) => s.progress);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    expect(second.child.exitCode).toBeNull();
  });
});
