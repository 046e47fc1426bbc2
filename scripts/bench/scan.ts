// npm run bench:scan: how fast is the port scanner, and how quickly do live updates reach websocket clients?
//
// One run, loopback only (127.0.0.1), everything in this process except nmap:
//  1. Port-scan throughput over 1,000 contiguous ports of 127.0.0.1 (a block outside the kernel's ephemeral
//     range where nothing listens), 5 of which get a tiny TCP service that greets and closes. Compared:
//       - the engine called directly: scanPorts() (src/scanner/ports.ts) at a few concurrencies, with and
//         without a host rate limiter that is set high enough not to throttle;
//       - nmap -sT (Debian's nmap; apt-get installs it here if it is missing — never a product dependency);
//       - the product path: REST POST /api/v1/api/scans (steps ports + dns) → job queue → worker → database,
//         timed until GET /api/v1/api/scans/{id} says COMPLETED (polled every 20 ms), plus the ports step's
//         own startedAt→finishedAt.
//     One warm-up round, then BENCH_SCAN_ROUNDS rounds (default 3) that run the methods in turn; medians.
//     Every run must find exactly the open ports; a mismatch is printed loudly and the exit code is 1.
//  2. Live-update latency: 100 graphql-ws clients subscribed to workspaceEvents on the same app instance,
//     10 one-port scans started at once; for every scan.updated event each client receives, the time from
//     publish to receipt, three ways (see the notes in the output), and a check that no client missed any;
//     then the same fan-out at idle: 20 probe events published straight into pub/sub, 50 ms apart.
//
// The app is built like src/main.ts does (loadEnv + createApp) on an embedded PGlite in a temp directory,
// with the instance's per-host scan limits raised (see SCAN_LIMITS): the defaults are deliberately polite.
// Every wait has a time limit; sockets, the app and the temp directory are cleaned up, also on error/Ctrl-C.
import { mkdtemp, rm } from 'node:fs/promises';
import { arch, availableParallelism, cpus, loadavg, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:net';
import { monitorEventLoopDelay, performance, type IntervalHistogram } from 'node:perf_hooks';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { loadEnv } from '../../src/env.js';
import { createApp, type App } from '../../src/app.js';
import { parseId } from '../../src/graphql/ids.js';
import { scanPorts } from '../../src/scanner/ports.js';
import { createScopeGuard } from '../../src/scanner/scope.js';
import { createHostRateLimiter, type HostRateLimiter } from '../../src/scanner/rate-limit.js';
import {
  LOOPBACK,
  ensureNmap,
  findFreeBlock,
  fmt,
  median,
  nmapArgs,
  percentile,
  run,
  runNmap,
  sleep,
  startGreetingServer,
  table,
  withTimeout,
} from './scan-lib.js';

const PORT_COUNT = 1_000;
const OPEN_COUNT = 5;
const ROUNDS = positiveInt('BENCH_SCAN_ROUNDS', 3);
const CONCURRENCIES = [100, 500];
const CONNECT_TIMEOUT_MS = 1_000;
const RUN_LIMIT_MS = 60_000;
const WS_CLIENTS = positiveInt('BENCH_WS_CLIENTS', 100);
const LIVE_SCANS = positiveInt('BENCH_LIVE_SCANS', 10);
/** Instance limits for the benchmark (env.ts caps SCAN_MAX_REQUESTS_PER_SECOND at 10,000 and concurrency at 1,000). */
const SCAN_LIMITS = { SCAN_MAX_REQUESTS_PER_SECOND: '10000', SCAN_MAX_CONCURRENCY_PER_HOST: '1000' };
/** Per-scan options of the product runs; 500 and 1,000/s are the API's maxima (schemas.ts). */
const PRODUCT_OPTIONS = { portConcurrency: 500, timeoutMs: CONNECT_TIMEOUT_MS, requestsPerSecond: 1_000 };

function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a whole number above 0 (got ${raw})`);
  return value;
}

const out = (line = '') => process.stdout.write(`${line}\n`);
const progress = (line: string) => process.stderr.write(`  … ${line}\n`);

// ---------------------------------------------------------------- cleanup (once: success, error or signal)

const cleanups: Array<{ label: string; run: () => Promise<unknown> }> = [];
let cleaning: Promise<void> | undefined;

function onCleanup(label: string, run: () => Promise<unknown>): void {
  cleanups.push({ label, run });
}

function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    for (const { label, run: step } of cleanups.reverse()) {
      try {
        await withTimeout(step(), 20_000, `cleanup (${label})`);
      } catch (error) {
        process.stderr.write(`cleanup (${label}) failed: ${error instanceof Error ? error.message : String(error)}\n`);
      }
    }
  })();
  return cleaning;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    process.stderr.write(`\n${signal}: cleaning up\n`);
    const force = setTimeout(() => process.exit(130), 25_000);
    force.unref();
    void cleanup().finally(() => process.exit(130));
  });
}

// ---------------------------------------------------------------- the app, through its front doors

interface ApiResult<T> {
  status: number;
  body: T;
}

function restClient(baseUrl: string) {
  let token: string | undefined;
  let workspaceId: string | undefined;
  async function api<T = any>(method: string, path: string, body?: unknown): Promise<ApiResult<T>> {
    const headers: Record<string, string> = {};
    if (token) headers.authorization = `Bearer ${token}`;
    if (workspaceId) headers['x-workspace-id'] = workspaceId;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, body: parsed as T };
  }
  async function gql<T = any>(query: string, variables?: Record<string, unknown>): Promise<T> {
    const response = await fetch(`${baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query, variables }),
      signal: AbortSignal.timeout(15_000),
    });
    const json = (await response.json()) as { data?: T; errors?: unknown };
    if (json.errors || !json.data) throw new Error(`GraphQL failed: ${JSON.stringify(json.errors)}`);
    return json.data;
  }
  function expect<T>(result: ApiResult<T>, status: number, what: string): T {
    if (result.status !== status) throw new Error(`${what}: expected ${status}, got ${result.status} ${JSON.stringify(result.body)}`);
    return result.body;
  }
  return {
    api,
    gql,
    expect,
    setToken: (value: string) => (token = value),
    setWorkspace: (value: string) => (workspaceId = value),
    token: () => token!,
  };
}
type Rest = ReturnType<typeof restClient>;

