import type { AppDeps } from '../../context.js';
import { deleteExpiredAuditLogs } from './service.js';

/** How often each worker process removes expired entries. Several processes doing so is harmless: the DELETE is idempotent. */
export const AUDIT_RETENTION_INTERVAL_MS = 60 * 60_000;
/** The first pass waits a little after start, so a restart storm does not begin with a burst of deletes. */
const FIRST_PASS_DELAY_MS = 60_000;

/**
 * Starts the periodic audit-log cleanup of a worker process. A pass missed while every process was down is
 * made up by the next start's first pass. The timers never keep the process alive; stop() (or stopAuditRetention at shutdown) ends them.
 */
const running = new WeakMap<object, { stop: () => void }>();

/** Ends the cleanup timers started for these deps (at shutdown, before the database closes). */
export function stopAuditRetention(deps: object): void {
  running.get(deps)?.stop();
  running.delete(deps);
}

export function startAuditRetention(deps: Pick<AppDeps, 'prisma' | 'env' | 'log'>): { stop: () => void } {
  stopAuditRetention(deps);
  let interval: NodeJS.Timeout | undefined;
  const pass = async () => {
    try {
      const removed = await deleteExpiredAuditLogs(deps);
      if (removed) deps.log.info({ removed, retentionDays: deps.env.AUDIT_RETENTION_DAYS }, 'expired audit-log entries removed');
    } catch (error) {
      deps.log.warn({ err: error }, 'audit-log retention pass failed; the next pass retries');
    }
  };
  const first = setTimeout(() => {
    void pass();
    interval = setInterval(() => void pass(), AUDIT_RETENTION_INTERVAL_MS);
    interval.unref();
  }, FIRST_PASS_DELAY_MS);
  first.unref();
  const handle = {
    stop: () => {
      clearTimeout(first);
      if (interval) clearInterval(interval);
    },
  };
  running.set(deps, handle);
  return handle;
}
