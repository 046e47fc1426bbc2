// npm run bench:exports: does an export's memory stay flat as the number of findings grows?
//
// One run: a fresh PostgreSQL database on the local server (dropped at the end), the real app (createApp) in this
// process on 127.0.0.1, one user and one workspace per row count, its findings inserted with one INSERT … SELECT over
// generate_series each (test/support/findings-seed.ts: rows the size of real ones). Then, per row count and format
// (csv, json, sarif), GET /api/v1/api/vulnerabilities/export over HTTP, the client reading and discarding the body,
// while process.memoryUsage() is sampled every 5 ms. The process runs with --expose-gc: a full collection before each
// export gives the baseline, so the peaks are what the export added on top of it ("live heap": after a full GC, see below). A buffered export
// would grow with the body size (the last column); a streamed one stays near one batch (1,000 rows) whatever the count.
// "peak heap" counts garbage not yet collected (V8 lets the heap grow to a few hundred MB before a full collection
// when there is room); "peak live heap" comes from a second export of the same rows with a full GC every 500 ms before
// sampling: what the export holds. Seconds, rows/s, peak heap and RSS come from the first (undisturbed) export.
//
// Settings (environment):
//   BENCH_DATABASE_URL  admin URL of the local server (default postgresql://postgres@127.0.0.1:5432/postgres)
//   BENCH_COUNTS        comma-separated finding counts (default 20000,100000)
//   BENCH_FORMATS       comma-separated subset of csv,json,sarif (default: all)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { loadEnv } from '../../src/env.js';
import { createApp, type App } from '../../src/app.js';
import { openDatabase } from '../../src/db.js';
import { insertFindings } from '../../test/support/findings-seed.js';
import { fmt, table } from './scan-lib.js';

const ADMIN_URL = process.env.BENCH_DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/postgres';
const COUNTS = (process.env.BENCH_COUNTS || '20000,100000').split(',').map((value) => {
  const count = Number(value.trim());
  if (!Number.isInteger(count) || count < 1) fail(`BENCH_COUNTS: ${value} is not a whole number above 0`);
  return count;
});
const FORMATS = (process.env.BENCH_FORMATS || 'csv,json,sarif').split(',').map((value) => {
  const format = value.trim();
  if (!['csv', 'json', 'sarif'].includes(format)) fail(`BENCH_FORMATS: ${format} is not one of csv, json, sarif`);
  return format;
});
const MB = 1024 * 1024;

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(2);
}

const gc = (globalThis as { gc?: () => void }).gc ?? fail('Run with node --expose-gc (npm run bench:exports does).');

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

async function api(base: string, method: string, path: string, body: unknown, token?: string) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return response.json() as Promise<any>;
}

interface Measure {
  bytes: number;
  seconds: number;
  peakHeap: number;
  peakLive: number;
  peakRss: number;
}

/**
 * One export over HTTP, body discarded, memory sampled every 5 ms above a post-GC baseline. With `live`, a full
 * collection runs every 500 ms before a sample of the heap: that run's speed is not the export's, only its live heap.
 */
async function measureExport(base: string, token: string, workspaceId: string, format: string, live = false): Promise<Measure> {
  gc();
  const baseline = process.memoryUsage();
  let peakHeap = 0;
  let peakRss = 0;
  const sample = () => {
    const now = process.memoryUsage();
    peakHeap = Math.max(peakHeap, now.heapUsed - baseline.heapUsed);
    peakRss = Math.max(peakRss, now.rss - baseline.rss);
  };
  // The heap in use includes garbage V8 has not collected yet (it lets the heap grow before it does): a full
  // collection first, so `peakLive` is what the export really holds, garbage aside.
  let peakLive = 0;
  const sampleLive = () => {
    gc();
    peakLive = Math.max(peakLive, process.memoryUsage().heapUsed - baseline.heapUsed);
  };
  const timer = setInterval(sample, 5);
  const liveTimer = live ? setInterval(sampleLive, 500) : undefined;
  const started = performance.now();
  let bytes = 0;
  try {
    const response = await fetch(`${base}/api/v1/api/vulnerabilities/export?format=${format}&status=all`, {
      headers: { authorization: `Bearer ${token}`, 'x-workspace-id': workspaceId },
    });
    if (response.status !== 200) throw new Error(`export ${format}: ${response.status} ${await response.text()}`);
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      bytes += chunk.byteLength;
      sample();
    }
  } finally {
    clearInterval(timer);
    clearInterval(liveTimer);
  }
  return { bytes, seconds: (performance.now() - started) / 1000, peakHeap, peakLive, peakRss };
}

async function main(): Promise<void> {
  const name = `perimeter_bench_exports_${randomBytes(4).toString('hex')}`;
  await admin((client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'perimeter-bench-exports-'));
  let app: App | undefined;
  try {
    const db = await openDatabase({ url: url.toString(), poolSize: 5 });
    const env = loadEnv({
      NODE_ENV: 'production',
      LOG_LEVEL: 'silent',
      DATA_DIR: dataDir,
      AUTH_SECRET: randomBytes(32).toString('hex'),
      SIGNUP: 'open',
      WORKERS: 'false',
      SHUTDOWN_DRAIN_MS: '0',
      DISCOVERY_CT_URL: '',
    });
    app = await createApp({ env, database: db });
    const base = await app.listen(0, '127.0.0.1');
    const signUp = await api(base, 'POST', '/api/v1/api/auth/sign-up/email', { name: 'Bench', email: 'bench@example.test', password: 'correct horse battery' });
    const token = signUp.token as string;
    const rows: string[][] = [];
    for (const count of COUNTS) {
      const workspace = await api(base, 'POST', '/api/v1/api/workspaces', { name: `Bench ${count}` }, token);
      const seeding = performance.now();
      await insertFindings(db.sql, workspace.id, count);
      await db.sql.query('ANALYZE "finding"');
      process.stderr.write(`${count.toLocaleString('en-US')} findings inserted in ${fmt((performance.now() - seeding) / 1000)} s\n`);
      for (const format of FORMATS) {
        // One warm-up export (query plans, JIT), then the measured one.
        await measureExport(base, token, workspace.id, format);
        const measure = await measureExport(base, token, workspace.id, format);
        const { peakLive } = await measureExport(base, token, workspace.id, format, true);
        rows.push([
          count.toLocaleString('en-US'),
          format,
          fmt(measure.seconds, 2),
          fmt(count / measure.seconds, 0),
          fmt(measure.peakHeap / MB),
          fmt(peakLive / MB),
          fmt(measure.peakRss / MB),
          fmt(measure.bytes / MB),
        ]);
        process.stderr.write(`  ${format}: done\n`);
      }
    }
    process.stdout.write(`\nExports of findings (status=all), app in this process on PostgreSQL; peaks above a post-GC baseline (node ${process.version})\n\n`);
    process.stdout.write(
      `${table(['findings', 'format', 'seconds', 'rows/s', 'peak heap +MB', 'peak live heap +MB', 'peak RSS +MB', 'body MB'], rows, new Set([0, 2, 3, 4, 5, 6, 7]))}\n`,
    );
  } finally {
    await app?.stop();
    await admin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