interface ScanBody {
  id: string;
  status: string;
  error: string | null;
  steps: { id: string; name: string; status: string; startedAt: string | null; finishedAt: string | null }[];
}

async function startScan(rest: Rest, targetId: string, options: Record<string, unknown>): Promise<ScanBody> {
  return rest.expect(await rest.api<ScanBody>('POST', '/api/v1/api/scans', { targetId, options }), 201, 'start scan');
}

/** Polls the scan every `everyMs` until it is COMPLETED; a failed or cancelled scan, or the time limit, throws. */
async function waitCompleted(rest: Rest, scanId: string, everyMs: number, limitMs: number): Promise<{ scan: ScanBody; at: number }> {
  const deadline = performance.now() + limitMs;
  for (;;) {
    const scan = rest.expect(await rest.api<ScanBody>('GET', `/api/v1/api/scans/${scanId}`), 200, 'get scan');
    const at = performance.now();
    if (scan.status === 'COMPLETED') return { scan, at };
    if (scan.status === 'FAILED' || scan.status === 'CANCELLED') throw new Error(`scan ${scanId} ended ${scan.status}: ${scan.error}`);
    if (at > deadline) throw new Error(`scan ${scanId} not COMPLETED within ${limitMs / 1000}s (status ${scan.status})`);
    await sleep(everyMs);
  }
}

// ---------------------------------------------------------------- part 1: port-scan methods

