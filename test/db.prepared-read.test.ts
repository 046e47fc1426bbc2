import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Prisma } from '../src/db.js';
import { createTestDatabase, type TestDatabase } from './support/app.js';

// The hand-written hot reads (db/prepared-read.ts), on the embedded database and on PostgreSQL (both CI legs).
let test: TestDatabase;
const seen: string[] = [];

beforeAll(async () => {
  test = await createTestDatabase({ logQueries: true });
  test.db.onStatement((text) => seen.push(text));
});

afterAll(async () => {
  await test.db.close();
  await test.dispose();
});

describe('db.read', () => {
  it('reads `timestamp` columns as UTC, whatever the process time zone', async () => {
    const zone = process.env.TZ;
    // Node applies TZ as soon as it is set: a local-time parse would shift these by four or five hours.
    process.env.TZ = 'America/New_York';
    try {
      const rows = await test.db.read<{ at: Date; none: Date | null; n: number; doc: { a: number } }>(
        Prisma.sql`SELECT ${'2024-04-01 04:44:00.123'}::timestamp AS at, NULL::timestamp AS none, 41 + ${1}::int AS n, json_build_object('a', 1) AS doc`,
      );
      expect(rows).toHaveLength(1);
      expect(rows[0]!.at).toBeInstanceOf(Date);
      expect(rows[0]!.at.toISOString()).toBe('2024-04-01T04:44:00.123Z');
      expect(rows[0]!.none).toBeNull();
      expect(rows[0]!.n).toBe(42);
      expect(rows[0]!.doc).toEqual({ a: 1 });
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });

  it('runs the same text again as its prepared statement, with other values, and reports each statement', async () => {
    seen.length = 0;
    const statement = (value: number) => Prisma.sql`SELECT ${value}::int + 1 AS n`;
    expect(await test.db.read<{ n: number }>(statement(1))).toEqual([{ n: 2 }]);
    expect(await test.db.read<{ n: number }>(statement(9))).toEqual([{ n: 10 }]);
    expect(seen).toEqual([statement(1).text, statement(9).text]);
  });

  it("fails with the database's error, and the pool stays usable", async () => {
    await expect(test.db.read(Prisma.sql`SELECT * FROM no_such_table`)).rejects.toMatchObject({ code: '42P01' });
    expect(await test.db.read<{ ok: boolean }>(Prisma.sql`SELECT true AS ok`)).toEqual([{ ok: true }]);
  });
});
