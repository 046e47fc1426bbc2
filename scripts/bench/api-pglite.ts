// The embedded-default side of `npm run bench:api`: a data directory prepared before the app opens it (PGlite
// allows one process per directory), with the same user (copied with its password hash from the PostgreSQL run,
// so it signs in with the same password), the 1,000 workspaces and the small workspace's data.
import { openDatabase } from '../../src/db.js';
import { seedInto, withClient, type Queryable } from './seed.js';
import { seedApiData, type ApiData } from './api-seed.js';

async function copyRows(from: Queryable, to: Queryable, table: string, column: string, value: string): Promise<void> {
  const { rows } = await from.query(`SELECT * FROM "${table}" WHERE "${column}" = $1`, [value]);
  for (const row of rows as Array<Record<string, unknown>>) {
    const columns = Object.keys(row);
    await to.query(
      `INSERT INTO "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) VALUES (${columns.map((_c, i) => `$${i + 1}`).join(', ')})`,
      columns.map((c) => row[c]),
    );
  }
}

/** Migrates and seeds `${dataDir}/pglite` (the app's layout), then closes it. */
export async function preparePGlite(dataDir: string, postgresUrl: string, userId: string): Promise<ApiData> {
  const db = await openDatabase({ pgliteDir: `${dataDir}/pglite` });
  try {
    await db.migrate();
    const pglite = db.sql as unknown as Queryable;
    await withClient(postgresUrl, async (pg) => {
      await copyRows(pg, pglite, 'user', 'id', userId);
      await copyRows(pg, pglite, 'account', 'userId', userId);
    });
    await seedInto(pglite, userId);
    return await seedApiData(pglite, userId, { large: false });
  } finally {
    await db.close();
  }
}
