import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { createTestDatabase, usingPostgres, type TestApp, type TestDatabase } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { freePort, serverReady, spawnServer, type ServerProcess } from './support/process.js';
import { waitFor } from './support/wait.js';
import { addTarget, startScan, waitForScan } from './support/scans.js';

/**
 * A server SIGKILLed while a webhook attempt is in flight (the receiver holds the request open) loses nothing:
 * once a server runs again on the same database, the delivery's job comes back and is sent again with the same
 * webhook-id, and the receiver then gets it. On the embedded database the restarted server puts the dead
 * process's active jobs back at start (one process owns it); on PostgreSQL the job's lease (the attempt timeout
 * plus 30 s) runs out and the queue's supervisor retries it.
 */

describe(`a server killed mid-delivery (${usingPostgres ? 'PostgreSQL' : 'embedded database'})`, { timeout: 240_000 }, () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'perimeter-hook-crash-'));
  const processes: ServerProcess[] = [];
  const requests: { headers: http.IncomingHttpHeaders; body: string }[] = [];
  const gate = { open: false };
  let receiver: http.Server;
  let receiverUrl: string;
  let port: number;
  let database: TestDatabase | undefined;

  beforeAll(async () => {
    // PostgreSQL: a fresh database both server processes share (the embedded one lives in DATA_DIR).
    if (usingPostgres) database = await createTestDatabase();
    // While the gate is shut, a delivery is read and never answered: the attempt is in flight when the server dies.
    receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        requests.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        if (gate.open) res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
    port = await freePort();
  });

  afterAll(async () => {
    for (const server of processes) server.kill();
    await Promise.all(processes.map((server) => server.exited));
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
    rmSync(dataDir, { recursive: true, force: true });
    await database?.db.close();
    await database?.dispose();
  });

  async function startServer(): Promise<ServerProcess> {
    const server = spawnServer({
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      AUTH_SECRET: 'test-secret-that-is-long-enough-0123456789',
      SCAN_ALLOWED_NETWORKS: '127.0.0.0/8',
      WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
      // The first attempt never ends on its own before the kill; the lease it implies (5 + 30 s) is what brings
      // the job back on PostgreSQL, checked every second.
      WEBHOOK_TIMEOUT_MS: '5000',
      QUEUE_SUPERVISE_SECONDS: '1',
      SHUTDOWN_DRAIN_MS: '0',
      ...(database?.url ? { DATABASE_URL: database.url } : {}),
    });
    processes.push(server);
    return serverReady(server, port);
  }

  it('sends the delivery again, same webhook-id, once the server is back', async () => {
    const first = await startServer();
    const client = clientFor({ url: `http://127.0.0.1:${port}` } as TestApp);
    const owner: TestUser = await client.signUp('HookCrash');
    const workspaceId = (await client.createWorkspace(owner)).id;
    const hook = await client.api('POST', '/api/v1/api/webhooks', { as: owner, workspaceId, body: { url: receiverUrl, eventTypes: ['scan.completed'] } });
    expect(hook.status).toBe(201);
    const target = await addTarget(client, owner, workspaceId, '127.0.0.1');
    const scan = await startScan(client, owner, workspaceId, target.id, { steps: ['dns'] });
    await waitForScan(client, owner, workspaceId, scan.id, { what: 'the scan to complete' });
    await waitFor(() => requests.length === 1, { timeoutMs: 30_000, what: 'the first attempt to reach the receiver' });

    first.kill();
    expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });
    gate.open = true;

    await startServer();
    const log = await waitFor(
      async () => {
        const page = await client.api('GET', `/api/v1/api/webhooks/${hook.body.id}/deliveries`, { as: owner, workspaceId });
        return page.body.data?.[0]?.status === 'delivered' ? page.body : null;
      },
      { timeoutMs: 120_000, what: 'the interrupted delivery to be delivered after the restart' },
    );
    expect(log.total).toBe(1);
    expect(log.data[0]).toMatchObject({ eventType: 'scan.completed', lastStatusCode: 204 });
    expect(requests).toHaveLength(2);
    expect(requests[1]!.headers['webhook-id']).toBe(requests[0]!.headers['webhook-id']);
    expect(requests[0]!.headers['webhook-id']).toBe(log.data[0].webhookId);
    const payload = new Webhook(hook.body.secret).verify(requests[1]!.body, requests[1]!.headers as Record<string, string>) as {
      type: string;
      data: { scanId: string };
    };
    expect(payload).toMatchObject({ type: 'scan.completed', data: { scanId: scan.id } });
  });
});
