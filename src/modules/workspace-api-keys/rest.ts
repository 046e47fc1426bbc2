import { z } from 'zod';
import { router } from '../../rest/trpc.js';
import { requestHeaders, signedInProcedure, workspaceProcedure } from '../../rest/procedures.js';
import { dateTime, idParam } from '../../rest/schemas.js';
import * as keys from './service.js';
import { createWorkspaceApiKeyInput, listWorkspaceApiKeysInput } from './schemas.js';

const keySchema = z
  .object({
    id: z.string(),
    workspaceId: z.string(),
    name: z.string(),
    prefix: z.string().meta({ description: 'The first characters of the key (pwk_…), to recognise it; never the secret.' }),
    createdById: z
      .string()
      .nullable()
      .meta({ description: 'The owner who made it. The key reads as this member (at member level) while they belong to the workspace.' }),
    createdAt: dateTime,
    lastUsedAt: dateTime.nullable(),
    revokedAt: dateTime.nullable(),
  })
  .meta({ id: 'WorkspaceApiKey' });

const secretSchema = z
  .object({
    apiKey: z.string().meta({ description: 'The new key (pwk_…), shown this once; only its hash is kept. Send it in the x-service-api-key header.' }),
    key: keySchema,
  })
  .meta({ id: 'WorkspaceApiKeySecret' });

const tags = ['Workspace API keys'];

/**
 * Registered BEFORE the workspaces router: the REST handler serves a request with the first procedure whose
 * path matches, and `GET /api/workspaces/{id}` would otherwise take `/api/workspaces/api-key(s)` (and 400 on the uuid).
 */
export const workspaceApiKeysRest = router({
  current: workspaceProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/workspaces/api-key',
        tags,
        summary: "The workspace's current API key (the newest valid one): metadata only, never the secret (owners)",
        requestHeaders,
      },
    })
    .input(z.object({}).strict().optional())
    .output(z.object({ key: keySchema.nullable().meta({ description: 'Null when the workspace has no valid key.' }) }))
    .query(async ({ ctx }) => ({ key: await keys.getCurrentWorkspaceApiKey(ctx.svc, ctx.workspaceId) })),

  list: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: '/api/workspaces/api-keys', tags, summary: "The workspace's API keys, newest first (owners)", requestHeaders } })
    .input(listWorkspaceApiKeysInput)
    .output(z.array(keySchema))
    .query(({ ctx, input }) => keys.listWorkspaceApiKeys(ctx.svc, ctx.workspaceId, input)),

  create: workspaceProcedure
    .meta({
      errors: { 409: 'The workspace already has as many valid keys as allowed: revoke one first' },
      successStatus: 201,
      openapi: { method: 'POST', path: '/api/workspaces/api-keys', tags, summary: 'Make a named API key, shown once (owners)', requestHeaders },
    })
    .input(createWorkspaceApiKeyInput)
    .output(secretSchema)
    .mutation(({ ctx, input }) => keys.createWorkspaceApiKey(ctx.svc, ctx.workspaceId, input)),

  revoke: workspaceProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/api/workspaces/api-keys/{id}',
        tags,
        summary: 'Revoke an API key: it stops working at once (owners)',
        requestHeaders,
      },
    })
    .input(idParam)
    .output(keySchema)
    .mutation(({ ctx, input }) => keys.revokeWorkspaceApiKey(ctx.svc, ctx.workspaceId, input.id)),

  rotate: signedInProcedure
    .meta({
      successStatus: 201,
      openapi: {
        method: 'POST',
        path: '/api/workspaces/{id}/api-key/rotate',
        tags,
        summary: "Replace the workspace's current API key with a new one, shown once; the previous key stops working at once (owners)",
      },
    })
    .input(idParam)
    .output(secretSchema.extend({ revokedKeyId: z.string().nullable().meta({ description: 'The key this rotation revoked; null when there was none.' }) }))
    .mutation(({ ctx, input }) => keys.rotateWorkspaceApiKey(ctx.svc, input.id)),
});
