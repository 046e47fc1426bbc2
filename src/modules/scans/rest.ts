import { z } from 'zod';
import { router } from '../../rest/trpc.js';
import { requestHeaders, workspaceProcedure } from '../../rest/procedures.js';
import { dateTime, idParam, pageSchema, uuidParam } from '../../rest/schemas.js';
import * as scans from './service.js';
import { toScanResponse } from './response.js';
import { getScanArtefact } from './artefacts.js';
import { listScansInput, SCAN_STEP_NAMES, scanOptionsInput, SCAN_STATUSES, startScanInput } from './schemas.js';

const status = z.enum(SCAN_STATUSES);
const scanSchema = z
  .object({
    id: z.string(),
    nodeId: z.string().meta({ description: 'Its GraphQL global id (`id` there), for node(id:) and the subscriptions; id arguments take either.' }),
    workspaceId: z.string(),
    targetId: z.string(),
    status,
    options: z.record(z.string(), z.unknown()),
    progress: z.object({ stepsDone: z.number().int(), stepsTotal: z.number().int(), percent: z.number().int() }),
    assetsFound: z.number().int(),
    findings: z.object({ info: z.number().int(), low: z.number().int(), medium: z.number().int(), high: z.number().int(), critical: z.number().int() }),
    error: z.string().nullable(),
    requestedById: z.string().nullable(),
    createdAt: dateTime,
    startedAt: dateTime.nullable(),
    finishedAt: dateTime.nullable(),
    updatedAt: dateTime,
    steps: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        position: z.number().int(),
        status,
        attempts: z.number().int(),
        error: z.string().nullable(),
        startedAt: dateTime.nullable(),
        finishedAt: dateTime.nullable(),
      }),
    ),
  })
  .meta({ id: 'Scan' });

const tags = ['Scans'];
const scanLocation = (id: string) => `/api/v1/api/scans/${id}`;

export const scansRest = router({
  scanTarget: workspaceProcedure
    .meta({
      errors: { 409: 'Every step of the scan uses a tool switched off in this workspace' },
      successStatus: 201,
      openapi: {
        method: 'POST',
        path: '/api/vulnerabilities/scan',
        tags: ['Vulnerabilities'],
        summary: "Start a scan of a target with the workspace's default profile (Location names the scan)",
        requestHeaders,
      },
    })
    .input(z.object({ targetId: uuidParam }).strict())
    .output(z.object({}))
    .mutation(async ({ ctx, input }) => {
      const scan = await scans.startScan(ctx.svc, ctx.workspaceId, input);
      ctx.svc.responseHeaders.set('location', scanLocation(scan.id));
      return {};
    }),

  start: workspaceProcedure
    .meta({
      errors: { 409: 'Every step of the scan uses a tool switched off in this workspace' },
      successStatus: 201,
      openapi: { method: 'POST', path: '/api/scans', tags, summary: 'Start a scan with chosen steps and settings', requestHeaders },
    })
    .input(startScanInput.extend({ options: scanOptionsInput.optional() }))
    .output(scanSchema)
    .mutation(async ({ ctx, input }) => {
      const scan = await scans.startScan(ctx.svc, ctx.workspaceId, input);
      ctx.svc.responseHeaders.set('location', scanLocation(scan.id));
      return toScanResponse(scan);
    }),

  list: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: '/api/scans', tags, summary: "List the workspace's scans (filter by target and status)", requestHeaders } })
    .input(listScansInput)
    .output(pageSchema(scanSchema))
    .query(async ({ ctx, input }) => {
      const page = await scans.listScans(ctx.svc, ctx.workspaceId, input);
      return { ...page, data: page.data.map(toScanResponse) };
    }),

  get: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: '/api/scans/{id}', tags, summary: 'One scan with its steps', requestHeaders } })
    .input(idParam)
    .output(scanSchema)
    .query(async ({ ctx, input }) => toScanResponse(await scans.getScan(ctx.svc, input.id, ctx.workspaceId))),

  artefact: workspaceProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/scans/{id}/artefacts/{step}',
        tags,
        summary: "A completed step's full result (observations and errors), as stored in the blob store",
        requestHeaders,
      },
    })
    .input(z.object({ id: uuidParam, step: z.enum(SCAN_STEP_NAMES, { message: `must be one of: ${SCAN_STEP_NAMES.join(', ')}` }) }).strict())
    .output(z.record(z.string(), z.unknown()))
    .query(async ({ ctx, input }) => (await getScanArtefact(ctx.svc, input.id, input.step, ctx.workspaceId)) as Record<string, unknown>),

  cancel: workspaceProcedure
    .meta({
      errors: { 409: 'The scan already finished' },
      openapi: { method: 'POST', path: '/api/scans/{id}/cancel', tags, summary: 'Cancel a pending or running scan', requestHeaders },
    })
    .input(idParam)
    .output(scanSchema)
    .mutation(async ({ ctx, input }) => toScanResponse(await scans.cancelScan(ctx.svc, input.id, ctx.workspaceId))),

  retry: workspaceProcedure
    .meta({
      errors: { 409: 'The scan is not failed or cancelled, or has nothing left to run' },
      openapi: {
        method: 'POST',
        path: '/api/scans/{id}/retry',
        tags,
        summary: 'Run a failed or cancelled scan again from its first unfinished step',
        requestHeaders,
      },
    })
    .input(idParam)
    .output(scanSchema)
    .mutation(async ({ ctx, input }) => toScanResponse(await scans.retryScan(ctx.svc, input.id, ctx.workspaceId))),
});
