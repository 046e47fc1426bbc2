import { builder } from '../../graphql/builder.js';
import { decodeQueryId } from '../../graphql/ids.js';
import { TargetRef } from '../targets/graphql.js';
import * as assets from './service.js';
import { ASSET_KINDS } from './schemas.js';

export const AssetKindEnum = builder.enumType('AssetKind', { values: ASSET_KINDS });

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
    enabled: t.exposeBoolean('enabled', { description: 'Disabled assets stay in the inventory but are not scanned.' }),
    parent: t.relation('parent', { nullable: true, description: 'The service of a web application or certificate, the host of a service.' }),
    target: t.relation('target', { nullable: true, type: TargetRef, description: 'The target whose scan found it.' }),
    firstSeenAt: t.expose('firstSeenAt', { type: 'DateTime' }),
    lastSeenAt: t.expose('lastSeenAt', { type: 'DateTime' }),
  }),
});

builder.prismaObjectField('Workspace', 'assets', (t) =>
  t.relatedConnection(
    'assets',
    {
      cursor: 'id',
      totalCount: true,
      description: "The workspace's inventory, most recently seen first.",
      args: {
        kind: t.arg({ type: AssetKindEnum }),
        targetId: t.arg.id(),
        search: t.arg.string({ description: 'Matches the value, case-insensitive.' }),
        enabled: t.arg.boolean(),
      },
      query: (args, ctx) => ({
        where: assets.assetWhere(ctx, {
          kind: args.kind ?? undefined,
          targetId: decodeQueryId(args.targetId, TargetRef, 'targetId'),
          search: args.search ?? undefined,
          enabled: args.enabled ?? undefined,
        }),
        orderBy: [{ lastSeenAt: 'desc' }, { id: 'desc' }],
      }),
    },
    { name: 'AssetConnection' },
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
