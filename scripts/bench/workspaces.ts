// npm run bench:workspaces: how fast is the workspace list page, against the least work that can produce it?
//
// One run: a fresh PostgreSQL database on the local server, the real app (src/main.ts) in a child process,
// one user signed up through the REST API and 1,000 workspaces (with members and targets) inserted with pg,
// a bare node:http server (bare-server.ts) in a second child process, then autocannon against, in turn:
//   REST GET /api/v1/api/workspaces?limit=20 · GraphQL POST · GraphQL GET · bare /sql (one hand-written
//   SQL query that builds the same JSON) · bare /static (a precomputed body of the same size: the HTTP limit)
// and a table of requests/s and latencies relative to /sql. Everything stays on 127.0.0.1, every run is
// bounded, and the database, child processes and temp files are removed at the end (also on error/Ctrl-C).
//
// Settings (environment):
//   BENCH_DATABASE_URL  admin URL of the local server (default postgresql://postgres@127.0.0.1:5432/postgres)
//   BENCH_DURATION      seconds per target (default 8), after a 2 s warm-up (BENCH_WARMUP)
//   BENCH_CONNECTIONS   concurrent connections (default 10)
//   BENCH_ROUNDS        run the whole sequence this many times and report each target's median round
//                       (default 1; more rounds damp other load on the machine drifting between targets)
//   BENCH_LOG_LEVEL     the app's LOG_LEVEL (default info, the production default; output goes to /dev/null)
//   BENCH_TARGETS       comma-separated subset of rest,graphql-post,graphql-get,sql,static (default: all)
//   BENCH_CPU_PROF      1: run the app with --cpu-prof and print where its CPU time went (kept on disk)
//   BENCH_APP_DIR       run src/main.ts from another checkout (e.g. an exported older commit); default this one
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { LOOPBACK, firstDifference, freePort, startNode, waitForReady } from './lib.js';
import { EXTRA_MEMBERS_PER_WORKSPACE, EXTRA_USERS, WORKSPACES, seed, withClient } from './seed.js';
import { nowUs, summarizeCpuProfiles, type Window } from './cpu-profile.js';

const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');
const APP_DIR = resolve(process.env.BENCH_APP_DIR || ROOT);
const ADMIN_URL = process.env.BENCH_DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/postgres';
const DURATION = positiveInt('BENCH_DURATION', 8);
const WARMUP = positiveInt('BENCH_WARMUP', 2, true);
const CONNECTIONS = positiveInt('BENCH_CONNECTIONS', 10);
const ROUNDS = positiveInt('BENCH_ROUNDS', 1);
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL || 'info';
const CPU_PROF = ['1', 'true', 'yes'].includes((process.env.BENCH_CPU_PROF ?? '').toLowerCase());
const MAX_CONNECTIONS = 256;

const PAGE_LIMIT = 20;
const TARGET_KEYS = ['rest', 'graphql-post', 'graphql-get', 'sql', 'static'];

const REST_PATH = `/api/v1/api/workspaces?limit=${PAGE_LIMIT}`;
const GRAPHQL_QUERY = `query Page { workspaces(first: ${PAGE_LIMIT}) { totalCount edges { node { databaseId name description createdAt updatedAt archivedAt isAssetsDiscovery isAutoEnableAssetAfterDiscovered ownerId targetCount memberCount role members { id role createdAt updatedAt user { id name image } } } } } }`;

function positiveInt(name: string, fallback: number, allowZero = false): number {
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

function onCleanup(label: string, run: () => Promise<unknown>): void {
  cleanups.push({ label, run });
}

function cleanup(): Promise<void> {
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

let signalled = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (signalled) return;
    signalled = true;
    process.stderr.write(`\n${signal}: stopping, cleaning up...\n`);
    void cleanup().finally(() => process.exit(130));
  });
}

// ---------------------------------------------------------------- database

function assertLoopback(url: string): URL {
  const parsed = new URL(url);
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (!['127.0.0.1', 'localhost', '::1'].includes(host)) throw new Error(`BENCH_DATABASE_URL must point at the local server (127.0.0.1), not ${host}`);
  return parsed;
}

async function createDatabase(): Promise<string> {
  const admin = assertLoopback(ADMIN_URL);
  const name = `perimeter_bench_${randomBytes(6).toString('hex')}`;
  await withClient(ADMIN_URL, (client) => client.query(`CREATE DATABASE "${name}"`));
  onCleanup(`drop database ${name}`, () =>
    withClient(ADMIN_URL, async (client) => {
      await client.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [name]);
      await client.query(`DROP DATABASE IF EXISTS "${name}"`);
    }),
  );
  const url = new URL(admin.href);
  url.pathname = `/${name}`;
  return url.href;
}

