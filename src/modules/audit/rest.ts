import { z } from 'zod';
import { router } from '../../rest/trpc.js';
import { requestHeaders, signedInProcedure } from '../../rest/procedures.js';
import { dateTime, pageSchema } from '../../rest/schemas.js';
import { ACTOR_KINDS, AUDIT_SURFACES } from './record.js';
import { listAuditLogs } from './service.js';
import { listAuditLogsInput } from './schemas.js';

const auditLogSchema = z
  .object({
    id: z.string(),
    at: dateTime,
    workspaceId: z
      .string()
      .nullable()
      .meta({ description: 'Null for instance-level writes (sign-up, users, writes by a caller outside any workspace of theirs).' }),
    actorKind: z.enum(ACTOR_KINDS),
    actorId: z.string().nullable().meta({ description: "The user's id, or the token's or key's id." }),
    actorDisplay: z.string().nullable().meta({ description: "The user's e-mail, or the key's prefix (prm_…, pwk_…, ptk_…); never a secret." }),
    surface: z.enum(AUDIT_SURFACES),
    operation: z.string().meta({ description: '`PATCH /api/assets/{id}`, `mutation createTarget`, `mcp start_scan`.' }),
    entityIds: z.array(z.string()),
    outcome: z.string().meta({ description: '`success`, or the error code the write ended with.' }),
    clientAddress: z.string().meta({ description: 'The socket peer, or the X-Forwarded-For entry TRUST_PROXY allows.' }),
    requestId: z.string().nullable(),
  })
  .meta({ id: 'AuditLogEntry' });

export const auditRest = router({
  list: signedInProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/audit-logs',
        tags: ['Audit log'],
        summary: "Every write through any front door, newest first: the workspace's (owners), or the instance's with scope=instance (administrators)",
        requestHeaders,
      },
    })
    .input(listAuditLogsInput)
    .output(pageSchema(auditLogSchema))
    .query(({ ctx, input }) => listAuditLogs(ctx.svc, input)),
});
