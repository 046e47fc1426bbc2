import { z } from 'zod';
import { pageQuery } from '../../pagination.js';
import { CHANGE_TYPES } from '../changes/types.js';

export const WEBHOOK_FORMATS = ['standard', 'slack'] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];
export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** Shape only: whether the host is in scope is the service's (it resolves the name). */
const url = z
  .string({ message: 'must be an http(s) URL' })
  .trim()
  .max(2048, { message: 'must be at most 2048 characters' })
  .refine(
    (value) => {
      try {
        const parsed = new URL(value);
        return (parsed.protocol === 'http:' || parsed.protocol === 'https:') && parsed.hostname !== '';
      } catch {
        return false;
      }
    },
    { message: 'must be an http(s) URL' },
  );

const eventTypes = z
  .array(z.enum(CHANGE_TYPES, { message: `must be one of ${CHANGE_TYPES.join(', ')}` }), { message: 'must be a list of change types' })
  .max(CHANGE_TYPES.length)
  .transform((types) => [...new Set(types)]);

export const createWebhookInput = z
  .object({
    url: url.meta({
      description:
        'Where deliveries are POSTed. Its host must not resolve to loopback, private or metadata addresses unless WEBHOOK_ALLOWED_NETWORKS allows them.',
    }),
    eventTypes: eventTypes.default([]).meta({ description: 'Change types delivered; empty (the default) delivers every type.' }),
    format: z.enum(WEBHOOK_FORMATS, { message: 'must be standard or slack' }).default('standard').meta({
      description: 'standard: JSON {type, timestamp, data} signed per Standard Webhooks; slack: {text}, a one-line summary for chat incoming webhooks.',
    }),
    enabled: z.boolean({ message: 'must be true or false' }).default(true),
  })
  .strict();

export const updateWebhookInput = z
  .object({
    url: url.optional(),
    eventTypes: eventTypes.optional(),
    format: z.enum(WEBHOOK_FORMATS, { message: 'must be standard or slack' }).optional(),
    enabled: z.boolean({ message: 'must be true or false' }).optional().meta({ description: 'Re-enabling clears disabledReason and the failure counters.' }),
  })
  .strict();

export const listWebhooksInput = z.object({ ...pageQuery }).strict();

export const listDeliveriesInput = z
  .object({
    ...pageQuery,
    status: z.enum(DELIVERY_STATUSES, { message: 'must be pending, delivered or failed' }).optional(),
  })
  .strict();

export type CreateWebhookInput = z.input<typeof createWebhookInput>;
export type UpdateWebhookInput = z.input<typeof updateWebhookInput>;
export type ListWebhooksInput = z.input<typeof listWebhooksInput>;
export type ListDeliveriesInput = z.input<typeof listDeliveriesInput>;
