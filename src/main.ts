import { ConfigError, loadEnv } from './env.js';
import { createApp } from './app.js';
import { createLogger } from './logger.js';

/** The only file that starts anything: read config, build the app, listen, stop cleanly on a signal. */
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
  const log = createLogger(env.LOG_LEVEL);
  const app = await createApp({ env, log });
  const url = await app.listen();
  log.info({ url, graphql: `${url}/graphql`, rest: `${url}/api/v1/api`, docs: `${url}/api/v1/docs`, database: app.deps.db.kind }, 'Perimeter is listening');

  let signals = 0;
  const shutdown = (signal: string) => {
    signals += 1;
    if (signals > 1) process.exit(1);
    log.info({ signal }, 'shutting down');
    app
      .stop()
      .then(() => process.exit(0))
      .catch((error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(`Perimeter failed to start: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
