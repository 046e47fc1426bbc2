import type { Logger } from '../../logger.js';
import type { SqlExecutor } from '../migrations.js';

/**
 * PGlite has no autovacuum (PostgreSQL's background workers do not run in it) and keeps no activity statistics,
 * so nothing would ever ANALYZE or VACUUM the embedded database: tables filled through the API keep the
 * planner's blind guesses (measured: the workspace list took twice as long on 200 never-analysed workspaces),
 * and updated rows (counters, job states) leave dead versions behind. This does autovacuum's job the way it can:
 * a table is vacuumed and analysed when it was never analysed or has grown by a fifth (plus a few pages) since
 * it last was, read from the sizes PostgreSQL records in pg_class at each VACUUM/ANALYZE.
 */
const DUE_TABLES = `
  SELECT format('%I.%I', n.nspname, c.relname) AS name
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE c.relkind = 'r'
    AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_toast%' AND n.nspname NOT LIKE 'pg\\_temp%'
    AND (c.reltuples < 0 OR pg_relation_size(c.oid) / current_setting('block_size')::int > c.relpages * 1.2 + 8)
  ORDER BY 1`;

/** Vacuums and analyses every table that is due; returns their names. */
export async function maintainEmbeddedDatabase(sql: SqlExecutor): Promise<string[]> {
  const { rows } = (await sql.query(DUE_TABLES)) as { rows: { name: string }[] };
  // One table per statement: the one connection is free for requests in between.
  for (const { name } of rows) await sql.query(`VACUUM (ANALYZE) ${name}`);
  return rows.map((row) => row.name);
}

export interface EmbeddedMaintenance {
  stop(): Promise<void>;
}

/** Runs maintainEmbeddedDatabase shortly after start, then every `everyMs`, until stopped. */
export function startEmbeddedMaintenance(sql: SqlExecutor, log: Logger, { firstMs = 5_000, everyMs = 60_000 } = {}): EmbeddedMaintenance {
  let stopped = false;
  let running: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  const schedule = (ms: number) => {
    timer = setTimeout(() => {
      running = maintainEmbeddedDatabase(sql)
        .then((tables) => {
          if (tables.length) log.debug({ tables }, 'embedded database: vacuumed and analysed');
        })
        .catch((error: unknown) => {
          if (!stopped) log.warn({ err: error }, 'embedded database maintenance failed; retrying later');
        })
        .finally(() => {
          running = undefined;
          if (!stopped) schedule(everyMs);
        });
    }, ms);
    timer.unref();
  };
  schedule(firstMs);
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
