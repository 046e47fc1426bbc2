// npm run bench:changes: what the change feed costs an ingest. One workspace, N services (BENCH_CHANGES_ASSETS,
// default 1,000) ingested the way a ports step does (upsertAssets in one transaction), three rounds each:
//   1. first sighting: N assets created, N asset.discovered events;
//   2. seen again with a new banner: N asset.changed events (the comparison reads the stored data);
//   3. seen again unchanged: no events (the price of comparing alone).
// Next to them, recordChanges alone writing N events in one transaction: the feed's own share of round 1.
// PGlite unless TEST_DATABASE_URL names a PostgreSQL server (as in the tests). Medians of BENCH_CHANGES_RUNS (3).
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { upsertAssets } from '../../src/modules/assets/ingest.js';
import { recordChanges } from '../../src/modules/changes/record.js';
import type { ChangeInput } from '../../src/modules/changes/types.js';
import { createTestDatabase } from '../../test/support/app.js';

const N = Number(process.env.BENCH_CHANGES_ASSETS ?? 1000);
const RUNS = Number(process.env.BENCH_CHANGES_RUNS ?? 3);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main() {
  const test = await createTestDatabase();
  const { prisma } = test.db;
  const rows: Record<string, number[]> = { discovered: [], changed: [], unchanged: [], feedOnly: [] };
  for (let run = 0; run < RUNS; run += 1) {
    const userId = `bench-${randomUUID()}`;
    await prisma.user.create({ data: { id: userId, name: 'Bench', email: `${userId}@example.test` } });
    const workspace = await prisma.workspace.create({ data: { name: 'Bench', ownerId: userId } });
    const services = (banner: string) =>
      Array.from({ length: N }, (_, i) => {
        const address = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
        return { kind: 'service' as const, key: `service:${address}:22/tcp`, value: `${address}:22`, data: { address, port: 22, banner, service: 'ssh' } };
      });
    const timed = async (name: string, fn: () => Promise<unknown>) => {
      const began = performance.now();
      await fn();
      rows[name]!.push(performance.now() - began);
    };
    const scope = (now: Date) => ({ workspaceId: workspace.id, targetId: null, scanId: null, autoEnable: true, now });
    await timed('discovered', () => prisma.$transaction((tx) => upsertAssets(tx, scope(new Date()), services('SSH-2.0-A')), { timeout: 600_000 }));
    await timed('changed', () => prisma.$transaction((tx) => upsertAssets(tx, scope(new Date()), services('SSH-2.0-B')), { timeout: 600_000 }));
    await timed('unchanged', () => prisma.$transaction((tx) => upsertAssets(tx, scope(new Date()), services('SSH-2.0-B')), { timeout: 600_000 }));
    const events: ChangeInput[] = services('x').map((service) => ({
      type: 'asset.discovered',
      workspaceId: workspace.id,
      assetId: randomUUID(),
      data: { kind: 'service', key: service.key, value: service.value },
    }));
    await timed('feedOnly', () => prisma.$transaction((tx) => recordChanges(tx, events), { timeout: 600_000 }));
    const written = await prisma.changeEvent.count({ where: { workspaceId: workspace.id } });
    if (written !== 3 * N) throw new Error(`expected ${3 * N} events, found ${written}`);
  }
  const ms = (name: string) => median(rows[name]!);
  console.log(`change feed, ${N} services, ${test.db.kind}, median of ${RUNS}`);
  console.log(`  ingest, first sighting (N asset.discovered): ${ms('discovered').toFixed(0)} ms`);
  console.log(`  ingest, banner changed (N asset.changed):    ${ms('changed').toFixed(0)} ms`);
  console.log(`  ingest, unchanged (no events):               ${ms('unchanged').toFixed(0)} ms`);
  console.log(`  recordChanges alone, N events:               ${ms('feedOnly').toFixed(0)} ms = ${((N / ms('feedOnly')) * 1000).toFixed(0)} events/s`);
  console.log(`  feed share of the first-sighting ingest:     ${((ms('feedOnly') / ms('discovered')) * 100).toFixed(1)} %`);
  await test.db.close();
  await test.dispose();
}

await main();
