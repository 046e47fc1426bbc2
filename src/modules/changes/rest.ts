import { z } from 'zod';
import { router } from '../../rest/trpc.js';
import { requestHeaders, workspaceProcedure } from '../../rest/procedures.js';
import { dateTime, idParam } from '../../rest/schemas.js';
import { AppError } from '../../errors.js';
import { CHANGES_EXPORT_DESCRIPTION, CHANGES_EXPORT_DOWNLOAD } from '../exports/openapi.js';
import { listChanges, getScanDiff } from './service.js';
import { exportChangesInput, listChangesInput } from './schemas.js';
import { CHANGE_TYPES } from './types.js';

const changeSchema = z
  .object({
    id: z.string(),
    workspaceId: z.string(),
    type: z.enum(CHANGE_TYPES),
    at: dateTime,
    assetId: z.string().nullable(),
    findingId: z.string().nullable(),
    scanId: z.string().nullable(),
    targetId: z.string().nullable(),
    data: z.unknown().meta({
      description:
        'Per type: asset.* {kind, key, value} plus asset.discovered {reappeared?}, asset.changed {changes: [{field, before, after}]}, asset.gone {lastSeenAt, reason}; finding.* {name, severity, checkId} plus dismissed {actorId, reason, comment}, reopened by a person {actorId, comment}; scan.completed {assetsFound, findings: {info, low, medium, high, critical}}; scan.failed {error}.',
    }),
  })
  .meta({ id: 'ChangeEvent' });

const changePageSchema = z
  .object({
    data: z.array(changeSchema).meta({ description: 'Newest first.' }),
    nextCursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next (older) page; null on the last page.' }),
  })
  .meta({ id: 'ChangePage' });

const diffAsset = z.object({
  changeId: z.string(),
  assetId: z.string().nullable(),
  kind: z.string(),
  key: z.string(),
  value: z.string(),
  reappeared: z.boolean(),
});
const diffFinding = z.object({
  changeId: z.string(),
  findingId: z.string().nullable(),
  assetId: z.string().nullable(),
  name: z.string(),
  severity: z.string(),
  checkId: z.string(),
  reopened: z.boolean(),
});
const diffSchema = z
  .object({
    scanId: z.string(),
    targetId: z.string(),
    status: z.string(),
    previousScanId: z.string().nullable().meta({ description: 'The newest completed scan of the same target created before this one.' }),
    newAssets: z.array(diffAsset),
    goneAssets: z.array(diffAsset),
    changedAssets: z.array(
      diffAsset.omit({ reappeared: true }).extend({ changes: z.array(z.object({ field: z.string(), before: z.unknown(), after: z.unknown() })) }),
    ),
    newFindings: z.array(diffFinding),
    fixedFindings: z.array(diffFinding),
    counts: z.object({
      newAssets: z.number().int(),
      goneAssets: z.number().int(),
      changedAssets: z.number().int(),
      newFindings: z.number().int(),
      fixedFindings: z.number().int(),
    }),
    truncated: z.boolean().meta({ description: 'A list holds only its first 1000 items (the counts are complete).' }),
  })
  .meta({ id: 'ScanDiff' });

const tags = ['Changes'];

export const changesRest = router({
  // Served by the export route (modules/exports/route.ts) before the REST handler; declared here for the OpenAPI document.
  export: workspaceProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/changes/export',
        tags,
        summary: "Export the workspace's change feed as JSON lines (streamed, oldest first; the list's filters)",
        description: CHANGES_EXPORT_DESCRIPTION,
        requestHeaders,
      },
      download: CHANGES_EXPORT_DOWNLOAD,
    })
    .input(exportChangesInput)
    .output(z.array(changeSchema))
    .query((): never => {
      throw new AppError('INTERNAL', 'The export is served by its own route');
    }),

  list: workspaceProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/changes',
        tags,
        summary: "The workspace's change feed, newest first (filter by types, since/until, asset, target, scan; cursor paging)",
        requestHeaders,
      },
    })
    .input(listChangesInput)
    .output(changePageSchema)
    .query(({ ctx, input }) => listChanges(ctx.svc, ctx.workspaceId, input)),

  scanDiff: workspaceProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/scans/{id}/diff',
        tags: ['Scans'],
        summary: 'What this scan changed against the previous completed scan of its target: new, gone and changed assets, new and fixed findings',
        requestHeaders,
      },
    })
    .input(idParam)
    .output(diffSchema)
    .query(({ ctx, input }) => getScanDiff(ctx.svc, input.id, ctx.workspaceId)),
});
