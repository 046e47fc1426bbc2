import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes, randomUUID } from 'node:crypto';
import { createTestDatabase, startTestApp, type TestApp } from './support/app.js';
import { waitFor } from './support/wait.js';
import { JobQueue } from '../src/queue.js';
import { createLogger } from '../src/logger.js';

/**
 * The JobQueue seam on the test app's own database (PGlite or PostgreSQL). The app's queue is already
 * started, and queues must be defined before start(), so the test runs a second JobQueue beside it.
 */
let server: TestApp;
let queue: JobQueue;
let ownerId: string;
const suffix = randomBytes(4).toString('hex');
const TX_QUEUE = `test-tx-${suffix}`;
const RETRY_QUEUE = `test-retry-${suffix}`;
const BATCH_QUEUE = `test-batch-${suffix}`;
const WAKE_QUEUE = `test-wake-${suffix}`;
/** Far longer than any wait below: a job handled before it was woken, not polled. */
const SLOW_POLL_SECONDS = 120;
let sender: JobQueue;
const woken: string[] = [];

const delivered: { workspaceId: string; label: string }[] = [];
const attempts = new Map<string, number[]>();

beforeAll(async () => {
  server = await startTestApp();
  ownerId = (await server.db.prisma.user.create({ data: { id: randomUUID(), name: 'Queue owner', email: `queue.${suffix}@example.test` } })).id;
  queue = new JobQueue(server.db, createLogger('silent'));
  queue.define({ name: TX_QUEUE, expireInSeconds: 30, retryLimit: 0 });
  queue.define({ name: RETRY_QUEUE, expireInSeconds: 30, retryLimit: 2, retryDelay: 0 });
  queue.define({ name: BATCH_QUEUE, expireInSeconds: 30, retryLimit: 1, retryDelay: 0 });
  queue.define({ name: WAKE_QUEUE, expireInSeconds: 30, retryLimit: 0 });
  await queue.start();
  await queue.work<{ label: string }>(
    WAKE_QUEUE,
    2,
    async (data) => {
      woken.push(data.label);
    },
    { pollingIntervalSeconds: SLOW_POLL_SECONDS },
  );
  // Another process's queue on the same database (the server enqueueing for a worker), with no pollers of its own.
  sender = new JobQueue(server.db, createLogger('silent'));
  sender.define({ name: WAKE_QUEUE, expireInSeconds: 30, retryLimit: 0 });
  await sender.start();
  await queue.work<{ workspaceId: string; label: string }>(TX_QUEUE, 1, async (data) => {
    delivered.push(data);
  });
  await queue.work<{ key: string; failures: number }>(RETRY_QUEUE, 1, async (data, job) => {
    const seen = attempts.get(data.key) ?? [];
    seen.push(job.attempt);
    attempts.set(data.key, seen);
    if (seen.length <= data.failures) throw new Error(`attempt ${seen.length} fails on purpose`);
  });
  await queue.work<{ key: string; failures: number }>(
    BATCH_QUEUE,
    1,
    async (data, job) => {
      const seen = attempts.get(data.key) ?? [];
      seen.push(job.attempt);
      attempts.set(data.key, seen);
      if (seen.length <= data.failures) throw new Error(`attempt ${seen.length} fails on purpose`);
    },
    { batchSize: 8 },
  );
});
afterAll(async () => {
  await sender?.stop(5000);
  await queue?.stop(5000);
  await server?.stop();
});

async function jobState(name: string, id: string) {
  return (await queue.getJob(name, id))?.state;
}

