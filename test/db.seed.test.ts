import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../src/db.js';
import { ensureTemplate } from './support/template.js';

/**
 * A first start unpacks the build's prepared database (dist/embedded-db.tar.gz) into an empty data directory
 * instead of running initdb; a directory that already holds a database is never touched by it.
 * The test suite's own migrated dump has the same shape as the build's seed, so it stands in for it here. (Without a
 * seed file — running from source — initdb makes the directory as before: the spawned-server tests take that path.)
 */
let dir: string;
let seed: string;

beforeAll(async () => {
  seed = await ensureTemplate();
  dir = mkdtempSync(join(tmpdir(), 'perimeter-seed-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the embedded database seed', () => {
  it('an empty data directory starts from the seed: every migration is already there, the data persists', async () => {
    const pgliteDir = join(dir, 'seeded', 'pglite');
    const db = await openDatabase({ pgliteDir, pgliteSeedFile: seed });
    try {
      expect(await db.migrate()).toEqual([]);
      await db.sql.query(`CREATE TABLE seed_probe (id int)`);
    } finally {
      await db.close();
    }
    // Reopened with an unreadable "seed": a directory holding a database ignores it and keeps its own rows.
    const bogus = join(dir, 'bogus.tar.gz');
    writeFileSync(bogus, 'not a dump');
    const again = await openDatabase({ pgliteDir, pgliteSeedFile: bogus });
    try {
      const { rows } = (await again.sql.query(`SELECT to_regclass('seed_probe') IS NOT NULL AS present`)) as { rows: { present: boolean }[] };
      expect(rows[0]?.present).toBe(true);
      expect(await again.migrate()).toEqual([]);
    } finally {
      await again.close();
    }
  });
});
