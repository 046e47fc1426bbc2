import { builder } from '../../graphql/builder.js';
import { rowFirst } from '../../graphql/row-first-plugin.js';
import { decodeId, decodeIds, decodeQueryId } from '../../graphql/ids.js';
import { TargetRef } from '../targets/graphql.js';
import * as assets from './service.js';
import { updateVisibleAssets } from './update.js';
import { ASSET_KINDS, DISCOVERY_SOURCES, type AssetKind } from './schemas.js';
import type { DiscoverySource } from '../../scanner/discovery/types.js';
import { prismaConnectionHelpers } from '@pothos/plugin-prisma';
import { connectionWithTotal } from '../../graphql/connection-total.js';
import { connectionWhere } from '../../graphql/relation-page-query.js';

export const AssetKindEnum = builder.enumType('AssetKind', { values: ASSET_KINDS });
export const DiscoverySourceEnum = builder.enumType('DiscoverySource', {
  values: DISCOVERY_SOURCES,
  description:
    'Why a host is in the inventory: brute force, certificate transparency, a certificate, a CNAME, a link, DNS records, a zone transfer, reverse DNS, a permutation, the target itself, or an import.',
});

builder.prismaObject('AssetDiscovery', {
  description: 'One reason a host is in the inventory: one per discovery source, moved to its latest sighting.',
  fields: (t) => ({
    source: t.field({ type: DiscoverySourceEnum, resolve: (row) => row.source as (typeof DISCOVERY_SOURCES)[number] }),
    from: t.exposeString('from', { nullable: true, description: 'What pointed at it: the parent name, an asset key, a URL or an address.' }),
    fromAssetId: t.exposeString('fromAssetId', { nullable: true, description: 'The UUID of the asset that pointed at it, when it is in the inventory.' }),
    fromAsset: t.relation('fromAsset', { nullable: true, description: 'The asset that pointed at it, when it is in the inventory.' }),
    scanId: t.exposeString('scanId', { nullable: true, description: 'The UUID of the scan of the latest sighting by this source.' }),
    firstSeenAt: t.expose('firstSeenAt', { type: 'DateTime' }),
    lastSeenAt: t.expose('lastSeenAt', { type: 'DateTime' }),
  }),
});

export const AssetRef = builder.prismaNode('Asset', {
  id: { field: 'id' },
  description: 'One thing in the living inventory (a host, service, web application or certificate), updated by every scan that sees it.',
  findUnique: (id, ctx) => assets.visibleAssetWhereUnique(ctx, id),
  // node(id) of one that is absent or not visible is null, not findUniqueOrThrow's masked INTERNAL error.
  nullable: true,
  fields: (t) => ({
    databaseId: t.exposeString('id', { description: 'The UUID the REST API uses.' }),
    kind: t.expose('kind', { type: AssetKindEnum }),
    key: t.exposeString('key', { description: 'Natural key, unique per workspace: host:<name>, service:<ip>:<port>/tcp, web:<url>, cert:<sha256>.' }),
    value: t.exposeString('value', { description: 'What a person reads: host name, ip:port, URL or certificate subject.' }),
    data: t.expose('data', { type: 'JSON', description: 'What the scans observed, shape by kind.' }),
    enabled: t.exposeBoolean('enabled', {
      description:
        'Disabled assets stay in the inventory but are not scanned; discovered hosts wait disabled as candidates unless the workspace auto-enables them.',
    }),
    dismissed: t.boolean({
      description: 'Someone said it is not ours: disabled, and never offered as a new candidate again.',
      select: { dismissedAt: true },
      resolve: (asset) => asset.dismissedAt !== null,
      extensions: rowFirst((asset: { dismissedAt?: Date | null }) => (asset.dismissedAt === undefined ? undefined : asset.dismissedAt !== null)),
    }),
    dismissedAt: t.expose('dismissedAt', { type: 'DateTime', nullable: true }),
    // Loaded with the parent query (one more query per page), never per asset.
    discovery: t.relation('discoveries', {
      description: 'Provenance, oldest source first; empty for assets no discovery found.',
      query: { orderBy: [{ firstSeenAt: 'asc' }, { source: 'asc' }] },
      extensions: rowFirst((asset: { discoveries?: unknown[] }) => asset.discoveries),
    }),
    references: t.exposeStringList('references', {
      description: 'Out-of-scope host names this asset pointed at (links, CNAMEs elsewhere), newest last, at most 200.',
    }),
    parent: t.relation('parent', { nullable: true, description: 'The service of a web application or certificate, the host of a service.' }),
    target: t.relation('target', { nullable: true, type: TargetRef, description: 'The target whose scan found it.' }),
    firstSeenAt: t.expose('firstSeenAt', { type: 'DateTime' }),
    lastSeenAt: t.expose('lastSeenAt', { type: 'DateTime' }),
  }),
});

// Counted in the statement that loads the target (a correlated count per row, on asset_target's targetId index).
builder.prismaObjectField('Target', 'assetCount', (t) =>
  t.relationCount('assetLinks', {
    description: 'Assets discovered from this target.',
    extensions: rowFirst((target: { _count?: { assetLinks?: number } }) => target._count?.assetLinks),
  }),
);

