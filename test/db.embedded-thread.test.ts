// The embedded database runs on a thread of its own (src/db/embedded/), reached through node-postgres as a
// PostgreSQL server would be. These run on both CI legs: they open the embedded database themselves.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../src/db.js';
import { maintainEmbeddedDatabase, startEmbeddedMaintenance } from '../src/db/embedded/maintenance.js';
import { createLogger } from '../src/logger.js';
import { projectRoot } from './support/process.js';
import { ensureTemplate, loadTemplate } from './support/template.js';

const opened: Database[] = [];
beforeAll(async () => {
  await ensureTemplate();
}, 120_000);
afterEach(async () => {
  for (const db of opened.splice(0)) await db.close().catch(() => undefined);
});

async function embedded(): Promise<Database> {
  const db = await openDatabase({ pgliteTemplate: loadTemplate() });
  opened.push(db);
  return db;
}

describe('the embedded database on its own thread', () => {
  it("keeps the server's event loop turning while a statement runs", async () => {
    const db = await embedded();
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    try {
      await db.sql.query('SELECT pg_sleep(1)');
    } finally {
      clearInterval(timer);
    }
    // In the server's thread, PGlite would have held the loop for the whole second: no tick at all.
    expect(ticks).toBeGreaterThan(20);
  });

  it('serves queries, migrations-style scripts and NOTIFY through the one connection', async () => {
    const db = await embedded();
    const heard: string[] = [];
    const stop = db.onNotification!((channel, payload) => heard.push(`${channel}:${payload}`));
    await db.sql.query('LISTEN embedded_test');
    const results = await db.sql.exec(`CREATE TABLE t (n int); INSERT INTO t VALUES (1), (2); SELECT pg_notify('embedded_test', 'done')`);
    expect(Array.isArray(results)).toBe(true);
    expect((await db.sql.query('SELECT sum(n)::int AS total FROM t WHERE n > $1', [0])).rows).toEqual([{ total: 3 }]);
    await expect.poll(() => heard).toEqual(['embedded_test:done']);
    stop();
    // Errors come back as PostgreSQL's own, with their codes; the connection goes on.
    await expect(db.sql.query('SELECT * FROM missing_table')).rejects.toMatchObject({ code: '42P01' });
    expect((await db.sql.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });

  it('starts a replacement connection as a fresh session: no transaction or prepared statement of the lost one', async () => {
    const db = await embedded();
    const first = await db.pool.connect();
    await first.query('BEGIN');
    await first.query('CREATE TABLE left_open (n int)');
    await first.query({ name: 'named_one', text: 'SELECT 1 AS one' });
    first.release(true); // discarded, as the pool does with a connection that failed

    const second = await db.pool.connect();
    try {
      expect((await second.query(`SELECT to_regclass('left_open') AS found`)).rows).toEqual([{ found: null }]);
      // The name is free again: preparing it a second time would fail with 42P05 otherwise.
      expect((await second.query({ name: 'named_one', text: 'SELECT 1 AS one' })).rows).toEqual([{ one: 1 }]);
    } finally {
      second.release();
    }
  });

  it('fails statements at once, with a clear error, when the thread is gone', async () => {
    const db = await embedded();
    const poolErrors: Error[] = [];
    db.pool.on('error', (error) => poolErrors.push(error)); // the idle connection's loss (the server logs it)
    expect((await db.sql.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    await (db.embedded as unknown as { worker: Worker }).worker.terminate();
    await expect(db.sql.query('SELECT 1')).rejects.toThrow(/embedded database/);
    await expect(db.embedded!.dump()).rejects.toThrow(/embedded database/);
    expect(poolErrors.map((error) => error.message)).toEqual([expect.stringMatching(/embedded database/)]);
    await db.close();
  });

  it('dumps the data directory between statements, and the dump opens with the data in it', async () => {
    const db = await embedded();
    await db.sql.query('CREATE TABLE kept (n int)');
    await db.sql.query('INSERT INTO kept VALUES (42)');
    const archive = await db.embedded!.dump();
    const copy = await openDatabase({ pgliteTemplate: archive });
    opened.push(copy);
    expect((await copy.sql.query('SELECT n FROM kept')).rows).toEqual([{ n: 42 }]);
  });

  it('is vacuumed and analysed when a table was never analysed or has grown (it has no autovacuum)', async () => {
    const db = await embedded();
    const estimate = async () =>
      Number(
        ((await db.sql.query(`SELECT reltuples FROM pg_class WHERE oid = 'public.grown'::regclass`)) as { rows: { reltuples: number }[] }).rows[0]!.reltuples,
      );
    await db.sql.query('CREATE TABLE grown (n int, label text)');
    await db.sql.query(`INSERT INTO grown SELECT i, repeat('x', 100) FROM generate_series(1, 100) i`);
    expect(await estimate()).toBe(-1); // never analysed: the planner guesses

    const first = await maintainEmbeddedDatabase(db.sql);
    expect(first).toContain('public.grown');
    expect(first).toContain('public.workspace'); // the migrated tables had never been analysed either
    expect(await estimate()).toBe(100);
    expect(await maintainEmbeddedDatabase(db.sql)).toEqual([]); // nothing changed since

    await db.sql.query(`INSERT INTO grown SELECT i, repeat('x', 100) FROM generate_series(101, 5000) i`);
    expect(await maintainEmbeddedDatabase(db.sql)).toEqual(['public.grown']);
    expect(await estimate()).toBe(5000);
  });

  it('runs that maintenance on its own, shortly after start and then periodically, until stopped', async () => {
    const db = await embedded();
    const maintenance = startEmbeddedMaintenance(db.sql, createLogger('silent'), { firstMs: 10, everyMs: 100 });
    try {
      await db.sql.query('CREATE TABLE later (n int)');
      await db.sql.query('INSERT INTO later SELECT generate_series(1, 3000)');
      const estimate = async () =>
        Number(((await db.sql.query(`SELECT reltuples FROM pg_class WHERE relname = 'later'`)) as { rows: { reltuples: number }[] }).rows[0]!.reltuples);
      await expect.poll(estimate, { timeout: 10_000 }).toBe(3000);
    } finally {
      await maintenance.stop();
    }
  });

  it('refuses, with an error of its own, a data directory that does not hold a database it can open', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'perimeter-embedded-bad-'));
    try {
      writeFileSync(join(dir, 'PG_VERSION'), '9\n');
      await expect(openDatabase({ pgliteDir: join(dir) })).rejects.toThrow(/The embedded database did not open/);
      // The lock went with it: the directory can be opened again once fixed.
      expect(existsSync(join(dir, '..', `${dir.split('/').pop()}.lock`))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('lets a process that is done exit by itself, also after a connection was discarded (the thread holds it only while it owes an answer)', async () => {
    const script = [
      `const { openDatabase } = await import(${JSON.stringify(join(projectRoot, 'src/db.ts'))});`,
      'const db = await openDatabase({});',
      'const client = await db.pool.connect();',
      "await client.query('SELECT 1');",
      'client.release(true);',
      "await db.sql.query('SELECT 1');",
      "console.log('done');",
    ].join('\n');
    // A file, not --eval: the database thread inherits the process's flags, and --input-type would fail it.
    const dir = mkdtempSync(join(tmpdir(), 'perimeter-embedded-exit-'));
    const file = join(dir, 'done.mjs');
    writeFileSync(file, script);
    const outcome = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, ['--import', 'tsx', file], { cwd: projectRoot, timeout: 30_000 }, (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout, stderr }),
      );
    }).finally(() => rmSync(dir, { recursive: true, force: true }));
    expect(outcome, outcome.stderr).toMatchObject({ code: 0, stdout: 'done\n' });
  }, 40_000);
});
