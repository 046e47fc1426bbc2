import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { EventEmitter } from 'node:events';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from '../prisma/generated/prisma/client.js';
import { EmbeddedDatabaseThread } from './db/embedded/thread.js';
import { applyMigrations, pgExecutor, type SqlExecutor } from './db/migrations.js';
import { statementNames } from './db/statement-names.js';
import { preparedReads, type PreparedRead } from './db/prepared-read.js';
import { lockDataDir, type DataDirLock } from './ops/data-dir-lock.js';
import type { Env } from './env.js';
import { shippedPath } from './shipped-files.js';

export { PrismaClient };
export { Prisma } from '../prisma/generated/prisma/client.js';

export interface DatabaseOptions {
  /** PostgreSQL URL; absent means embedded PGlite. */
  url?: string;
  /** Prisma's statements as named prepared statements (db/statement-names.ts); default true. */
  preparedStatements?: boolean;
  /** Where PGlite keeps its files; absent (with no template) means in memory. */
  pgliteDir?: string;
  /** A migrated PGlite data directory dump (dumpDataDir) to start from: tests boot from it in under a second. */
  pgliteTemplate?: Blob | File;
  /**
   * A gzipped dump to unpack into `pgliteDir` when that directory is still empty (a first start), instead of
   * PGlite's initdb: the build ships one (src/ops/embedded-seed.ts). A missing file means initdb as before.
   */
  pgliteSeedFile?: string;
  /** Emit Prisma `query` events (the SQL-count tests listen to them). */
  logQueries?: boolean;
  poolSize?: number;
}

export interface Database {
  kind: 'pglite' | 'postgres';
  prisma: PrismaClient;
  /** Raw SQL for the migration runner, the job queue and readiness checks. */
  sql: SqlExecutor;
  /** The connections: to the PostgreSQL server, or the one connection to the embedded database's thread. */
  pool: pg.Pool;
  /** Hand-written hot reads on that pool, beside Prisma (db/prepared-read.ts). */
  read: PreparedRead;
  /**
   * With `logQueries`: every statement's text, Prisma's (its query events) and the hand-written reads alike, for
   * the SQL-count tests. Returns the unsubscribe.
   */
  onStatement(listener: (text: string) => void): () => void;
  /** The embedded database (kind 'pglite'): its thread, which can also dump the data directory. */
  embedded?: EmbeddedDatabaseThread;
  /**
   * NOTIFY messages arriving on the embedded database's one connection (kind 'pglite'). PostgreSQL listeners
   * hold a connection of their own instead (queue-wakeup.ts); the embedded database has only the one.
   */
  onNotification?(listener: (channel: string, payload: string) => void): () => void;
  migrate(): Promise<string[]>;
  close(): Promise<void>;
}

/** The database the configuration names: PostgreSQL at DATABASE_URL, else the embedded one under DATA_DIR. */
export function openConfiguredDatabase(env: Pick<Env, 'DATABASE_URL' | 'DATABASE_PREPARED_STATEMENTS' | 'dataDir'>): Promise<Database> {
  return openDatabase({
    url: env.DATABASE_URL,
    preparedStatements: env.DATABASE_PREPARED_STATEMENTS,
    pgliteDir: `${env.dataDir}/pglite`,
    pgliteSeedFile: shippedPath(EMBEDDED_SEED_FILE),
  });
}

/** Where the build puts the prepared embedded database (root-relative: dist/embedded-db.tar.gz compiled; absent from source). */
export const EMBEDDED_SEED_FILE = 'embedded-db.tar.gz';

/** The seed to unpack, when the data directory has never held a database (PostgreSQL writes PG_VERSION first). */
function seedFor(options: DatabaseOptions): Blob | undefined {
  if (!options.pgliteDir || !options.pgliteSeedFile || existsSync(join(options.pgliteDir, 'PG_VERSION'))) return undefined;
  if (!existsSync(options.pgliteSeedFile)) return undefined;
  return new Blob([readFileSync(options.pgliteSeedFile)], { type: 'application/x-gzip' });
}

/** The hand-written reads, and with `logQueries` one feed of every statement's text (Prisma's and theirs). */
function statementReads(prisma: PrismaClient, pool: pg.Pool, options: DatabaseOptions): Pick<Database, 'read' | 'onStatement'> {
  const named = options.preparedStatements !== false;
  if (!options.logQueries) return { read: preparedReads(pool, { named }), onStatement: () => () => {} };
  const statements = new EventEmitter();
  (prisma as unknown as { $on(event: 'query', cb: (event: { query: string }) => void): void }).$on('query', (event) =>
    statements.emit('statement', event.query),
  );
  return {
    read: preparedReads(pool, { named, observe: (text) => statements.emit('statement', text) }),
    onStatement: (listener) => {
      statements.on('statement', listener);
      return () => statements.off('statement', listener);
    },
  };
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const log = options.logQueries ? [{ emit: 'event' as const, level: 'query' as const }] : undefined;
  const statementNameGenerator = options.preparedStatements === false ? undefined : statementNames();
  if (options.url) {
    const pool = new pg.Pool({ connectionString: options.url, max: options.poolSize ?? 10 });
    const prisma = new PrismaClient({ adapter: new PrismaPg(pool, { statementNameGenerator }), log });
    const sql = pgExecutor(pool);
    return {
      kind: 'postgres',
      prisma,
      sql,
      pool,
      ...statementReads(prisma, pool, options),
      migrate: async () => (await applyMigrations(sql)).applied,
      close: async () => {
        await prisma.$disconnect();
        await pool.end();
      },
    };
  }
  let lock: DataDirLock | undefined;
  if (options.pgliteDir) {
    // Owner-only (see ops/data-dir.ts), and one process at a time: a second PGlite on the same files
    // would silently overwrite the first one's writes. The lock is held until close() or process exit.
    mkdirSync(options.pgliteDir, { recursive: true, mode: 0o700 });
    lock = lockDataDir(dirname(options.pgliteDir), `${options.pgliteDir}.lock`);
  }
  let thread: EmbeddedDatabaseThread;
  try {
    thread = await EmbeddedDatabaseThread.start(
      options.pgliteTemplate
        ? { loadDataDir: options.pgliteTemplate }
        : { dataDir: options.pgliteDir ? join(options.pgliteDir) : undefined, loadDataDir: seedFor(options) },
    );
  } catch (error) {
    lock?.release();
    throw error;
  }
  // PGlite is one backend: one connection, kept open (a transaction holds it; everything else waits its turn,
  // never running inside another's transaction). Its user and database are PGlite's own.
  const pool = new pg.Pool({ max: 1, idleTimeoutMillis: 0, user: 'postgres', database: 'postgres', stream: () => thread.openStream() });
  const notifications = new EventEmitter();
  pool.on('connect', (client) => client.on('notification', (message) => notifications.emit('notification', message.channel, message.payload ?? '')));
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool, { statementNameGenerator }), log });
  const sql = pgExecutor(pool);
  return {
    kind: 'pglite',
    prisma,
    sql,
    pool,
    ...statementReads(prisma, pool, options),
    embedded: thread,
    onNotification: (listener) => {
      notifications.on('notification', listener);
      return () => notifications.off('notification', listener);
    },
    migrate: async () => (await applyMigrations(sql)).applied,
    close: async () => {
      await prisma.$disconnect();
      await pool.end();
      await thread.close();
      lock?.release();
    },
  };
}
