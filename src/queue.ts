import { createRequire } from 'node:module';
import PgBoss from 'pg-boss';
import type { Logger } from './logger.js';
import type { Database } from './db.js';
import { listenForJobs, WAKE_CHANNEL, WAKE_SQL, type WakeListener } from './queue-wakeup.js';

/** Anything that can run SQL with positional parameters: the database itself or an open Prisma transaction. */
const require = createRequire(import.meta.url);

export interface SqlRunner {
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): Promise<T>;
}

export interface QueueDefinition {
  name: string;
  /** A job not finished within this time is failed and retried: a killed worker's job comes back. */
  expireInSeconds: number;
  retryLimit: number;
  retryDelay?: number;
  /** Where a job goes once its retries are spent (define that queue first). */
  deadLetter?: string;
}

export interface JobQueueOptions {
  /** How often expired jobs (a killed worker's) are noticed and put back for retry. */
  superviseSeconds?: number;
}

export type JobHandler<T> = (data: T, job: { id: string; attempt: number }) => Promise<void>;

/**
 * The one durable job queue: pg-boss in the application's own database (PostgreSQL, or the embedded one), so a
 * job can be enqueued in the same transaction as the rows it refers to.
 */
export class JobQueue {
  private readonly boss: PgBoss;
  private started = false;
  private readonly definitions = new Map<string, QueueDefinition>();
  private readonly stopHooks: (() => Promise<void>)[] = [];
  /** This process's pollers per queue, woken when a job is committed to their queue (queue-wakeup.ts). */
  private readonly pollers = new Map<string, string[]>();
  private listener?: Promise<WakeListener>;

  constructor(
    private readonly db: Database,
    private readonly log: Logger,
    options: JobQueueOptions = {},
  ) {
    const connection: PgBoss.ConstructorOptions = {
      schema: 'pgboss',
      db: {
        executeSql: async (text, values) => {
          try {
            return await db.sql.query(text, values);
          } catch (error) {
            // The embedded database has one connection: a failed BEGIN…COMMIT script (pg-boss's migrations) would
            // leave it inside an aborted transaction for whoever comes next.
            if (db.kind === 'pglite' && !values?.length) await db.sql.exec('ROLLBACK').catch(() => undefined);
            throw error;
          }
        },
      },
    };
    const superviseSeconds = options.superviseSeconds ?? 30;
    this.boss = new PgBoss({
      ...connection,
      supervise: true,
      schedule: false,
      // Maintenance is what fails expired jobs (a killed worker's) so they are retried.
      maintenanceIntervalSeconds: superviseSeconds,
      monitorStateIntervalSeconds: superviseSeconds,
    });
    this.boss.on('error', (error) => this.log.error({ err: error }, 'job queue error'));
  }

  define(definition: QueueDefinition): void {
    this.definitions.set(definition.name, definition);
  }

  async start(): Promise<void> {
    if (this.started) return;
    await this.refuseNewerSchema();
    await this.boss.start();
    for (const definition of this.definitions.values()) {
      const settings = {
        expireInSeconds: definition.expireInSeconds,
        retryLimit: definition.retryLimit,
        retryDelay: definition.retryDelay ?? 1,
        ...(definition.deadLetter ? { deadLetter: definition.deadLetter } : {}),
      };
      // createQueue keeps an existing queue as it was; updateQueue applies today's configuration.
      await this.boss.createQueue(definition.name, { name: definition.name, ...settings });
      await this.boss.updateQueue(definition.name, { name: definition.name, ...settings });
      // pg-boss loaded its queue cache before these queues existed. Its first send would look the queue up
      // outside the caller's transaction: on PGlite (one connection) that waits for the transaction itself.
      // A no-op cancel caches the queue now.
      await this.boss.cancel(definition.name, '00000000-0000-0000-0000-000000000000');
    }
    this.started = true;
  }

