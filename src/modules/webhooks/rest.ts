import { z } from 'zod';
import { router } from '../../rest/trpc.js';
import { requestHeaders, workspaceProcedure } from '../../rest/procedures.js';
import { dateTime, idOutput, idParam, pageSchema, uuidParam } from '../../rest/schemas.js';
import { CHANGE_TYPES } from '../changes/types.js';
import * as webhooks from './service.js';
import { createWebhookInput, DELIVERY_STATUSES, listDeliveriesInput, listWebhooksInput, updateWebhookInput, WEBHOOK_FORMATS } from './schemas.js';

export const webhookSchema = z
  .object({
    id: z.string(),
    workspaceId: z.string(),
    url: z.string(),
    eventTypes: z.array(z.enum(CHANGE_TYPES)).meta({ description: 'Change types delivered; empty: every type.' }),
    format: z.enum(WEBHOOK_FORMATS),
    enabled: z.boolean(),
    disabledReason: z.string().nullable().meta({ description: 'Why it was switched off automatically (repeated failed deliveries); null otherwise.' }),
    consecutiveFailures: z.number().int().meta({ description: 'Deliveries that failed for good in a row.' }),
    failingSince: dateTime.nullable().meta({ description: 'Start of the current run of failed attempts; null while healthy.' }),
    lastDeliveryAt: dateTime.nullable(),
    createdById: z.string().nullable(),
    createdAt: dateTime,
    updatedAt: dateTime,
  })
  .meta({ id: 'WebhookEndpoint' });

const webhookWithSecretSchema = webhookSchema
  .extend({ secret: z.string().meta({ description: 'The signing secret (`whsec_…`, Standard Webhooks). Shown only in this response.' }) })
  .meta({ id: 'WebhookEndpointWithSecret' });

const deliverySchema = z
  .object({
    id: z.string(),
    endpointId: z.string(),
    changeEventId: z.string(),
    webhookId: z.string().meta({ description: 'The `webhook-id` header: the same on every attempt and redelivery.' }),
    eventType: z.enum(CHANGE_TYPES),
    status: z.enum(DELIVERY_STATUSES),
    attempts: z.number().int(),
    lastStatusCode: z.number().int().nullable(),
    lastError: z.string().nullable(),
    durationMs: z.number().int().nullable().meta({ description: 'Duration of the last attempt.' }),
    nextAttemptAt: dateTime.nullable(),
    lastAttemptAt: dateTime.nullable(),
    deliveredAt: dateTime.nullable(),
    createdAt: dateTime,
    updatedAt: dateTime,
  })
  .meta({ id: 'WebhookDelivery' });

const tags = ['Webhooks'];

export const webhooksRest = router({
  create: workspaceProcedure
    .meta({
      successStatus: 201,
      openapi: {
        method: 'POST',
        path: '/api/webhooks',
        tags,
        summary: 'Add a webhook endpoint (owners); the response carries its signing secret, shown only this once',
        requestHeaders,
      },
    })
    .input(createWebhookInput)
    .output(webhookWithSecretSchema)
    .mutation(async ({ ctx, input }) => {
      const endpoint = await webhooks.createWebhook(ctx.svc, ctx.workspaceId, input);
      ctx.svc.responseHeaders.set('location', `/api/v1/api/webhooks/${endpoint.id}`);
      return endpoint;
    }),

  list: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: '/api/webhooks', tags, summary: "List the workspace's webhook endpoints (owners)", requestHeaders } })
    .input(listWebhooksInput)
    .output(pageSchema(webhookSchema))
    .query(({ ctx, input }) => webhooks.listWebhooks(ctx.svc, ctx.workspaceId, input)),

  get: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: '/api/webhooks/{id}', tags, summary: 'Get one webhook endpoint (never its secret)', requestHeaders } })
    .input(idParam)
    .output(webhookSchema)
    .query(({ ctx, input }) => webhooks.getWebhook(ctx.svc, ctx.workspaceId, input.id)),

  update: workspaceProcedure
    .meta({
      openapi: { method: 'PATCH', path: '/api/webhooks/{id}', tags, summary: 'Change the URL, event types, format or enabled flag', requestHeaders },
    })
    .input(updateWebhookInput.extend({ id: uuidParam }))
    .output(webhookSchema)
    .mutation(({ ctx, input: { id, ...change } }) => webhooks.updateWebhook(ctx.svc, ctx.workspaceId, id, change)),

  delete: workspaceProcedure
    .meta({ openapi: { method: 'DELETE', path: '/api/webhooks/{id}', tags, summary: 'Delete a webhook endpoint and its delivery log', requestHeaders } })
    .input(idParam)
    .output(idOutput)
    .mutation(({ ctx, input }) => webhooks.deleteWebhook(ctx.svc, ctx.workspaceId, input.id)),

  rotateSecret: workspaceProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/webhooks/{id}/rotate-secret',
        tags,
        summary: 'Replace the signing secret; the new one is shown only in this response',
        requestHeaders,
      },
    })
    .input(idParam)
    .output(webhookWithSecretSchema)
    .mutation(({ ctx, input }) => webhooks.rotateWebhookSecret(ctx.svc, ctx.workspaceId, input.id)),

  deliveries: workspaceProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/webhooks/{id}/deliveries', tags, summary: "The endpoint's delivery log, newest first", requestHeaders },
    })
    .input(listDeliveriesInput.extend({ id: uuidParam }))
    .output(pageSchema(deliverySchema))
    .query(({ ctx, input: { id, ...query } }) => webhooks.listDeliveries(ctx.svc, ctx.workspaceId, id, query)),

  redeliver: workspaceProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/webhooks/deliveries/{deliveryId}/redeliver',
        tags,
        summary: 'Send a delivery again with the same webhook-id (a pending one is left as it is)',
        requestHeaders,
      },
    })
    .input(z.object({ deliveryId: uuidParam }).strict())
    .output(deliverySchema)
    .mutation(({ ctx, input }) => webhooks.redeliver(ctx.svc, ctx.workspaceId, input.deliveryId)),
});
