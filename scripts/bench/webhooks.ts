// npm run bench:webhooks: how fast webhooks go out, and what the feed and webhooks add to a scan's ingest.
//
// One run, the real app (startTestApp: PGlite, or a fresh PostgreSQL database when TEST_DATABASE_URL is set, as in
// the tests) with its in-process workers (WORKER_CONCURRENCY, default 2), and a loopback receiver answering 204.
//
// 1. Delivery rate. N change events (BENCH_WEBHOOK_EVENTS, default 1,000) written in one transaction with one
//    endpoint subscribed: N deliveries and N jobs queued with them; timed until the receiver has all N and every
//    delivery row says delivered. Side by side, in the same run: the same N signed POSTs sent straight from a loop
//    with the same number in flight (no queue, no rows): the floor that durability is measured against.
// 2. Cost on a scan's ingest of N_ASSETS services (BENCH_WEBHOOK_ASSETS, default 1,000; upsertAssets in one
//    transaction, as the ports step writes them): first sightings (N asset.discovered events) with no endpoint,
//    then with one endpoint subscribed to everything (N deliveries + N jobs in the same transaction; the
//    deliveries drain before the next round). The feed's own share is recordChanges writing the same N events
//    alone; "without the feed" is the ingest minus that share (the feed cannot be switched off: it is how a change
//    is recorded at all).
// Medians of BENCH_WEBHOOK_RUNS (3).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { upsertAssets } from '../../src/modules/assets/ingest.js';
import { recordChanges } from '../../src/modules/changes/record.js';
import type { ChangeInput } from '../../src/modules/changes/types.js';
import { postOnce, signedHeaders } from '../../src/modules/webhooks/send.js';
import { createScopeGuard } from '../../src/scanner/scope.js';
import { startTestApp, type TestApp } from '../../test/support/app.js';
import { fmt, table } from './scan-lib.js';

const EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 1000);
const ASSETS = Number(process.env.BENCH_WEBHOOK_ASSETS ?? 1000);
const RUNS = Number(process.env.BENCH_WEBHOOK_RUNS ?? 3);
const CONCURRENCY = Number(process.env.WORKER_CONCURRENCY ?? 2);
const SECRET = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function startReceiver() {
  let count = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      count += 1;
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 10_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    count: () => count,
    reset: () => {
      count = 0;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function until(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 600_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function newWorkspace(app: TestApp): Promise<string> {
  const userId = `bench-${randomUUID()}`;
  await app.db.prisma.user.create({ data: { id: userId, name: 'Bench', email: `${userId}@example.test` } });
  return (await app.db.prisma.workspace.create({ data: { name: 'Bench', ownerId: userId } })).id;
}

async function addEndpoint(app: TestApp, workspaceId: string, url: string): Promise<string> {
  const endpoint = await app.db.prisma.webhookEndpoint.create({
    data: { workspaceId, url, eventTypes: [], secretSealed: app.app.deps.secrets.encrypt(SECRET) },
  });
  return endpoint.id;
}

async function drained(app: TestApp, endpointId: string, expected: number): Promise<boolean> {
  const delivered = await app.db.prisma.webhookDelivery.count({ where: { endpointId, status: 'delivered' } });
  if (delivered > expected) throw new Error(`more deliveries than events: ${delivered} > ${expected}`);
  return delivered === expected;
}

/** The same signed POSTs without the queue: CONCURRENCY loops taking the next event until none are left. */
async function direct(url: string, count: number): Promise<number> {
  const guard = createScopeGuard({ allowedNetworks: ['127.0.0.0/8'] });
  let next = 0;
  const began = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        const id = next++;
        const body = JSON.stringify({ type: 'scan.failed', timestamp: new Date().toISOString(), data: { id, error: 'bench' } });
        const outcome = await postOnce({ url, body, headers: signedHeaders(SECRET, `msg_${id}`, new Date(), body), guard, timeoutMs: 10_000 });
        if (!outcome.ok) throw new Error(`direct POST failed: ${outcome.error ?? outcome.statusCode}`);
      }
    }),
  );
  return performance.now() - began;
}

function services(workspaceSalt: number, banner: string) {
  return Array.from({ length: ASSETS }, (_, i) => {
    const address = `10.${workspaceSalt & 255}.${(i >> 8) & 255}.${i & 255}`;
    return { kind: 'service' as const, key: `service:${address}:22/tcp`, value: `${address}:22`, data: { address, port: 22, banner, service: 'ssh' } };
  });
}

