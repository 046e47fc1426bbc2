/**
 * Whether the database answers, for /ready, without putting /ready in the database's queue: under load
 * (PGlite is one connection; a busy pool makes callers wait) a `SELECT 1` per probe would wait behind
 * everything else, and a load balancer would take a busy instance out of service.
 *
 * A probe answers from the last check while it is fresh, and from the last success while a new check
 * runs behind it (the database is busy, not gone). It waits for a check only when there is no recent
 * success or the last check failed; then a check that fails or does not answer within `waitMs` is "down".
 */
export interface ReadinessProbeOptions {
  /** A result younger than this is answered without a new check. */
  freshMs?: number;
  /** A success older than this no longer counts: the probe waits for a new check. */
  staleMs?: number;
  /** How long a probe waits for a check when it must. */
  waitMs?: number;
}

export function createReadinessProbe(check: () => Promise<unknown>, options: ReadinessProbeOptions = {}) {
  const { freshMs = 1000, staleMs = 10_000, waitMs = 2000 } = options;
  let checkedAt = 0;
  let lastOkAt = 0;
  let failed = false;
  let running: Promise<void> | undefined;

  function refresh(): Promise<void> {
    running ??= check()
      .then(
        () => {
          lastOkAt = Date.now();
          failed = false;
        },
        () => {
          failed = true;
        },
      )
      .finally(() => {
        checkedAt = Date.now();
        running = undefined;
      });
    return running;
  }

  const healthy = () => !failed && Date.now() - lastOkAt < staleMs;

  return {
    /** True when the database answered recently (see above); never waits longer than `waitMs`. */
    async databaseReachable(): Promise<boolean> {
      if (Date.now() - checkedAt < freshMs && !running) return healthy();
      const pending = refresh();
      if (healthy()) return true;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([pending, new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))]);
      clearTimeout(timer);
      return healthy();
    },
  };
}
