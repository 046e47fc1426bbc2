import type { AppDeps } from '../../context.js';
import type { Env } from '../../env.js';
import type { Prisma } from '../../db.js';
import type { JobQueue, SqlRunner } from '../../queue.js';
import { createScopeGuard } from '../../scanner/scope.js';
import { addChangeSink } from '../changes/record.js';
import type { ChangeEventRecord } from '../changes/types.js';
import { deliveryBody, postOnce, signedHeaders, type AttemptOutcome, type WebhookEventData } from './send.js';
import type { WebhookFormat } from './schemas.js';

/**
 * Durable, at-least-once delivery. A change sink writes one delivery row and one job per matching endpoint in
 * the transaction that writes the event. Each job is ONE attempt; a failed attempt records itself and queues
 * the next one (exponential backoff) in one transaction, so the schedule survives restarts. A worker killed
 * mid-attempt leaves its job active: pg-boss expires it and runs it again (the queue's own retries).
 */
export const WEBHOOK_DELIVERY_QUEUE = 'webhook-delivery';
/** Deliveries one poller runs side by side (each worker process runs WORKER_CONCURRENCY pollers). */
export const WEBHOOK_DELIVERY_BATCH = 16;

export interface WebhookDeliveryJob {
  deliveryId: string;
}

type Tx = Prisma.TransactionClient;

export function defineWebhookQueues(queue: JobQueue, env: Env): void {
  queue.define({
    name: WEBHOOK_DELIVERY_QUEUE,
    // The lease: one attempt never takes longer than its timeout; past this the worker is taken for dead.
    expireInSeconds: Math.ceil(env.WEBHOOK_TIMEOUT_MS / 1000) + 30,
    retryLimit: 3,
    retryDelay: 1,
  });
}

export function webhookIdOf(changeEventId: string): string {
  return `msg_${changeEventId}`;
}

export async function enqueueDeliveryJob(deps: Pick<AppDeps, 'queue'>, deliveryId: string, tx?: SqlRunner, startAfterSeconds?: number): Promise<void> {
  await deps.queue.send<WebhookDeliveryJob>(WEBHOOK_DELIVERY_QUEUE, { deliveryId }, startAfterSeconds ? { startAfter: startAfterSeconds } : {}, tx);
}

/** Inside the event's transaction: a delivery (and its job) per enabled endpoint that wants the event's type. */
export async function enqueueForEvents(deps: Pick<AppDeps, 'queue'>, tx: Tx, events: readonly ChangeEventRecord[]): Promise<void> {
  const workspaceIds = [...new Set(events.map((event) => event.workspaceId))];
  const endpoints = await tx.webhookEndpoint.findMany({
    where: { workspaceId: { in: workspaceIds }, enabled: true },
    select: { id: true, workspaceId: true, eventTypes: true },
  });
  if (!endpoints.length) return;
  const rows = events.flatMap((event) =>
    endpoints
      .filter((endpoint) => endpoint.workspaceId === event.workspaceId && (!endpoint.eventTypes.length || endpoint.eventTypes.includes(event.type)))
      .map((endpoint) => ({
        endpointId: endpoint.id,
        changeEventId: event.id,
        webhookId: webhookIdOf(event.id),
        eventType: event.type,
        nextAttemptAt: new Date(),
      })),
  );
  if (!rows.length) return;
  // skipDuplicates: two apps sharing one database in one process (tests) both hold a sink; the first one queues.
  const created = await tx.webhookDelivery.createManyAndReturn({ data: rows, select: { id: true }, skipDuplicates: true });
  // One statement for all the jobs: a scan's ingest can raise thousands of events, each with its deliveries.
  await deps.queue.sendMany<WebhookDeliveryJob>(
    WEBHOOK_DELIVERY_QUEUE,
    created.map((delivery) => ({ deliveryId: delivery.id })),
    tx,
  );
}

/** Registers the change sink for this process's queue; returns the unregister function (called at shutdown). */
export function registerWebhookSink(deps: Pick<AppDeps, 'queue'>): () => void {
  return addChangeSink((tx, events) => enqueueForEvents(deps, tx, events));
}

function backoffSeconds(env: Env, attemptsMade: number): number {
  return env.WEBHOOK_RETRY_BASE_SECONDS * 2 ** Math.max(0, attemptsMade - 1);
}

