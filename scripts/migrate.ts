// npm run migrate   applies prisma/migrations to DATABASE_URL (PostgreSQL) or, when it is unset, to the
// embedded PGlite in ${DATA_DIR:-./data}/pglite. Replaces `prisma migrate deploy` where the native engine is missing.
import path from 'node:path';
import { mkdir } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { applyMigrations, pgExecutor, pgliteExecutor } from '../src/db/migrations.js';
import { lockDataDir } from '../src/ops/data-dir-lock.js';

const log = (msg: string) => console.log(msg);

async function main(): Promise<string[]> {
  const url = process.env.DATABASE_URL;
  if (url) {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      console.log(`Migrating PostgreSQL at ${new URL(url).host}${new URL(url).pathname}`);
      return (await applyMigrations(pgExecutor(client), { log })).applied;
    } finally {
      await client.end();
    }
  }
  const dataDir = path.resolve(process.env.DATA_DIR ?? './data', 'pglite');
  await mkdir(dataDir, { recursive: true });
  console.log(`Migrating the embedded PGlite in ${dataDir}`);
  // The server's lock: migrating under a running server would have two PGlites writing the same files.
  const lock = lockDataDir(path.dirname(dataDir), `${dataDir}.lock`);
  const pglite = await PGlite.create(dataDir);
  try {
    return (await applyMigrations(pgliteExecutor(pglite), { log })).applied;
  } finally {
    await pglite.close();
    lock.release();
  }
}

// process.exit with an explicit code: PGlite.close() resets process.exitCode.
main().then(
  (applied) => {
    console.log(applied.length ? `Applied ${applied.length} migration(s).` : 'Database is up to date: nothing to apply.');
    process.exit(0);
  },
  (e: Error) => {
    console.error(`migrate failed: ${e.message}`);
    process.exit(1);
  },
);
