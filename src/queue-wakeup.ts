import pg from 'pg';
import type { Database } from './db.js';
import type { Logger } from './logger.js';

/**
 * Wakes idle queue pollers the moment a job is committed, in every process sharing the database.
 *
 * pg-boss only polls: a job enqueued by another process (the server starting a scan, a worker finishing a step
 * that the next poller of another worker could take) waits out the polling interval — on average half of it,
 * per step, which was most of a short scan's time. The sender adds `pg_notify` in the same transaction as the
 * job, so the notice is delivered at commit (never for a rolled-back job) to every listener; each process
 * then asks its pollers of that queue to fetch now. Polling stays on as the fallback: a notice lost while the
 * listening connection reconnects costs at most one interval, never a job.
 */
export const WAKE_CHANNEL = 'perimeter_jobs';

/** The statement a sender runs in its transaction: Prisma cannot read a void column, so nothing is selected from it. */
export const WAKE_SQL = 'SELECT 1 AS woken FROM (SELECT pg_notify($1, $2)) AS notice';

const RECONNECT_MS = [250, 1_000, 5_000];

export interface WakeListener {
  close(): Promise<void>;
}

/** Calls `onWake(queue)` for every job committed to a queue anywhere; reconnects on its own. */
export async function listenForJobs(db: Database, log: Logger, onWake: (queue: string) => void): Promise<WakeListener> {
  if (db.onNotification) {
    // The embedded database has one connection: LISTEN once on it (PGlite is one session, so it outlives a
    // reconnect), and hear the notices that arrive there with any statement's answer.
    const unsubscribe = db.onNotification((channel, payload) => {
      if (channel === WAKE_CHANNEL) onWake(payload);
    });
    await db.sql.query(`LISTEN ${WAKE_CHANNEL}`);
    return {
      close: async () => {
        unsubscribe();
      },
    };
  }
  const options = db.pool.options;
  let closed = false;
  let client: pg.Client | undefined;
  let failures = 0;
  let timer: NodeJS.Timeout | undefined;

  const connect = async (): Promise<void> => {
    if (closed) return;
    const next = new pg.Client({ ...options });
    next.on('notification', (message) => {
      if (message.channel === WAKE_CHANNEL && message.payload) onWake(message.payload);
    });
    next.on('error', (error) => {
      log.warn({ err: error }, 'job wake-up connection lost: polling only until it is back');
      retry(next);
    });
    next.on('end', () => retry(next));
    try {
      await next.connect();
      await next.query(`LISTEN ${WAKE_CHANNEL}`);
      client = next;
      failures = 0;
    } catch (error) {
      log.warn({ err: error }, 'job wake-up connection failed: polling only until it is back');
      retry(next);
    }
  };
  const retry = (failed: pg.Client): void => {
    if (closed || timer || (client && client !== failed)) return;
    client = undefined;
    failed.end().catch(() => undefined);
    const delay = RECONNECT_MS[Math.min(failures++, RECONNECT_MS.length - 1)]!;
    timer = setTimeout(() => {
      timer = undefined;
      void connect();
    }, delay);
    timer.unref();
  };

  await connect();
  return {
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      await client?.end().catch(() => undefined);
    },
  };
}
