import { randomBytes } from 'node:crypto';
import type { ServiceContext } from '../../context.js';
import { NotFoundError, ValidationError } from '../../errors.js';
import { assertCan, isUuid, requireViewer, visibleWorkspacesWhere } from '../../auth/authz.js';
import { validate } from '../../validate.js';
import { pageEnvelope, pageWindow, prismaDirection, type Page } from '../../pagination.js';
import { createScopeGuard, isScopeError } from '../../scanner/scope.js';
import { enqueueDeliveryJob } from './delivery.js';
import {
  toDeliveryResponse,
  toWebhookResponse,
  type DeliveryResponse,
  type WebhookEndpointRow,
  type WebhookResponse,
  type WebhookWithSecretResponse,
} from './response.js';
import {
  createWebhookInput,
  listDeliveriesInput,
  listWebhooksInput,
  updateWebhookInput,
  type CreateWebhookInput,
  type ListDeliveriesInput,
  type ListWebhooksInput,
  type UpdateWebhookInput,
} from './schemas.js';

/**
 * Webhook endpoints: owners only (they name where the workspace's data goes, and hold the signing secret).
 * The secret is generated here, sealed with the instance secret box, and shown once (create, rotate).
 */

/** Standard Webhooks secrets: `whsec_` then base64 of 24 to 64 random bytes. */
function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** At save time: every address the host resolves to must be allowed (checked again when each delivery connects). */
async function assertUrlInScope(ctx: ServiceContext, url: string): Promise<void> {
  const fail = (message: string): never => {
    throw new ValidationError(`Invalid input: url: ${message}`, [{ field: 'url', message }]);
  };
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  try {
    await createScopeGuard({ allowedNetworks: ctx.deps.env.WEBHOOK_ALLOWED_NETWORKS }).resolveHost(host);
  } catch (error) {
    if (isScopeError(error)) fail(`${(error as Error).message} (WEBHOOK_ALLOWED_NETWORKS)`);
    fail(`its host ${host} does not resolve (${(error as NodeJS.ErrnoException).code ?? 'lookup failed'})`);
  }
}

async function findEndpointOrThrow(ctx: ServiceContext, workspaceId: string, id: string): Promise<WebhookEndpointRow> {
  const row = isUuid(id) ? await ctx.deps.prisma.webhookEndpoint.findFirst({ where: { id, workspaceId } }) : null;
  if (!row) throw new NotFoundError('Webhook endpoint');
  return row;
}

export async function createWebhook(ctx: ServiceContext, workspaceId: string, input: CreateWebhookInput): Promise<WebhookWithSecretResponse> {
  const viewer = requireViewer(ctx);
  const { url, eventTypes, format, enabled } = validate(createWebhookInput, input);
  await assertCan(ctx, 'webhook:manage', { workspaceId });
  await assertUrlInScope(ctx, url);
  const secret = newSecret();
  const row = await ctx.deps.prisma.webhookEndpoint.create({
    data: { workspaceId, url, eventTypes, format, enabled, secretSealed: ctx.deps.secrets.encrypt(secret), createdById: viewer.id },
  });
  return { ...toWebhookResponse(row), secret };
}

export async function listWebhooks(ctx: ServiceContext, workspaceId: string, input: ListWebhooksInput): Promise<Page<WebhookResponse>> {
  const { page, limit, sortOrder } = validate(listWebhooksInput, input);
  await assertCan(ctx, 'webhook:manage', { workspaceId });
  const direction = prismaDirection(sortOrder);
  const where = { workspaceId };
  const [rows, total] = await Promise.all([
    ctx.deps.prisma.webhookEndpoint.findMany({ where, orderBy: [{ createdAt: direction }, { id: direction }], ...pageWindow(page, limit) }),
    ctx.deps.prisma.webhookEndpoint.count({ where }),
  ]);
  return pageEnvelope(rows.map(toWebhookResponse), total, page, limit);
}

export async function getWebhook(ctx: ServiceContext, workspaceId: string, id: string): Promise<WebhookResponse> {
  await assertCan(ctx, 'webhook:manage', { workspaceId });
  return toWebhookResponse(await findEndpointOrThrow(ctx, workspaceId, id));
}

/** Re-enabling (enabled: true on a disabled endpoint) clears the reason and the failure counters. */
export async function updateWebhook(ctx: ServiceContext, workspaceId: string, id: string, input: UpdateWebhookInput): Promise<WebhookResponse> {
  const change = validate(updateWebhookInput, input);
  await assertCan(ctx, 'webhook:manage', { workspaceId });
  const current = await findEndpointOrThrow(ctx, workspaceId, id);
  if (change.url !== undefined) await assertUrlInScope(ctx, change.url);
  const reenabled = change.enabled === true && !current.enabled;
  const row = await ctx.deps.prisma.webhookEndpoint.update({
    where: { id: current.id },
    data: {
      ...(change.url !== undefined ? { url: change.url } : {}),
      ...(change.eventTypes !== undefined ? { eventTypes: change.eventTypes } : {}),
      ...(change.format !== undefined ? { format: change.format } : {}),
      ...(change.enabled !== undefined ? { enabled: change.enabled } : {}),
      ...(reenabled ? { disabledReason: null, consecutiveFailures: 0, failingSince: null } : {}),
    },
  });
  return toWebhookResponse(row);
}