describe('JobQueue', () => {
  it('a job sent in a transaction that rolls back is never stored nor delivered, like the row', async () => {
    const workspaceId = randomUUID();
    let jobId: string | null = null;
    await expect(
      server.db.prisma.$transaction(async (tx) => {
        await tx.workspace.create({ data: { id: workspaceId, name: 'rolled back', ownerId } });
        jobId = await queue.send(TX_QUEUE, { workspaceId, label: 'rolled-back' }, {}, tx);
        throw new Error('rollback');
      }),
    ).rejects.toThrow('rollback');

    expect(jobId).toEqual(expect.any(String));
    expect(await server.db.prisma.workspace.findUnique({ where: { id: workspaceId } })).toBeNull();
    expect(await queue.getJob(TX_QUEUE, jobId!)).toBeNull();

    // A job sent after it is delivered; the rolled-back one never shows up.
    const marker = randomUUID();
    const markerId = await queue.send(TX_QUEUE, { workspaceId: marker, label: 'marker' });
    await waitFor(() => delivered.some((data) => data.workspaceId === marker), { timeoutMs: 15_000, what: 'the marker job' });
    await waitFor(async () => (await jobState(TX_QUEUE, markerId!)) === 'completed', { timeoutMs: 15_000, what: 'the marker job to complete' });
    expect(delivered.filter((data) => data.workspaceId === workspaceId)).toEqual([]);
  });

  it('a job sent in a committed transaction is delivered, after its row exists', async () => {
    const workspaceId = randomUUID();
    const jobId = await server.db.prisma.$transaction(async (tx) => {
      await tx.workspace.create({ data: { id: workspaceId, name: 'committed', ownerId } });
      return queue.send(TX_QUEUE, { workspaceId, label: 'committed' }, {}, tx);
    });
    expect(jobId).toEqual(expect.any(String));
    expect(await server.db.prisma.workspace.findUnique({ where: { id: workspaceId } })).not.toBeNull();

    await waitFor(() => delivered.some((data) => data.workspaceId === workspaceId), { timeoutMs: 15_000, what: 'the committed job' });
    expect(delivered.filter((data) => data.workspaceId === workspaceId)).toEqual([{ workspaceId, label: 'committed' }]);
    await waitFor(async () => (await jobState(TX_QUEUE, jobId!)) === 'completed', { timeoutMs: 15_000, what: 'the job to complete' });
  });

  it('a job whose handler throws is retried up to retryLimit, then succeeds', async () => {
    const key = randomUUID();
    const jobId = await queue.send(RETRY_QUEUE, { key, failures: 2 });
    await waitFor(async () => (await jobState(RETRY_QUEUE, jobId!)) === 'completed', { timeoutMs: 20_000, what: 'the retried job to complete' });
    expect(attempts.get(key)).toEqual([0, 1, 2]);
    const job = await queue.getJob(RETRY_QUEUE, jobId!);
    expect(job).toMatchObject({ state: 'completed', retryCount: 2, retryLimit: 2 });
  });

  it('in a batch, a failing job is retried (then failed) on its own while the others complete once', async () => {
    const keys = Array.from({ length: 6 }, (_, i) => `batch-${suffix}-${i}`);
    const ids: string[] = [];
    // Sent in one statement, so one fetch sees them all together.
    await queue.sendMany(
      BATCH_QUEUE,
      keys.map((key, i) => ({ key, failures: i === 2 ? 99 : 0 })),
    );
    for (const key of keys) await waitFor(() => attempts.has(key), { timeoutMs: 15_000, what: `job ${key} to run` });
    await waitFor(() => (attempts.get(keys[2]!)?.length ?? 0) === 2, { timeoutMs: 15_000, what: 'the failing job to be retried once' });
    const rows = (await server.db.sql.query(`SELECT id, state, data->>'key' AS key FROM pgboss.job WHERE name = $1`, [BATCH_QUEUE])) as {
      rows: { id: string; state: string; key: string }[];
    };
    for (const row of rows.rows) ids.push(row.id);
    await waitFor(async () => (await jobState(BATCH_QUEUE, rows.rows.find((row) => row.key === keys[2])!.id)) === 'failed', {
      timeoutMs: 15_000,
      what: 'the failing job to end failed',
    });
    for (const row of rows.rows) {
      if (row.key === keys[2]) continue;
      expect(await jobState(BATCH_QUEUE, row.id)).toBe('completed');
      expect(attempts.get(row.key)).toEqual([0]);
    }
    expect(attempts.get(keys[2]!)).toEqual([0, 1]);
    expect(ids).toHaveLength(6);
  });

  it('a job that keeps failing past retryLimit ends failed', async () => {
    const key = randomUUID();
    const jobId = await queue.send(RETRY_QUEUE, { key, failures: 99 });
    await waitFor(async () => (await jobState(RETRY_QUEUE, jobId!)) === 'failed', { timeoutMs: 20_000, what: 'the job to fail' });
    expect(attempts.get(key)).toEqual([0, 1, 2]);
  });

  it('a job committed by another process wakes the idle pollers at once, in and out of a transaction (no wait for the next poll)', async () => {
    // Let the pollers' first fetch find nothing: from here on they sleep SLOW_POLL_SECONDS unless woken.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await server.db.prisma.$transaction(async (tx) => {
      await sender.send(WAKE_QUEUE, { label: 'in-transaction' }, {}, tx);
    });
    await waitFor(() => woken.includes('in-transaction'), { timeoutMs: 20_000, what: 'the job sent in a transaction to be woken for' });
    await sender.sendMany(WAKE_QUEUE, [{ label: 'many-1' }, { label: 'many-2' }]);
    await waitFor(() => woken.includes('many-1') && woken.includes('many-2'), { timeoutMs: 20_000, what: 'the jobs sent together to be woken for' });
    expect(woken.sort()).toEqual(['in-transaction', 'many-1', 'many-2']);
  });

  it('refuses, with the way out, a job queue schema a newer pg-boss created instead of running SQL that does not fit it', async () => {
    const other = await createTestDatabase();
    try {
      // The schema as this build creates it, then as a newer pg-boss would have left it.
      const current = new JobQueue(other.db, createLogger('silent'));
      await current.start();
      await current.stop(1000);
      await other.db.sql.query('UPDATE pgboss.version SET version = version + 2');
      const newer = new JobQueue(other.db, createLogger('silent'));
      await expect(newer.start()).rejects.toThrow(/schema "pgboss" is at version \d+, newer than .*DROP SCHEMA pgboss CASCADE/);
    } finally {
      await other.db.close();
      await other.dispose();
    }
  });
});
