import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from '../prisma/generated/prisma/client.js';
import { applyMigrations, pgExecutor, pgliteExecutor, type SqlExecutor } from './db/migrations.js';
import { serializePGlite } from './db/pglite-serial.js';
import { statementNames } from './db/statement-names.js';
import { lockDataDir, type DataDirLock } from './ops/data-dir-lock.js';
import type { Env } from './env.js';
import { shippedPath } from './shipped-files.js';

export { PrismaClient };
export type { Prisma } from '../prisma/generated/prisma/client.js';

export interface DatabaseOptions {
  /** PostgreSQL URL; absent means embedded PGlite. */
  url?: string;
  /** Prisma's statements as named prepared statements on PostgreSQL (db/statement-names.ts); default true. */
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
  pool?: pg.Pool;
  pglite?: PGlite;
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

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const log = options.logQueries ? [{ emit: 'event' as const, level: 'query' as const }] : undefined;
  if (options.url) {
    const pool = new pg.Pool({ connectionString: options.url, max: options.poolSize ?? 10 });
    const statementNameGenerator = options.preparedStatements === false ? undefined : statementNames();
    const prisma = new PrismaClient({ adapter: new PrismaPg(pool, { statementNameGenerator }), log });
    const sql = pgExecutor(pool);
    return {
      kind: 'postgres',
      prisma,
      sql,
      pool,
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
  let raw: PGlite;
  try {
    const seed = seedFor(options);
    raw = options.pgliteTemplate
      ? await PGlite.create({ loadDataDir: options.pgliteTemplate })
      : seed
        ? await PGlite.create({ dataDir: options.pgliteDir, loadDataDir: seed })
        : await PGlite.create(options.pgliteDir ? join(options.pgliteDir) : undefined);
  } catch (error) {
    lock?.release();
    throw error;
  }
  const pglite = serializePGlite(raw);
  const prisma = new PrismaClient({ adapter: new PrismaPGlite(pglite), log });
  const sql = pgliteExecutor(pglite);
  return {
    kind: 'pglite',
    prisma,
    sql,
    pglite,
    migrate: async () => (await applyMigrations(sql)).applied,
    close: async () => {
      await prisma.$disconnect();
      // PGlite.close() resets process.exitCode; keep whatever the process meant to exit with.
      const exitCode = process.exitCode;
      await raw.close();
      lock?.release();
      process.exitCode = exitCode;
    },
  };
}
