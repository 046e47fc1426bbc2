import { createLogger } from './logger.js';
import { createRuntime } from './runtime.js';
import { startWorkers } from './workers.js';
import { loadEnvOrExit, stopOnSignals } from './lifecycle.js';
import { secureDataDir } from './ops/data-dir.js';

/**
 * `npm run worker`: a process that only consumes the job queue, for scaling scans out to other machines.
 * It needs the shared PostgreSQL (the queue lives there) and, for live events, the shared Redis.
 */
async function main(): Promise<void> {
  const env = loadEnvOrExit();
  if (!env.DATABASE_URL) {
    process.stderr.write('A worker process needs DATABASE_URL: the embedded database belongs to the server process (its workers run inside it).\n');
    process.exit(1);
  }
  const log = createLogger(env.LOG_LEVEL).child({ role: 'worker' });
  secureDataDir(env, log);
  if (!env.REDIS_URL) log.warn('REDIS_URL is not set: scan progress from this worker will not reach subscribers of other processes');
  const runtime = await createRuntime({ env, log });
  await startWorkers(runtime.deps);
  log.info({ pid: process.pid }, 'worker ready');
  stopOnSignals(() => runtime.close(), log, 'worker stopping after its current step');
}

main().catch((error: unknown) => {
  process.stderr.write(`Perimeter worker failed to start: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