type AssetConnectionArgs = {
  kind?: AssetKind | null;
  targetId?: string | number | null;
  search?: string | null;
  enabled?: boolean | null;
  source?: DiscoverySource | null;
  dismissed?: boolean | null;
};

const assetListFilters = (args: AssetConnectionArgs): assets.AssetListFilters => ({
  kind: args.kind ?? undefined,
  targetId: decodeQueryId(args.targetId, TargetRef, 'targetId'),
  search: args.search ?? undefined,
  enabled: args.enabled ?? undefined,
  source: args.source ?? undefined,
  dismissed: args.dismissed ?? undefined,
});

const assetPage = prismaConnectionHelpers(builder, 'Asset', { cursor: 'id' });

// The page and its total in the statement that loads the workspace: the total from the counters REST sums
// where the filters allow (a 100,000-row inventory is not counted row by row on every page), else counted.
builder.prismaObjectField('Workspace', 'assets', (t) =>
  t.connection(
    {
      type: AssetRef,
      description: "The workspace's inventory, most recently seen first.",
      args: {
        kind: t.arg({ type: AssetKindEnum }),
        targetId: t.arg.id(),
        search: t.arg.string({ description: 'Matches the value, case-insensitive.' }),
        enabled: t.arg.boolean(),
        source: t.arg({ type: DiscoverySourceEnum, description: 'Found (at least) by this discovery source.' }),
        dismissed: t.arg.boolean(),
      },
      select: (args, ctx, nestedSelection) => {
        const filters = assetListFilters(args);
        // Marked as the connection's, so workspace(id) may read the page by its statement (connection-page.ts).
        const where = connectionWhere(assets.assetWhere(ctx, filters), filters);
        return {
          assets: { ...assetPage.getQuery(args, ctx, nestedSelection), where, orderBy: [{ lastSeenAt: 'desc' }, { id: 'desc' }] },
          ...assets.assetListTotalSelection(filters, where),
        };
      },
      resolve: (workspace, args, ctx) => {
        const row = workspace as unknown as { assets: never[]; assetCounts?: { count: number }[]; _count?: { assets?: number } };
        return { ...assetPage.resolve(row.assets, args, ctx, workspace), totalCount: assets.assetListTotalOf(row) };
      },
    },
    connectionWithTotal('AssetConnection', 'How many assets match, over every page.'),
    { name: 'AssetEdge' },
  ),
);

builder.queryFields((t) => ({
  asset: t.prismaField({
    type: 'Asset',
    nullable: true,
    authScopes: { signedIn: true },
    args: { id: t.arg.id({ required: true }) },
    resolve: (query, _root, args, ctx) => assets.findVisibleAsset(ctx, decodeQueryId(args.id, AssetRef, 'id'), query),
  }),
}));

const UpdateAssetsPayload = builder.objectRef<{ updated: number; notFound: string[] }>('UpdateAssetsPayload').implement({
  fields: (t) => ({
    updated: t.exposeInt('updated', { description: 'Assets named that you may change: each is now in the state asked for.' }),
    notFound: t.exposeIDList('notFound', { description: 'Ids (as sent) that are not assets of your workspaces: nothing was done to them.' }),
  }),
});

builder.mutationFields((t) => ({
  updateAsset: t.prismaField({
    type: 'Asset',
    errors: {},
    description:
      'Enables, disables or dismisses an asset. dismissed: true disables it for good (discovery never offers it as new again); enabled: true takes a dismissal back. An enabled candidate host is scanned.',
    args: { id: t.arg.id({ required: true }), enabled: t.arg.boolean(), dismissed: t.arg.boolean() },
    resolve: async (_query, _root, args, ctx) => {
      const id = decodeId(args.id, AssetRef, 'id');
      await assets.updateVisibleAsset(ctx, id, { enabled: args.enabled ?? undefined, dismissed: args.dismissed ?? undefined });
      // Not the selection's query: a mutation asking only for `__typename` selects nothing, which Prisma refuses.
      return (await assets.findVisibleAsset(ctx, id, {}))!;
    },
  }),
  updateAssets: t.field({
    type: UpdateAssetsPayload,
    errors: {},
    description: 'updateAsset for up to 1000 assets at once. Ids that are not assets of your workspaces are reported in notFound and never touched.',
    args: { ids: t.arg.idList({ required: true }), enabled: t.arg.boolean(), dismissed: t.arg.boolean() },
    resolve: async (_root, args, ctx) => {
      const ids = decodeIds(args.ids, AssetRef, 'ids');
      const sentById = new Map(ids.map((id, index) => [id.toLowerCase(), String(args.ids[index])]));
      const result = await updateVisibleAssets(ctx, { ids, enabled: args.enabled ?? undefined, dismissed: args.dismissed ?? undefined });
      return { updated: result.updated, notFound: result.notFound.map((id) => sentById.get(id.toLowerCase()) ?? id) };
    },
  }),
}));