async function main() {
  const receiver = await startReceiver();
  const app = await startTestApp({ WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8', WORKER_CONCURRENCY: String(CONCURRENCY) });
  const prisma = app.db.prisma;
  const samples: Record<string, number[]> = { queued: [], direct: [], ingestPlain: [], ingestHooked: [], feedOnly: [], drain: [] };
  try {
    for (let run = 0; run < RUNS; run += 1) {
      // 1. Delivery rate, durable vs direct.
      const workspaceId = await newWorkspace(app);
      const endpointId = await addEndpoint(app, workspaceId, receiver.url);
      receiver.reset();
      const events: ChangeInput[] = Array.from({ length: EVENTS }, (_, i) => ({ type: 'scan.failed', workspaceId, data: { error: `bench ${i}` } }));
      const began = performance.now();
      await prisma.$transaction((tx) => recordChanges(tx, events), { timeout: 600_000 });
      await until(() => receiver.count() >= EVENTS && drained(app, endpointId, EVENTS), 'the deliveries');
      samples.queued!.push(performance.now() - began);
      if (receiver.count() !== EVENTS) throw new Error(`receiver got ${receiver.count()} requests for ${EVENTS} events`);
      receiver.reset();
      samples.direct!.push(await direct(receiver.url, EVENTS));

      // 2. A scan's ingest of ASSETS first sightings, without and with an endpoint.
      const scope = (id: string) => ({ workspaceId: id, targetId: null, scanId: null, autoEnable: true, now: new Date() });
      const plain = await newWorkspace(app);
      let t = performance.now();
      await prisma.$transaction((tx) => upsertAssets(tx, scope(plain), services(run * 2, 'SSH-2.0-A')), { timeout: 600_000 });
      samples.ingestPlain!.push(performance.now() - t);

      const hooked = await newWorkspace(app);
      const hookedEndpoint = await addEndpoint(app, hooked, receiver.url);
      t = performance.now();
      await prisma.$transaction((tx) => upsertAssets(tx, scope(hooked), services(run * 2 + 1, 'SSH-2.0-A')), { timeout: 600_000 });
      samples.ingestHooked!.push(performance.now() - t);
      t = performance.now();
      await until(() => drained(app, hookedEndpoint, ASSETS), 'the ingest deliveries');
      samples.drain!.push(performance.now() - t);

      const feedWorkspace = await newWorkspace(app);
      const feedEvents: ChangeInput[] = services(0, 'x').map((service) => ({
        type: 'asset.discovered',
        workspaceId: feedWorkspace,
        assetId: randomUUID(),
        data: { kind: 'service', key: service.key, value: service.value },
      }));
      t = performance.now();
      await prisma.$transaction((tx) => recordChanges(tx, feedEvents), { timeout: 600_000 });
      samples.feedOnly!.push(performance.now() - t);
    }
  } finally {
    await app.stop();
    await receiver.close();
  }

  const ms = (name: string) => median(samples[name]!);
  const perSecond = (count: number, name: string) => (count / ms(name)) * 1000;
  console.log(`webhooks, ${app.db.kind}, ${CONCURRENCY} delivery workers, median of ${RUNS}\n`);
  console.log(`1. ${EVENTS} deliveries to a loopback receiver (204)`);
  console.log(
    table(
      ['path', 'ms', 'deliveries/s'],
      [
        ['durable (queued in the event transaction, one job per attempt, logged)', fmt(ms('queued'), 0), fmt(perSecond(EVENTS, 'queued'), 0)],
        [`direct (the same signed POSTs from ${CONCURRENCY} loops, nothing stored)`, fmt(ms('direct'), 0), fmt(perSecond(EVENTS, 'direct'), 0)],
      ],
      new Set([1, 2]),
    ),
  );
  console.log(`   ratio durable / direct: ${(perSecond(EVENTS, 'queued') / perSecond(EVENTS, 'direct')).toFixed(2)}\n`);
  const withoutFeed = ms('ingestPlain') - ms('feedOnly');
  console.log(`2. a scan's ingest of ${ASSETS} new services (one transaction)`);
  console.log(
    table(
      ['ingest', 'ms', 'vs without feed'],
      [
        ['without the feed (ingest minus the feed alone)', fmt(withoutFeed, 0), '1.00'],
        ['with the feed (N asset.discovered events)', fmt(ms('ingestPlain'), 0), (ms('ingestPlain') / withoutFeed).toFixed(2)],
        ['with the feed and one webhook endpoint (+N deliveries and jobs)', fmt(ms('ingestHooked'), 0), (ms('ingestHooked') / withoutFeed).toFixed(2)],
      ],
      new Set([1, 2]),
    ),
  );
  console.log(`   the feed alone (recordChanges, N events): ${fmt(ms('feedOnly'), 0)} ms = ${fmt(perSecond(ASSETS, 'feedOnly'), 0)} events/s`);
  console.log(
    `   webhooks' share of the ingest: ${fmt(ms('ingestHooked') - ms('ingestPlain'), 0)} ms; its ${ASSETS} deliveries then drained in ${fmt(ms('drain'), 0)} ms (${fmt(perSecond(ASSETS, 'drain'), 0)}/s)`,
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
