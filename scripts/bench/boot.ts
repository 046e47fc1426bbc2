// npm run bench:boot: how long the server takes from launch to GET /health 200, compiled (dist/) and under tsx.
//   build        `npm run build` (full) and the `--if-stale` check `npm start` runs first when nothing changed
//   first start  a fresh DATA_DIR (compiled: the build's migrated embedded database unpacked; tsx: initdb and every
//                migration; then the built-in rows)
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
import { launches, timeCommand, timeServerStart, timeWorkerStart, type Launch, type StartTiming } from './boot-lib.js';

const ROUNDS = Number(process.env.BENCH_BOOT_ROUNDS ?? 5);
const PG_URL = process.env.BENCH_BOOT_PG_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const WARM_GOAL_S = 2;
const FIRST_GOAL_S = 8;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const s = (seconds: number | undefined) => (seconds === undefined ? '-' : `${seconds.toFixed(2)} s`);
const ratio = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? '-' : (a / b).toFixed(2));

interface Timings {
  first: StartTiming;
  warm: StartTiming[];
}

const scratch: string[] = [];
function dataDirectory(): string {
  const dir = mkdtempSync(join(tmpdir(), 'perimeter-bench-boot-'));
  scratch.push(dir);
  return dir;
}

/** First start of each launch on its own fresh data directory, then warm rounds, interleaved across launches. */
async function measure(list: Launch[], time: (launch: Launch, dataDir: string) => Promise<StartTiming>): Promise<Map<Launch, Timings>> {
  const results = new Map<Launch, Timings>();
  const dirs = new Map<Launch, string>();
  for (const launch of list) {
    const dir = dataDirectory();
    dirs.set(launch, dir);
    const first = await time(launch, dir);
    process.stderr.write(`  ${launch.label}: first start ${s(first.wall)} (cpu ${s(first.cpu)})\n`);
    results.set(launch, { first, warm: [] });
  }
  for (let round = 1; round <= ROUNDS; round += 1) {
    for (const launch of list) {
      const timing = await time(launch, dirs.get(launch)!);
      results.get(launch)!.warm.push(timing);
      process.stderr.write(`  ${launch.label}: warm start ${round}/${ROUNDS} ${s(timing.wall)} (cpu ${s(timing.cpu)})\n`);
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
  const warm = (t: Timings | undefined, of: keyof StartTiming) => (t ? median(t.warm.map((timing) => timing[of])) : undefined);
  const first = (t: Timings | undefined, of: keyof StartTiming) => t?.first[of];
  const spread = (t: Timings | undefined) =>
    t ? `${Math.min(...t.warm.map((x) => x.wall)).toFixed(2)}-${Math.max(...t.warm.map((x) => x.wall)).toFixed(2)}` : '-';
  const serverRow = (name: string, pick: (t: Timings | undefined, of: keyof StartTiming) => number | undefined, of: keyof StartTiming) =>
    row(name, [s(pick(compiled, of)), s(pick(npm, of)), s(pick(tsx, of)), ratio(pick(compiled, of), pick(tsx, of))]);
  const workerRow = (name: string, pick: (t: Timings | undefined, of: keyof StartTiming) => number | undefined, of: keyof StartTiming) =>
    row(name, [s(pick(compiledWorker, of)), '', s(pick(tsxWorker, of)), ratio(pick(compiledWorker, of), pick(tsxWorker, of))]);
  const lines = [
    '',
    `build: full ${s(build)}, --if-stale with nothing to do ${s(staleCheck)}`,
    `load average at the end: ${loadavg()
      .map((value) => value.toFixed(2))
      .join(' ')} (${availableParallelism()} cores); warm = median of ${ROUNDS}; cpu = CPU time of the server process until ready`,
    '',
    row('', ['dist (node)', 'npm start', 'tsx', 'dist/tsx']),
    serverRow('server first start', first, 'wall'),
    serverRow('server first start cpu', first, 'cpu'),
    serverRow('server warm start', warm, 'wall'),
    row('  warm min-max', [spread(compiled), spread(npm), spread(tsx), '']),
    serverRow('server warm start cpu', warm, 'cpu'),
    workerRow('worker first start', first, 'wall'),
    workerRow('worker warm start', warm, 'wall'),
    workerRow('worker warm start cpu', warm, 'cpu'),
    '',
    `warm start < ${WARM_GOAL_S} s: ${warm(npm, 'wall')! < WARM_GOAL_S ? 'PASS' : 'FAIL'} (${s(warm(npm, 'wall'))}, npm start; ${s(warm(compiled, 'wall'))} node dist/src/main.js)`,
    `first start < ${FIRST_GOAL_S} s: ${npm.first.wall < FIRST_GOAL_S ? 'PASS' : 'FAIL'} (${s(npm.first.wall)}, npm start; ${s(compiled.first.wall)} node dist/src/main.js)`,
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
