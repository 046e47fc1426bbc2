import { z } from 'zod';
import { router } from '../../rest/trpc.js';
import { requestHeaders, workspaceProcedure } from '../../rest/procedures.js';
import { dateTime, idParam, pageSchema } from '../../rest/schemas.js';
import * as findings from './service.js';
import { exportFindingsInput } from '../exports/schemas.js';
import { FINDINGS_EXPORT_DESCRIPTION, FINDINGS_EXPORT_DOWNLOAD } from '../exports/openapi.js';
import { AppError } from '../../errors.js';
import {
  DISMISS_REASONS,
  dismissFindingsInput,
  FINDING_EVENT_TYPES,
  FINDING_STATUSES,
  findingStatisticsInput,
  listFindingsInput,
  reopenFindingsInput,
  SEVERITIES,
} from './schemas.js';

const findingSchema = z
  .object({
    id: z.string(),
    nodeId: z.string().meta({ description: 'Its GraphQL global id (`id` there), for node(id:) and the subscriptions; id arguments take either.' }),
    workspaceId: z.string(),
    fingerprint: z.string().meta({ description: 'Unique per workspace: a hash of check, asset and matcher.' }),
    checkId: z.string().meta({ description: 'The template or check that found it.' }),
    source: z.string(),
    name: z.string(),
    severity: z.enum(SEVERITIES),
    description: z.string(),
    remediation: z.string(),
    matcher: z.string(),
    status: z.enum(FINDING_STATUSES),
    evidence: z.unknown().meta({ description: 'What the check saw (JSON).' }),
    classification: z.unknown().meta({ description: 'CVE, CWE, CVSS and the like (JSON), or null.' }),
    assetId: z.string().nullable(),
    targetId: z.string().nullable(),
    lastScanId: z.string().nullable(),
    occurrences: z.number().int(),
    firstSeenAt: dateTime,
    lastSeenAt: dateTime,
    fixedAt: dateTime.nullable(),
    dismissReason: z.enum(DISMISS_REASONS).nullable(),
    dismissComment: z.string().nullable(),
    dismissedAt: dateTime.nullable(),
    dismissedById: z.string().nullable(),
    updatedAt: dateTime,
  })
  .meta({ id: 'FindingResponse' });

const findingEventSchema = z
  .object({
    id: z.string(),
    type: z.enum(FINDING_EVENT_TYPES),
    scanId: z.string().nullable(),
    actorId: z.string().nullable(),
    comment: z.string().nullable(),
    createdAt: dateTime,
  })
  .meta({ id: 'FindingEvent' });

const findingDetailSchema = findingSchema
  .extend({ events: z.array(findingEventSchema).meta({ description: 'The history, oldest first.' }) })
  .meta({ id: 'FindingDetailResponse' });

const statisticsSchema = z
  .object({
    data: z
      .array(z.object({ severity: z.enum(SEVERITIES), count: z.number().int() }))
      .meta({ description: 'Open findings per severity, all five, most severe first.' }),
    byStatus: z.object({ open: z.number().int(), fixed: z.number().int(), dismissed: z.number().int() }),
  })
  .meta({ id: 'FindingStatistics' });

const triageResultSchema = z
  .object({
    updated: z.number().int().meta({ description: 'How many findings changed state; the others already were in it.' }),
    data: z.array(findingSchema).meta({ description: 'Every finding named, in the order given, as it now is.' }),
  })
  .meta({ id: 'FindingTriageResult' });

const tags = ['Vulnerabilities'];

/** The static paths come before /{id}: the first procedure whose path matches serves the request. */
export const vulnerabilitiesRest = router({
  statistics: workspaceProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/vulnerabilities/statistics', tags, summary: 'Open findings per severity, and findings per status', requestHeaders },
    })
    .input(findingStatisticsInput)
    .output(statisticsSchema)
    .query(({ ctx, input }) => findings.findingStatistics(ctx.svc, ctx.workspaceId, input)),

  dismiss: workspaceProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/vulnerabilities/dismiss',
        tags,
        summary: 'Dismiss findings with a reason (all ids must be of this workspace, else 404 and nothing changes)',
        requestHeaders,
      },
    })
    .input(dismissFindingsInput)
    .output(triageResultSchema)
    .mutation(({ ctx, input }) => findings.dismissFindings(ctx.svc, ctx.workspaceId, input)),

  reopen: workspaceProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/vulnerabilities/reopen',
        tags,
        summary: 'Reopen dismissed findings (all ids must be of this workspace, else 404 and nothing changes)',
        requestHeaders,
      },
    })
    .input(reopenFindingsInput)
    .output(triageResultSchema)
    .mutation(({ ctx, input }) => findings.reopenFindings(ctx.svc, ctx.workspaceId, input)),

  list: workspaceProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/vulnerabilities',
        tags,
        summary: "List the workspace's findings (open ones unless status says otherwise)",
        requestHeaders,
      },
    })
    .input(listFindingsInput)
    .output(pageSchema(findingSchema))
    .query(({ ctx, input }) => findings.listFindings(ctx.svc, ctx.workspaceId, input)),

  // Served by the export route (modules/exports/route.ts) before the REST handler; declared here for the OpenAPI document.
  export: workspaceProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/vulnerabilities/export',
        tags,
        summary: "Export the workspace's findings as CSV, JSON or SARIF 2.1.0 (streamed; the list's filters)",
        description: FINDINGS_EXPORT_DESCRIPTION,
        requestHeaders,
      },
      download: FINDINGS_EXPORT_DOWNLOAD,
    })
    .input(exportFindingsInput)
    .output(z.array(findingSchema))
    .query((): never => {
      throw new AppError('INTERNAL', 'The export is served by its own route');
    }),

  get: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: '/api/vulnerabilities/{id}', tags, summary: 'Get one finding with its history', requestHeaders } })
    .input(idParam)
    .output(findingDetailSchema)
    .query(({ ctx, input }) => findings.getFinding(ctx.svc, ctx.workspaceId, input.id)),
});
