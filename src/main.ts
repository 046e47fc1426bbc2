import { createLogger } from './logger.js';
import { loadEnvOrExit, stopOnSignals } from './lifecycle.js';
import { secureDataDir } from './ops/data-dir.js';
import { DataDirInUseError } from './ops/data-dir-lock.js';
import { openConfiguredDatabase } from './db.js';
import { startOastService } from './oast/service.js';

/** The API server: read config, build the app, listen, stop cleanly on a signal. */
async function main(): Promise<void> {
  const env = loadEnvOrExit();
  const log = createLogger(env.LOG_LEVEL);
  secureDataDir(env, log);
  // Opening the embedded database (PGlite compiles its WebAssembly on background threads, then starts
  // PostgreSQL) takes about as long as loading the rest of the server's modules: do both at once. A failure
  // to open is reported when createApp awaits it, not as an unhandled rejection while the modules load.
  const opening = openConfiguredDatabase(env);
  opening.catch(() => {});
  const { createApp } = await import('./app.js');
  const app = await createApp({ env, log, opening });
  const url = await app.listen();
  log.info({ url, graphql: `${url}/graphql`, rest: `${url}/api/v1/api`, docs: `${url}/api/v1/docs`, database: app.deps.db.kind }, 'Perimeter is listening');
  // The OAST listeners live in the API process only (worker processes' scan steps reach them over pub/sub).
  const domain = env.OAST_DOMAIN;
  const oast = domain ? await startOastService({ env: { ...env, OAST_DOMAIN: domain }, pubsub: app.deps.pubsub, log }) : undefined;
  stopOnSignals(
    async () => {
      await oast?.stop();
      await app.stop();
    },
    log,
    'shutting down',
  );
}

main().catch((error: unknown) => {
  // An expected refusal says what to do; anything else gets its stack.
  const detail = error instanceof DataDirInUseError ? error.message : error instanceof Error ? error.stack : String(error);
  process.stderr.write(`Perimeter failed to start: ${detail}\n`);
  process.exit(1);
});