interface Method {
  name: string;
  /** One run: elapsed ms and the open ports it found. */
  run(): Promise<{ ms: number; open: number[]; extraMs?: number }>;
  runs: { ms: number; extraMs?: number }[];
  mismatches: string[];
  /** Label of the second timing column (nmap's own figure, the ports step's own duration). */
  extraLabel?: string;
}

function sameSet(found: number[], expected: number[]): boolean {
  return found.length === expected.length && found.every((port, i) => port === expected[i]);
}

// ---------------------------------------------------------------- part 2: live updates

interface Received {
  key: string;
  at: string;
  type: string;
  recvPerf: number;
  recvDate: number;
}

interface LiveClient {
  client: Client;
  /** Events from the scans (product publishes). */
  events: Received[];
  /** Probe events published straight into pub/sub while nothing else runs. */
  probes: Received[];
  readySeen: boolean;
  error?: unknown;
}

const SUBSCRIPTION = 'subscription Events($id: ID!) { workspaceEvents(workspaceId: $id) { type workspaceId entityId at } }';
const READY_TYPE = 'bench.ready';
const PROBE_TYPE = 'bench.probe';
const PROBES = 20;

type EventPayload = { type: string; workspaceId: string; entityId: string; at: string };
// The subscription answers entity ids as global ids (the published payload holds the raw UUID): compare the UUIDs.
const keyOf = (event: EventPayload) => `${event.type}|${parseId(event.entityId)?.id ?? event.entityId}|${event.at}`;

interface Published {
  payload: EventPayload;
  perf: number;
}

interface Delivery {
  published: number;
  precise: number[];
  mixed: number[];
  byDate: number[];
  missing: number;
  extra: number;
  complete: number;
}

/** Matches every receipt to its publish (same type, entity and `at`, in order) and counts what is missing. */
function analyze(published: readonly Published[], received: readonly (readonly Received[])[]): Delivery {
  const publishTimes = new Map<string, number[]>();
  for (const { payload, perf } of published) {
    const list = publishTimes.get(keyOf(payload)) ?? [];
    list.push(perf);
    publishTimes.set(keyOf(payload), list);
  }
  const result: Delivery = { published: published.length, precise: [], mixed: [], byDate: [], missing: 0, extra: 0, complete: 0 };
  for (const events of received) {
    const seen = new Map<string, number>();
    for (const event of events) {
      const index = seen.get(event.key) ?? 0;
      seen.set(event.key, index + 1);
      const publishedAt = publishTimes.get(event.key)?.[index];
      if (publishedAt === undefined) {
        result.extra += 1;
        continue;
      }
      result.precise.push(event.recvPerf - publishedAt);
      result.mixed.push(performance.timeOrigin + event.recvPerf - Date.parse(event.at));
      result.byDate.push(event.recvDate - Date.parse(event.at));
    }
    let missing = 0;
    for (const [key, times] of publishTimes) missing += Math.max(0, times.length - (seen.get(key) ?? 0));
    result.missing += missing;
    if (missing === 0) result.complete += 1;
  }
  return result;
}

