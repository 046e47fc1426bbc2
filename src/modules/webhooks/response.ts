import type { Prisma } from '../../db.js';
import type { ChangeType } from '../changes/types.js';
import type { DeliveryStatus, WebhookFormat } from './schemas.js';

export type WebhookEndpointRow = Prisma.WebhookEndpointGetPayload<true>;
export type WebhookDeliveryRow = Prisma.WebhookDeliveryGetPayload<true>;

/** An endpoint as every front door shows it: never its secret (that is shown once, by create and rotate). */
export interface WebhookResponse {
  id: string;
  workspaceId: string;
  url: string;
  eventTypes: ChangeType[];
  format: WebhookFormat;
  enabled: boolean;
  disabledReason: string | null;
  consecutiveFailures: number;
  failingSince: Date | null;
  lastDeliveryAt: Date | null;
  createdById: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface WebhookWithSecretResponse extends WebhookResponse {
  /** `whsec_<base64>`: shown this once. */
  secret: string;
}

export interface DeliveryResponse {
  id: string;
  endpointId: string;
  changeEventId: string;
  webhookId: string;
  eventType: ChangeType;
  status: DeliveryStatus;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  durationMs: number | null;
  nextAttemptAt: Date | null;
  lastAttemptAt: Date | null;
  deliveredAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export function toWebhookResponse(row: WebhookEndpointRow): WebhookResponse {
  return {
    id: row.id,
    workspaceId: row.workspaceId,
    url: row.url,
    eventTypes: row.eventTypes as ChangeType[],
    format: row.format as WebhookFormat,
    enabled: row.enabled,
    disabledReason: row.disabledReason,
    consecutiveFailures: row.consecutiveFailures,
    failingSince: row.failingSince,
    lastDeliveryAt: row.lastDeliveryAt,
    createdById: row.createdById,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

export function toDeliveryResponse(row: WebhookDeliveryRow): DeliveryResponse {
  return {
    id: row.id,
    endpointId: row.endpointId,
    changeEventId: row.changeEventId,
    webhookId: row.webhookId,
    eventType: row.eventType as ChangeType,
    status: row.status as DeliveryStatus,
    attempts: row.attempts,
    lastStatusCode: row.lastStatusCode,
    lastError: row.lastError,
    durationMs: row.durationMs,
    nextAttemptAt: row.nextAttemptAt,
    lastAttemptAt: row.lastAttemptAt,
    deliveredAt: row.deliveredAt,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}
