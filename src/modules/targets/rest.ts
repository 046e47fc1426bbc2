import { z } from 'zod';
import { router } from '../../rest/trpc.js';
import { requestHeaders, workspaceProcedure } from '../../rest/procedures.js';
import { dateTime, idOutput, idParam, pageSchema } from '../../rest/schemas.js';
import * as targets from './service.js';
import { createTargetInput, createTargetsInput, listTargetsInput, TARGET_TYPES } from './schemas.js';

export const targetSchema = z
  .object({
    id: z.string(),
    nodeId: z.string().meta({ description: 'Its GraphQL global id (`id` there), for node(id:) and the subscriptions; id arguments take either.' }),
    workspaceId: z.string(),
    value: z.string().meta({ description: 'Normalised: lower-case host, canonical IP or network, URL without credentials or fragment.' }),
    type: z.enum(TARGET_TYPES),
    lastScannedAt: dateTime.nullable(),
    createdById: z.string().nullable(),
    createdAt: dateTime,
    updatedAt: dateTime,
    assetCount: z.number().int().meta({ description: 'Assets discovered from this target.' }),
    findingCount: z.number().int().meta({ description: 'Open findings on this target.' }),
  })
  .meta({ id: 'TargetResponse' });

const bulkResultSchema = z
  .object({
    results: z.array(
      z.object({
        value: z.string().meta({ description: 'The value as sent.' }),
        status: z.enum(['created', 'duplicate', 'invalid']),
        target: targetSchema.optional().meta({ description: 'The created target, or the existing one for a duplicate.' }),
        error: z.string().optional().meta({ description: 'Why an invalid value was refused.' }),
      }),
    ),
    summary: z.object({ created: z.number().int(), duplicate: z.number().int(), invalid: z.number().int() }),
  })
  .meta({ id: 'BulkCreateTargetsResponse' });

const tags = ['Targets'];

export const targetsRest = router({
  create: workspaceProcedure
    .meta({
      errors: { 409: 'The workspace already has this target' },
      successStatus: 201,
      openapi: { method: 'POST', path: '/api/targets', tags, summary: 'Add a target (domain, IP, CIDR or URL)', requestHeaders },
    })
    .input(createTargetInput)
    .output(targetSchema)
    .mutation(({ ctx, input }) => targets.createTarget(ctx.svc, ctx.workspaceId, input)),

  createMany: workspaceProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/targets/bulk',
        tags,
        summary: 'Add up to 500 targets; each item reports created, duplicate or invalid',
        requestHeaders,
      },
    })
    .input(createTargetsInput)
    .output(bulkResultSchema)
    .mutation(({ ctx, input }) => targets.createTargets(ctx.svc, ctx.workspaceId, input)),

  list: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: '/api/targets', tags, summary: "List the workspace's targets", requestHeaders } })
    .input(listTargetsInput)
    .output(pageSchema(targetSchema))
    .query(({ ctx, input }) => targets.listTargets(ctx.svc, ctx.workspaceId, input)),

  get: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: '/api/targets/{id}', tags, summary: 'Get one target', requestHeaders } })
    .input(idParam)
    .output(targetSchema)
    .query(({ ctx, input }) => targets.getTarget(ctx.svc, ctx.workspaceId, input.id)),

  delete: workspaceProcedure
    .meta({ openapi: { method: 'DELETE', path: '/api/targets/{id}', tags, summary: 'Delete a target and its scans', requestHeaders } })
    .input(idParam)
    .output(idOutput)
    .mutation(({ ctx, input }) => targets.deleteTarget(ctx.svc, ctx.workspaceId, input.id)),
});
