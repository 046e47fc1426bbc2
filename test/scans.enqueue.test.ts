import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor } from './support/client.js';

/**
 * An API server without workers still enqueues scan steps inside the scan's transaction. On PGlite (one
 * connection) the job queue once looked its queue up outside that transaction on the first send, waited for
 * the transaction itself, and the first scan of a fresh server failed with a transaction timeout.
 */
let server: TestApp;
beforeAll(async () => {
  server = await startTestApp({ WORKERS: 'false' });
});
afterAll(() => server?.stop());

it('the first scan of a fresh server without workers is enqueued (job committed with the scan)', async () => {
  const client = clientFor(server);
  const owner = await client.signUp('Enqueue');
  const workspace = await client.createWorkspace(owner);
  const target = await client.api('POST', '/api/v1/api/targets', { as: owner, workspaceId: workspace.id, body: { value: 'example.com' } });
  const started = await client.api('POST', '/api/v1/api/vulnerabilities/scan', { as: owner, workspaceId: workspace.id, body: { targetId: target.body.id } });
  expect(started.status).toBe(201);
  const scanId = started.headers.get('location')!.split('/').pop()!;
  const jobs = await server.db.sql.query(`SELECT state FROM pgboss.job WHERE name = 'scan-step' AND data->>'scanId' = $1`, [scanId]);
  expect(jobs.rows).toEqual([{ state: 'created' }]);
});
