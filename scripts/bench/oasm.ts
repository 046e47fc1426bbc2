// npm run bench:oasm: Perimeter against OASM (the rival: NestJS + TypeORM) on the seed's first request, side by side.
//
// Same data on both: one user who owns 200 workspaces, created through each product's own REST API (name and
// description), nothing else in them. Then autocannon, BENCH_CONNECTIONS (default 20) connections, on
//   GET {base}/workspaces?page=1&limit=10&sortBy=createdAt&sortOrder=DESC&isArchived=false
// against OASM (its session cookie), Perimeter on PostgreSQL over REST, GraphQL POST and GraphQL GET (the same page),
// and Perimeter on its embedded default over REST; the targets take turns, BENCH_ROUNDS times (median shown).
//
// OASM is not a dependency of this repository: run it yourself on this machine, on 127.0.0.1, against the same
// PostgreSQL server, and give its address and a signed-in session cookie:
//   BENCH_OASM_URL          e.g. http://127.0.0.1:6276 (loopback only)
//   BENCH_OASM_COOKIE       the Cookie header of a signed-in OASM session (`session=…`), or
//   BENCH_OASM_COOKIE_FILE  a file holding it
// The OASM user must own exactly 200 workspaces (OASM caps creation at 5 per owner; create them in turns, moving
// ownership aside meanwhile). The run checks that OASM answers 10 rows of a total of 200, as Perimeter must.
// Other settings: BENCH_DATABASE_URL, BENCH_DURATION (5), BENCH_WARMUP (1), BENCH_PRIME (2: seconds each target runs
// once, unmeasured, before the first round), BENCH_ROUNDS (3), BENCH_LOG_LEVEL, and
// BENCH_APP_DIR (run src/main.ts from another checkout, e.g. an exported older commit, as bench:api).
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startApp, signIn } from './api-app.js';
import {
  assertLoopback,
  createDatabase,
  expectOk,
  fetchText,
  loadAverage,
  measure,
  median,
  onCleanup,
  pad,
  positiveInt,
  prime,
  runMain,
  type Measured,
  type Target,
} from './api-lib.js';
import { OASM_GRAPHQL, OASM_REST_PATH, graphqlTargets, restTarget } from './api-targets.js';

const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');
const ADMIN_URL = process.env.BENCH_DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/postgres';
const DURATION = positiveInt('BENCH_DURATION', 5);
const WARMUP = positiveInt('BENCH_WARMUP', 1, true);
const PRIME = positiveInt('BENCH_PRIME', 2, true);
const CONNECTIONS = positiveInt('BENCH_CONNECTIONS', 20);
const ROUNDS = positiveInt('BENCH_ROUNDS', 3);
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL || 'info';
const WORKSPACES = 200;
/** OASM's path for the seed's request: its global prefix is /api, Perimeter's REST facade adds /api/v1. */
const OASM_PATH = OASM_REST_PATH.replace('/api/v1/api/', '/api/');

function oasmSettings(): { url: string; cookie: string } {
  const url = process.env.BENCH_OASM_URL;
  const file = process.env.BENCH_OASM_COOKIE_FILE;
  const cookie = process.env.BENCH_OASM_COOKIE || (file ? readFileSync(file, 'utf8').trim() : '');
  if (!url || !cookie) {
    throw new Error(
      'bench:oasm needs a running OASM: set BENCH_OASM_URL (127.0.0.1) and BENCH_OASM_COOKIE or BENCH_OASM_COOKIE_FILE (see the header of scripts/bench/oasm.ts)',
    );
  }
  assertLoopback(url);
  return { url: url.replace(/\/$/, ''), cookie: cookie.replace(/^cookie:\s*/i, '') };
}

/** 200 workspaces through Perimeter's REST API, as OASM's were made through its own. */
async function createWorkspaces(appUrl: string, token: string): Promise<void> {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  for (let i = 1; i <= WORKSPACES; i += 1) {
    const name = `bench-ws-${String(i).padStart(3, '0')}`;
    const body = JSON.stringify({ name, description: `Benchmark workspace ${name}` });
    expectOk(`create ${name}`, await fetchText(`${appUrl}/api/v1/api/workspaces`, { method: 'POST', headers, body }));
  }
}

/** The page both must answer: 10 rows of a total of 200. */
function checkPage(label: string, response: { status: number; text: string }): number {
  const page = expectOk(label, response) as { data?: unknown[]; total?: number };
  if (page.data?.length !== 10 || page.total !== WORKSPACES) {
    throw new Error(`${label}: expected 10 rows of ${WORKSPACES}, got ${page.data?.length} of ${page.total}: ${response.text.slice(0, 300)}`);
  }
  return Buffer.byteLength(response.text);
}