/** The worker: one attempt of one delivery, then its record (and the next attempt, or the endpoint's verdict). */
export async function runDeliveryAttempt(deps: AppDeps, job: WebhookDeliveryJob): Promise<void> {
  const delivery = await deps.prisma.webhookDelivery.findUnique({ where: { id: job.deliveryId }, include: { endpoint: true } });
  // Gone (endpoint deleted) or already done (a duplicate job after a crash): nothing to send.
  if (delivery?.status !== 'pending') return;
  const { endpoint } = delivery;
  if (!endpoint.enabled) {
    await deps.prisma.webhookDelivery.update({
      where: { id: delivery.id },
      data: { status: 'failed', nextAttemptAt: null, lastError: `endpoint disabled${endpoint.disabledReason ? `: ${endpoint.disabledReason}` : ''}` },
    });
    return;
  }
  const event = await deps.prisma.changeEvent.findUnique({ where: { id: delivery.changeEventId } });
  let outcome: AttemptOutcome = { ok: false, statusCode: null, error: 'not attempted', durationMs: 0 };
  if (!event) {
    outcome = { ok: false, statusCode: null, error: 'the change event no longer exists', durationMs: 0 };
  } else {
    const data: WebhookEventData = {
      id: event.id,
      type: event.type as WebhookEventData['type'],
      at: event.at.toISOString(),
      workspaceId: event.workspaceId,
      assetId: event.assetId,
      findingId: event.findingId,
      scanId: event.scanId,
      targetId: event.targetId,
      data: event.data,
    };
    const body = deliveryBody(endpoint.format as WebhookFormat, data);
    let secret: string | null = null;
    try {
      secret = deps.secrets.decrypt(endpoint.secretSealed);
    } catch (error) {
      // E.g. AUTH_SECRET changed since the secret was sealed: recorded on the delivery (rotate the secret to recover).
      outcome = { ok: false, statusCode: null, error: `signing secret unreadable: ${(error as Error).message}`, durationMs: 0 };
    }
    if (secret !== null) {
      const headers = signedHeaders(secret, delivery.webhookId, new Date(), body);
      const guard = createScopeGuard({ allowedNetworks: deps.env.WEBHOOK_ALLOWED_NETWORKS });
      outcome = await postOnce({ url: endpoint.url, body, headers, guard, timeoutMs: deps.env.WEBHOOK_TIMEOUT_MS });
    }
  }
  await recordAttempt(deps, delivery.id, endpoint.id, delivery.attempts + 1, outcome, Boolean(event));
}

async function recordAttempt(
  deps: AppDeps,
  deliveryId: string,
  endpointId: string,
  attempts: number,
  outcome: AttemptOutcome,
  retryable: boolean,
): Promise<void> {
  const now = new Date();
  const attempt = { attempts, lastStatusCode: outcome.statusCode, lastError: outcome.error, durationMs: outcome.durationMs, lastAttemptAt: now };
  const { env } = deps;
  await deps.prisma.$transaction(async (tx) => {
    if (outcome.ok) {
      await tx.webhookDelivery.update({ where: { id: deliveryId }, data: { ...attempt, status: 'delivered', deliveredAt: now, nextAttemptAt: null } });
      await tx.webhookEndpoint.update({ where: { id: endpointId }, data: { consecutiveFailures: 0, failingSince: null, lastDeliveryAt: now } });
      return;
    }
    // Lock the endpoint row first: two of its deliveries failing at once (two workers, PostgreSQL) would
    // otherwise both read the same count and both write count + 1, and the endpoint would never be disabled.
    await tx.$queryRaw`SELECT id FROM webhook_endpoint WHERE id = ${endpointId}::uuid FOR UPDATE`;
    const endpoint = await tx.webhookEndpoint.findUnique({ where: { id: endpointId } });
    if (!endpoint) return;
    const failingSince = endpoint.failingSince ?? now;
    if (retryable && attempts < env.WEBHOOK_MAX_ATTEMPTS) {
      const delay = backoffSeconds(env, attempts);
      await tx.webhookDelivery.update({
        where: { id: deliveryId },
        data: { ...attempt, status: 'pending', nextAttemptAt: new Date(now.getTime() + delay * 1000) },
      });
      await tx.webhookEndpoint.update({ where: { id: endpointId }, data: { failingSince } });
      await enqueueDeliveryJob(deps, deliveryId, tx, delay);
      return;
    }
    await tx.webhookDelivery.update({ where: { id: deliveryId }, data: { ...attempt, status: 'failed', nextAttemptAt: null } });
    const consecutiveFailures = endpoint.consecutiveFailures + 1;
    const failingHours = (now.getTime() - failingSince.getTime()) / 3_600_000;
    const disabledReason =
      consecutiveFailures >= env.WEBHOOK_DISABLE_AFTER_FAILURES
        ? `${consecutiveFailures} deliveries in a row failed (last: ${outcome.error ?? 'unknown error'})`
        : failingHours >= env.WEBHOOK_DISABLE_AFTER_HOURS
          ? `failing since ${failingSince.toISOString()} without a successful delivery (last: ${outcome.error ?? 'unknown error'})`
          : null;
    await tx.webhookEndpoint.update({
      where: { id: endpointId },
      data: { consecutiveFailures, failingSince, ...(disabledReason && endpoint.enabled ? { enabled: false, disabledReason } : {}) },
    });
    if (disabledReason && endpoint.enabled) deps.log.warn({ endpointId, reason: disabledReason }, 'webhook endpoint disabled');
  });
}
