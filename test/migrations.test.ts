import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { applyMigrations, defaultMigrationsDir, pgExecutor, pgliteExecutor, readMigrations } from '../src/db/migrations.js';
import { defaultSchemaPath, diffMigrationsToSchema } from '../src/db/schema-diff.js';

// PGlite boots in several seconds and the wasm schema engine replays every migration: be generous.
const SLOW = 120_000;
const PG_URL = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

/** Why PostgreSQL cannot be used, or null when it answers. */
async function probePostgres(): Promise<string | null> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (e) {
    return (e as Error).message;
  } finally {
    await client.end().catch(() => {});
  }
}
const pgUnavailable = await probePostgres();
if (pgUnavailable) console.warn(`Skipping the PostgreSQL migration test: ${PG_URL} is unreachable (${pgUnavailable})`);

const tmpDirs: string[] = [];
const tmp = async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'perimeter-mig-'));
  tmpDirs.push(dir);
  return dir;
};
afterAll(() => Promise.all(tmpDirs.map((d) => rm(d, { recursive: true, force: true }))));

describe('schema.prisma and prisma/migrations', () => {
  it(
    'are in sync (run `npm run migration:create -- <name>` after editing the schema)',
    async () => {
      expect(await diffMigrationsToSchema()).toBe('');
    },
    SLOW,
  );

  it(
    'report a schema edit that no migration covers',
    async () => {
      const schemaPath = path.join(await tmp(), 'schema.prisma');
      const schema = await readFile(defaultSchemaPath, 'utf8');
      await writeFile(schemaPath, `${schema}\nmodel Probe {\n  id Int @id\n}\n`);
      expect(await diffMigrationsToSchema({ schemaPath })).toMatch(/CREATE TABLE "Probe"/);
    },
    SLOW,
  );
});

describe('applyMigrations on PGlite', () => {
  it(
    'applies everything once, then nothing, and refuses an edited or failed history',
    async () => {
      const names = (await readMigrations()).map((m) => m.name);
      expect(names.length).toBeGreaterThan(0);
      const pglite = new PGlite();
      try {
        const db = pgliteExecutor(pglite);
        expect(await applyMigrations(db)).toEqual({ applied: names });
        expect(await applyMigrations(db)).toEqual({ applied: [] });
        await pglite.query('SELECT count(*) FROM "workspace"'); // the schema is really there

        await pglite.query(`UPDATE _prisma_migrations SET checksum = 'tampered' WHERE migration_name = $1`, [names[0]]);
        await expect(applyMigrations(db)).rejects.toThrow(new RegExp(`${names[0]} was modified after it was applied`));

        await pglite.query(`UPDATE _prisma_migrations SET checksum = $1, finished_at = NULL WHERE migration_name = $2`, [
          (await readMigrations())[0]!.checksum,
          names[0],
        ]);
        await expect(applyMigrations(db)).rejects.toThrow(new RegExp(`${names[0]} failed earlier`));
        // The lock is released even when the run throws.
        expect((await pglite.query(`SELECT 1 FROM pg_locks WHERE locktype = 'advisory'`)).rows).toEqual([]);
      } finally {
        await pglite.close();
      }
    },
    SLOW,
  );

  it(
    'rolls a failing migration back completely and records nothing for it',
    async () => {
      const dir = await tmp();
      await cp(defaultMigrationsDir, dir, { recursive: true });
      await mkdir(path.join(dir, '99999999999999_broken'));
      await writeFile(path.join(dir, '99999999999999_broken/migration.sql'), 'CREATE TABLE half_done (id int);\nSELEC 1;\n');
      const pglite = new PGlite();
      try {
        await expect(applyMigrations(pgliteExecutor(pglite), { migrationsDir: dir })).rejects.toThrow(
          /Migration 99999999999999_broken failed and was rolled back/,
        );
        const { rows } = await pglite.query<{ migration_name: string }>('SELECT migration_name FROM _prisma_migrations');
        expect(rows.map((r) => r.migration_name)).not.toContain('99999999999999_broken');
        expect((await pglite.query(`SELECT to_regclass('half_done') AS t`)).rows).toEqual([{ t: null }]);
      } finally {
        await pglite.close();
      }
    },
    SLOW,
  );
});

describe('applyMigrations on PostgreSQL', () => {
  it.skipIf(pgUnavailable !== null)(
    'applies everything once into a fresh database, even with two runs at once, and records Prisma-compatible rows',
    async () => {
      const migrations = await readMigrations();
      const dbName = `perimeter_mig_${randomBytes(6).toString('hex')}`;
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${dbName}`);
      const url = new URL(PG_URL);
      url.pathname = `/${dbName}`;
      const pool = new pg.Pool({ connectionString: url.toString(), max: 2 });
      const client = new pg.Client({ connectionString: url.toString() });
      try {
        // Two runs at once, one through a Pool and one through a Client: the advisory lock makes one wait,
        // so it finds everything applied by the other instead of colliding with it.
        await client.connect();
        const runs = await Promise.all([applyMigrations(pgExecutor(pool)), applyMigrations(pgExecutor(client))]);
        expect(runs.map((r) => r.applied).sort((a, b) => b.length - a.length)).toEqual([migrations.map((m) => m.name), []]);
        expect(pool.idleCount).toBe(pool.totalCount); // the pool's pinned connection went back

        const { rows } = await client.query(
          `SELECT migration_name, checksum, finished_at, rolled_back_at, applied_steps_count, logs
           FROM _prisma_migrations ORDER BY migration_name`,
        );
        expect(rows).toEqual(
          migrations.map((m) => ({
            migration_name: m.name,
            checksum: m.checksum,
            finished_at: expect.any(Date),
            rolled_back_at: null,
            applied_steps_count: 1,
            logs: null,
          })),
        );
        // Advisory locks are per database; other test files migrate their own databases at the same time.
        const held = await client.query(
          `SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        );
        expect(held.rows).toEqual([]);
      } finally {
        // DROP … WITH (FORCE) terminates connections still closing: expected here, not an uncaught error.
        client.on('error', () => {});
        pool.on('error', () => {});
        await client.end().catch(() => {});
        await pool.end();
        await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
        await admin.end();
      }
    },
    SLOW,
  );
});
