import { startEmbeddedMaintenance } from './db/embedded/maintenance.js';
import type { Env } from './env.js';
import { createLogger, type Logger } from './logger.js';
import { openConfiguredDatabase, type Database } from './db.js';
import { randomUUID } from 'node:crypto';
import { createAppPubSub, type PubSub } from './pubsub.js';
import { JobQueue } from './queue.js';
import { createAuth } from './auth/better-auth.js';
import { resolveAuthSecret } from './auth/secret.js';
import { AttemptLimiter } from './auth/rate-limit.js';
import { createAuthCache, type AuthCache } from './auth/auth-cache.js';
import { createSecretBox } from './crypto/secret-box.js';
import type { AppDeps } from './context.js';
import { defineQueues } from './workers.js';
import { registerWebhookSink } from './modules/webhooks/delivery.js';
import { ensureBuiltinTools } from './modules/tools/catalogue.js';
import { ensureBuiltinTemplates } from './modules/templates/pack.js';
import { closeBlobStore, createBlobStore } from './storage/index.js';
import { stopAuditRetention } from './modules/audit/retention.js';

export interface RuntimeOptions {
  env: Env;
  /** An already-open database (tests pass a PGlite loaded from a migrated template). */
  database?: Database;
  /**
   * This process's own database (the one `env` names), opening already: main.ts starts opening it while the
   * rest of the server's modules load. Unlike `database`, it is this process's alone, as if opened here.
   */
  opening?: Promise<Database>;
  /** Whether close() closes the database (default true); false when another owner shares it. */
  ownsDatabase?: boolean;
  log?: Logger;
}

export interface Runtime {
  deps: AppDeps;
  /** 'up' or 'down' when events go through Redis; undefined with in-process events. */
  redisHealth(): 'up' | 'down' | undefined;
  /** Stops workers (waiting for their current step up to `timeoutMs`), events and the database. */
  close(timeoutMs?: number): Promise<void>;
}

/**
 * Everything but the HTTP front doors: database (migrated), auth, pub/sub and the job queue. The API
 * server (app.ts) and a standalone worker process (worker.ts) both start from here.
 */
export async function createRuntime(options: RuntimeOptions): Promise<Runtime> {
  const { env } = options;
  const log = options.log ?? createLogger(env.LOG_LEVEL);
  const db = options.database ?? (await (options.opening ?? openConfiguredDatabase(env)));
  // pg's pool re-emits an idle connection's error (PostgreSQL restarted, failed over, or terminated the
  // backend) as 'error' on the pool: without a listener that is an uncaught exception and the process dies.
  // The pool has already dropped the connection and opens a new one on the next query.
  db.pool.on('error', (error) => log.warn({ err: error }, 'idle database connection lost'));
  const applied = await db.migrate();
  if (applied.length) log.info({ applied }, 'migrations applied');
  await ensureBuiltinTools({ prisma: db.prisma, log });
  await ensureBuiltinTemplates({ prisma: db.prisma, log });

  const pubsubHandle = createAppPubSub(env.REDIS_URL, log);
  const queue = new JobQueue(db, log, { superviseSeconds: env.QUEUE_SUPERVISE_SECONDS });
  defineQueues(queue, env);
  await queue.start();
  // The embedded database belongs to this one process: a step still active there was a crashed run's. (A
  // database passed in may be shared with another app in this process, and PostgreSQL with other processes.)
  if (db.kind === 'pglite' && !options.database) await queue.reclaimActiveJobs();
  // Nothing else vacuums or analyses the embedded database (it has no autovacuum).
  const maintenance = db.kind === 'pglite' && !options.database ? startEmbeddedMaintenance(db.sql, log) : undefined;
  const authSecret = resolveAuthSecret(env, log);
  const authCache = createSharedAuthCache(pubsubHandle.pubsub, env.AUTH_CACHE_TTL_MS, log);
  const auth = createAuth({
    prisma: db.prisma,
    secret: authSecret,
    baseURL: env.PUBLIC_URL ?? `http://localhost:${env.PORT}`,
    onWrite: authCache.invalidate,
  });
  const deps: AppDeps = {
    env,
    log,
    db,
    prisma: db.prisma,
    auth,
    pubsub: pubsubHandle.pubsub,
    queue,
    secrets: createSecretBox(authSecret),
    authLimiter: new AttemptLimiter(env.AUTH_RATE_LIMIT_MAX, env.AUTH_RATE_LIMIT_WINDOW_SECONDS * 1000),
    authCache,
    storage: createBlobStore(env),
  };
  // Every process that writes change events queues their webhook deliveries, in the same transaction.
  const unregisterWebhookSink = registerWebhookSink(deps);
  return {
    deps,
    redisHealth: pubsubHandle.health,
    close: async (timeoutMs = env.SHUTDOWN_TIMEOUT_MS) => {
      // Workers finish their current step (bounded), then events and the database go.
      stopAuditRetention(deps);
      unregisterWebhookSink();
      await queue.stop(Math.max(timeoutMs, 100));
      await maintenance?.stop();
      await authCache.close();
      await pubsubHandle.close();
      closeBlobStore(deps.storage);
      if (options.ownsDatabase ?? true) await db.close();
    },
  };
}

/** The auth cache of this process, announcing its invalidations to the others and forgetting on theirs. */
function createSharedAuthCache(pubsub: PubSub, ttlMs: number, log: Logger): AuthCache & { close(): Promise<void> } {
  const origin = randomUUID();
  const cache = createAuthCache({ ttlMs, announce: () => pubsub.publish('auth:invalidated', { origin }) });
  const announcements = pubsub.subscribe('auth:invalidated');
  const listening = (async () => {
    for await (const announcement of announcements) if (announcement.origin !== origin) cache.forget();
  })().catch((error: unknown) => log.error({ err: error }, 'auth cache: invalidations from other processes stopped'));
  return {
    ...cache,
    close: async () => {
      await announcements.return?.();
      await listening;
    },
  };
}
