import { ConfigError, loadEnv } from './env.js';
import { createLogger } from './logger.js';
import { createRuntime } from './runtime.js';
import { startWorkers } from './workers.js';

/**
 * `npm run worker`: a process that only consumes the job queue, for scaling scans out to other machines.
 * It needs the shared PostgreSQL (the queue lives there) and, for live events, the shared Redis.
 */
async function main(): Promise<void> {
  let env;
  try {
    env = loadEnv();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  if (!env.DATABASE_URL) {
    process.stderr.write('A worker process needs DATABASE_URL: the embedded database belongs to the server process (its workers run inside it).\n');
    process.exit(1);
  }
  const log = createLogger(env.LOG_LEVEL).child({ role: 'worker' });
  if (!env.REDIS_URL) log.warn('REDIS_URL is not set: scan progress from this worker will not reach subscribers of other processes');
  const runtime = await createRuntime({ env, log });
  await startWorkers(runtime.deps);
  log.info({ pid: process.pid }, 'worker ready');

  let signals = 0;
  const shutdown = (signal: string) => {
    signals += 1;
    if (signals > 1) process.exit(1);
    log.info({ signal }, 'worker stopping after its current step');
    runtime
      .close()
      .then(() => process.exit(0))
      .catch((error: unknown) => {
        log.error({ err: error }, 'worker shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(`Perimeter worker failed to start: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
