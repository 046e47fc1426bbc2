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

it('a scan leaves out the steps whose built-in tool the workspace switched off, and refuses when none is left', async () => {
  const client = clientFor(server);
  const owner = await client.signUp('Tools off');
  const workspace = await client.createWorkspace(owner);
  const target = await client.api('POST', '/api/v1/api/targets', { as: owner, workspaceId: workspace.id, body: { value: 'example.org' } });
  const tools = await client.api('GET', '/api/v1/api/tools?limit=100', { as: owner, workspaceId: workspace.id });
  const toolId = (name: string) => tools.body.data.find((tool: { name: string; builtin: boolean }) => tool.name === name && tool.builtin).id as string;
  const switchOff = (name: string) =>
    client.api('PATCH', `/api/v1/api/tools/${toolId(name)}`, { as: owner, workspaceId: workspace.id, body: { enabled: false } });

  expect((await switchOff('tls')).status).toBe(200);
  const withoutTls = await client.api('POST', '/api/v1/api/scans', { as: owner, workspaceId: workspace.id, body: { targetId: target.body.id } });
  expect(withoutTls.status).toBe(201);
  // A domain target of a workspace that discovers assets (the default) starts with discovery and pivots after the probes.
  expect(withoutTls.body.steps.map((step: { name: string }) => step.name)).toEqual(['discovery', 'dns', 'ports', 'http', 'pivot', 'checks']);

  expect((await switchOff('discovery')).status).toBe(200);
  const withoutDiscovery = await client.api('POST', '/api/v1/api/scans', { as: owner, workspaceId: workspace.id, body: { targetId: target.body.id } });
  expect(withoutDiscovery.body.steps.map((step: { name: string }) => step.name)).toEqual(['dns', 'ports', 'http', 'checks']);

  expect((await switchOff('dns')).status).toBe(200);
  const nothingLeft = await client.api('POST', '/api/v1/api/scans', { as: owner, workspaceId: workspace.id, body: { targetId: target.body.id } });
  expect(nothingLeft.status).toBe(409);
  expect(nothingLeft.body.message).toContain('switched off');
});
