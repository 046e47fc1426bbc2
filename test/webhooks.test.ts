import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { recordChanges } from '../src/modules/changes/record.js';
import { runDeliveryAttempt } from '../src/modules/webhooks/delivery.js';
import type { ChangeEventRecord } from '../src/modules/changes/types.js';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import type { Client } from './support/scans.js';
import { waitFor } from './support/wait.js';
import { startWebhookReceiver } from './support/webhook-receiver.js';

/**
 * Webhooks end to end against a loopback receiver: Standard Webhooks signatures, retries with backoff and the
 * same webhook-id, no redirects, the delivery log, redeliver, Slack format, auto-disable, secrets shown once,
 * owners only.
 */

let app: TestApp;
let client: Client;
let owner: TestUser;
let member: TestUser;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;

const HOOKS = '/api/v1/api/webhooks';

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  app = await startTestApp({
    WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
    WEBHOOK_RETRY_BASE_SECONDS: '1',
    WEBHOOK_MAX_ATTEMPTS: '3',
    WEBHOOK_DISABLE_AFTER_FAILURES: '2',
    WEBHOOK_TIMEOUT_MS: '3000',
  });
  client = clientFor(app);
  owner = await client.signUp('HookOwner');
  member = await client.signUp('HookMember');
});

afterAll(async () => {
  await app?.stop();
  await receiver?.close();
});

async function workspaceWithMember(): Promise<string> {
  const workspaceId = (await client.createWorkspace(owner)).id;
  await client.addMember(owner, workspaceId, member, 'member');
  return workspaceId;
}

async function createHook(workspaceId: string, body: Record<string, unknown>) {
  const response = await client.api('POST', HOOKS, { as: owner, workspaceId, body });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body as { id: string; secret: string; [key: string]: unknown };
}

/** The cheapest change event: a failed scan, written the way every writer writes one (the sink runs in this transaction). */
async function emit(workspaceId: string, error = 'boom'): Promise<ChangeEventRecord> {
  const [event] = await app.db.prisma.$transaction((tx) => recordChanges(tx, [{ type: 'scan.failed', workspaceId, scanId: null, data: { error } }]));
  return event!;
}

async function deliveries(workspaceId: string, hookId: string) {
  const response = await client.api('GET', `${HOOKS}/${hookId}/deliveries`, { as: owner, workspaceId });
  expect(response.status).toBe(200);
  return response.body as { data: any[]; total: number };
}

