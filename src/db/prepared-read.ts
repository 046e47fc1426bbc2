import pg from 'pg';
import { DatabaseUnavailableError, isDatabaseUnavailable } from './unavailable.js';
import { utcTimestamp } from './utc-timestamp.js';
import type { Prisma } from '../../prisma/generated/prisma/client.js';

/** A hand-written statement's rows, read on the pool itself (see preparedReads). */
export type PreparedRead = <Row>(statement: Prisma.Sql) => Promise<Row[]>;

/** Distinct texts this process names; later ones run unnamed (as statement-names.ts does for Prisma's). */
const MAX_NAMED_READS = 1_000;

/** `timestamp` (without time zone) columns hold UTC, as Prisma writes them; node-postgres would read them as local time. */
const TIMESTAMP_OID = 1114;
/** JSON built in a statement (json_build_object) carries `timestamp` columns as ISO text without a zone: UTC too. */
export const utcFromJson = utcTimestamp;
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === TIMESTAMP_OID ? utcTimestamp : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

/**
 * The hottest hand-written reads (the workspace page: OASM's clients' first request, and GraphQL's workspace list;
 * the target, asset, finding and message pages) run on the pool Prisma's adapter uses, as named prepared statements, without Prisma's raw path on top: that
 * path maps every row and value once more after the driver, and cost the page about a tenth of its requests/s
 * (`npm run bench:api`, part oasm). The same pool means the same connections and limits: on the embedded
 * database, the one connection, waiting for a transaction that holds it like any statement of Prisma's.
 * `named: false` (DATABASE_PREPARED_STATEMENTS=false, behind a pooler that cannot carry prepared statements) sends
 * them unnamed, as Prisma's then are. `observe` sees each statement's text (the SQL-count tests count them beside
 * Prisma's query events).
 */
export function preparedReads(pool: pg.Pool, options: { named: boolean; observe?: (text: string) => void }): PreparedRead {
  const { named, observe } = options;
  // A name means one text for good: node-postgres refuses a known name with another text on a connection.
  const names = new Map<string, string>();
  return async <Row>(statement: Prisma.Sql) => {
    const text = statement.text;
    let name = names.get(text);
    if (named && !name && names.size < MAX_NAMED_READS) {
      name = `perimeter_read_${names.size + 1}`;
      names.set(text, name);
    }
    observe?.(text);
    try {
      const result = await pool.query({ name, text, values: statement.values as unknown[], types });
      return result.rows as Row[];
    } catch (error) {
      // Whatever this pool throws comes from the database: a refused or reset connection (the server restarting,
      // a failover) is the 503 it is when Prisma reports it, not a 500 (test/prepared-read.test.ts).
      if (isDatabaseUnavailable(error, { fromDatabase: true })) throw Object.assign(new DatabaseUnavailableError(), { cause: error });
      throw error;
    }
  };
}
