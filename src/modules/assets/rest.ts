import { z } from 'zod';
import { router } from '../../rest/trpc.js';
import { requestHeaders, workspaceProcedure } from '../../rest/procedures.js';
import { dateTime, idParam, pageSchema, uuidParam } from '../../rest/schemas.js';
import * as assets from './service.js';
import { ASSET_KINDS, listAssetsInput, updateAssetInput } from './schemas.js';

const assetSchema = z
  .object({
    id: z.string(),
    nodeId: z.string().meta({ description: 'Its GraphQL global id (`id` there), for node(id:) and the subscriptions; id arguments take either.' }),
    workspaceId: z.string(),
    kind: z.enum(ASSET_KINDS),
    key: z.string().meta({ description: 'Natural key, unique per workspace: host:<name>, service:<ip>:<port>/tcp, web:<url>, cert:<sha256>.' }),
    value: z.string().meta({ description: 'What a person reads: host name, ip:port, URL or certificate subject.' }),
    data: z.unknown().meta({ description: 'What the scans observed (JSON, shape by kind).' }),
    enabled: z.boolean(),
    parentId: z.string().nullable(),
    targetId: z.string().nullable(),
    lastScanId: z.string().nullable(),
    firstSeenAt: dateTime,
    lastSeenAt: dateTime,
  })
  .meta({ id: 'AssetResponse' });

const tags = ['Assets'];

export const assetsRest = router({
  list: workspaceProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/assets', tags, summary: "List the workspace's assets (hosts, services, web apps, certificates)", requestHeaders },
    })
    .input(listAssetsInput)
    .output(pageSchema(assetSchema))
    .query(({ ctx, input }) => assets.listAssets(ctx.svc, ctx.workspaceId, input)),

  get: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: '/api/assets/{id}', tags, summary: 'Get one asset', requestHeaders } })
    .input(idParam)
    .output(assetSchema)
    .query(({ ctx, input }) => assets.getAsset(ctx.svc, ctx.workspaceId, input.id)),

  update: workspaceProcedure
    .meta({
      openapi: { method: 'PATCH', path: '/api/assets/{id}', tags, summary: 'Enable or disable an asset (disabled assets are not scanned)', requestHeaders },
    })
    .input(updateAssetInput.extend({ id: uuidParam }))
    .output(assetSchema)
    .mutation(({ ctx, input: { id, ...patch } }) => assets.setAssetEnabled(ctx.svc, ctx.workspaceId, id, patch)),
});
