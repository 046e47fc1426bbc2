import { ConfigError, loadEnv, type Env } from './env.js';
import type { Logger } from './logger.js';
import { watchNpmLauncher } from './ops/launcher.js';

/** The configuration, or a message naming every bad variable on stderr and exit code 1. */
export function loadEnvOrExit(): Env {
  try {
    return loadEnv();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

/**
 * SIGTERM/SIGINT stop gracefully (exit 0, or 1 if stopping failed); a second signal exits at once.
 * Started by `npm start`, the process also stops when npm goes away (npm does not pass SIGTERM on to it).
 */
export function stopOnSignals(stop: () => Promise<void>, log: Logger, message: string): void {
  let signals = 0;
  const shutdown = (signal: string) => {
    signals += 1;
    if (signals > 1) process.exit(1);
    log.info({ signal }, message);
    stop()
      .then(() => process.exit(0))
      .catch((error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  watchNpmLauncher(() => shutdown('npm exited'));
}
