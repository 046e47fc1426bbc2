import { resolveOffsetConnection } from '@pothos/plugin-relay';
import { builder } from '../../graphql/builder.js';
import { decodeId } from '../../graphql/ids.js';
import { WorkspaceRef } from '../workspaces/graphql.js';
import type { DeliveryResponse, WebhookResponse, WebhookWithSecretResponse } from './response.js';
import * as webhooks from './service.js';

/** Owners only, as on REST: a member reading Workspace.webhooks gets FORBIDDEN. Ids are the UUIDs REST uses. */

export const WebhookDeliveryRef = builder.objectRef<DeliveryResponse>('WebhookDelivery').implement({
  description: 'One change event for one endpoint; every attempt and redelivery carries the same webhookId.',
  fields: (t) => ({
    id: t.exposeID('id'),
    endpointId: t.exposeID('endpointId'),
    changeEventId: t.exposeID('changeEventId'),
    webhookId: t.exposeString('webhookId', { description: 'The `webhook-id` header (msg_<changeEventId>).' }),
    eventType: t.exposeString('eventType'),
    status: t.exposeString('status', { description: 'pending | delivered | failed' }),
    attempts: t.exposeInt('attempts'),
    lastStatusCode: t.exposeInt('lastStatusCode', { nullable: true }),
    lastError: t.exposeString('lastError', { nullable: true }),
    durationMs: t.exposeInt('durationMs', { nullable: true, description: 'Duration of the last attempt.' }),
    nextAttemptAt: t.expose('nextAttemptAt', { type: 'DateTime', nullable: true }),
    lastAttemptAt: t.expose('lastAttemptAt', { type: 'DateTime', nullable: true }),
    deliveredAt: t.expose('deliveredAt', { type: 'DateTime', nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

export const WebhookEndpointRef = builder.objectRef<WebhookResponse>('WebhookEndpoint').implement({
  description: 'Where change events are POSTed (Standard Webhooks signatures, or Slack {text}). Its secret is shown only by create and rotate.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The UUID the REST API uses.' }),
    workspaceId: t.exposeID('workspaceId'),
    url: t.exposeString('url'),
    eventTypes: t.exposeStringList('eventTypes', { description: 'Change types delivered; empty: every type.' }),
    format: t.exposeString('format', { description: 'standard | slack' }),
    enabled: t.exposeBoolean('enabled'),
    disabledReason: t.exposeString('disabledReason', { nullable: true }),
    consecutiveFailures: t.exposeInt('consecutiveFailures'),
    failingSince: t.expose('failingSince', { type: 'DateTime', nullable: true }),
    lastDeliveryAt: t.expose('lastDeliveryAt', { type: 'DateTime', nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    deliveries: t.connection(
      {
        type: WebhookDeliveryRef,
        description: 'The delivery log, newest first.',
        args: { status: t.arg.string({ description: 'pending | delivered | failed' }) },
        resolve: (endpoint, args, ctx) =>
          resolveOffsetConnection({ args }, ({ offset, limit }) =>
            webhooks.deliveriesWindow(ctx, endpoint, { offset, limit, status: args.status ?? undefined }),
          ),
      },
      { name: 'WebhookDeliveryConnection' },
      { name: 'WebhookDeliveryEdge' },
    ),
  }),
});

const WebhookWithSecretRef = builder.objectRef<WebhookWithSecretResponse>('WebhookEndpointWithSecret').implement({
  description: 'An endpoint with its signing secret: returned only by createWebhook and rotateWebhookSecret.',
  fields: (t) => ({
    endpoint: t.field({ type: WebhookEndpointRef, resolve: (value) => value }),
    secret: t.exposeString('secret', { description: '`whsec_…` (Standard Webhooks). Shown only here.' }),
  }),
});

builder.prismaObjectField('Workspace', 'webhooks', (t) =>
  t.connection(
    {
      type: WebhookEndpointRef,
      description: "The workspace's webhook endpoints, newest first (owners only).",
      resolve: (workspace, args, ctx) =>
        resolveOffsetConnection({ args }, ({ offset, limit }) => webhooks.webhooksWindow(ctx, workspace.id, { offset, limit })),
    },
    { name: 'WebhookEndpointConnection' },
    { name: 'WebhookEndpointEdge' },
  ),
);

builder.mutationFields((t) => ({
  createWebhook: t.field({
    type: WebhookWithSecretRef,
    errors: {},
    description: 'Adds a webhook endpoint (owners); the result carries its secret, shown only this once.',
    args: {
      workspaceId: t.arg.id({ required: true }),
      url: t.arg.string({ required: true }),
      eventTypes: t.arg.stringList({ description: 'Change types to deliver; absent or empty: all.' }),
      format: t.arg.string({ description: 'standard (default) | slack' }),
      enabled: t.arg.boolean(),
    },
    resolve: (_root, args, ctx) =>
      webhooks.createWebhook(ctx, decodeId(args.workspaceId, WorkspaceRef, 'workspaceId'), {
        url: args.url,
        eventTypes: (args.eventTypes ?? undefined) as never,
        format: (args.format ?? undefined) as never,
        enabled: args.enabled ?? undefined,
      }),
  }),
  updateWebhook: t.field({
    type: WebhookEndpointRef,
    errors: {},
    description: 'Changes the URL, event types, format or enabled flag; absent arguments stay as they are. Re-enabling clears disabledReason.',
    args: { id: t.arg.id({ required: true }), url: t.arg.string(), eventTypes: t.arg.stringList(), format: t.arg.string(), enabled: t.arg.boolean() },
    resolve: async (_root, args, ctx) => {
      const id = decodeId(args.id, null, 'id');
      return webhooks.updateWebhook(ctx, await webhooks.workspaceOfWebhook(ctx, id), id, {
        url: args.url ?? undefined,
        eventTypes: (args.eventTypes ?? undefined) as never,
        format: (args.format ?? undefined) as never,
        enabled: args.enabled ?? undefined,
      });
    },
  }),
  deleteWebhook: t.field({
    type: 'ID',
    errors: {},
    description: 'Deletes the endpoint and its delivery log; returns its id.',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => {
      const id = decodeId(args.id, null, 'id');
      return (await webhooks.deleteWebhook(ctx, await webhooks.workspaceOfWebhook(ctx, id), id)).id;
    },
  }),
  rotateWebhookSecret: t.field({
    type: WebhookWithSecretRef,
    errors: {},
    description: 'Replaces the signing secret; the new one is shown only in this result.',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => {
      const id = decodeId(args.id, null, 'id');
      return webhooks.rotateWebhookSecret(ctx, await webhooks.workspaceOfWebhook(ctx, id), id);
    },
  }),
  redeliverWebhookDelivery: t.field({
    type: WebhookDeliveryRef,
    errors: {},
    description: 'Sends a delivery again with the same webhook-id (a pending one is left as it is).',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => {
      const id = decodeId(args.id, null, 'id');
      return webhooks.redeliver(ctx, await webhooks.workspaceOfDelivery(ctx, id), id);
    },
  }),
}));