  /**
   * pg-boss migrates its schema up, never down. A database a newer pg-boss set up (the builds before the
   * move to pg-boss 10 used 11) would be driven with SQL that does not fit it: say so and how to fix it.
   */
  private async refuseNewerSchema(): Promise<void> {
    const supported = (require('pg-boss/version.json') as { schema: number }).schema;
    const { rows } = (await this.db.sql.query(`SELECT to_regclass('pgboss.version') IS NOT NULL AS present`)) as { rows: { present: boolean }[] };
    if (!rows[0]?.present) return;
    const found = Number(((await this.db.sql.query('SELECT version FROM pgboss.version')) as { rows: { version: unknown }[] }).rows[0]?.version);
    if (found > supported) {
      throw new Error(
        `The job queue schema "pgboss" is at version ${found}, newer than this build's pg-boss supports (${supported}). ` +
          'It holds only queued jobs: stop every process, run DROP SCHEMA pgboss CASCADE, and start again (running scans are then left unfinished).',
      );
    }
  }

  /** Enqueues a job; with `tx` the job commits or rolls back together with that transaction. */
  async send<T extends object>(name: string, data: T, options: PgBoss.SendOptions = {}, tx?: SqlRunner): Promise<string | null> {
    if (!tx) {
      const id = await this.boss.send(name, data, options);
      await this.wake(name);
      return id;
    }
    const executeSql = async (text: string, values: unknown[]) => ({ rows: await tx.$queryRawUnsafe<unknown[]>(text, ...values) });
    const id = await this.boss.send(name, data, { ...options, db: { executeSql } });
    await this.wake(name, tx);
    return id;
  }

  /** Enqueues many jobs in one statement (one round trip, however many); with `tx`, in that transaction. */
  async sendMany<T extends object>(name: string, data: readonly T[], tx?: SqlRunner): Promise<void> {
    if (!data.length) return;
    const jobs = data.map((item) => ({ name, data: item }));
    if (!tx) {
      await this.boss.insert(jobs);
      await this.wake(name);
      return;
    }
    const executeSql = async (text: string, values: unknown[]) => ({ rows: await tx.$queryRawUnsafe<unknown[]>(text, ...values) });
    await this.boss.insert(jobs, { db: { executeSql } });
    await this.wake(name, tx);
  }

  /** Tells every process's pollers of `name` that a job is there; inside `tx` the notice goes out at commit. */
  private async wake(name: string, tx?: SqlRunner): Promise<void> {
    if (tx) {
      await tx.$queryRawUnsafe(WAKE_SQL, WAKE_CHANNEL, name);
      return;
    }
    await this.db.sql.query(WAKE_SQL, [WAKE_CHANNEL, name]);
  }

  private wakeLocal(name: string): void {
    for (const workerId of this.pollers.get(name) ?? []) this.boss.notifyWorker(workerId);
  }

