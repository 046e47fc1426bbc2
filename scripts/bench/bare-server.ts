// The baseline for `npm run bench:workspaces`: the least work that can produce the REST workspace page.
//
//   GET /sql     the same body as GET /api/v1/api/workspaces?limit=20 (page 1, createdAt DESC) for one fixed
//                user: ONE prepared SQL statement through a pg Pool builds the whole JSON text; Node only
//                writes it out. No auth, no validation, no ORM, no JSON.parse/stringify.
//   GET /static  a precomputed body (the REST response's bytes, read from a file): the HTTP ceiling.
//   GET /ready   200 once listening.
//
// Started by scripts/bench/workspaces.ts as its own process, listening on 127.0.0.1 only. Configuration:
//   BARE_DATABASE_URL  the benchmark database      BARE_USER_ID      whose workspaces
//   BARE_STATIC_FILE   bytes served by /static     PORT              port on 127.0.0.1
//   BARE_PAGE_LIMIT    page size (default 20)      BARE_POOL_SIZE    pg pool size (default 10, as the app's)
import { createServer, type ServerResponse } from 'node:http';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { PAGE_SQL } from './page-sql.js';

function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    process.stderr.write(`bare-server: ${name} is required\n`);
    process.exit(2);
  }
  return value;
}

const databaseUrl = required('BARE_DATABASE_URL');
const userId = required('BARE_USER_ID');
const staticBody = readFileSync(required('BARE_STATIC_FILE'));
const port = Number(required('PORT'));
const limit = Number(process.env.BARE_PAGE_LIMIT ?? 20);
const page = 1;
const poolSize = Number(process.env.BARE_POOL_SIZE ?? 10);

const pool = new pg.Pool({ connectionString: databaseUrl, max: poolSize });
const query = { name: 'bench_workspace_page', text: PAGE_SQL, values: [userId, limit, page] };

function send(res: ServerResponse, status: number, body: string | Buffer): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

const server = createServer((req, res) => {
  const path = (req.url ?? '/').split('?')[0];
  if (path === '/static') return send(res, 200, staticBody);
  if (path === '/sql') {
    pool.query<{ body: string }>(query).then(
      (result) => send(res, 200, result.rows[0]!.body),
      (error: unknown) => {
        process.stderr.write(`bare-server: /sql failed: ${error instanceof Error ? error.message : String(error)}\n`);
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
