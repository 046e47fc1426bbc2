import { describe, expect, it } from 'vitest';
import { openDatabase, Prisma } from '../src/db.js';
import { MAX_NAMED_PARAMETERS, MAX_NAMED_STATEMENTS, statementNames } from '../src/db/statement-names.js';
import { usingPostgres } from './support/app.js';

const query = (sql: string, args: unknown[] = []) => ({ sql, args, argTypes: [] });

describe('statementNames', () => {
  it('one name per distinct text, never reused for another; long IN lists and texts past the cap run unnamed', () => {
    const name = statementNames();
    const first = name(query('SELECT 1'));
    expect(first).toMatch(/^perimeter_\d+$/);
    expect(name(query('SELECT 1'))).toBe(first);
    expect(name(query('SELECT 2'))).not.toBe(first);
    expect(
      name(
        query(
          'SELECT $1',
          Array.from({ length: MAX_NAMED_PARAMETERS + 1 }, () => 1),
        ),
      ),
    ).toBeUndefined();
    for (let i = 0; i < MAX_NAMED_STATEMENTS; i += 1) name(query(`SELECT ${i} + 1000`));
    expect(name(query('SELECT 3'))).toBeUndefined();
    expect(name(query('SELECT 1'))).toBe(first);
  });
});

describe.skipIf(!usingPostgres)('prepared statements on PostgreSQL', () => {
  /** The statements the pool's one connection has prepared (pg_prepared_statements is per connection). */
  async function preparedAfterTwoRuns(preparedStatements?: boolean): Promise<string[]> {
    const db = await openDatabase({ url: process.env.TEST_DATABASE_URL!, poolSize: 1, preparedStatements });
    try {
      for (let run = 0; run < 2; run += 1) {
        expect(await db.prisma.$queryRaw`SELECT ${run}::int + 1 AS answer`).toEqual([{ answer: run + 1 }]);
        // The hand-written hot reads (db/prepared-read.ts) follow the same setting.
        expect(await db.read(Prisma.sql`SELECT ${run}::int + 2 AS answer`)).toEqual([{ answer: run + 2 }]);
      }
      const { rows } = await db.pool!.query<{ name: string }>('SELECT name FROM pg_prepared_statements ORDER BY name');
      return rows.map((row) => row.name);
    } finally {
      await db.close();
    }
  }

  it("Prisma's statements and the hand-written reads are prepared once per connection, and not at all when turned off", async () => {
    expect(await preparedAfterTwoRuns()).toEqual(['perimeter_1', 'perimeter_read_1']);
    expect(await preparedAfterTwoRuns(false)).toEqual([]);
  });
});