export async function deleteWebhook(ctx: ServiceContext, workspaceId: string, id: string): Promise<{ id: string }> {
  await assertCan(ctx, 'webhook:manage', { workspaceId });
  const { count } = isUuid(id) ? await ctx.deps.prisma.webhookEndpoint.deleteMany({ where: { id, workspaceId } }) : { count: 0 };
  if (!count) throw new NotFoundError('Webhook endpoint');
  return { id };
}

/** A new secret, shown this once; deliveries from now on (retries of older ones included) are signed with it. */
export async function rotateWebhookSecret(ctx: ServiceContext, workspaceId: string, id: string): Promise<WebhookWithSecretResponse> {
  await assertCan(ctx, 'webhook:manage', { workspaceId });
  const current = await findEndpointOrThrow(ctx, workspaceId, id);
  const secret = newSecret();
  const row = await ctx.deps.prisma.webhookEndpoint.update({ where: { id: current.id }, data: { secretSealed: ctx.deps.secrets.encrypt(secret) } });
  return { ...toWebhookResponse(row), secret };
}

export async function listDeliveries(ctx: ServiceContext, workspaceId: string, id: string, input: ListDeliveriesInput): Promise<Page<DeliveryResponse>> {
  const { page, limit, sortOrder, status } = validate(listDeliveriesInput, input);
  await assertCan(ctx, 'webhook:manage', { workspaceId });
  const endpoint = await findEndpointOrThrow(ctx, workspaceId, id);
  const direction = prismaDirection(sortOrder);
  const where = { endpointId: endpoint.id, ...(status ? { status } : {}) };
  const [rows, total] = await Promise.all([
    ctx.deps.prisma.webhookDelivery.findMany({ where, orderBy: [{ createdAt: direction }, { id: direction }], ...pageWindow(page, limit) }),
    ctx.deps.prisma.webhookDelivery.count({ where }),
  ]);
  return pageEnvelope(rows.map(toDeliveryResponse), total, page, limit);
}

/**
 * Sends a delivery again (delivered or failed alike) with the same webhook-id, from a fresh attempt budget.
 * A delivery still pending already has its next attempt queued: asking again is a 409-free no-op.
 */
export async function redeliver(ctx: ServiceContext, workspaceId: string, deliveryId: string): Promise<DeliveryResponse> {
  await assertCan(ctx, 'webhook:manage', { workspaceId });
  const delivery = isUuid(deliveryId)
    ? await ctx.deps.prisma.webhookDelivery.findFirst({ where: { id: deliveryId, endpoint: { workspaceId } }, include: { endpoint: true } })
    : null;
  if (!delivery) throw new NotFoundError('Webhook delivery');
  if (!delivery.endpoint.enabled) {
    throw new ValidationError('Invalid input: deliveryId: its endpoint is disabled; enable it first', [
      { field: 'deliveryId', message: 'its endpoint is disabled; enable it first' },
    ]);
  }
  if (delivery.status === 'pending') return toDeliveryResponse(delivery);
  const row = await ctx.deps.prisma.$transaction(async (tx) => {
    const updated = await tx.webhookDelivery.update({
      where: { id: delivery.id },
      data: { status: 'pending', attempts: 0, nextAttemptAt: new Date(), deliveredAt: null },
    });
    await enqueueDeliveryJob(ctx.deps, delivery.id, tx);
    return updated;
  });
  return toDeliveryResponse(row);
}

// ------------------------------------------------------------------------------------------------
// For GraphQL, where endpoints and deliveries are named by id alone, and pages are offset windows.

/** The workspace of an endpoint the caller can see (any workspace they belong to); the role check follows in the service. */
export async function workspaceOfWebhook(ctx: ServiceContext, id: string): Promise<string> {
  const viewer = requireViewer(ctx);
  const row = isUuid(id)
    ? await ctx.deps.prisma.webhookEndpoint.findFirst({ where: { id, workspace: visibleWorkspacesWhere(viewer) }, select: { workspaceId: true } })
    : null;
  if (!row) throw new NotFoundError('Webhook endpoint');
  return row.workspaceId;
}

export async function workspaceOfDelivery(ctx: ServiceContext, id: string): Promise<string> {
  const viewer = requireViewer(ctx);
  const row = isUuid(id)
    ? await ctx.deps.prisma.webhookDelivery.findFirst({
        where: { id, endpoint: { workspace: visibleWorkspacesWhere(viewer) } },
        select: { endpoint: { select: { workspaceId: true } } },
      })
    : null;
  if (!row) throw new NotFoundError('Webhook delivery');
  return row.endpoint.workspaceId;
}

export async function webhooksWindow(ctx: ServiceContext, workspaceId: string, window: { offset: number; limit: number }): Promise<WebhookResponse[]> {
  await assertCan(ctx, 'webhook:manage', { workspaceId });
  const rows = await ctx.deps.prisma.webhookEndpoint.findMany({
    where: { workspaceId },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    skip: window.offset,
    take: window.limit,
  });
  return rows.map(toWebhookResponse);
}

export async function deliveriesWindow(
  ctx: ServiceContext,
  endpoint: { id: string; workspaceId: string },
  window: { offset: number; limit: number; status?: string },
): Promise<DeliveryResponse[]> {
  const { status } = validate(listDeliveriesInput, { status: window.status });
  await assertCan(ctx, 'webhook:manage', { workspaceId: endpoint.workspaceId });
  const rows = await ctx.deps.prisma.webhookDelivery.findMany({
    where: { endpointId: endpoint.id, ...(status ? { status } : {}) },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    skip: window.offset,
    take: window.limit,
  });
  return rows.map(toDeliveryResponse);
}