async function main(): Promise<void> {
  const oasm = oasmSettings();
  console.log("Perimeter vs OASM: the seed's workspace list (issue 12)");
  console.log(`  machine: ${cpus().length} cores, Node ${process.version}, load average ${loadAverage()}`);
  console.log(`  load:    ${CONNECTIONS} connections, ${WARMUP}s warm-up + ${DURATION}s per target, ${ROUNDS} rounds (median shown)`);

  const oasmTarget: Target = { key: 'oasm', label: 'OASM REST', url: `${oasm.url}${OASM_PATH}`, method: 'GET', headers: { cookie: oasm.cookie }, bytes: 0 };
  oasmTarget.bytes = checkPage('OASM', await fetchText(oasmTarget.url, { headers: oasmTarget.headers }));

  const databaseUrl = await createDatabase(ADMIN_URL);
  const tmp = await mkdtemp(join(tmpdir(), 'perimeter-bench-oasm-'));
  onCleanup('remove temp dir', () => rm(tmp, { recursive: true, force: true }));
  const common = { appDir: resolve(process.env.BENCH_APP_DIR || ROOT), logLevel: LOG_LEVEL };
  const onPostgres = await startApp('Perimeter on PostgreSQL', { ...common, databaseUrl, dataDir: join(tmp, 'data-pg') });
  const embedded = await startApp('Perimeter on the embedded database', { ...common, dataDir: join(tmp, 'data-embedded') });
  const targets: Target[] = [oasmTarget];
  for (const [key, app] of [
    ['pg', onPostgres],
    ['embedded', embedded],
  ] as const) {
    const { token } = await signIn(app.url, 'sign-up');
    const auth = { authorization: `Bearer ${token}` };
    const started = Date.now();
    await createWorkspaces(app.url, token);
    console.log(
      `  ${WORKSPACES} workspaces created through ${key === 'pg' ? 'PostgreSQL' : 'the embedded'} Perimeter's REST API in ${((Date.now() - started) / 1000).toFixed(1)}s`,
    );
    const rest = restTarget(`${key}:rest`, `Perimeter ${key === 'pg' ? 'PostgreSQL' : 'embedded'} REST`, app.url, OASM_REST_PATH, auth);
    rest.bytes = checkPage(rest.label, await fetchText(rest.url, { headers: rest.headers }));
    targets.push(rest);
    if (key !== 'pg') continue;
    for (const target of graphqlTargets('pg', 'Perimeter PostgreSQL', app.url, OASM_GRAPHQL, auth)) {
      const response = await fetchText(target.url, { method: target.method, headers: target.headers, body: target.body });
      const page = (expectOk(target.label, response) as { data?: { workspaces?: { totalCount: number; edges: unknown[] } } }).data?.workspaces;
      if (page?.totalCount !== WORKSPACES || page.edges.length !== 10)
        throw new Error(`${target.label}: expected 10 of ${WORKSPACES}: ${response.text.slice(0, 300)}`);
      target.bytes = Buffer.byteLength(response.text);
      targets.push(target);
    }
  }

  const rounds = new Map<string, Measured[]>();
  await prime(targets, PRIME, CONNECTIONS);
  for (let round = 1; round <= ROUNDS; round += 1) {
    console.log(`  round ${round}/${ROUNDS}`);
    for (const target of targets) {
      process.stdout.write(`    ${target.label}...`);
      const measured = await measure(target, { seconds: DURATION, warmup: WARMUP, connections: CONNECTIONS });
      rounds.set(target.key, [...(rounds.get(target.key) ?? []), measured]);
      process.stdout.write(` ${Math.round(measured.rps)} req/s, p99 ${measured.p99} ms (load ${loadAverage()})\n`);
    }
  }

  const result = (key: string) => median(rounds.get(key)!);
  const base = result('oasm');
  console.log('');
  console.log(
    `${pad('target', 34)} ${pad('req/s', 8, true)} ${pad('mean ms', 8, true)} ${pad('p99 ms', 7, true)} ${pad('bytes', 6, true)} ${pad('× OASM', 7, true)}`,
  );
  for (const target of targets) {
    const measured = result(target.key);
    console.log(
      `${pad(target.label, 34)} ${pad(measured.rps.toFixed(0), 8, true)} ${pad(measured.mean.toFixed(1), 8, true)} ${pad(String(measured.p99), 7, true)} ${pad(String(target.bytes), 6, true)} ${pad((measured.rps / base.rps).toFixed(2), 7, true)}`,
    );
  }
  console.log('');
  const verdict = (label: string, key: string, goal: number) => {
    const value = result(key).rps / base.rps;
    console.log(`verdict: ${pad(label, 40)} ${value.toFixed(2)} ${value >= goal ? 'meets' : 'does NOT meet'} >= ${goal.toFixed(2)} × OASM`);
  };
  verdict('REST on PostgreSQL', 'pg:rest', 2);
  verdict('GraphQL POST on PostgreSQL', 'pg:graphql-post', 2);
  verdict('GraphQL GET on PostgreSQL', 'pg:graphql-get', 2);
  verdict('REST on the embedded default', 'embedded:rest', 1);
}

runMain(main);
