// Shared plumbing of `npm run bench:api`: settings from the environment, one cleanup list that runs once (on
// success, error or a signal), a throw-away PostgreSQL database on the local server, and autocannon runs.
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import autocannon from 'autocannon';
import { withClient } from './seed.js';

export function positiveInt(name: string, fallback: number, allowZero = false): number {
  const raw = process.env[name];
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < (allowZero ? 0 : 1)) {
    process.stderr.write(`${name} must be a whole number${allowZero ? '' : ' above 0'} (got ${raw})\n`);
    process.exit(2);
  }
  return value;
}

// ---------------------------------------------------------------- cleanup (runs once: success, error or signal)

const cleanups: Array<{ label: string; run: () => Promise<unknown> }> = [];
let cleaning: Promise<void> | undefined;
let currentLoad: autocannon.Instance | undefined;
export let signalled = false;

export function onCleanup(label: string, run: () => Promise<unknown>): void {
  cleanups.push({ label, run });
}

export function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    currentLoad?.stop();
    for (const { label, run } of cleanups.reverse()) {
      try {
        await run();
      } catch (error) {
        process.stderr.write(`cleanup (${label}) failed: ${error instanceof Error ? error.message : String(error)}\n`);
      }
    }
  })();
  return cleaning;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (signalled) return;
    signalled = true;
    process.stderr.write(`\n${signal}: stopping, cleaning up...\n`);
    void cleanup().finally(() => process.exit(130));
  });
}

/** Runs main, then cleans up and exits 0 (or 1 with the error). */
export function runMain(main: () => Promise<void>): void {
  main()
    .then(async () => {
      if (signalled) return;
      await cleanup();
      process.exit(0);
    })
    .catch(async (error: unknown) => {
      if (signalled) return; // the signal handler is cleaning up and exits
      process.stderr.write(`\nbench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      await cleanup();
      process.exit(1);
    });
}

// ---------------------------------------------------------------- database

export function assertLoopback(url: string): URL {
  const parsed = new URL(url);
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (!['127.0.0.1', 'localhost', '::1'].includes(host)) throw new Error(`BENCH_DATABASE_URL must point at the local server (127.0.0.1), not ${host}`);
  return parsed;
}

/** A fresh database on the local server, dropped at cleanup. */
export async function createDatabase(adminUrl: string): Promise<string> {
  const admin = assertLoopback(adminUrl);
  const name = `perimeter_bench_${randomBytes(6).toString('hex')}`;
  await withClient(adminUrl, (client) => client.query(`CREATE DATABASE "${name}"`));
  onCleanup(`drop database ${name}`, () =>
    withClient(adminUrl, async (client) => {
      await client.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [name]);
      await client.query(`DROP DATABASE IF EXISTS "${name}"`);
    }),
  );
  const url = new URL(admin.href);
  url.pathname = `/${name}`;
  return url.href;
}

// ---------------------------------------------------------------- HTTP

export async function fetchText(url: string, init: RequestInit = {}): Promise<{ status: number; text: string }> {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(30_000) });
  return { status: response.status, text: await response.text() };
}

export function expectOk(label: string, { status, text }: { status: number; text: string }): unknown {
  if (status < 200 || status > 299) throw new Error(`${label} answered ${status}: ${text.slice(0, 500)}`);
  return JSON.parse(text);
}

export interface Target {
  key: string;
  label: string;
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  bytes: number;
}

export interface Measured {
  target: Target;
  rps: number;
  /** Mean latency in ms. */
  mean: number;
  p50: number;
  p99: number;
  requests: number;
}

export async function load(target: Target, seconds: number, connections: number): Promise<autocannon.Result> {
  const instance = autocannon({
    url: target.url,
    connections,
    duration: seconds,
    method: target.method,
    headers: target.headers,
    body: target.body,
    timeout: 30,
  });
  currentLoad = instance;
  try {
    return await instance;
  } finally {
    currentLoad = undefined;
  }
}

export function checkAllOk(target: Target, result: autocannon.Result, phase: string): void {
  const bad = result.non2xx + result.errors + result.timeouts;
  // A short warm-up on a loaded machine may see no answer complete; that is not a failure.
  if (bad === 0 && (result['2xx'] > 0 || phase === 'warm-up')) return;
  const codes = Object.entries(result.statusCodeStats ?? {})
    .map(([code, { count }]) => `${code}: ${count}`)
    .join(', ');
  throw new Error(
    `${target.label} (${phase}): not every response was 2xx: ${result['2xx']} ok, ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts [${codes}]`,
  );
}

/**
 * Every target once, unmeasured, before the first round. A target's own warm-up (a second) is not enough for the
 * first target of each code path: V8 is still compiling that path, and the target reads low in the first round.
 * GraphQL POST, each page's first GraphQL target, read 12-16% under GET on assets and targets without this, and 4%
 * with it (one run each, `BENCH_PRIME=0` against the default).
 */
export async function prime(targets: Target[], seconds: number, connections: number): Promise<void> {
  if (seconds <= 0 || !targets.length) return;
  process.stdout.write(`  priming ${targets.length} targets, ${seconds}s each...`);
  for (const target of targets) checkAllOk(target, await load(target, seconds, connections), 'warm-up');
  process.stdout.write(' done\n');
}

/** Warm-up, then a measured run. */
export async function measure(target: Target, options: { seconds: number; warmup: number; connections: number }): Promise<Measured> {
  if (options.warmup > 0) checkAllOk(target, await load(target, options.warmup, options.connections), 'warm-up');
  const result = await load(target, options.seconds, options.connections);
  checkAllOk(target, result, 'measured');
  return { target, rps: result.requests.average, mean: result.latency.average, p50: result.latency.p50, p99: result.latency.p99, requests: result['2xx'] };
}

/** The median round by requests/s. */
export function median(runs: Measured[]): Measured {
  const sorted = [...runs].sort((a, b) => a.rps - b.rps);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

/** 1/5/15-minute load average: other work on the machine skews every number here. */
export function loadAverage(): string {
  return loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');
}

export function pad(text: string, width: number, right = false): string {
  return right ? text.padStart(width) : text.padEnd(width);
}
