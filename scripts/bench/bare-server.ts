// The baseline for `npm run bench:api`: the least work that can produce each REST list page.
//
//   GET /sql/<name>  the same body as the app's REST page <name> for one fixed user: ONE prepared SQL statement
//                    through a pg Pool builds the whole JSON text (api-sql.ts); Node only writes it out. No auth,
//                    no validation, no ORM, no JSON.parse/stringify.
//   GET /ready       200 once listening.
//
// Started by scripts/bench/api.ts as its own process, listening on 127.0.0.1 only. Configuration:
//   BARE_DATABASE_URL  the benchmark database      BARE_QUERIES_FILE  JSON: { name: { text, values } }
//   PORT               port on 127.0.0.1          BARE_POOL_SIZE     pg pool size (default 10, as the app's)
import { createServer, type ServerResponse } from 'node:http';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import type { BareQuery } from './api-sql.js';

function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    process.stderr.write(`bare-server: ${name} is required\n`);
    process.exit(2);
  }
  return value;
}

const databaseUrl = required('BARE_DATABASE_URL');
const queries = JSON.parse(readFileSync(required('BARE_QUERIES_FILE'), 'utf8')) as Record<string, BareQuery>;
const port = Number(required('PORT'));
const poolSize = Number(process.env.BARE_POOL_SIZE ?? 10);

const pool = new pg.Pool({ connectionString: databaseUrl, max: poolSize });
// Named, so each is prepared once per connection.
const prepared = new Map(Object.entries(queries).map(([name, { text, values }]) => [name, { name: `bench_${name}`, text, values }]));

function send(res: ServerResponse, status: number, body: string | Buffer): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

const server = createServer((req, res) => {
  const path = (req.url ?? '/').split('?')[0]!;
  const query = path.startsWith('/sql/') ? prepared.get(path.slice('/sql/'.length)) : undefined;
  if (query) {
    pool.query<{ body: string }>(query).then(
      (result) => send(res, 200, result.rows[0]!.body),
      (error: unknown) => {
        process.stderr.write(`bare-server: ${path} failed: ${error instanceof Error ? error.message : String(error)}\n`);
        send(res, 500, '{"error":"query failed"}');
      },
    );
    return;
  }
  if (path === '/ready') return send(res, 200, '{"status":"ready"}');
  send(res, 404, '{"error":"not found"}');
});

server.listen(port, '127.0.0.1', () => process.stdout.write(`bare-server listening on 127.0.0.1:${port}\n`));

function stop(): void {
  server.close();
  server.closeAllConnections();
  pool.end().finally(() => process.exit(0));
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
