// npm run bench:api: how fast are the REST and GraphQL list pages, against the least work that can produce them?
//
// One run: a fresh PostgreSQL database on the local server and the real app (src/main.ts) on it; one user signed
// up through the REST API, 1,000 workspaces (seed.ts), a small workspace (100 targets, 1,000 assets and findings,
// a 200-message conversation) and a large one (20,000 assets, 100,000 findings) inserted set-based (api-seed.ts);
// a bare node:http server answering each page with one hand-written statement (bare-server.ts, api-sql.ts); and a
// second app on the embedded default (PGlite, no DATABASE_URL, a temp data directory seeded the same way).
// Then autocannon against, in turn (the whole sequence BENCH_ROUNDS times, each row its median round):
//   pages      workspaces, targets, assets (kind=host&enabled=true), vulnerabilities (severity=high&status=open),
//              messages: REST GET, GraphQL POST, GraphQL GET, bare /sql/<page>, and REST on PGlite
//   oasm       the seed's GET /api/v1/api/workspaces?page=1&limit=10&sortBy=createdAt&sortOrder=DESC&isArchived=false
//              (REST, GraphQL POST, PGlite REST)
//   large      list/filter/statistics requests on the large and the small workspace at one connection (time per request),
//              over REST and (the lists with their totals) GraphQL POST
//   floor      each surface's cheapest signed-in request (REST GET /version, GraphQL { __typename }, bare /ready):
//              the fixed cost of the edge, and from it the most REST / bare can reach per page
// and a table with the ratios, and one verdict line per goal of issue 12. Everything stays on 127.0.0.1, every
// run is bounded, and the database, child processes and temp files are removed at the end (also on error/Ctrl-C).
//
// Settings (environment):
//   BENCH_DATABASE_URL  admin URL of the local server (default postgresql://postgres@127.0.0.1:5432/postgres)
//   BENCH_DURATION      seconds per target (default 3), after a 1 s warm-up (BENCH_WARMUP)
//   BENCH_PRIME         seconds each target runs once, unmeasured, before the first round (default 2; 0: none)
//   BENCH_LARGE_DURATION seconds per large-workspace request (default 3)
//   BENCH_CONNECTIONS   concurrent connections (default 10)
//   BENCH_ROUNDS        rounds (default 1; use 3 on a shared machine: medians)
//   BENCH_ENDPOINTS     subset of workspaces,targets,assets,vulnerabilities,messages (default all)
//   BENCH_PARTS         subset of pages,oasm,pglite,large,floor (default all)
//   BENCH_LOG_LEVEL     the app's LOG_LEVEL (default info, the production default; output goes to /dev/null)
//   BENCH_CPU_PROF      1: run the PostgreSQL app with --cpu-prof and print where its CPU time went (kept on disk)
//   BENCH_PGLITE_SOCKET a node_modules directory holding @electric-sql/pglite-socket: also measure PGlite served over
//                       the wire protocol from its own process (pglite-server.ts), the app on it through pg
//   BENCH_APP_DIR       run src/main.ts from another checkout (e.g. an exported older commit); default this one
// Default total: about 6 minutes on 2 cores (1 round, priming included).
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LOOPBACK, firstDifference, freePort, startNode, waitForReady } from './lib.js';
import { signIn, startApp as startSharedApp, type AppOptions } from './api-app.js';
import { seed, withClient } from './seed.js';
import { seedApiData, LARGE, SMALL } from './api-seed.js';
import { bareQueries } from './api-sql.js';
import { preparePGlite } from './api-pglite.js';
import { nowUs, summarizeCpuProfiles, type Window } from './cpu-profile.js';
import {
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
import {
  ENDPOINTS,
  FLOOR_GRAPHQL,
  largeWorkspaceTargets,
  FLOOR_REST_PATH,
  OASM_GRAPHQL,
  OASM_REST_PATH,
  PAGE_LIMIT,
  graphqlConnection,
  graphqlQuery,
  graphqlTargets,
  restPath,
  restTarget,
  type Endpoint,
} from './api-targets.js';

const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');
const APP_DIR = resolve(process.env.BENCH_APP_DIR || ROOT);
const ADMIN_URL = process.env.BENCH_DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/postgres';
const DURATION = positiveInt('BENCH_DURATION', 3);
const LARGE_DURATION = positiveInt('BENCH_LARGE_DURATION', 3);
const WARMUP = positiveInt('BENCH_WARMUP', 1, true);
const PRIME = positiveInt('BENCH_PRIME', 2, true);
const CONNECTIONS = positiveInt('BENCH_CONNECTIONS', 10);
const ROUNDS = positiveInt('BENCH_ROUNDS', 1);
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL || 'info';
const CPU_PROF = ['1', 'true', 'yes'].includes((process.env.BENCH_CPU_PROF ?? '').toLowerCase());
const PARTS = ['pages', 'oasm', 'pglite', 'large', 'floor'] as const;
const PGLITE_SOCKET = process.env.BENCH_PGLITE_SOCKET ? resolve(process.env.BENCH_PGLITE_SOCKET) : undefined;

function listSetting<T extends string>(name: string, all: readonly T[]): T[] {
  const chosen = (process.env[name] || all.join(',')).split(',').map((s) => s.trim());
  const unknown = chosen.filter((key) => !all.includes(key as T));
  if (unknown.length) throw new Error(`${name}: unknown ${unknown.join(', ')} (choose from ${all.join(', ')})`);
  return chosen as T[];
}

const startApp = (name: string, options: Omit<AppOptions, 'appDir' | 'logLevel'>) => startSharedApp(name, { ...options, appDir: APP_DIR, logLevel: LOG_LEVEL });

const ratio = (a: number | undefined, b: number | undefined) => (a !== undefined && b ? a / b : undefined);
const fmt = (value: number | undefined, digits = 2) => (value === undefined ? '-' : value.toFixed(digits));

async function main(): Promise<void> {
  const endpoints = listSetting('BENCH_ENDPOINTS', ENDPOINTS);
  const parts = listSetting('BENCH_PARTS', PARTS);
  const has = (part: (typeof PARTS)[number]) => parts.includes(part);

  console.log('Perimeter API benchmark (issue 12)');
  console.log(`  machine: ${cpus().length} cores (${cpus()[0]?.model.trim() ?? 'unknown CPU'}), Node ${process.version}, load average ${loadAverage()}`);
  if (APP_DIR !== ROOT) console.log(`  app:     ${APP_DIR}`);
  console.log(
    `  load:    ${CONNECTIONS} connections, ${WARMUP}s warm-up + ${DURATION}s per target${ROUNDS > 1 ? `, ${ROUNDS} rounds (median shown)` : ''}; app LOG_LEVEL=${LOG_LEVEL}`,
  );
  console.log(`  pages:   ${endpoints.join(', ')}; parts: ${parts.join(', ')}`);

  const databaseUrl = await createDatabase(ADMIN_URL);
  console.log(`  database: ${new URL(databaseUrl).pathname.slice(1)} (dropped at the end)`);
  const tmp = await mkdtemp(join(tmpdir(), 'perimeter-bench-api-'));
  onCleanup('remove temp dir', () => rm(tmp, { recursive: true, force: true }));
  const profileDir = CPU_PROF ? await mkdtemp(join(tmpdir(), 'perimeter-bench-prof-')) : undefined;

  const app = await startApp('app on PostgreSQL', { databaseUrl, dataDir: join(tmp, 'data-pg'), profileDir });
  const signUp = await signIn(app.url, 'sign-up');
  const auth = { authorization: `Bearer ${signUp.token}` };
  let started = Date.now();
  await seed(databaseUrl, signUp.user.id);
  const data = await withClient(databaseUrl, (db) => seedApiData(db, signUp.user.id, { large: has('large') }));
  console.log(
    `  seeded 1,000 workspaces; small workspace ${SMALL.assets} assets / ${SMALL.findings} findings${has('large') ? `; large workspace ${LARGE.assets} assets / ${LARGE.findings} findings` : ''} in ${((Date.now() - started) / 1000).toFixed(1)}s`,
  );

  // The embedded default, prepared while nothing holds its directory.
  let pglite: { url: string; auth: Record<string, string>; conversationId: string; workspaceId: string } | undefined;
  if (has('pglite')) {
    started = Date.now();
    const dataDir = join(tmp, 'data-pglite');
    const pgliteData = await preparePGlite(dataDir, databaseUrl, signUp.user.id);
    console.log(`  PGlite data directory seeded in ${((Date.now() - started) / 1000).toFixed(1)}s`);
    // A copy for the socket server, taken while no process has the directory open.
    if (PGLITE_SOCKET) await cp(dataDir, join(tmp, 'data-socket'), { recursive: true, filter: (path) => !path.endsWith('.lock') });
    const embedded = await startApp('app on PGlite', { dataDir });
    const session = await signIn(embedded.url, 'sign-in');
    pglite = {
      url: embedded.url,
      auth: { authorization: `Bearer ${session.token}` },
      conversationId: pgliteData.conversationId,
      workspaceId: pgliteData.smallWorkspaceId,
    };
  }

  // The same data directory served over the wire protocol from another process, the app on it through pg.
  let socket: typeof pglite;
  if (pglite && PGLITE_SOCKET) {
    const dataDir = join(tmp, 'data-socket');
    const port = await freePort();
    const server = startNode('PGlite socket server (scripts/bench/pglite-server.ts)', ['--import', 'tsx', 'scripts/bench/pglite-server.ts'], {
      cwd: ROOT,
      env: { ...process.env, PORT: String(port), PGLITE_DATA_DIR: join(dataDir, 'pglite'), PGLITE_SOCKET_MODULES: PGLITE_SOCKET },
    });
    onCleanup('stop PGlite socket server', () => server.stop());
    const socketUrl = `postgresql://postgres@${LOOPBACK}:${port}/postgres`;
    const deadline = Date.now() + 120_000;
    for (;;) {
      if (server.exited()) throw new Error(`PGlite socket server exited: ${server.stderrTail()}`);
      const up = await withClient(socketUrl, (client) => client.query('SELECT 1')).then(
        () => true,
        () => false,
      );
      if (up) break;
      if (Date.now() > deadline) throw new Error(`PGlite socket server not up: ${server.stderrTail()}`);
      await new Promise((done) => setTimeout(done, 500));
    }
    const served = await startApp('app on PGlite over a socket', { databaseUrl: socketUrl, dataDir: join(tmp, 'data-socket-app') });
    const session = await signIn(served.url, 'sign-in');
    socket = { ...pglite, url: served.url, auth: { authorization: `Bearer ${session.token}` } };
  }

  // The baseline server.
  const ids = { workspaceId: data.smallWorkspaceId, conversationId: data.conversationId };
  const wsHeaders = (workspaceId: string, base: Record<string, string>) => ({ ...base, 'x-workspace-id': workspaceId });
  const queriesFile = join(tmp, 'bare-queries.json');
  await writeFile(queriesFile, JSON.stringify(bareQueries({ userId: signUp.user.id, ...ids, limit: PAGE_LIMIT })));
  const barePort = await freePort();
  const bareUrl = `http://${LOOPBACK}:${barePort}`;
  const bare = startNode('bare server (scripts/bench/bare-server.ts)', ['--import', 'tsx', 'scripts/bench/bare-server.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(barePort), BARE_DATABASE_URL: databaseUrl, BARE_QUERIES_FILE: queriesFile },
  });
  onCleanup('stop bare server', () => bare.stop());
  await waitForReady(`${bareUrl}/ready`, bare, 60_000);

  // The targets, each checked once: same body (bare, PGlite) or same rows (GraphQL) as REST.
  const pageTargets = new Map<Endpoint, Target[]>();
  const warnings: string[] = [];
  if (has('pages') || has('pglite')) {
    for (const endpoint of endpoints) {
      const headers = endpoint === 'workspaces' ? auth : wsHeaders(ids.workspaceId, auth);
      const rest = restTarget(`${endpoint}:rest`, `${endpoint} REST`, app.url, restPath(endpoint, ids), headers);
      const list: Target[] = [];
      if (has('pages'))
        list.push(rest, ...graphqlTargets(endpoint, endpoint, app.url, graphqlQuery(endpoint, ids), auth), {
          key: `${endpoint}:sql`,
          label: `${endpoint} bare SQL`,
          url: `${bareUrl}/sql/${endpoint}`,
          method: 'GET',
          headers: {},
          bytes: 0,
        });
      if (pglite) {
        const embeddedIds = { workspaceId: pglite.workspaceId, conversationId: pglite.conversationId };
        const embeddedHeaders = endpoint === 'workspaces' ? pglite.auth : wsHeaders(pglite.workspaceId, pglite.auth);
        list.push(restTarget(`${endpoint}:pglite`, `${endpoint} REST PGlite`, pglite.url, restPath(endpoint, embeddedIds), embeddedHeaders));
        if (socket) {
          const socketHeaders = endpoint === 'workspaces' ? socket.auth : wsHeaders(socket.workspaceId, socket.auth);
          list.push(restTarget(`${endpoint}:socket`, `${endpoint} REST PGlite socket`, socket.url, restPath(endpoint, embeddedIds), socketHeaders));
        }
      }
      const reference = expectOk(`${endpoint} REST`, await fetchText(rest.url, { headers: rest.headers })) as { total: number; data: Array<{ id: string }> };
      if (reference.data.length !== PAGE_LIMIT) warnings.push(`${endpoint}: REST page has ${reference.data.length} rows, expected ${PAGE_LIMIT}`);
      for (const target of list) {
        const response = await fetchText(target.url, { method: target.method, headers: target.headers, body: target.body });
        const parsed = expectOk(target.label, response) as Record<string, unknown>;
        target.bytes = Buffer.byteLength(response.text);
        if (target.key.includes('graphql')) {
          const answer = parsed as { data?: Record<string, unknown>; errors?: unknown[] };
          if (answer.errors?.length || !answer.data) throw new Error(`${target.label} answered errors: ${JSON.stringify(answer.errors).slice(0, 500)}`);
          const connection = graphqlConnection(answer.data);
          const diff = firstDifference(connection, { totalCount: reference.total, ids: reference.data.map((row) => row.id).sort() });
          if (diff) warnings.push(`${target.label} does not list the same rows as REST (GraphQL vs REST): ${diff}`);
        } else if (target.key.endsWith(':sql')) {
          const diff = firstDifference(parsed, reference);
          if (diff) warnings.push(`${target.label} body differs from REST (bare vs REST): ${diff}`);
        } else if (target.key.endsWith(':pglite') || target.key.endsWith(':socket')) {
          const page = parsed as { total: number; data: unknown[] };
          if (page.total !== reference.total || page.data.length !== reference.data.length)
            warnings.push(`${target.label}: total ${page.total}, ${page.data.length} rows vs PostgreSQL's ${reference.total}, ${reference.data.length}`);
        }
      }
      pageTargets.set(endpoint, list);
    }
  }
  const oasmTargets: Target[] = [];
  if (has('oasm')) {
    oasmTargets.push(
      restTarget('oasm:rest', 'OASM query REST', app.url, OASM_REST_PATH, auth),
      ...graphqlTargets('oasm', 'OASM query', app.url, OASM_GRAPHQL, auth),
    );
    if (pglite) oasmTargets.push(restTarget('oasm:pglite', 'OASM query REST PGlite', pglite.url, OASM_REST_PATH, pglite.auth));
    if (socket) oasmTargets.push(restTarget('oasm:socket', 'OASM query REST PGlite socket', socket.url, OASM_REST_PATH, socket.auth));
    for (const target of oasmTargets) {
      const response = await fetchText(target.url, { method: target.method, headers: target.headers, body: target.body });
      expectOk(target.label, response);
      target.bytes = Buffer.byteLength(response.text);
    }
  }
  const floorTargets: Target[] = [];
  if (has('floor')) {
    floorTargets.push(
      restTarget('floor:rest', 'floor REST GET /version', app.url, FLOOR_REST_PATH, auth),
      ...graphqlTargets('floor', 'floor { __typename }', app.url, FLOOR_GRAPHQL, auth),
    );
    floorTargets.push({ key: 'floor:sql', label: 'floor bare /ready', url: `${bareUrl}/ready`, method: 'GET', headers: {}, bytes: 0 });
    for (const target of floorTargets)
      expectOk(target.label, await fetchText(target.url, { method: target.method, headers: target.headers, body: target.body }));
  }
  const largeTargets = has('large') ? await largeWorkspaceTargets(app.url, auth, data.smallWorkspaceId, data.largeWorkspaceId) : [];
  if (warnings.length) for (const warning of warnings) console.warn(`  WARNING: ${warning}`);
  else console.log('  checked: each bare /sql body deep-equals its REST body; GraphQL lists the same rows and total; PGlite the same total');

  // The runs.
  const rounds = new Map<string, Measured[]>();
  const windows: Window[] = [];
  const run = async (target: Target, connections = CONNECTIONS, seconds = DURATION) => {
    process.stdout.write(`  ${target.label}...`);
    const startUs = nowUs();
    const measured = await measure(target, { seconds, warmup: WARMUP, connections });
    if (target.url.startsWith(app.url)) windows.push({ label: target.label, startUs, endUs: nowUs(), requests: measured.requests });
    rounds.set(target.key, [...(rounds.get(target.key) ?? []), measured]);
    process.stdout.write(` ${Math.round(measured.rps)} req/s, mean ${measured.mean.toFixed(1)} ms (load ${loadAverage()})\n`);
  };
  await prime([...[...pageTargets.values()].flat(), ...oasmTargets, ...floorTargets], PRIME, CONNECTIONS);
  await prime(
    largeTargets.flatMap(({ small, large }) => [small, large]),
    PRIME,
    1,
  );
  for (let round = 1; round <= ROUNDS; round += 1) {
    if (ROUNDS > 1) console.log(`  round ${round}/${ROUNDS}`);
    for (const list of pageTargets.values()) for (const target of list) await run(target);
    for (const target of [...oasmTargets, ...floorTargets]) await run(target);
    for (const { small, large } of largeTargets) {
      await run(small, 1, LARGE_DURATION);
      await run(large, 1, LARGE_DURATION);
    }
  }
  const result = (key: string) => (rounds.has(key) ? median(rounds.get(key)!) : undefined);

  // The tables.
  console.log('');
  console.log(
    `cores: ${cpus().length}   node: ${process.version}   ${DURATION}s (+${WARMUP}s warm-up, ${PRIME}s primed) per target${ROUNDS > 1 ? ` x ${ROUNDS} rounds (median)` : ''}   connections: ${CONNECTIONS}   load average now: ${loadAverage()}`,
  );
  const header = [
    pad('page', 16),
    pad('REST', 7, true),
    pad('GQL POST', 8, true),
    pad('GQL GET', 8, true),
    pad('bare', 7, true),
    pad('PGlite', 7, true),
    ...(socket ? [pad('PGl sock', 8, true)] : []),
  ];
  const ratioHeader = [
    pad('REST/bare', 9, true),
    pad('POST/REST', 9, true),
    pad('GET/REST', 9, true),
    pad('PGlite/PG', 9, true),
    pad('p99 REST', 8, true),
    pad('p99 PGlite', 10, true),
    ...(socket ? [pad('sock/PG', 7, true), pad('p99 sock', 8, true)] : []),
  ];
  console.log('req/s (median round)');
  console.log([...header, ...ratioHeader].join('  '));
  console.log([...header, ...ratioHeader].map((h) => '-'.repeat(h.length)).join('  '));
  const verdicts: string[] = [];
  const rows = [...endpoints.filter(() => pageTargets.size > 0), ...(oasmTargets.length ? ['oasm'] : []), ...(floorTargets.length ? ['floor'] : [])];
  for (const name of rows) {
    const rest = result(`${name}:rest`);
    const post = result(`${name}:graphql-post`);
    const get = result(`${name}:graphql-get`);
    const sql = result(`${name}:sql`);
    const embedded = result(`${name}:pglite`);
    const served = result(`${name}:socket`);
    console.log(
      [
        pad(name, 16),
        pad(fmt(rest?.rps, 0), 7, true),
        pad(fmt(post?.rps, 0), 8, true),
        pad(fmt(get?.rps, 0), 8, true),
        pad(fmt(sql?.rps, 0), 7, true),
        pad(fmt(embedded?.rps, 0), 7, true),
        ...(socket ? [pad(fmt(served?.rps, 0), 8, true)] : []),
        pad(fmt(ratio(rest?.rps, sql?.rps)), 9, true),
        pad(fmt(ratio(post?.rps, rest?.rps)), 9, true),
        pad(fmt(ratio(get?.rps, rest?.rps)), 9, true),
        pad(fmt(ratio(embedded?.rps, rest?.rps)), 9, true),
        pad(fmt(rest?.p99, 0), 8, true),
        pad(fmt(embedded?.p99, 0), 10, true),
        ...(socket ? [pad(fmt(ratio(served?.rps, rest?.rps)), 7, true), pad(fmt(served?.p99, 0), 8, true)] : []),
      ].join('  '),
    );
    const verdict = (label: string, value: number | undefined, goal: number) => {
      if (value !== undefined && name !== 'floor')
        verdicts.push(`verdict: ${pad(`${name} ${label}`, 36)} ${value.toFixed(2)} ${value >= goal ? 'meets' : 'does NOT meet'} >= ${goal.toFixed(2)}`);
    };
    verdict('REST / bare SQL', ratio(rest?.rps, sql?.rps), 0.5);
    verdict('GraphQL POST / REST', ratio(post?.rps, rest?.rps), 0.8);
    verdict('GraphQL GET / REST', ratio(get?.rps, rest?.rps), 0.8);
    verdict('PGlite / PostgreSQL (REST)', ratio(embedded?.rps, rest?.rps), 0.5);
    verdict('PGlite socket / PostgreSQL (REST)', ratio(served?.rps, rest?.rps), 0.5);
  }
  console.log("(latency at autocannon's 1 ms resolution; bare: one hand-written statement building the same body; PGlite: the app with no DATABASE_URL)");
  const floor = result('floor:rest');
  if (floor) {
    console.log('(floor: REST GET /version, GraphQL { __typename }, bare /ready; signed in, no statement)');
    for (const endpoint of endpoints) {
      const ceiling = ratio(floor.rps, result(`${endpoint}:sql`)?.rps);
      if (ceiling !== undefined) console.log(`ceiling: ${pad(endpoint, 16)} REST / bare can reach at most ${fmt(ceiling)} (the REST floor / its bare figure)`);
    }
  }
  if (largeTargets.length) {
    console.log('');
    // One connection is a closed loop: each request starts when the last one ended, so 1000 / (requests/s) is the
    // mean time per request, exact where autocannon's latencies (whole milliseconds) round a sub-millisecond one.
    console.log('large workspace (1 connection; ms per request = 1000 / requests/s, median round)');
    const largeHeader = [pad('request', 28), pad('1,000 rows', 10, true), pad('large', 8, true), pad('large/1k', 8, true)];
    console.log(largeHeader.join('  '));
    console.log(largeHeader.map((h) => '-'.repeat(h.length)).join('  '));
    const perRequest = (measured: Measured | undefined) => (measured && measured.rps > 0 ? 1000 / measured.rps : undefined);
    for (const { key, label } of largeTargets) {
      const small = perRequest(result(`${key}:small`));
      const large = perRequest(result(`${key}:large`));
      const slower = ratio(large, small);
      console.log([pad(label, 28), pad(fmt(small), 10, true), pad(fmt(large), 8, true), pad(fmt(slower), 8, true)].join('  '));
      if (slower !== undefined)
        verdicts.push(
          `verdict: ${pad(`large ${label}`, 36)} ${slower.toFixed(2)}x the 1,000-row time per request: ${slower <= 2 ? 'meets' : 'does NOT meet'} <= 2.00`,
        );
    }
  }
  console.log('');
  for (const line of verdicts) console.log(line);
  if (warnings.length) console.log(`(${warnings.length} honesty warnings above: bodies or rows differ)`);
  console.log(`load average at the end: ${loadAverage()}`);

  if (profileDir) {
    await app.child.stop(); // the profile is written when the app exits
    console.log('');
    console.log(await summarizeCpuProfiles(profileDir, ROOT, windows));
    console.log(`(profile kept in ${profileDir}; open it in Chrome DevTools > Performance)`);
  }
}

runMain(main);