describe('managing endpoints', () => {
  it('shows the secret once (create, rotate), never on read, and members cannot manage', async () => {
    const workspaceId = await workspaceWithMember();
    const hook = await createHook(workspaceId, { url: `${receiver.base}/manage`, eventTypes: ['scan.failed', 'scan.failed'] });
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(hook.eventTypes).toEqual(['scan.failed']);
    expect(hook.format).toBe('standard');

    const read = await client.api('GET', `${HOOKS}/${hook.id}`, { as: owner, workspaceId });
    expect(read.status).toBe(200);
    expect(read.body.secret).toBeUndefined();
    expect(JSON.stringify(read.body)).not.toContain(hook.secret);
    const list = await client.api('GET', HOOKS, { as: owner, workspaceId });
    expect(list.body.total).toBe(1);
    expect(JSON.stringify(list.body)).not.toContain('whsec_');

    const rotated = await client.api('POST', `${HOOKS}/${hook.id}/rotate-secret`, { as: owner, workspaceId });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(hook.secret);

    for (const [method, path, body] of [
      ['GET', HOOKS, undefined],
      ['POST', HOOKS, { url: `${receiver.base}/x` }],
      ['GET', `${HOOKS}/${hook.id}`, undefined],
      ['PATCH', `${HOOKS}/${hook.id}`, { enabled: false }],
      ['DELETE', `${HOOKS}/${hook.id}`, undefined],
      ['POST', `${HOOKS}/${hook.id}/rotate-secret`, undefined],
      ['GET', `${HOOKS}/${hook.id}/deliveries`, undefined],
    ] as const) {
      const response = await client.api(method, path, { as: member, workspaceId, body });
      expect(response.status, `${method} ${path}`).toBe(403);
    }

    const patched = await client.api('PATCH', `${HOOKS}/${hook.id}`, { as: owner, workspaceId, body: { format: 'slack', eventTypes: [] } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ format: 'slack', eventTypes: [] });
    const removed = await client.api('DELETE', `${HOOKS}/${hook.id}`, { as: owner, workspaceId });
    expect(removed.status).toBe(200);
    expect((await client.api('GET', `${HOOKS}/${hook.id}`, { as: owner, workspaceId })).status).toBe(404);
  });

  it('refuses bad input with 400 naming the field', async () => {
    const workspaceId = await workspaceWithMember();
    for (const [body, field] of [
      [{ url: 'ftp://127.0.0.1/x' }, 'url'],
      [{ url: 'not a url' }, 'url'],
      [{ url: 'http://10.1.2.3/hook' }, 'url'],
      [{ url: 'http://169.254.169.254/latest' }, 'url'],
      [{ url: `${receiver.base}/x`, eventTypes: ['asset.exploded'] }, 'eventTypes'],
      [{ url: `${receiver.base}/x`, format: 'teams' }, 'format'],
      [{ url: `${receiver.base}/x`, secret: 'mine' }, 'secret'],
    ] as const) {
      const response = await client.api('POST', HOOKS, { as: owner, workspaceId, body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(JSON.stringify(response.body), JSON.stringify(body)).toContain(field);
    }
  });
});

describe('delivery', () => {
  it('signs per Standard Webhooks, retries 500s with the same webhook-id, and logs every attempt', async () => {
    const workspaceId = await workspaceWithMember();
    receiver.script('/flaky', [{ status: 500 }, { status: 500 }, { status: 200 }]);
    const hook = await createHook(workspaceId, { url: `${receiver.base}/flaky` });
    const event = await emit(workspaceId, 'flaky scan');

    const log = await waitFor(
      async () => {
        const page = await deliveries(workspaceId, hook.id);
        return page.data[0]?.status === 'delivered' ? page : null;
      },
      { timeoutMs: 20_000, what: 'the delivery to succeed on its third attempt' },
    );
    const requests = receiver.requestsTo('/flaky');
    expect(requests).toHaveLength(3);
    expect(new Set(requests.map((request) => request.headers['webhook-id']))).toEqual(new Set([`msg_${event.id}`]));
    const verifier = new Webhook(hook.secret);
    for (const request of requests) {
      const payload = verifier.verify(request.body, request.headers as Record<string, string>) as any;
      expect(payload).toMatchObject({
        type: 'scan.failed',
        timestamp: event.at.toISOString(),
        data: { id: event.id, type: 'scan.failed', workspaceId, data: { error: 'flaky scan' } },
      });
    }
    // A wrong secret does not verify.
    expect(() =>
      new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(requests[0]!.body, requests[0]!.headers as Record<string, string>),
    ).toThrow();
    expect(log.total).toBe(1);
    expect(log.data[0]).toMatchObject({ webhookId: `msg_${event.id}`, eventType: 'scan.failed', attempts: 3, lastStatusCode: 200, lastError: null });
    expect(typeof log.data[0].durationMs).toBe('number');

    // Redeliver: the same webhook-id again, one more request.
    const again = await client.api('POST', `${HOOKS}/deliveries/${log.data[0].id}/redeliver`, { as: owner, workspaceId });
    expect(again.status).toBe(200);
    await waitFor(() => receiver.requestsTo('/flaky').length === 4, { timeoutMs: 10_000, what: 'the redelivery' });
    expect(receiver.requestsTo('/flaky')[3]!.headers['webhook-id']).toBe(`msg_${event.id}`);
    await waitFor(async () => (await deliveries(workspaceId, hook.id)).data[0]?.status === 'delivered', { what: 'the redelivery to be recorded' });
    expect((await client.api('POST', `${HOOKS}/deliveries/${log.data[0].id}/redeliver`, { as: member, workspaceId })).status).toBe(403);
  });

  it('does not follow a redirect: a 302 is a failed attempt', async () => {
    const workspaceId = await workspaceWithMember();
    receiver.script('/moved', [{ status: 302, headers: { location: `${receiver.base}/elsewhere` } }]);
    const hook = await createHook(workspaceId, { url: `${receiver.base}/moved` });
    await emit(workspaceId);
    const log = await waitFor(
      async () => {
        const page = await deliveries(workspaceId, hook.id);
        return page.data[0]?.status === 'failed' ? page : null;
      },
      { timeoutMs: 20_000, what: 'the redirected delivery to fail' },
    );
    expect(log.data[0]).toMatchObject({ attempts: 3, lastStatusCode: 302 });
    expect(log.data[0].lastError).toContain('redirect');
    expect(receiver.requestsTo('/elsewhere')).toHaveLength(0);
  });

  it('sends {text} to a slack-format endpoint, and only the event types it asked for', async () => {
    const workspaceId = await workspaceWithMember();
    await createHook(workspaceId, { url: `${receiver.base}/slack`, format: 'slack' });
    await createHook(workspaceId, { url: `${receiver.base}/only-findings`, eventTypes: ['finding.opened'] });
    await emit(workspaceId, 'disk full');
    await waitFor(() => receiver.requestsTo('/slack').length === 1, { what: 'the slack delivery' });
    const body = JSON.parse(receiver.requestsTo('/slack')[0]!.body);
    expect(Object.keys(body)).toEqual(['text']);
    expect(body.text).toContain('scan.failed');
    expect(body.text).toContain('disk full');
    const rows = await app.db.prisma.webhookDelivery.count({ where: { endpoint: { url: `${receiver.base}/only-findings` } } });
    expect(rows).toBe(0);
  });

  it('disables an endpoint whose deliveries keep failing, with a reason', async () => {
    const workspaceId = await workspaceWithMember();
    receiver.script('/down', [{ status: 503 }]);
    const hook = await createHook(workspaceId, { url: `${receiver.base}/down` });
    await emit(workspaceId, 'one');
    await emit(workspaceId, 'two');
    const disabled = await waitFor(
      async () => {
        const response = await client.api('GET', `${HOOKS}/${hook.id}`, { as: owner, workspaceId });
        return response.body.enabled === false ? response.body : null;
      },
      { timeoutMs: 45_000, what: 'the endpoint to be disabled' },
    );
    expect(disabled.disabledReason).toContain('2 deliveries in a row failed');
    expect(disabled.consecutiveFailures).toBe(2);
    expect(receiver.requestsTo('/down')).toHaveLength(6);
    // Disabled: new events queue nothing for it.
    await emit(workspaceId, 'three');
    expect((await deliveries(workspaceId, hook.id)).total).toBe(2);
    // Re-enabling clears the verdict.
    const back = await client.api('PATCH', `${HOOKS}/${hook.id}`, { as: owner, workspaceId, body: { enabled: true } });
    expect(back.body).toMatchObject({ enabled: true, disabledReason: null, consecutiveFailures: 0, failingSince: null });
    // Six failing attempts with 1 s and 2 s backoffs; the two deliveries fail concurrently on PostgreSQL (the
    // endpoint row lock in recordAttempt is what makes both count).
  }, 60_000);

  it('counts last attempts that fail at the same moment, each one (no lost update of the failure count)', async () => {
    receiver.script('/down-together', [{ status: 503 }]);
    for (let round = 0; round < 3; round++) {
      const workspaceId = await workspaceWithMember();
      // Events first, endpoint second: the sink queues nothing, so the only attempts are the two run below.
      const events = [await emit(workspaceId, 'a'), await emit(workspaceId, 'b')];
      const hook = await createHook(workspaceId, { url: `${receiver.base}/down-together` });
      const rows = await Promise.all(
        events.map((event) =>
          app.db.prisma.webhookDelivery.create({
            // One attempt left (WEBHOOK_MAX_ATTEMPTS is 3): each run below ends its delivery as failed.
            data: { endpointId: hook.id, changeEventId: event.id, webhookId: `msg_${event.id}`, eventType: event.type, attempts: 2 },
          }),
        ),
      );
      await Promise.all(rows.map((row) => runDeliveryAttempt(app.app.deps, { deliveryId: row.id })));
      const endpoint = await app.db.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: hook.id } });
      expect(endpoint).toMatchObject({ consecutiveFailures: 2, enabled: false });
    }
  });

  it('queues nothing when the event transaction rolls back', async () => {
    const workspaceId = await workspaceWithMember();
    const hook = await createHook(workspaceId, { url: `${receiver.base}/rollback` });
    await expect(
      app.db.prisma.$transaction(async (tx) => {
        await recordChanges(tx, [{ type: 'scan.failed', workspaceId, data: { error: 'never' } }]);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await deliveries(workspaceId, hook.id)).total).toBe(0);
    expect(receiver.requestsTo('/rollback')).toHaveLength(0);
  });
});