  /**
   * Starts `concurrency` pollers for the queue. Each takes up to `batchSize` jobs at a time and runs them
   * side by side; a job whose handler throws is failed on its own (retries and the dead letter apply to it
   * alone) and the rest complete. A poller that just finished asks again at once: pg-boss otherwise sleeps out
   * its polling interval after every fetch, which caps a poller at two fetches a second however short the jobs
   * are (a webhook delivery is a few milliseconds). A job committed anywhere wakes the idle pollers of its queue
   * at once (queue-wakeup.ts): the polling interval is only the fallback.
   */
  async work<T extends object>(
    name: string,
    concurrency: number,
    handler: JobHandler<T>,
    options: { batchSize?: number; pollingIntervalSeconds?: number } = {},
  ): Promise<void> {
    const batchSize = options.batchSize ?? 1;
    const pollingIntervalSeconds = options.pollingIntervalSeconds ?? 0.5;
    for (let i = 0; i < concurrency; i++) {
      let workerId = '';
      workerId = await this.boss.work<T>(name, { batchSize, pollingIntervalSeconds, includeMetadata: true }, async (jobs) => {
        if (!jobs.length) return;
        try {
          if (jobs.length === 1) {
            const [job] = jobs;
            await handler(job!.data, { id: job!.id, attempt: job!.retryCount });
            return;
          }
          const outcomes = await Promise.allSettled(jobs.map((job) => handler(job.data, { id: job.id, attempt: job.retryCount })));
          const failures = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason as unknown] : []));
          if (!failures.length) return;
          // Complete the others here, then throw: pg-boss then fails the batch's jobs still active, the failed ones.
          // Failing them here and returning raced: pg-boss sends its completion of the batch (by id, any job still
          // active) without waiting for it, the poller fetches again at once, and a failed job due for retry could
          // be fetched first, its new attempt then marked completed by that late statement, never to end failed
          // (test/queue.test.ts, the batch test, failed so once in CI). An active job cannot be fetched meanwhile.
          const completed = jobs.filter((_job, index) => outcomes[index]!.status === 'fulfilled').map((job) => job.id);
          if (completed.length) await this.boss.complete(name, completed);
          throw failures.length === 1 ? failures[0] : new AggregateError(failures, failures.map(failureMessage).join('; '));
        } finally {
          this.boss.notifyWorker(workerId);
        }
      });
      this.pollers.set(name, [...(this.pollers.get(name) ?? []), workerId]);
    }
    this.listener ??= listenForJobs(this.db, this.log, (queue) => this.wakeLocal(queue));
    await this.listener;
  }

  /**
   * Jobs waiting (created or waiting to retry) and running, per defined queue, counted now: pg-boss's own
   * queue statistics are refreshed only every monitor interval. For the operator's /metrics.
   */
  async depths(): Promise<{ queue: string; waiting: number; active: number }[]> {
    const names = [...this.definitions.keys()];
    const { rows } = (await this.db.sql.query(
      `SELECT name, count(*) FILTER (WHERE state IN ('created', 'retry'))::int AS waiting, count(*) FILTER (WHERE state = 'active')::int AS active
       FROM pgboss.job WHERE name = ANY($1::text[]) AND state IN ('created', 'retry', 'active') GROUP BY name`,
      [names],
    )) as { rows: { name: string; waiting: number; active: number }[] };
    return names.map((queue) => {
      const row = rows.find((r) => r.name === queue);
      return { queue, waiting: row?.waiting ?? 0, active: row?.active ?? 0 };
    });
  }

  /**
   * Puts every job marked active back for retry at once (as a failed attempt: retries and the dead letter
   * apply). Only for a database no other process can be working on, i.e. the embedded one at start: every
   * active job there belonged to a process that died, and would otherwise wait out its whole lease.
   */
  async reclaimActiveJobs(): Promise<number> {
    const { rows } = (await this.db.sql.query(`SELECT name, id FROM pgboss.job WHERE state = 'active'`)) as { rows: { name: string; id: string }[] };
    const byQueue = new Map<string, string[]>();
    for (const row of rows) byQueue.set(row.name, [...(byQueue.get(row.name) ?? []), row.id]);
    for (const [name, ids] of byQueue) {
      await this.boss.fail(name, ids);
      this.log.warn({ queue: name, jobs: ids.length }, 'jobs left active by a stopped process put back for retry');
    }
    return rows.length;
  }

  async getJob(name: string, id: string) {
    return this.boss.getJobById(name, id);
  }

  /** Runs at stop() before the pollers stop: producers tied to the workers' lifetime (the schedule ticker) end first. */
  onStop(hook: () => Promise<void>): void {
    this.stopHooks.push(hook);
  }

  /** Waits for running handlers up to `timeoutMs`, then stops polling. */
  async stop(timeoutMs: number): Promise<void> {
    if (!this.started) return;
    this.started = false;
    await Promise.all(this.stopHooks.splice(0).map((hook) => hook()));
    const listener = this.listener;
    this.listener = undefined;
    this.pollers.clear();
    await (await listener?.catch(() => undefined))?.close();
    await this.boss.stop({ graceful: true, wait: true, timeout: timeoutMs, close: false });
  }
}

function failureMessage(reason: unknown): string {
  return reason instanceof Error ? reason.message : String(reason);
}
