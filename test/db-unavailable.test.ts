import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import net from 'node:net';
import { openDatabase } from '../src/db.js';
import { createTestDatabase, startTestApp, usingPostgres, type TestApp, type TestDatabase } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { waitFor } from './support/wait.js';

/**
 * PostgreSQL restarting or failing over: while the database cannot be reached the API answers 503 with
 * Retry-After (REST) and a GraphQL error coded UNAVAILABLE, never a 500, and answers normally once it is back.
 * The app reaches PostgreSQL through a loopback TCP proxy this test cuts and restores (the shared server
 * itself is never stopped).
 */

/** Forwards 127.0.0.1:<port> to the database; cut() refuses new connections and drops the open ones. */
async function tcpProxy(target: { host: string; port: number }) {
  const open = new Set<net.Socket>();
  let server: net.Server | undefined;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server = net.createServer((client) => {
        const upstream = net.connect(target.port, target.host);
        for (const socket of [client, upstream]) {
          open.add(socket);
          socket.on('close', () => open.delete(socket));
          socket.on('error', () => undefined);
        }
        client.pipe(upstream).pipe(client);
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        port = (server!.address() as net.AddressInfo).port;
        resolve();
      });
    });
  await listen();
  return {
    get port() {
      return port;
    },
    async cut() {
      const closing = new Promise<void>((resolve) => server!.close(() => resolve()));
      for (const socket of open) socket.destroy();
      await closing;
    },
    restore: listen,
  };
}

const describeWithPostgres = usingPostgres ? describe : describe.skip;
if (!usingPostgres) console.info('test/db-unavailable.test.ts skipped on PGlite: it cuts the connection to a PostgreSQL server (set TEST_DATABASE_URL).');

describeWithPostgres('PostgreSQL out of reach', { timeout: 120_000 }, () => {
  let fresh: TestDatabase;
  let proxied: TestDatabase;
  let proxy: Awaited<ReturnType<typeof tcpProxy>>;
  let server: TestApp;
  let client: ReturnType<typeof clientFor>;

  beforeAll(async () => {
    fresh = await createTestDatabase();
    await fresh.db.close();
    const direct = new URL(fresh.url!);
    proxy = await tcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
    const viaProxy = new URL(direct);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.port);
    const db = await openDatabase({ url: viaProxy.toString(), poolSize: 5 });
    proxied = { db, url: viaProxy.toString(), dispose: async () => {} };
    server = await startTestApp({ QUEUE_SUPERVISE_SECONDS: '1' }, { database: proxied });
    client = clientFor(server);
  });

  afterAll(async () => {
    await proxy?.restore().catch(() => undefined);
    await server?.stop();
    await proxied?.db.close();
    await fresh?.dispose();
  });

  it('answers 503 with Retry-After (REST) and an UNAVAILABLE GraphQL error while the database is cut, and 200 once it is back', async () => {
    const owner: TestUser = await client.signUp('Outage');
    await client.createWorkspace(owner);
    expect((await client.api('GET', '/api/v1/api/workspaces', { as: owner })).status).toBe(200);

    await proxy.cut();

    const rest = await client.api('GET', '/api/v1/api/workspaces', { as: owner });
    expect(rest.status).toBe(503);
    expect(rest.headers.get('retry-after')).toBe('5');
    expect(rest.body).toEqual({
      statusCode: 503,
      error: 'Service Unavailable',
      code: 'UNAVAILABLE',
      message: expect.stringMatching(/database/i),
      retryAfterSeconds: 5,
    });

    const graphql = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${owner.token}` },
      // The viewer is remembered (auth/auth-cache.ts): ask for something only the database knows.
      body: JSON.stringify({ query: '{ viewer { id } workspaces(first: 1) { totalCount } }' }),
    });
    expect(graphql.status).toBe(503);
    expect(graphql.headers.get('retry-after')).toBe('5');
    const body = (await graphql.json()) as { errors: { message: string; extensions: Record<string, unknown> }[] };
    expect(body.errors[0]).toMatchObject({ message: expect.stringMatching(/database/i), extensions: { code: 'UNAVAILABLE', retryAfterSeconds: 5 } });
    expect(body.errors[0]!.extensions.http).toBeUndefined();

    // A sign-in (no viewer to resolve: the failure comes from inside the procedure) is told the same.
    const signIn = await client.api('POST', '/api/v1/api/auth/sign-in/email', { body: { email: owner.email, password: 'irrelevant-password' } });
    expect(signIn.status).toBe(503);

    await proxy.restore();
    await waitFor(async () => (await client.api('GET', '/api/v1/api/workspaces', { as: owner })).status === 200, {
      timeoutMs: 20_000,
      intervalMs: 200,
      what: 'the API to answer 200 again',
    });
    expect((await client.api('GET', '/api/v1/api/workspaces', { as: owner })).status).toBe(200);
  });
});
