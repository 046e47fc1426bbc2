// Applies prisma/migrations/*/migration.sql the way `prisma migrate deploy` does, without Prisma's native engine.
// It writes Prisma's own `_prisma_migrations` rows (same table, sha256 checksums, advisory lock key), so a
// machine that does have the engine can keep using `prisma migrate deploy` on the same database.
import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { shippedPath } from '../shipped-files.js';
import type { PGlite } from '@electric-sql/pglite';
import type { ClientBase, Pool } from 'pg';

export interface SqlExecutor {
  query(sql: string, params?: unknown[]): Promise<{ rows: any[] }>;
  /** Parameterless, possibly multi-statement SQL (PGlite only accepts those through `exec`). */
  exec(sql: string): Promise<unknown>;
  /**
   * Runs `fn` on a single connection. A session-level advisory lock belongs to one connection, so an
   * executor over a pool must provide this; one over a single connection need not.
   */
  session?<T>(fn: (db: SqlExecutor) => Promise<T>): Promise<T>;
}

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

/** Prisma's own lock key (schema-engine: `pg_advisory_lock(72707369)`), so we also exclude a concurrent `migrate deploy`. */
const PRISMA_LOCK_KEY = 72707369;

/** Prisma's DDL for its history table (checked against the table the wasm engine creates: same columns, types, defaults). */
const CREATE_MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

export const defaultMigrationsDir = shippedPath('prisma/migrations');

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/**
 * Prisma accepts a recorded checksum if it matches the script as is, with CRLF turned into LF or LF into CRLF
 * (git may rewrite line endings), or the un-padded hex that old engine versions wrote. We accept the same.
 */
export function checksumMatches(sql: string, recorded: string): boolean {
  const candidates = [sql, sql.replace(/\r\n/g, '\n'), sql.replace(/\r?\n/g, '\r\n')].map(sha256);
  const unpadded = (hex: string) => hex.replace(/../g, (b) => parseInt(b, 16).toString(16));
  return candidates.some((c) => c === recorded || unpadded(c) === recorded);
}

/** The migration directories in lexical order (their names start with a UTC timestamp). */
export async function readMigrations(dir = defaultMigrationsDir): Promise<Migration[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return [];
    throw e;
  });
  const names = entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  return Promise.all(
    names.map(async (name) => {
      const file = path.join(dir, name, 'migration.sql');
      const sql = await readFile(file, 'utf8').catch((e: Error) => {
        throw new Error(`Migration ${name}: cannot read ${file}: ${e.message}`);
      });
      return { name, sql, checksum: sha256(sql) };
    }),
  );
}

interface HistoryRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  started_at: Date;
}

/** Throws before anything is applied if the recorded history and the files disagree. */
function checkHistory(migrations: Migration[], rows: HistoryRow[], log: (msg: string) => void): Set<string> {
  const byName = new Map(migrations.map((m) => [m.name, m]));
  const applied = new Set<string>();
  for (const row of rows) {
    if (!row.finished_at) {
      throw new Error(
        `Migration ${row.migration_name} failed earlier (started ${new Date(row.started_at).toISOString()}, never finished). ` +
          `Repair the database by hand, then mark it with \`prisma migrate resolve --rolled-back ${row.migration_name}\` ` +
          `(or set rolled_back_at on its _prisma_migrations row) before migrating again.`,
      );
    }
    const file = byName.get(row.migration_name);
    if (!file) {
      log(`warning: migration ${row.migration_name} is recorded in the database but missing from the migrations directory`);
    } else if (!checksumMatches(file.sql, row.checksum)) {
      throw new Error(
        `Migration ${row.migration_name} was modified after it was applied: the checksum of its migration.sql ` +
          `(${file.checksum}) differs from the recorded one (${row.checksum}). Restore the file and add a new migration instead.`,
      );
    }
    applied.add(row.migration_name);
  }
  return applied;
}

/**
 * Applies every migration not yet recorded, each in its own transaction together with its history row,
 * so a failure leaves neither half-applied SQL nor a row behind. (A script that contains its own
 * BEGIN/COMMIT, as Prisma emits for some enum changes, ends our transaction early; that is no worse than
 * Prisma, which runs scripts without a wrapping transaction.)
 */
export async function applyMigrations(db: SqlExecutor, opts: { migrationsDir?: string; log?: (msg: string) => void } = {}): Promise<{ applied: string[] }> {
  const migrations = await readMigrations(opts.migrationsDir);
  const run = (conn: SqlExecutor) => applyOnConnection(conn, migrations, opts.log ?? (() => {}));
  return db.session ? db.session(run) : run(db);
}

async function applyOnConnection(db: SqlExecutor, migrations: Migration[], log: (msg: string) => void): Promise<{ applied: string[] }> {
  const applied: string[] = [];
  let locked = false;
  let succeeded = false;
  try {
    // Lock before creating the table: two processes starting together must not race on CREATE TABLE.
    await db.query(`SELECT pg_advisory_lock(${PRISMA_LOCK_KEY})`);
    locked = true;
    await db.exec(CREATE_MIGRATIONS_TABLE);
    const { rows } = await db.query(
      `SELECT migration_name, checksum, finished_at, started_at FROM "_prisma_migrations"
       WHERE rolled_back_at IS NULL ORDER BY started_at`,
    );
    const done = checkHistory(migrations, rows as HistoryRow[], log);

    for (const m of migrations.filter((m) => !done.has(m.name))) {
      log(`applying ${m.name}`);
      await db.exec('BEGIN');
      try {
        await db.exec(m.sql);
        // started_at defaults to now() (the transaction start); clock_timestamp() is the real finish time.
        await db.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, finished_at, applied_steps_count)
           VALUES ($1, $2, $3, clock_timestamp(), 1)`,
          [randomUUID(), m.checksum, m.name],
        );
        await db.exec('COMMIT');
      } catch (e) {
        await db.exec('ROLLBACK').catch(() => {});
        throw new Error(`Migration ${m.name} failed and was rolled back: ${(e as Error).message}`, { cause: e });
      }
      applied.push(m.name);
    }
    succeeded = true;
    return { applied };
  } finally {
    // An unlock failure must not hide the error that got us here; after a clean run it is reported.
    if (locked) {
      await db.query(`SELECT pg_advisory_unlock(${PRISMA_LOCK_KEY})`).catch((e) => {
        if (succeeded) throw e;
      });
    }
  }
}

export function pgliteExecutor(pglite: PGlite): SqlExecutor {
  return {
    query: (sql, params) => pglite.query(sql, params),
    exec: (sql) => pglite.exec(sql),
  };
}

const clientExecutor = (client: ClientBase): SqlExecutor => ({
  query: (sql, params) => client.query(sql, params),
  // Without params node-postgres uses the simple protocol, which accepts multi-statement scripts.
  exec: (sql) => client.query(sql),
});

/**
 * Over a Pool, plain queries use any pooled connection, while a migration run (`session`) checks out one
 * client for its whole length so the advisory lock holds. A run that threw closes that connection rather
 * than returning it: if unlocking failed, no pooled connection may keep holding the lock.
 */
export function pgExecutor(client: ClientBase | Pool): SqlExecutor {
  if (!('totalCount' in client)) return clientExecutor(client);
  const pool = client;
  return {
    query: (sql, params) => pool.query(sql, params),
    exec: (sql) => pool.query(sql),
    async session(fn) {
      const conn = await pool.connect();
      let failed = true;
      try {
        const result = await fn(clientExecutor(conn));
        failed = false;
        return result;
      } finally {
        conn.release(failed);
      }
    },
  };
}
