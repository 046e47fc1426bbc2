import { afterAll, beforeAll, expect, it } from 'vitest';
import { recordChanges } from '../src/modules/changes/record.js';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import type { Client } from './support/scans.js';
import { waitFor } from './support/wait.js';
import { startWebhookReceiver } from './support/webhook-receiver.js';

/**
 * Webhook URLs pass the scans' scope policy with WEBHOOK_ALLOWED_NETWORKS unset: loopback, private and metadata
 * addresses are refused at create and update, and again when a delivery connects (a row that got past the
 * save-time check never reaches the address).
 */

let app: TestApp;
let client: Client;
let owner: TestUser;
let workspaceId: string;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;

const HOOKS = '/api/v1/api/webhooks';

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  app = await startTestApp({ WEBHOOK_RETRY_BASE_SECONDS: '1', WEBHOOK_MAX_ATTEMPTS: '1' });
  client = clientFor(app);
  owner = await client.signUp('ScopeOwner');
  workspaceId = (await client.createWorkspace(owner)).id;
});

afterAll(async () => {
  await app?.stop();
  await receiver?.close();
});

it('refuses loopback, private, link-local and metadata URLs at create and update, naming the field', async () => {
  for (const url of [
    `${receiver.base}/hook`,
    'http://10.0.0.5/hook',
    'http://192.168.1.1/hook',
    'http://169.254.169.254/latest',
    'http://[::1]:8080/hook',
    'http://localhost/hook',
  ]) {
    const response = await client.api('POST', HOOKS, { as: owner, workspaceId, body: { url } });
    expect(response.status, url).toBe(400);
    expect(response.body.details?.[0]?.field ?? JSON.stringify(response.body), url).toBe('url');
    expect(response.body.message, url).toContain('WEBHOOK_ALLOWED_NETWORKS');
  }
  expect(await app.db.prisma.webhookEndpoint.count()).toBe(0);
});

it('checks the address again when a delivery connects', async () => {
  // As if the URL had passed the save-time check (e.g. a name that later re-resolves to loopback).
  const endpoint = await app.db.prisma.webhookEndpoint.create({
    data: {
      workspaceId,
      url: `${receiver.base}/sneaky`,
      eventTypes: [],
      secretSealed: app.app.deps.secrets.encrypt(`whsec_${Buffer.alloc(32, 7).toString('base64')}`),
    },
  });
  await app.db.prisma.$transaction((tx) => recordChanges(tx, [{ type: 'scan.failed', workspaceId, data: { error: 'x' } }]));
  const delivery = await waitFor(
    async () => {
      const row = await app.db.prisma.webhookDelivery.findFirst({ where: { endpointId: endpoint.id } });
      return row?.status === 'failed' ? row : null;
    },
    { timeoutMs: 15_000, what: 'the delivery to be refused' },
  );
  expect(delivery.lastStatusCode).toBeNull();
  expect(delivery.lastError).toMatch(/127\.0\.0\.1/);
  expect(receiver.requestsTo('/sneaky')).toHaveLength(0);
  const patch = await client.api('PATCH', `${HOOKS}/${endpoint.id}`, { as: owner, workspaceId, body: { url: 'http://10.9.9.9/x' } });
  expect(patch.status).toBe(400);
});
