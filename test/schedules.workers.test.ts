import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, usingPostgres, type TestApp } from './support/app.js';
import { clientFor } from './support/client.js';
import { workerProcesses, type WorkerProcess } from './support/process.js';
import { addTarget } from './support/scans.js';
import { waitFor } from './support/wait.js';

/**
 * Exactly once across processes: two standalone workers (`src/worker.ts`) tick every second on the same
 * PostgreSQL database while the API instance runs no workers. Every due schedule fires once per tick, however
 * the two race. PGlite lives inside one process, so this needs TEST_DATABASE_URL.
 */

const BASE = '/api/v1/api/scan-schedules';
const SCHEDULES = 6;

const workers = workerProcesses();
const WORKER_ENV = (databaseUrl: string) => ({ DATABASE_URL: databaseUrl, SCAN_ALLOWED_NETWORKS: '127.0.0.0/8', SCHEDULE_TICK_SECONDS: '1' });

/** Log lines of a worker that say it fired a schedule. */
function firings(worker: WorkerProcess): number {
  return worker
    .output()
    .split('\n')
    .filter((line) => line.includes('"scan schedule fired"')).length;
}

if (!usingPostgres) console.info('test/schedules.workers.test.ts skipped: two worker processes need PostgreSQL; set TEST_DATABASE_URL to run it.');

describe('schedules across two worker processes (PostgreSQL)', { timeout: 180_000 }, () => {
  let server: TestApp | undefined;

  beforeAll(async () => {
    if (usingPostgres) server = await startTestApp({ WORKERS: 'false' });
  });

  afterAll(async () => {
    await workers.stop();
    await server?.stop();
  });

  it.skipIf(!usingPostgres)('each due schedule fires exactly once per tick, whichever worker claims it', async () => {
    const app = server!;
    const client = clientFor(app);
    const owner = await client.signUp('Owner');
    const workspaceId = (await client.createWorkspace(owner)).id as string;
    const scheduleIds: string[] = [];
    for (let i = 1; i <= SCHEDULES; i++) {
      const target = await addTarget(client, owner, workspaceId, `127.0.0.${i + 10}`);
      const response = await client.api('POST', BASE, {
        as: owner,
        workspaceId,
        body: { targetId: target.id, cron: '0 0 1 1 *', options: { steps: ['dns'] } },
      });
      expect(response.status).toBe(201);
      scheduleIds.push(response.body.id);
    }
    const pair = [workers.spawn(WORKER_ENV(app.databaseUrl!)), workers.spawn(WORKER_ENV(app.databaseUrl!))];
    await Promise.all(pair.map((worker) => workers.ready(worker)));
    const prisma = app.db.prisma;
    const runCount = () => prisma.scanScheduleRun.count({ where: { scheduleId: { in: scheduleIds } } });

    for (const round of [1, 2, 3]) {
      // Every schedule due a moment ago, at once: both workers find them all due on their next tick.
      const due = new Date(Date.now() - 500);
      await prisma.scanSchedule.updateMany({ where: { id: { in: scheduleIds } }, data: { nextRunAt: due } });
      await waitFor(async () => (await runCount()) >= round * SCHEDULES, { timeoutMs: 30_000, intervalMs: 100, what: `round ${round} to fire` });
      // Several more ticks of both workers: nothing fires twice.
      await new Promise((resolve) => setTimeout(resolve, 3000));
      for (const id of scheduleIds) {
        const runs = await prisma.scanScheduleRun.findMany({ where: { scheduleId: id, dueAt: due } });
        expect(runs, `schedule ${id} round ${round}`).toHaveLength(1);
        expect(runs[0]!.trigger).toBe('schedule');
      }
      expect(await runCount()).toBe(round * SCHEDULES);
      expect(pair.reduce((sum, worker) => sum + firings(worker), 0)).toBe(round * SCHEDULES);
    }
    // Each started scan belongs to exactly one run; none was started twice for a tick.
    const runs = await prisma.scanScheduleRun.findMany({ where: { scheduleId: { in: scheduleIds } } });
    const started = runs.flatMap((run) => (run.outcomes as { scanId?: string }[]).flatMap((outcome) => (outcome.scanId ? [outcome.scanId] : [])));
    expect(new Set(started).size).toBe(started.length);
    expect(await prisma.scan.count({ where: { workspaceId } })).toBe(started.length);
    expect(started.length).toBeGreaterThanOrEqual(SCHEDULES);
    // The row claim kept them apart: no firing needed the unique (schedule, tick) key to be refused.
    for (const worker of pair) expect(worker.output()).not.toContain('scan schedule firing failed');
    // Both processes did a share of the work (the claim skips rows the other holds; it does not serialise them).
    console.info(`schedule firings per worker: ${pair.map(firings).join(', ')}`);
  });
});