/** Waits until nothing new was published for 300 ms and every client has as many events as were published. */
async function settle(published: readonly unknown[], received: () => number[], limitMs: number): Promise<void> {
  const deadline = performance.now() + limitMs;
  let lastCount = -1;
  let stableSince = performance.now();
  for (;;) {
    const now = performance.now();
    if (published.length !== lastCount) {
      lastCount = published.length;
      stableSince = now;
    }
    if ((received().every((n) => n >= published.length) && now - stableSince >= 300) || now > deadline) return;
    await sleep(20);
  }
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const started = performance.now();
  const loadAtStart = loadavg();
  const cpuList = cpus();
  const ulimit = await run('sh', ['-c', 'ulimit -n'], 5_000)
    .then((r) => r.stdout.trim())
    .catch(() => '?');
  const nmapVersion = await ensureNmap(progress);

  // A block of 1,000 closed ports, then 5 greeting services at random places inside it.
  const block = await findFreeBlock(PORT_COUNT);
  const offsets = new Set<number>();
  while (offsets.size < OPEN_COUNT) offsets.add(Math.floor(Math.random() * PORT_COUNT));
  const expected = [...offsets].map((offset) => block.lo + offset).sort((a, b) => a - b);
  const servers: Server[] = [];
  onCleanup('open-port servers', () => Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve)))));
  for (const port of expected) servers.push(await startGreetingServer(port));
  const ports = Array.from({ length: PORT_COUNT }, (_, i) => block.lo + i);

  // The app, as src/main.ts builds it, on an embedded database in a temp directory.
  const dataDir = await mkdtemp(join(tmpdir(), 'perimeter-bench-scan-'));
  onCleanup('temp dir', () => rm(dataDir, { recursive: true, force: true }));
  const env = loadEnv({
    NODE_ENV: 'production',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    AUTH_SECRET: randomBytes(32).toString('base64url'),
    SCAN_ALLOWED_NETWORKS: '127.0.0.0/8',
    QUEUE_SUPERVISE_SECONDS: '1',
    PUBLIC_URL: 'http://127.0.0.1',
    // 100 dashboards from one address: above the per-client websocket cap a real instance keeps (default 50).
    WS_MAX_CONNECTIONS_PER_CLIENT: '200',
    ...SCAN_LIMITS,
  });
  progress('starting the app (embedded PGlite, migrations)...');
  const appStarted = performance.now();
  const app: App = await withTimeout(createApp({ env }), 120_000, 'createApp');
  onCleanup('app', () => app.stop());
  const baseUrl = await app.listen(0, LOOPBACK);
  const appStartMs = performance.now() - appStarted;

  const rest = restClient(baseUrl);
  const signUp = rest.expect(
    await rest.api<{ token: string }>('POST', '/api/v1/api/auth/sign-up/email', {
      name: 'Bench',
      email: `bench.${Date.now()}@example.test`,
      password: 'correct horse battery staple',
    }),
    200,
    'sign up',
  );
  rest.setToken(signUp.token);
  const workspace = rest.expect(await rest.api<{ id: string }>('POST', '/api/v1/api/workspaces', { name: 'Scan bench' }), 201, 'create workspace');
  rest.setWorkspace(workspace.id);
  const target = rest.expect(await rest.api<{ id: string }>('POST', '/api/v1/api/targets', { value: LOOPBACK }), 201, 'add target');

  // ------------------------------------------------------------ part 1
  const guard = createScopeGuard({ allowedNetworks: ['127.0.0.0/8'] });
  const engine = (concurrency: number, limiter?: () => HostRateLimiter) => async () => {
    const options = { address: LOOPBACK, ports, concurrency, timeoutMs: CONNECT_TIMEOUT_MS, guard, limiter: limiter?.() };
    const t0 = performance.now();
    const found = await withTimeout(scanPorts(options), RUN_LIMIT_MS, `scanPorts c=${concurrency}`);
    return { ms: performance.now() - t0, open: found.map((service) => service.port) };
  };
  const methods: Method[] = [
    ...CONCURRENCIES.map((c) => ({ name: `engine scanPorts, concurrency ${c}`, run: engine(c), runs: [], mismatches: [] })),
    {
      name: 'engine scanPorts, concurrency 500 + host limiter (1000 in flight, 100k/s)',
      run: engine(500, () => createHostRateLimiter({ maxConcurrentPerHost: 1_000, maxPerSecondPerHost: 100_000 })),
      runs: [],
      mismatches: [],
    },
    {
      name: `nmap ${nmapArgs(block.lo, block.hi).join(' ')}`,
      extraLabel: "nmap's own",
      run: async () => {
        const result = await runNmap(block.lo, block.hi, RUN_LIMIT_MS);
        return { ms: result.wallMs, open: result.open, extraMs: result.reportedMs };
      },
      runs: [],
      mismatches: [],
    },
    {
      name: 'product: REST → queue → worker (dns + ports), until COMPLETED',
      extraLabel: 'ports step',
      run: async () => {
        const t0 = performance.now();
        const scan = await startScan(rest, target.id, { steps: ['ports'], ports: `${block.lo}-${block.hi}`, ...PRODUCT_OPTIONS });
        const done = await waitCompleted(rest, scan.id, 20, RUN_LIMIT_MS);
        const step = done.scan.steps.find((s) => s.name === 'ports');
        if (!step?.startedAt || !step.finishedAt) throw new Error(`scan ${scan.id} has no timed ports step`);
        const row = await app.deps.prisma.scanStep.findUniqueOrThrow({ where: { id: step.id }, select: { output: true } });
        const services = (row.output as { services?: { port: number }[] } | null)?.services ?? [];
        return {
          ms: done.at - t0,
          open: services.map((s) => s.port).sort((a, b) => a - b),
          extraMs: Date.parse(step.finishedAt) - Date.parse(step.startedAt),
        };
      },
      runs: [],
      mismatches: [],
    },
  ];

  for (let round = 0; round <= ROUNDS; round++) {
    progress(round === 0 ? 'port scans: warm-up round' : `port scans: round ${round}/${ROUNDS}`);
    for (const method of methods) {
      const result = await method.run();
      if (!sameSet(result.open, expected)) {
        method.mismatches.push(`round ${round}: found [${result.open.join(', ')}], expected [${expected.join(', ')}]`);
      }
      if (round > 0) method.runs.push({ ms: result.ms, extraMs: result.extraMs });
    }
  }

  // ------------------------------------------------------------ part 2
  progress(`live updates: connecting ${WS_CLIENTS} websocket clients...`);
  const { workspaces } = await rest.gql<{ workspaces: { edges: { node: { id: string; databaseId: string } }[] } }>(
    '{ workspaces(first: 1) { edges { node { id databaseId } } } }',
  );
  const globalId = workspaces.edges.find((edge) => edge.node.databaseId === workspace.id)?.node.id;
  if (!globalId) throw new Error('the workspace is missing from GraphQL workspaces(first: 1)');

  // Server side: the moment each workspace event is handed to pub/sub (wrapping publish, in this process only).
  const published: { scans: Published[]; probes: Published[] } = { scans: [], probes: [] };
  let recording: keyof typeof published | undefined;
  const pubsub = app.deps.pubsub as unknown as { publish: (...args: unknown[]) => void };
  const originalPublish = pubsub.publish.bind(pubsub);
  pubsub.publish = (...args: unknown[]) => {
    const perf = performance.now();
    const payload = args[2] as EventPayload | undefined;
    if (recording && args[0] === 'workspace:event' && args[1] === workspace.id && payload && payload.type !== READY_TYPE) {
      published[recording].push({ payload, perf });
    }
    originalPublish(...args);
  };
  onCleanup('pubsub wrapper', async () => {
    pubsub.publish = originalPublish;
  });

  const wsUrl = `${baseUrl.replace(/^http/, 'ws')}/graphql`;
  const clients: LiveClient[] = [];
  onCleanup('websocket clients', () => Promise.all(clients.map((live) => Promise.resolve(live.client.dispose()))));
  for (let i = 0; i < WS_CLIENTS; i++) {
    const live: LiveClient = {
      client: createClient({
        url: wsUrl,
        webSocketImpl: WebSocket,
        connectionParams: { authorization: `Bearer ${rest.token()}` },
        retryAttempts: 0,
        lazy: true,
      }),
      events: [],
      probes: [],
      readySeen: false,
    };
    live.client.subscribe<{ workspaceEvents: EventPayload }>(
      { query: SUBSCRIPTION, variables: { id: globalId } },
      {
        next: (result) => {
          const recvPerf = performance.now();
          const recvDate = Date.now();
          const event = result.data?.workspaceEvents;
          if (!event) {
            live.error ??= result.errors ?? 'empty result';
            return;
          }
          if (event.type === READY_TYPE) {
            live.readySeen = true;
            return;
          }
          (event.type === PROBE_TYPE ? live.probes : live.events).push({ key: keyOf(event), at: event.at, type: event.type, recvPerf, recvDate });
        },
        error: (error) => {
          live.error ??= error;
        },
        complete: () => undefined,
      },
    );
    clients.push(live);
  }

  // Every subscription is live once every client has received a marker event published straight into pub/sub.
  const readyDeadline = performance.now() + 30_000;
  for (let n = 0; !clients.every((live) => live.readySeen); n++) {
    const failed = clients.find((live) => live.error);
    if (failed) throw new Error(`a websocket client failed: ${JSON.stringify(failed.error)}`);
    if (performance.now() > readyDeadline) throw new Error(`only ${clients.filter((l) => l.readySeen).length}/${WS_CLIENTS} subscriptions live after 30s`);
    app.deps.pubsub.publish('workspace:event', workspace.id, {
      type: READY_TYPE,
      workspaceId: workspace.id,
      entityId: `ready-${n}`,
      at: new Date().toISOString(),
    });
    await sleep(100);
  }
  await sleep(200); // let late markers drain
  recording = 'scans';
  const loopDelay = { scans: monitorEventLoopDelay({ resolution: 5 }), probes: monitorEventLoopDelay({ resolution: 5 }) };
  loopDelay.scans.enable();

  progress(`live updates: ${LIVE_SCANS} one-port scans at once...`);
  const liveScans = await Promise.all(
    Array.from({ length: LIVE_SCANS }, () => startScan(rest, target.id, { steps: ['ports'], ports: String(expected[0]), timeoutMs: CONNECT_TIMEOUT_MS })),
  );
  await Promise.all(liveScans.map((scan) => waitCompleted(rest, scan.id, 50, RUN_LIMIT_MS)));

  await settle(published.scans, () => clients.map((live) => live.events.length), 15_000);

  // The same fan-out with nothing else running: probe events published straight into pub/sub, one every 50 ms.
  progress(`live updates: ${PROBES} probe events with no scans running...`);
  loopDelay.scans.disable();
  recording = 'probes';
  loopDelay.probes.enable();
  for (let n = 0; n < PROBES; n++) {
    app.deps.pubsub.publish('workspace:event', workspace.id, {
      type: PROBE_TYPE,
      workspaceId: workspace.id,
      entityId: `probe-${n}`,
      at: new Date().toISOString(),
    });
    await sleep(50);
  }
  await settle(published.probes, () => clients.map((live) => live.probes.length), 10_000);
  loopDelay.probes.disable();
  recording = undefined;

  const scanDelivery = analyze(
    published.scans,
    clients.map((live) => live.events),
  );
  const probeDelivery = analyze(
    published.probes,
    clients.map((live) => live.probes),
  );
  const clientErrors = clients.filter((live) => live.error).length;
  const typeCounts = new Map<string, number>();
  for (const { payload } of published.scans) typeCounts.set(payload.type, (typeCounts.get(payload.type) ?? 0) + 1);

  // ------------------------------------------------------------ report
  out();
  out('Perimeter scan benchmark (loopback only: 127.0.0.1)');
  out('='.repeat(60));
  out(`machine   ${cpuList.length} logical cores (availableParallelism ${availableParallelism()}), ${cpuList[0]?.model ?? 'unknown CPU'}`);
  out(`          ${arch()} Linux ${release()}, ${fmt(totalmem() / 2 ** 30, 1)} GiB RAM, ulimit -n ${ulimit}`);
  out(
    `load      1/5/15-min load average at start ${loadAtStart.map((l) => l.toFixed(2)).join(' ')}, at end ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} (other work on this machine skews results)`,
  );
  out(`runtime   node ${process.version}, ${nmapVersion}`);
  out(`app       in-process createApp(), embedded PGlite (${dataDir}), started in ${fmt(appStartMs / 1000, 1)} s, ${baseUrl}`);
  out(
    `limits    SCAN_MAX_REQUESTS_PER_SECOND=${SCAN_LIMITS.SCAN_MAX_REQUESTS_PER_SECOND} SCAN_MAX_CONCURRENCY_PER_HOST=${SCAN_LIMITS.SCAN_MAX_CONCURRENCY_PER_HOST} for this benchmark`,
  );
  out('          (defaults 100/s and 64 per host are deliberately polite: a 1,000-port sweep would take ~10 s;');
  out('          env.ts caps the rate at 10,000/s). Per scan: portConcurrency 500, requestsPerSecond 1000 (API maxima),');
  out(`          timeoutMs ${CONNECT_TIMEOUT_MS}.`);
  out();
  out(`1. Port-scan throughput: ${PORT_COUNT} ports ${block.lo}-${block.hi} on ${LOOPBACK} (outside ephemeral ${block.ephemeral.join('-')}),`);
  out(`   ${OPEN_COUNT} open: ${expected.join(', ')} (each greets with an SSH-style banner and closes, so banner grabs do not wait).`);
  out(`   1 warm-up round + ${ROUNDS} timed rounds, methods interleaved; median of the timed runs.`);
  out();
  const nmap = methods.find((m) => m.name.startsWith('nmap'))!;
  const nmapRate = PORT_COUNT / (median(nmap.runs.map((r) => r.ms)) / 1000);
  const rows: string[][] = [];
  for (const method of methods) {
    const medianMs = median(method.runs.map((r) => r.ms));
    const rate = PORT_COUNT / (medianMs / 1000);
    rows.push([
      method.name,
      method.runs.map((r) => fmt(r.ms, 0)).join(' / '),
      fmt(medianMs, 1),
      fmt(rate, 0),
      fmt(rate / nmapRate, 2),
      method.mismatches.length ? `MISMATCH x${method.mismatches.length}` : `${OPEN_COUNT}/${OPEN_COUNT} exact`,
    ]);
    if (method.extraLabel) {
      const extraMedian = median(method.runs.map((r) => r.extraMs ?? Number.NaN));
      const extraRate = PORT_COUNT / (extraMedian / 1000);
      rows.push([
        `  └ ${method.extraLabel} time${method.extraLabel === 'ports step' ? ' (startedAt→finishedAt, ms resolution)' : ' ("scanned in", excludes start-up)'}`,
        method.runs.map((r) => fmt(r.extraMs ?? Number.NaN, 0)).join(' / '),
        fmt(extraMedian, 1),
        fmt(extraRate, 0),
        fmt(extraRate / nmapRate, 2),
        '',
      ]);
    }
  }
  out(table(['method', 'runs (ms)', 'median ms', 'ports/s', 'vs nmap', 'open ports'], rows, new Set([1, 2, 3, 4])));
  out('   ports/s = 1000 / median wall time; "vs nmap" divides by nmap\'s wall-clock ports/s (nmap = 1.00).');
  out('   nmap wall time includes process start-up; the product time includes REST, the job queue (pg-boss polling),');
  out('   the dns step, database writes and the 20 ms status polling.');
  const allMismatches = methods.flatMap((m) => m.mismatches.map((line) => `${m.name}: ${line}`));
  if (allMismatches.length) {
    out();
    out('!!!!!!!!!! OPEN-PORT MISMATCH !!!!!!!!!!');
    for (const line of allMismatches) out(`!!! ${line}`);
  }

  out();
  out(`2. Live-update latency: ${WS_CLIENTS} graphql-ws clients on ${wsUrl}, each subscribed to workspaceEvents.`);
  out(`   a) during scans: ${LIVE_SCANS} one-port scans (port ${expected[0]}) started at once; events published: ${published.scans.length}`);
  out(`      (${[...typeCounts].map(([type, n]) => `${type} ${n}`).join(', ') || 'none'}).`);
  out(`   b) idle: ${PROBES} probe events published straight into pub/sub, 50 ms apart, nothing else running`);
  out('      (same path from pub/sub on: subscription, GraphQL execution, websocket, client).');
  out('   Server and clients share this process and its event loop (and the embedded PGlite runs on it too).');
  out();
  const latencyRow = (phase: string, name: string, values: number[], resolution: string) => {
    const sorted = [...values].sort((a, b) => a - b);
    return [
      phase,
      name,
      resolution,
      String(sorted.length),
      fmt(percentile(sorted, 50), 2),
      fmt(percentile(sorted, 99), 2),
      fmt(sorted.at(-1) ?? Number.NaN, 2),
    ];
  };
  out(
    table(
      ['phase', 'measure (receipt − publish)', 'resolution', 'samples', 'p50 ms', 'p99 ms', 'max ms'],
      [
        latencyRow('a) scans', 'performance.now() at receipt − at publish() call', scanDelivery.precise, '~1 µs (monotonic)'),
        latencyRow('a) scans', 'timeOrigin+performance.now() − Date.parse(at)', scanDelivery.mixed, '`at` 1 ms (floored)'),
        latencyRow('a) scans', 'Date.now() − Date.parse(at)', scanDelivery.byDate, '1 ms both sides'),
        latencyRow('b) idle', 'performance.now() at receipt − at publish() call', probeDelivery.precise, '~1 µs (monotonic)'),
        latencyRow('b) idle', 'Date.now() − Date.parse(at)', probeDelivery.byDate, '1 ms both sides'),
      ],
      new Set([3, 4, 5, 6]),
    ),
  );
  out('   The performance.now() rows are the precise figures: the bench wraps pubsub.publish in-process and records');
  out('   performance.now() when each event is handed over (µs after `at` is taken). `at` is an ISO string with');
  out('   millisecond resolution, so the Date.parse(at) rows carry up to +1 ms of truncation (Date.now() adds ±1 ms).');
  const delay = (h: IntervalHistogram) => `p50 ${fmt(h.percentile(50) / 1e6, 1)} ms, p99 ${fmt(h.percentile(99) / 1e6, 1)} ms, max ${fmt(h.max / 1e6, 1)} ms`;
  out(`   event-loop delay of this process (monitorEventLoopDelay, 5 ms sampling): a) ${delay(loopDelay.scans)}; b) ${delay(loopDelay.probes)}`);
  const lossOk = (d: Delivery) => d.missing === 0 && d.extra === 0 && clientErrors === 0 && d.complete === WS_CLIENTS && d.published > 0;
  for (const [phase, d] of [
    ['a) scans', scanDelivery],
    ['b) idle', probeDelivery],
  ] as const) {
    out(
      `   delivery ${phase}: ${d.complete}/${WS_CLIENTS} clients received every one of ${d.published} events; samples ${d.precise.length}/${d.published * WS_CLIENTS}; ` +
        `missing ${d.missing}, unmatched ${d.extra}, client errors ${clientErrors} → ${lossOk(d) ? 'NO LOSS' : '!!! LOSS OR ERRORS !!!'}`,
    );
  }
  out();
  out(`total ${fmt((performance.now() - started) / 1000, 1)} s`);
  if (allMismatches.length || !lossOk(scanDelivery) || !lossOk(probeDelivery)) process.exitCode = 1;
}

main()
  .catch((error: unknown) => {
    process.stderr.write(`bench:scan failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  })
  .finally(async () => {
    await cleanup();
    // PGlite and pg-boss may leave timers behind: leave explicitly.
    process.exit(process.exitCode ?? 0);
  });
