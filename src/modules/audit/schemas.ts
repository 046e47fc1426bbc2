import { z } from 'zod';
import { pageQuery, searchQuery } from '../../pagination.js';
import { ACTOR_KINDS } from './record.js';

export const AUDIT_SCOPES = ['workspace', 'instance'] as const;

/** ISO 8601 with a time zone (`2026-11-24T06:00:00Z`), as every date the API returns; a Date from GraphQL's scalar passes too. */
const instant = z.preprocess(
  (value) => (value instanceof Date ? value.toISOString() : value),
  z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time such as 2026-11-24T06:00:00Z' }).transform((value) => new Date(value)),
);

/**
 * Filters of the audit log, REST's query string and GraphQL's arguments alike. `scope=instance` (instance
 * administrators) reads every entry of the instance, instance-level ones included; `workspace` (the default)
 * reads the entries of the workspace named by X-Workspace-Id (its owners).
 */
export const listAuditLogsInput = z
  .object({
    ...pageQuery,
    limit: pageQuery.limit.default(50),
    scope: z.enum(AUDIT_SCOPES, { message: `must be one of: ${AUDIT_SCOPES.join(', ')}` }).default('workspace'),
    since: instant.optional().meta({ description: 'Entries at or after this instant.' }),
    until: instant.optional().meta({ description: 'Entries before this instant.' }),
    actor: z.string().trim().min(1).max(200).optional().meta({ description: "The actor's id, e-mail or key prefix (exact, e-mail case-insensitive)." }),
    actorKind: z.enum(ACTOR_KINDS, { message: `must be one of: ${ACTOR_KINDS.join(', ')}` }).optional(),
    operation: searchQuery.optional().meta({ description: 'Text the operation contains, e.g. `PATCH /api/assets` or `mutation createTarget`.' }),
    outcome: z.string().trim().min(1).max(64).optional().meta({ description: '`success` or an error code such as FORBIDDEN.' }),
  })
  .strict()
  .omit({ sortOrder: true })
  .refine((input) => !input.since || !input.until || input.since < input.until, { path: ['until'], message: 'must be after since' });

export type ListAuditLogsInput = z.input<typeof listAuditLogsInput>;
export type AuditLogFilter = Omit<z.output<typeof listAuditLogsInput>, 'page' | 'limit' | 'scope'>;
