// npm run bench:scan-workers (also the last part of npm run bench:scan): do scans scale with worker processes,
// and what does the job pipeline add to each step?
//
// One run, loopback only, on a fresh database of the local PostgreSQL server (the queue lives there):
//  - BENCH_SCAN_TARGETS (default 200) loopback hosts, 127.0.0.2 and up, each an HTTP server on the same port that
//    answers after BENCH_SCAN_DELAY_MS (default 50 ms): the figure measures the pipeline's concurrency, not how fast
//    this machine's cores parse HTTP;
//  - the app as production runs it (dist/src/main.js, `npm start`'s bundle) with WORKERS=false, so only the
//    `npm run worker` processes (dist/src/worker.js, default WORKER_CONCURRENCY) run steps;
//  - part 1, per-step overhead: with one worker and nothing else queued, BENCH_STEP_SCANS (default 10) one-host scans
//    in turn (steps dns → ports → http, the http step probing HTTP and TLS as the product does). Each scan's
//    createdAt → finishedAt against the same three steps' own work, timed here by calling the engine (runStep,
//    scanPorts) on the same host: the difference divided by the steps is what the queue, the step's reads and its
//    transaction add. Goal ≤ 100 ms per step.
//  - part 2, scaling: for 1, 2 and 4 workers (BENCH_SCAN_WORKERS), all targets scanned at once (200 REST POSTs
//    at 10 in flight); hosts per minute from the first scan's createdAt to the last one's finishedAt. Goal: 2
//    workers ≥ 1.7× one worker.
// Every scan must end COMPLETED with one web asset found; anything else is printed and the exit code is 1.
// The database, processes and servers are removed at the end, also on error or Ctrl-C.
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { createScopeGuard, runStep, scanPorts } from '../../src/scanner/index.js';
import { createDatabase, onCleanup, positiveInt, runMain } from './api-lib.js';
import { freePort, startNode, waitForReady, type Child } from './lib.js';
import { withClient } from './seed.js';
import { startFlags } from '../start-flags.js';
import { fmt, median, sleep, table } from './scan-lib.js';

const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');
const ADMIN_URL = process.env.BENCH_DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/postgres';
const TARGETS = positiveInt('BENCH_SCAN_TARGETS', 200);
const DELAY_MS = positiveInt('BENCH_SCAN_DELAY_MS', 50);
const STEP_SCANS = positiveInt('BENCH_STEP_SCANS', 10);
const WORKER_COUNTS = (process.env.BENCH_SCAN_WORKERS || '1,2,4').split(',').map((value) => {
  const count = Number(value.trim());
  if (!Number.isInteger(count) || count < 1 || count > 8) throw new Error(`BENCH_SCAN_WORKERS: ${value} is not a worker count from 1 to 8`);
  return count;
});
const ROUND_LIMIT_MS = 600_000;
const STEPS = 3;
const GOAL_SCALING = 1.7;
const GOAL_OVERHEAD_MS = 100;

const out = (line = '') => process.stdout.write(`${line}\n`);
const progress = (line: string) => process.stderr.write(`  … ${line}\n`);

// ---------------------------------------------------------------- the targets

function address(index: number): string {
  return `127.0.${Math.floor((index + 2) / 256)}.${(index + 2) % 256}`;
}

/** One slow HTTP server per loopback address, all on one port (a port busy on any address: try another). */
async function startTargets(count: number): Promise<{ port: number; servers: http.Server[] }> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort();
    const servers: http.Server[] = [];
    try {
      for (let i = 0; i < count; i++) {
        const server = http.createServer((request, response) => {
          setTimeout(() => {
            response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', server: 'bench-target' });
            response.end(`<html><head><title>Target ${i}</title></head><body>slow target ${i}</body></html>`);
          }, DELAY_MS);
          request.resume();
        });
        servers.push(server);
        await new Promise<void>((done, fail) => {
          server.once('error', fail);
          server.listen(port, address(i), () => done());
        });
      }
      return { port, servers };
    } catch {
      await Promise.all(servers.map((server) => new Promise((done) => server.close(done))));
    }
  }
  throw new Error(`could not bind ${count} loopback addresses on one port`);
}