describe('GraphQL', () => {
  it('creates (secret once), lists with the delivery log, rotates, redelivers and deletes; members are refused', async () => {
    const workspaceId = await workspaceWithMember();
    const created = await client.gql(
      `mutation($w: ID!, $url: String!) { createWebhook(workspaceId: $w, url: $url, eventTypes: ["scan.failed"]) {
        __typename ... on MutationCreateWebhookSuccess { data { secret endpoint { id url eventTypes format enabled } } } } }`,
      { as: owner, variables: { w: workspaceId, url: `${receiver.base}/gql` } },
    );
    expect(created.errors).toBeUndefined();
    const { secret, endpoint } = created.data.createWebhook.data;
    expect(secret).toMatch(/^whsec_/);
    expect(endpoint).toMatchObject({ url: `${receiver.base}/gql`, eventTypes: ['scan.failed'], format: 'standard', enabled: true });

    const bad = await client.gql(
      `mutation($w: ID!) { createWebhook(workspaceId: $w, url: "http://10.0.0.1/x") { __typename ... on ValidationError { details { field } } } }`,
      {
        as: owner,
        variables: { w: workspaceId },
      },
    );
    expect(bad.data.createWebhook).toEqual({ __typename: 'ValidationError', details: [{ field: 'url' }] });

    const event = await emit(workspaceId, 'via graphql');
    await waitFor(() => receiver.requestsTo('/gql').length === 1, { what: 'the delivery' });
    new Webhook(secret).verify(receiver.requestsTo('/gql')[0]!.body, receiver.requestsTo('/gql')[0]!.headers as Record<string, string>);
    const listed = await waitFor(
      async () => {
        const result = await client.gql(
          `query($w: ID!) { workspace(id: $w) { webhooks(first: 2) { edges { node { id url deliveries(first: 3) { edges { node { id webhookId status attempts lastStatusCode } } } } } } } }`,
          { as: owner, variables: { w: workspaceId } },
        );
        expect(result.errors).toBeUndefined();
        const node = result.data?.workspace.webhooks.edges[0]?.node;
        return node?.deliveries.edges[0]?.node.status === 'delivered' ? node : null;
      },
      { what: 'the delivery log on GraphQL' },
    );
    expect(JSON.stringify(listed)).not.toContain('whsec_');
    const delivery = listed.deliveries.edges[0].node;
    expect(delivery).toMatchObject({ webhookId: `msg_${event.id}`, attempts: 1, lastStatusCode: 200 });

    const memberView = await client.gql(`query($w: ID!) { workspace(id: $w) { webhooks(first: 10) { edges { node { id } } } } }`, {
      as: member,
      variables: { w: workspaceId },
    });
    expect(memberView.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const memberRotate = await client.gql(`mutation($id: ID!) { rotateWebhookSecret(id: $id) { __typename } }`, { as: member, variables: { id: endpoint.id } });
    expect(memberRotate.data?.rotateWebhookSecret?.__typename ?? memberRotate.errors?.[0]?.extensions?.code).toMatch(/Forbidden|FORBIDDEN/);

    const rotated = await client.gql(`mutation($id: ID!) { rotateWebhookSecret(id: $id) { ... on MutationRotateWebhookSecretSuccess { data { secret } } } }`, {
      as: owner,
      variables: { id: endpoint.id },
    });
    const newSecret = rotated.data.rotateWebhookSecret.data.secret;
    expect(newSecret).not.toBe(secret);
    const again = await client.gql(
      `mutation($id: ID!) { redeliverWebhookDelivery(id: $id) { ... on MutationRedeliverWebhookDeliverySuccess { data { webhookId status } } } }`,
      {
        as: owner,
        variables: { id: delivery.id },
      },
    );
    expect(again.data.redeliverWebhookDelivery.data).toEqual({ webhookId: `msg_${event.id}`, status: 'pending' });
    await waitFor(() => receiver.requestsTo('/gql').length === 2, { what: 'the redelivery' });
    // Signed with the rotated secret, same id.
    const second = receiver.requestsTo('/gql')[1]!;
    expect(second.headers['webhook-id']).toBe(`msg_${event.id}`);
    new Webhook(newSecret).verify(second.body, second.headers as Record<string, string>);

    const deleted = await client.gql(`mutation($id: ID!) { deleteWebhook(id: $id) { ... on MutationDeleteWebhookSuccess { data } } }`, {
      as: owner,
      variables: { id: endpoint.id },
    });
    expect(deleted.data.deleteWebhook.data).toBe(endpoint.id);
  });
});