// ---------------------------------------------------------------- HTTP helpers

async function fetchText(url: string, init: RequestInit = {}): Promise<{ status: number; text: string }> {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(30_000) });
  return { status: response.status, text: await response.text() };
}

function expectOk(label: string, { status, text }: { status: number; text: string }): unknown {
  if (status < 200 || status > 299) throw new Error(`${label} answered ${status}: ${text.slice(0, 500)}`);
  return JSON.parse(text);
}

interface Target {
  key: string;
  label: string;
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  bytes: number;
}

interface Measured {
  target: Target;
  rps: number;
  p50: number;
  p99: number;
  requests: number;
}

async function load(target: Target, seconds: number): Promise<autocannon.Result> {
  const instance = autocannon({
    url: target.url,
    connections: CONNECTIONS,
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

function checkAllOk(target: Target, result: autocannon.Result, phase: string): void {
  const bad = result.non2xx + result.errors + result.timeouts;
  if (bad === 0 && result['2xx'] > 0) return;
  const codes = Object.entries(result.statusCodeStats)
    .map(([code, { count }]) => `${code}×${count}`)
    .join(', ');
  throw new Error(
    `${target.label} (${phase}): not every response was 2xx: ${result['2xx']} ok, ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts [${codes}]`,
  );
}

// ---------------------------------------------------------------- GraphQL → REST shape (for the honesty check)

interface GraphQLPage {
  data?: { workspaces: { totalCount: number; edges: Array<{ node: Record<string, unknown> & { databaseId: string; members: unknown[] } }> } };
  errors?: Array<{ message: string }>;
}

function graphqlAsRest(page: GraphQLPage): { total: number; data: unknown[] } {
  const { totalCount, edges } = page.data!.workspaces;
  return {
    total: totalCount,
    data: edges.map(({ node: { databaseId, members, ...rest } }) => ({ id: databaseId, ...rest, workspaceMembers: members })),
  };
}

// ---------------------------------------------------------------- main

/** 1/5/15-minute load average: other work on the machine skews every number here. */
function loadAverage(): string {
  return loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');
}

function pad(text: string, width: number, right = false): string {
  return right ? text.padStart(width) : text.padEnd(width);
}

async function main(): Promise<void> {
  if (CONNECTIONS > MAX_CONNECTIONS) throw new Error(`BENCH_CONNECTIONS must be at most ${MAX_CONNECTIONS}`);
  const selected = (process.env.BENCH_TARGETS || TARGET_KEYS.join(',')).split(',').map((s) => s.trim());
  const unknown = selected.filter((key) => !TARGET_KEYS.includes(key));
  if (unknown.length) throw new Error(`BENCH_TARGETS: unknown ${unknown.join(', ')} (choose from ${TARGET_KEYS.join(', ')})`);

  console.log(`Perimeter workspace-list benchmark`);
  console.log(`  machine: ${cpus().length} cores (${cpus()[0]?.model.trim() ?? 'unknown CPU'}), Node ${process.version}, load average ${loadAverage()}`);
  if (APP_DIR !== ROOT) console.log(`  app:     ${APP_DIR}`);
  console.log(
    `  load:    ${CONNECTIONS} connections, ${WARMUP}s warm-up + ${DURATION}s per target${ROUNDS > 1 ? `, ${ROUNDS} rounds (median shown)` : ''}; app LOG_LEVEL=${LOG_LEVEL}`,
  );

  const databaseUrl = await createDatabase();
  console.log(`  database: ${new URL(databaseUrl).pathname.slice(1)} (dropped at the end)`);
  const tmp = await mkdtemp(join(tmpdir(), 'perimeter-bench-'));
  onCleanup('remove temp dir', () => rm(tmp, { recursive: true, force: true }));
  const profileDir = CPU_PROF ? await mkdtemp(join(tmpdir(), 'perimeter-bench-prof-')) : undefined;

  // The app, as production runs it.
  const appPort = await freePort();
  const appUrl = `http://${LOOPBACK}:${appPort}`;
  const app = startNode('app (src/main.ts)', [...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []), '--import', 'tsx', 'src/main.ts'], {
    cwd: APP_DIR,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      PORT: String(appPort),
      HOST: LOOPBACK,
      DATA_DIR: join(tmp, 'data'),
      AUTH_SECRET: randomBytes(36).toString('base64url'),
      NODE_ENV: 'production',
      LOG_LEVEL,
      REDIS_URL: '',
      PUBLIC_URL: '',
    },
  });
  onCleanup('stop app', () => app.stop());
  const started = Date.now();
  await waitForReady(`${appUrl}/ready`, app, 120_000);
  console.log(`  app ready on ${appUrl} in ${((Date.now() - started) / 1000).toFixed(1)}s`);

  // One user through the front door; the rest straight into the database.
  const signUp = expectOk(
    'sign-up',
    await fetchText(`${appUrl}/api/v1/api/auth/sign-up/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Bench Owner', email: 'bench-owner@example.com', password: 'bench-password-123' }),
    }),
  ) as { token: string; user: { id: string } };
  const auth = { authorization: `Bearer ${signUp.token}` };
  const seedStarted = Date.now();
  await seed(databaseUrl, signUp.user.id);
  console.log(
    `  seeded ${WORKSPACES} workspaces, ${EXTRA_USERS} extra users, ${WORKSPACES * (1 + EXTRA_MEMBERS_PER_WORKSPACE)} memberships in ${((Date.now() - seedStarted) / 1000).toFixed(1)}s`,
  );

  // The reference body.
  const restResponse = await fetchText(`${appUrl}${REST_PATH}`, { headers: auth });
  const rest = expectOk('REST', restResponse) as { total: number; data: unknown[] };
  if (rest.total !== WORKSPACES || rest.data.length !== PAGE_LIMIT) throw new Error(`REST page looks wrong: total ${rest.total}, ${rest.data.length} items`);
  const restFile = join(tmp, 'rest-body.json');
  await writeFile(restFile, restResponse.text);

  // The baseline server.
  const barePort = await freePort();
  const bareUrl = `http://${LOOPBACK}:${barePort}`;
  const bare = startNode('bare server (scripts/bench/bare-server.ts)', ['--import', 'tsx', 'scripts/bench/bare-server.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(barePort),
      BARE_DATABASE_URL: databaseUrl,
      BARE_USER_ID: signUp.user.id,
      BARE_STATIC_FILE: restFile,
      BARE_PAGE_LIMIT: String(PAGE_LIMIT),
    },
  });
  onCleanup('stop bare server', () => bare.stop());
  await waitForReady(`${bareUrl}/ready`, bare, 60_000);

  // Honesty checks: every target answers the same page.
  const graphqlBody = JSON.stringify({ query: GRAPHQL_QUERY });
  const targets: Target[] = [
    { key: 'rest', label: 'REST GET /api/v1/api/workspaces', url: `${appUrl}${REST_PATH}`, method: 'GET', headers: auth, bytes: 0 },
    {
      key: 'graphql-post',
      label: 'GraphQL POST /graphql',
      url: `${appUrl}/graphql`,
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: graphqlBody,
      bytes: 0,
    },
    {
      key: 'graphql-get',
      label: 'GraphQL GET /graphql',
      url: `${appUrl}/graphql?query=${encodeURIComponent(GRAPHQL_QUERY)}`,
      method: 'GET',
      headers: auth,
      bytes: 0,
    },
    { key: 'sql', label: 'bare /sql (hand-written SQL)', url: `${bareUrl}/sql`, method: 'GET', headers: {}, bytes: 0 },
    { key: 'static', label: 'bare /static (HTTP limit)', url: `${bareUrl}/static`, method: 'GET', headers: {}, bytes: 0 },
  ];
  const warnings: string[] = [];
  for (const target of targets) {
    const response = await fetchText(target.url, { method: target.method, headers: target.headers, body: target.body });
    const parsed = expectOk(target.label, response);
    target.bytes = Buffer.byteLength(response.text);
    if (target.key.startsWith('graphql')) {
      const page = parsed as GraphQLPage;
      if (page.errors?.length || !page.data) throw new Error(`${target.label} answered errors: ${JSON.stringify(page.errors).slice(0, 500)}`);
      const asRest = graphqlAsRest(page);
      const diff = firstDifference({ total: asRest.total, data: asRest.data }, { total: rest.total, data: rest.data });
      if (diff) warnings.push(`${target.label} does not carry the same data as REST; first difference (GraphQL vs REST): ${diff}`);
    } else if (target.key !== 'rest') {
      const diff = firstDifference(parsed, rest);
      if (diff) warnings.push(`${target.label} body differs from the REST body; first difference (${target.key} vs REST): ${diff}`);
    }
  }
  if (warnings.length) for (const warning of warnings) console.warn(`  WARNING: ${warning}`);
  else console.log(`  checked: /sql body deep-equals the REST body; both GraphQL forms carry the same ${PAGE_LIMIT} workspaces`);

  // The runs, one after another (the whole sequence ROUNDS times; a target's row is its median round).
  const rounds = new Map<string, Measured[]>();
  const windows: Window[] = [];
  const chosen = targets.filter((t) => selected.includes(t.key));
  for (let round = 1; round <= ROUNDS; round += 1) {
    if (ROUNDS > 1) console.log(`  round ${round}/${ROUNDS}`);
    for (const target of chosen) {
      process.stdout.write(`  running ${target.label}...`);
      if (WARMUP > 0) checkAllOk(target, await load(target, WARMUP), 'warm-up');
      const startUs = nowUs();
      const result = await load(target, DURATION);
      checkAllOk(target, result, 'measured');
      if (!target.url.startsWith(bareUrl))
        windows.push({ label: `${target.label}${ROUNDS > 1 ? ` (round ${round})` : ''}`, startUs, endUs: nowUs(), requests: result['2xx'] });
      const measured = { target, rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, requests: result['2xx'] };
      rounds.set(target.key, [...(rounds.get(target.key) ?? []), measured]);
      process.stdout.write(` ${Math.round(result.requests.average)} req/s\n`);
    }
  }
  const results: Measured[] = chosen.map((target) => {
    const runs = [...rounds.get(target.key)!].sort((a, b) => a.rps - b.rps);
    return runs[Math.floor((runs.length - 1) / 2)]!;
  });

  // The table.
  const sql = results.find((r) => r.target.key === 'sql');
  const header = [
    pad('target', 32),
    pad('req/s', 9, true),
    pad('p50 ms', 8, true),
    pad('p99 ms', 8, true),
    pad('vs /sql', 8, true),
    pad('body B', 8, true),
    pad('requests', 9, true),
  ];
  console.log('');
  console.log(
    `cores: ${cpus().length}   node: ${process.version}   duration: ${DURATION}s (+${WARMUP}s warm-up)${ROUNDS > 1 ? ` x ${ROUNDS} rounds (median)` : ''}   connections: ${CONNECTIONS}   load average now: ${loadAverage()}`,
  );
  console.log(header.join('  '));
  console.log(header.map((h) => '-'.repeat(h.length)).join('  '));
  for (const r of results) {
    console.log(
      [
        pad(r.target.label, 32),
        pad(r.rps.toFixed(0), 9, true),
        pad(r.p50.toFixed(0), 8, true),
        pad(r.p99.toFixed(0), 8, true),
        pad(sql ? (r.rps / sql.rps).toFixed(2) : '-', 8, true),
        pad(String(r.target.bytes), 8, true),
        pad(String(r.requests), 9, true),
      ].join('  '),
    );
  }
  console.log("(req/s: mean over the window; latency at autocannon's 1 ms resolution; body B: response body bytes; requests: 2xx answers measured)");
  console.log('');
  const restResult = results.find((r) => r.target.key === 'rest');
  if (restResult && sql) {
    const ratio = restResult.rps / sql.rps;
    console.log(
      `verdict: REST / hand-written SQL = ${ratio.toFixed(2)} (${restResult.rps.toFixed(0)} vs ${sql.rps.toFixed(0)} req/s): ${ratio >= 0.5 ? 'meets' : 'does NOT meet'} the target (>= 0.50)${warnings.length ? ' [bodies differ: see warnings]' : ''}`,
    );
  } else {
    console.log('verdict: n/a (needs both rest and sql in BENCH_TARGETS)');
  }

  if (profileDir) {
    await app.stop(); // the profile is written when the app exits
    console.log('');
    console.log(await summarizeCpuProfiles(profileDir, ROOT, windows));
    console.log(`(profile kept in ${profileDir}; open it in Chrome DevTools > Performance)`);
  }
}

main()
  .then(async () => {
    if (signalled) return;
    await cleanup();
    process.exit(0);
  })
  .catch(async (error: unknown) => {
    if (signalled) return; // the signal handler is cleaning up and exits
    process.stderr.write(`\nbench failed: ${error instanceof Error ? error.message : String(error)}\n`);
    await cleanup();
    process.exit(1);
  });
