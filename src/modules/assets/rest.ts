import { z } from 'zod';
import { router } from '../../rest/trpc.js';
import { requestHeaders, workspaceProcedure } from '../../rest/procedures.js';
import { dateTime, idParam, pageSchema, uuidParam } from '../../rest/schemas.js';
import * as assets from './service.js';
import { updateAssets } from './update.js';
import { exportAssetsInput } from '../exports/schemas.js';
import { ASSETS_EXPORT_DESCRIPTION, ASSETS_EXPORT_DOWNLOAD } from '../exports/openapi.js';
import { AppError } from '../../errors.js';
import { ASSET_KINDS, DISCOVERY_SOURCES, MAX_BULK_ASSET_IDS, listAssetsInput, updateAssetBody, updateAssetsBody } from './schemas.js';

const discoverySchema = z
  .object({
    source: z.enum(DISCOVERY_SOURCES),
    from: z.string().nullable().meta({ description: 'What pointed at it: the parent name, an asset key, a URL or an address.' }),
    fromAssetId: z.string().nullable().meta({ description: 'The asset that pointed at it, when it is in the inventory.' }),
    scanId: z.string().nullable().meta({ description: 'The scan of the latest sighting by this source.' }),
    firstSeenAt: dateTime,
    lastSeenAt: dateTime,
  })
  .meta({ id: 'AssetDiscovery', description: 'One reason a host is in the inventory: one entry per discovery source, moved to its latest sighting.' });

const assetSchema = z
  .object({
    id: z.string(),
    nodeId: z.string().meta({ description: 'Its GraphQL global id (`id` there), for node(id:) and the subscriptions; id arguments take either.' }),
    workspaceId: z.string(),
    kind: z.enum(ASSET_KINDS),
    key: z.string().meta({ description: 'Natural key, unique per workspace: host:<name>, service:<ip>:<port>/tcp, web:<url>, cert:<sha256>.' }),
    value: z.string().meta({ description: 'What a person reads: host name, ip:port, URL or certificate subject.' }),
    data: z.unknown().meta({ description: 'What the scans observed (JSON, shape by kind).' }),
    enabled: z.boolean().meta({
      description:
        'Disabled assets stay in the inventory but are not scanned; discovered hosts wait disabled as candidates unless the workspace auto-enables them.',
    }),
    parentId: z.string().nullable(),
    targetId: z.string().nullable(),
    lastScanId: z.string().nullable(),
    firstSeenAt: dateTime,
    lastSeenAt: dateTime,
    discovery: z.array(discoverySchema).meta({ description: 'Provenance, oldest source first; empty for assets no discovery found.' }),
    references: z.array(z.string()).meta({ description: 'Out-of-scope host names this asset pointed at (links, CNAMEs elsewhere), newest last, at most 200.' }),
    dismissed: z.boolean().meta({ description: 'Someone said it is not ours: disabled, and never offered as a new candidate again.' }),
    dismissedAt: dateTime.nullable(),
  })
  .meta({ id: 'AssetResponse' });

const bulkResultSchema = z
  .object({
    updated: z.number().int().meta({ description: 'Assets of this workspace named: each is now in the state asked for.' }),
    notFound: z.array(z.string()).meta({ description: 'Ids that are not assets of this workspace: nothing was done to them.' }),
  })
  .meta({ id: 'AssetBulkUpdateResult' });

const tags = ['Assets'];

export const assetsRest = router({
  list: workspaceProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/assets', tags, summary: "List the workspace's assets (hosts, services, web apps, certificates)", requestHeaders },
    })
    .input(listAssetsInput)
    .output(pageSchema(assetSchema))
    .query(({ ctx, input }) => assets.listAssets(ctx.svc, ctx.workspaceId, input)),

  updateMany: workspaceProcedure
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/api/assets',
        tags,
        summary: `Enable, disable or dismiss up to ${MAX_BULK_ASSET_IDS} assets at once (newly enabled hosts are scanned; ids of other workspaces are reported, never touched)`,
        requestHeaders,
      },
    })
    .input(updateAssetsBody)
    .output(bulkResultSchema)
    .mutation(({ ctx, input }) => updateAssets(ctx.svc, ctx.workspaceId, input)),

  // Served by the export route (modules/exports/route.ts) before the REST handler; declared here for the OpenAPI document.
  export: workspaceProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/assets/export',
        tags,
        summary: "Export the workspace's assets as CSV or JSON (streamed; the list's filters)",
        description: ASSETS_EXPORT_DESCRIPTION,
        requestHeaders,
      },
      download: ASSETS_EXPORT_DOWNLOAD,
    })
    .input(exportAssetsInput)
    .output(z.array(assetSchema))
    .query((): never => {
      throw new AppError('INTERNAL', 'The export is served by its own route');
    }),

  get: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: '/api/assets/{id}', tags, summary: 'Get one asset', requestHeaders } })
    .input(idParam)
    .output(assetSchema)
    .query(({ ctx, input }) => assets.getAsset(ctx.svc, ctx.workspaceId, input.id)),

  update: workspaceProcedure
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/api/assets/{id}',
        tags,
        summary: 'Enable, disable or dismiss an asset (disabled assets are not scanned; an enabled candidate host is scanned; dismissed is disabled for good)',
        requestHeaders,
      },
    })
    .input(updateAssetBody.extend({ id: uuidParam }))
    .output(assetSchema)
    .mutation(({ ctx, input: { id, ...change } }) => assets.updateAsset(ctx.svc, ctx.workspaceId, id, change)),
});