// ---------------------------------------------------------------- REST client

interface Api {
  call<T>(method: string, path: string, body?: unknown, expected?: number): Promise<T>;
}

function api(baseUrl: string, auth: Record<string, string>): Api {
  return {
    async call<T>(method: string, path: string, body?: unknown, expected = 200): Promise<T> {
      const response = await fetch(`${baseUrl}${path}`, {
        method,
        headers: { ...auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
      const text = await response.text();
      if (response.status !== expected) throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 400)}`);
      return JSON.parse(text) as T;
    },
  };
}

async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await fn(items[index]!);
      }
    }),
  );
  return results;
}

// ---------------------------------------------------------------- scans, read back from the database

interface ScanTiming {
  id: string;
  status: string;
  createdAt: Date;
  finishedAt: Date | null;
  assetsFound: number;
  stepMs: number;
}

async function scanTimings(databaseUrl: string, ids: string[]): Promise<ScanTiming[]> {
  return withClient(databaseUrl, async (db) => {
    const { rows } = await db.query<ScanTiming>(
      `SELECT s.id, s.status, s."createdAt", s."finishedAt", s."assetsFound",
              COALESCE(SUM(EXTRACT(EPOCH FROM (st."finishedAt" - st."startedAt")) * 1000), 0)::float8 AS "stepMs"
       FROM scan s LEFT JOIN scan_step st ON st."scanId" = s.id
       WHERE s.id = ANY($1::uuid[]) GROUP BY s.id`,
      [ids],
    );
    return rows;
  });
}

/** Waits until every scan has ended (any terminal status), polling the database every 25 ms. */
async function waitEnded(databaseUrl: string, ids: string[], limitMs: number): Promise<void> {
  const deadline = performance.now() + limitMs;
  await withClient(databaseUrl, async (db) => {
    for (;;) {
      const { rows } = await db.query<{ open: string }>(
        `SELECT count(*) AS open FROM scan WHERE id = ANY($1::uuid[]) AND status NOT IN ('COMPLETED', 'FAILED', 'CANCELLED')`,
        [ids],
      );
      if (Number(rows[0]!.open) === 0) return;
      if (performance.now() > deadline) throw new Error(`${rows[0]!.open} of ${ids.length} scans still running after ${limitMs / 1000}s`);
      await sleep(25);
    }
  });
}

function checkScans(scans: ScanTiming[], label: string, problems: string[]): void {
  for (const scan of scans) {
    if (scan.status !== 'COMPLETED') problems.push(`${label}: scan ${scan.id} ended ${scan.status}`);
    else if (scan.assetsFound < 1) problems.push(`${label}: scan ${scan.id} found no asset`);
  }
}

// ---------------------------------------------------------------- processes

function startWorkers(count: number, env: NodeJS.ProcessEnv): Child[] {
  return Array.from({ length: count }, (_, i) => startNode(`worker ${i + 1}`, [...startFlags(ROOT, 'worker'), 'dist/src/worker.js'], { cwd: ROOT, env }));
}

/** A worker has no HTTP port to poll: give it 3 s (its bundle starts in about one) and check it is still alive. */
async function waitWorkersUp(workers: Child[]): Promise<void> {
  await sleep(3000);
  for (const worker of workers) {
    if (worker.exited()) throw new Error(`${worker.name} exited at start: ${worker.stderrTail()}`);
  }
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  out('Perimeter scan-pipeline benchmark: workers and per-step overhead');
  out(
    `  machine: ${cpus().length} cores, Node ${process.version}, load average ${loadavg()
      .map((v) => v.toFixed(2))
      .join(' ')}`,
  );
  out(`  targets: ${TARGETS} loopback hosts answering after ${DELAY_MS} ms; steps dns → ports (1 port) → http (+ tls)`);

  progress('building dist/ if stale...');
  execFileSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });

  const databaseUrl = new URL(await createDatabase(ADMIN_URL));

  const { port, servers } = await startTargets(TARGETS);
  onCleanup('target servers', () => Promise.all(servers.map((server) => new Promise((done) => server.close(done)))));
  const dataDir = await mkdtemp(join(tmpdir(), 'perimeter-bench-workers-'));
  onCleanup('temp dir', () => rm(dataDir, { recursive: true, force: true }));

  const sharedEnv: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'production',
    DATABASE_URL: databaseUrl.href,
    DATA_DIR: dataDir,
    AUTH_SECRET: randomBytes(32).toString('base64url'),
    LOG_LEVEL: 'warn',
    REDIS_URL: '',
    PUBLIC_URL: '',
    SCAN_ALLOWED_NETWORKS: '127.0.0.0/8',
    SCAN_MAX_REQUESTS_PER_SECOND: '10000',
    SCAN_MAX_CONCURRENCY_PER_HOST: '1000',
  };
  const appPort = await freePort();
  const baseUrl = `http://127.0.0.1:${appPort}`;
  const app = startNode('app (dist/src/main.js)', [...startFlags(ROOT), 'dist/src/main.js'], {
    cwd: ROOT,
    env: { ...sharedEnv, PORT: String(appPort), HOST: '127.0.0.1', WORKERS: 'false' },
  });
  onCleanup('app', () => app.stop());
  await waitForReady(`${baseUrl}/ready`, app, 120_000);

  const anonymous = api(baseUrl, {});
  const signUp = await anonymous.call<{ token: string }>('POST', '/api/v1/api/auth/sign-up/email', {
    name: 'Bench',
    email: 'bench-workers@example.test',
    password: 'correct horse battery staple',
  });
  const owner = api(baseUrl, { authorization: `Bearer ${signUp.token}` });
  const workspace = await owner.call<{ id: string }>('POST', '/api/v1/api/workspaces', { name: 'Workers bench' }, 201);
  const rest = api(baseUrl, { authorization: `Bearer ${signUp.token}`, 'x-workspace-id': workspace.id });
  progress(`adding ${TARGETS} targets...`);
  const targets = await mapLimited(
    Array.from({ length: TARGETS }, (_, i) => address(i)),
    10,
    (value) => rest.call<{ id: string }>('POST', '/api/v1/api/targets', { value }, 201),
  );
  const scanOptions = { steps: ['http'], ports: String(port), timeoutMs: 5_000 };
  const startScan = (targetId: string) => rest.call<{ id: string }>('POST', '/api/v1/api/scans', { targetId, options: scanOptions }, 201);
  const problems: string[] = [];

  // ------------------------------------------------------------ part 1: per-step overhead, one worker
  let workers = startWorkers(1, sharedEnv);
  const stopWorkers = () => Promise.all(workers.map((worker) => worker.stop(10_000)));
  onCleanup('workers', stopWorkers);
  await waitWorkersUp(workers);
  progress(`per-step overhead: ${STEP_SCANS} one-host scans in turn (after one warm-up)...`);
  const guard = createScopeGuard({ allowedNetworks: ['127.0.0.0/8'] });
  const overheads: { wall: number; steps: number; own: number }[] = [];
  for (let i = 0; i <= STEP_SCANS; i++) {
    const host = address(i % TARGETS);
    // The steps' own work, the way the steps call the engine.
    const t0 = performance.now();
    await runStep('dns', { host, timeoutMs: 5_000 }, { guard });
    await scanPorts({ address: host, ports: [port], concurrency: 1, timeoutMs: 5_000, guard });
    await Promise.all([
      runStep('http', { address: host, port, tls: 'auto', timeoutMs: 5_000, maxRedirects: 3 }, { guard }),
      runStep('tls', { address: host, port, timeoutMs: 5_000 }, { guard }),
    ]);
    const own = performance.now() - t0;
    const scan = await startScan(targets[i % TARGETS]!.id);
    await waitEnded(databaseUrl.href, [scan.id], 60_000);
    const [timing] = await scanTimings(databaseUrl.href, [scan.id]);
    checkScans([timing!], 'per-step', problems);
    if (i === 0 || !timing?.finishedAt) continue;
    overheads.push({ wall: timing.finishedAt.getTime() - timing.createdAt.getTime(), steps: timing.stepMs, own });
  }
  const wall = median(overheads.map((o) => o.wall));
  const own = median(overheads.map((o) => o.own));
  const inSteps = median(overheads.map((o) => o.steps));
  const perStep = (wall - own) / STEPS;
  out();
  out(`Part 1 — one-host scan, ${STEP_SCANS} in turn, one worker (medians)`);
  out(
    table(
      ['measure', 'ms'],
      [
        ['scan createdAt → finishedAt', fmt(wall)],
        ['sum of the 3 steps (startedAt → finishedAt)', fmt(inSteps)],
        ["the steps' own work (engine called directly)", fmt(own)],
        ['pipeline overhead per step ((scan − own) / 3)', fmt(perStep)],
        ['   of which between steps (queue) per step', fmt((wall - inSteps) / STEPS)],
        ['   of which inside steps (reads, transaction) per step', fmt((inSteps - own) / STEPS)],
        ['scan / own work', `${fmt(wall / own, 2)}×`],
      ],
      new Set([1]),
    ),
  );
  await stopWorkers();

  // ------------------------------------------------------------ part 2: scaling
  const rates = new Map<number, number>();
  for (const count of WORKER_COUNTS) {
    progress(`${count} worker(s): starting...`);
    workers = startWorkers(count, sharedEnv);
    await waitWorkersUp(workers);
    progress(`${count} worker(s): ${TARGETS} scans...`);
    const scans = await mapLimited(targets, 10, (target) => startScan(target.id));
    const ids = scans.map((scan) => scan.id);
    await waitEnded(databaseUrl.href, ids, ROUND_LIMIT_MS);
    const timings = await scanTimings(databaseUrl.href, ids);
    checkScans(timings, `${count} workers`, problems);
    const first = Math.min(...timings.map((t) => t.createdAt.getTime()));
    const last = Math.max(...timings.map((t) => t.finishedAt?.getTime() ?? 0));
    rates.set(count, (TARGETS / (last - first)) * 60_000);
    await stopWorkers();
  }
  out();
  out(`Part 2 — ${TARGETS} hosts at once, N worker processes (each WORKER_CONCURRENCY default)`);
  const base = rates.get(WORKER_COUNTS[0]!) ?? 1;
  out(
    table(
      ['workers', 'hosts/min', `vs ${WORKER_COUNTS[0]}`],
      WORKER_COUNTS.map((count) => [String(count), fmt(rates.get(count) ?? 0, 0), `${fmt((rates.get(count) ?? 0) / base, 2)}×`]),
      new Set([1, 2]),
    ),
  );

  out();
  const scaling = rates.has(1) && rates.has(2) ? rates.get(2)! / rates.get(1)! : undefined;
  out(
    `verdict: 1 → 2 workers ${scaling === undefined ? 'not measured' : `${fmt(scaling, 2)}× (goal ≥ ${GOAL_SCALING}×) ${scaling >= GOAL_SCALING ? 'PASS' : 'FAIL'}`}; ` +
      `pipeline overhead ${fmt(perStep)} ms per step (goal ≤ ${GOAL_OVERHEAD_MS} ms) ${perStep <= GOAL_OVERHEAD_MS ? 'PASS' : 'FAIL'}`,
  );
  if (problems.length) {
    out(`PROBLEMS (${problems.length}):`);
    for (const problem of problems.slice(0, 20)) out(`  ${problem}`);
    throw new Error(`${problems.length} scan(s) did not end as expected (above)`);
  }
}

runMain(main);
