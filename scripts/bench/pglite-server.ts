// PGlite served over the PostgreSQL wire protocol, in its own process: one "database off the request thread"
// option that `npm run bench:api` can measure beside the app's own embedded default (BENCH_PGLITE_SOCKET). The app
// then talks to it through the same pg driver and Prisma adapter as to a real server (DATABASE_URL).
//
// @electric-sql/pglite-socket is not a dependency of the project (it pins its own PGlite build and seven
// extension packages): install it anywhere (`npm install --ignore-scripts @electric-sql/pglite-socket` in a
// scratch directory) and name that node_modules directory in PGLITE_SOCKET_MODULES.
//   PGLITE_DATA_DIR        the PGlite directory to open     PORT  port on 127.0.0.1
//   PGLITE_SOCKET_MODULES  node_modules with @electric-sql/pglite-socket (and its @electric-sql/pglite)
//   PGLITE_MAX_CONNECTIONS connections multiplexed onto the one PGlite session (default 10, the app's pool)
//
// Measured (bench:api, 10 connections, pglite-socket 0.2.17): about 1.1x the requests/s of in-thread PGlite on the
// list pages, and then WRONG ANSWERS under load (401, 404, 503 for valid requests on the messages page): its
// multiplexer queues each protocol message on its own and keeps a connection's messages together only inside a
// transaction, so one connection's Parse/Bind/Execute interleave with another's on the single session. Not fit to
// be the default as it is. (That figure is against PGlite on the server's own thread, as it was then.) The default
// became the other option: PGlite on a worker thread of the server's process, one connection whose whole batches
// go over as transferred buffers (src/db/embedded/): no socket, no second process, no interleaving.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    process.stderr.write(`pglite-server: ${name} is required\n`);
    process.exit(2);
  }
  return value;
}

const modules = required('PGLITE_SOCKET_MODULES');
const entry = (name: string, file: string) => pathToFileURL(join(modules, name, file)).href;
const { PGlite } = (await import(entry('@electric-sql/pglite', 'dist/index.js'))) as typeof import('@electric-sql/pglite');
const { PGLiteSocketServer } = (await import(entry('@electric-sql/pglite-socket', 'dist/index.js'))) as {
  PGLiteSocketServer: new (options: { db: unknown; port: number; host: string; maxConnections: number }) => { start(): Promise<void>; stop(): Promise<void> };
};

const db = await PGlite.create(required('PGLITE_DATA_DIR'));
const server = new PGLiteSocketServer({
  db,
  port: Number(required('PORT')),
  host: '127.0.0.1',
  maxConnections: Number(process.env.PGLITE_MAX_CONNECTIONS ?? 10),
});
await server.start();
process.stdout.write('pglite-server listening\n');

async function stop(): Promise<void> {
  await server.stop();
  await db.close();
  process.exit(0);
}
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
