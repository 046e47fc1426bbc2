// npm run bench:boot: how long the server takes from launch to GET /health 200, compiled (dist/) and under tsx.
//   build        `npm run build` (full) and the `--if-stale` check `npm start` runs first when nothing changed
//   first start  a fresh DATA_DIR (embedded PGlite: initdb, every migration, the built-in rows)
//   warm start   the same DATA_DIR again after a clean stop (SIGTERM), BENCH_BOOT_ROUNDS rounds (5), median
// each as `node dist/src/main.js`, as `npm start` (npm, its prestart check, then the same), and as
// `node --import tsx src/main.ts` (what `npm start` ran before), rounds interleaved so load changes hit all alike.
// Then the standalone worker against PostgreSQL (BENCH_BOOT_PG_URL, default postgresql://postgres@127.0.0.1:5432/
// postgres; a fresh database per variant, dropped at the end) until it logs `worker ready`; skipped without one.
// The goals (issue): warm start < 2 s, first start < 8 s, both for `npm start`.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { launches, timeCommand, timeServerStart, timeWorkerStart, type Launch } from './boot-lib.js';

const ROUNDS = Number(process.env.BENCH_BOOT_ROUNDS ?? 5);
const PG_URL = process.env.BENCH_BOOT_PG_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const WARM_GOAL_S = 2;
const FIRST_GOAL_S = 8;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const s = (seconds: number | undefined) => (seconds === undefined ? '-' : `${seconds.toFixed(2)} s`);
const ratio = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? '-' : (a / b).toFixed(2));

interface Timings {
  first: number;
  warm: number[];
}

const scratch: string[] = [];
function dataDirectory(): string {
  const dir = mkdtempSync(join(tmpdir(), 'perimeter-bench-boot-'));
  scratch.push(dir);
  return dir;
}

/** First start of each launch on its own fresh data directory, then warm rounds, interleaved across launches. */
async function measure(list: Launch[], time: (launch: Launch, dataDir: string) => Promise<number>): Promise<Map<Launch, Timings>> {
  const results = new Map<Launch, Timings>();
  const dirs = new Map<Launch, string>();
  for (const launch of list) {
    const dir = dataDirectory();
    dirs.set(launch, dir);
    const first = await time(launch, dir);
    process.stderr.write(`  ${launch.label}: first start ${s(first)}\n`);
    results.set(launch, { first, warm: [] });
  }
  for (let round = 1; round <= ROUNDS; round += 1) {
    for (const launch of list) {
      const seconds = await time(launch, dirs.get(launch)!);
      results.get(launch)!.warm.push(seconds);
      process.stderr.write(`  ${launch.label}: warm start ${round}/${ROUNDS} ${s(seconds)}\n`);
    }
  }
  return results;
}

/** The worker's rows, or undefined when no PostgreSQL answers at PG_URL. */
async function measureWorkers(): Promise<Map<Launch, Timings> | undefined> {
  const admin = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3_000 });
  try {
    await admin.connect();
  } catch (error) {
    process.stderr.write(`worker: skipped, no PostgreSQL at ${PG_URL} (${(error as Error).message})\n`);
    return undefined;
  }
  const databases = new Map<Launch, string>();
  try {
    for (const launch of [launches.compiledWorker, launches.tsxWorker]) {
      const name = `perimeter_bench_boot_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
      await admin.query(`CREATE DATABASE ${name}`);
      databases.set(launch, name);
    }
    return await measure([launches.compiledWorker, launches.tsxWorker], (launch, dataDir) => {
      const url = new URL(PG_URL);
      url.pathname = `/${databases.get(launch)}`;
      return timeWorkerStart(launch, dataDir, url.toString());
    });
  } finally {
    for (const name of databases.values()) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

function row(name: string, cells: string[]): string {
  return `${name.padEnd(26)}${cells.map((cell) => cell.padStart(14)).join('')}`;
}

async function main(): Promise<void> {
  const [one, five, fifteen] = loadavg().map((value) => value.toFixed(2));
  process.stderr.write(`bench:boot on ${availableParallelism()} cores, load average ${one} ${five} ${fifteen}\n`);
  const build = await timeCommand(process.execPath, ['scripts/build.mjs']);
  const checks: number[] = [];
  for (let i = 0; i < 3; i += 1) checks.push(await timeCommand(process.execPath, ['scripts/build.mjs', '--if-stale']));
  const staleCheck = median(checks);
  process.stderr.write(`server (until GET /health is 200):\n`);
  const servers = await measure([launches.compiled, launches.npmStart, launches.tsx], (launch, dataDir) => timeServerStart(launch, dataDir));
  process.stderr.write(`worker (until it logs "worker ready"):\n`);
  const workers = await measureWorkers();

  const compiled = servers.get(launches.compiled)!;
  const npm = servers.get(launches.npmStart)!;
  const tsx = servers.get(launches.tsx)!;
  const compiledWorker = workers?.get(launches.compiledWorker);
  const tsxWorker = workers?.get(launches.tsxWorker);
  const spread = (t: Timings | undefined) => (t ? `${Math.min(...t.warm).toFixed(2)}-${Math.max(...t.warm).toFixed(2)}` : '-');
  const lines = [
    '',
    `build: full ${s(build)}, --if-stale with nothing to do ${s(staleCheck)}`,
    `load average at the end: ${loadavg()
      .map((value) => value.toFixed(2))
      .join(' ')} (${availableParallelism()} cores); warm = median of ${ROUNDS}`,
    '',
    row('', ['dist (node)', 'npm start', 'tsx', 'dist/tsx']),
    row('server first start', [s(compiled.first), s(npm.first), s(tsx.first), ratio(compiled.first, tsx.first)]),
    row('server warm start', [s(median(compiled.warm)), s(median(npm.warm)), s(median(tsx.warm)), ratio(median(compiled.warm), median(tsx.warm))]),
    row('  warm min-max', [spread(compiled), spread(npm), spread(tsx), '']),
    row('worker first start', [s(compiledWorker?.first), '', s(tsxWorker?.first), ratio(compiledWorker?.first, tsxWorker?.first)]),
    row('worker warm start', [
      s(compiledWorker && median(compiledWorker.warm)),
      '',
      s(tsxWorker && median(tsxWorker.warm)),
      ratio(compiledWorker && median(compiledWorker.warm), tsxWorker && median(tsxWorker.warm)),
    ]),
    '',
    `warm start < ${WARM_GOAL_S} s: ${median(npm.warm) < WARM_GOAL_S ? 'PASS' : 'FAIL'} (${s(median(npm.warm))}, npm start; ${s(median(compiled.warm))} node dist/src/main.js)`,
    `first start < ${FIRST_GOAL_S} s: ${npm.first < FIRST_GOAL_S ? 'PASS' : 'FAIL'} (${s(npm.first)}, npm start; ${s(compiled.first)} node dist/src/main.js)`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

main()
  .catch((error: unknown) => {
    process.stderr.write(`bench:boot failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exitCode = 1;
  })
  .finally(() => {
    for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
  });
