import { builder } from '../../graphql/builder.js';
import { decodeQueryId, nodeIdOf, type NodeTypeName } from '../../graphql/ids.js';
import { ValidationError } from '../../errors.js';
import { WorkspaceEventRef } from '../workspaces/graphql.js';
import { AssetRef } from '../assets/graphql.js';
import { ScanRef } from '../scans/graphql.js';
import { TargetRef } from '../targets/graphql.js';
import { getScanDiff, listChanges, type DiffAsset, type DiffChangedAsset, type DiffFinding, type ScanDiff } from './service.js';
import type { FieldChange } from './types.js';

/** A change as the connection and the subscription carry it (`at` is a Date from the database, a string from pubsub). */
export interface ChangeShape {
  id: string;
  type: string;
  at: Date | string;
  assetId: string | null;
  findingId: string | null;
  scanId: string | null;
  targetId: string | null;
  data: unknown;
}

const globalOrNull = (type: NodeTypeName, id: string | null) => (id ? nodeIdOf(type, id) : null);

export const ChangeEventRef = builder.objectRef<ChangeShape>('ChangeEvent').implement({
  description: 'One change to the attack surface, from the change feed (stored in the same transaction as the change).',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The UUID of the change.' }),
    type: t.exposeString('type', {
      description:
        'asset.discovered, asset.changed, asset.gone, finding.opened, finding.fixed, finding.reopened, finding.dismissed, scan.completed or scan.failed.',
    }),
    at: t.field({ type: 'DateTime', resolve: (change) => new Date(change.at) }),
    assetId: t.string({ nullable: true, description: "The asset's global id.", resolve: (change) => globalOrNull('Asset', change.assetId) }),
    findingId: t.string({ nullable: true, description: "The finding's global id.", resolve: (change) => globalOrNull('Finding', change.findingId) }),
    scanId: t.string({ nullable: true, description: "The scan's global id.", resolve: (change) => globalOrNull('Scan', change.scanId) }),
    targetId: t.string({ nullable: true, description: "The target's global id.", resolve: (change) => globalOrNull('Target', change.targetId) }),
    data: t.field({
      type: 'JSON',
      description: 'Typed per type, as on REST (GET /api/v1/api/changes): e.g. asset.changed {kind, key, value, changes: [{field, before, after}]}.',
      resolve: (change) => change.data as never,
    }),
  }),
});

builder.prismaObjectField('Workspace', 'changes', (t) =>
  t.connection(
    {
      type: ChangeEventRef,
      description: "The workspace's change feed, newest first. Forward paging only (first/after).",
      args: {
        types: t.arg.stringList({ description: 'Only these types.' }),
        since: t.arg({ type: 'DateTime', description: 'Inclusive.' }),
        until: t.arg({ type: 'DateTime', description: 'Exclusive.' }),
        assetId: t.arg.id(),
        targetId: t.arg.id(),
        scanId: t.arg.id(),
      },
      resolve: async (workspace, args, ctx) => {
        if (args.last != null || args.before != null)
          throw new ValidationError('The change feed pages forward only: use first and after', [
            { field: 'last', message: 'is not supported here: use first and after' },
          ]);
        const page = await listChanges(ctx, workspace.id, {
          types: args.types ?? undefined,
          since: args.since ?? undefined,
          until: args.until ?? undefined,
          assetId: args.assetId == null ? undefined : decodeQueryId(args.assetId, AssetRef, 'assetId'),
          targetId: args.targetId == null ? undefined : decodeQueryId(args.targetId, TargetRef, 'targetId'),
          scanId: args.scanId == null ? undefined : decodeQueryId(args.scanId, ScanRef, 'scanId'),
          cursor: args.after ?? undefined,
          limit: args.first ?? undefined,
        });
        // A change's cursor is the page cursor after it: every edge can be resumed from.
        const edges = page.data.map((change) => ({ node: change, cursor: Buffer.from(`${change.at.toISOString()}|${change.id}`).toString('base64url') }));
        return {
          edges,
          pageInfo: {
            hasNextPage: page.nextCursor !== null,
            hasPreviousPage: args.after != null,
            startCursor: edges[0]?.cursor ?? null,
            endCursor: edges[edges.length - 1]?.cursor ?? null,
          },
        };
      },
    },
    { name: 'ChangeEventConnection' },
    { name: 'ChangeEventEdge' },
  ),
);

const FieldChangeRef = builder.objectRef<FieldChange>('AssetFieldChange').implement({
  fields: (t) => ({
    field: t.exposeString('field'),
    before: t.field({ type: 'JSON', nullable: true, resolve: (change) => change.before as never }),
    after: t.field({ type: 'JSON', nullable: true, resolve: (change) => change.after as never }),
  }),
});

const DiffAssetRef = builder.objectRef<DiffAsset>('ScanDiffAsset').implement({
  fields: (t) => ({
    changeId: t.exposeID('changeId'),
    assetId: t.string({ nullable: true, description: "The asset's global id.", resolve: (item) => globalOrNull('Asset', item.assetId) }),
    kind: t.exposeString('kind'),
    key: t.exposeString('key'),
    value: t.exposeString('value'),
    reappeared: t.exposeBoolean('reappeared'),
  }),
});

const DiffChangedAssetRef = builder.objectRef<DiffChangedAsset>('ScanDiffChangedAsset').implement({
  fields: (t) => ({
    changeId: t.exposeID('changeId'),
    assetId: t.string({ nullable: true, description: "The asset's global id.", resolve: (item) => globalOrNull('Asset', item.assetId) }),
    kind: t.exposeString('kind'),
    key: t.exposeString('key'),
    value: t.exposeString('value'),
    changes: t.field({ type: [FieldChangeRef], resolve: (item) => item.changes }),
  }),
});

const DiffFindingRef = builder.objectRef<DiffFinding>('ScanDiffFinding').implement({
  fields: (t) => ({
    changeId: t.exposeID('changeId'),
    findingId: t.string({ nullable: true, description: "The finding's global id.", resolve: (item) => globalOrNull('Finding', item.findingId) }),
    assetId: t.string({ nullable: true, description: "The asset's global id.", resolve: (item) => globalOrNull('Asset', item.assetId) }),
    name: t.exposeString('name'),
    severity: t.exposeString('severity'),
    checkId: t.exposeString('checkId'),
    reopened: t.exposeBoolean('reopened'),
  }),
});

const DiffCountsRef = builder.objectRef<ScanDiff['counts']>('ScanDiffCounts').implement({
  fields: (t) => ({
    newAssets: t.exposeInt('newAssets'),
    goneAssets: t.exposeInt('goneAssets'),
    changedAssets: t.exposeInt('changedAssets'),
    newFindings: t.exposeInt('newFindings'),
    fixedFindings: t.exposeInt('fixedFindings'),
  }),
});

const ScanDiffRef = builder.objectRef<ScanDiff>('ScanDiff').implement({
  description: 'What a scan changed against the previous completed scan of its target, from the change events it wrote.',
  fields: (t) => ({
    previousScanId: t.string({
      nullable: true,
      description: "The previous completed scan's global id.",
      resolve: (diff) => globalOrNull('Scan', diff.previousScanId),
    }),
    newAssets: t.field({ type: [DiffAssetRef], resolve: (diff) => diff.newAssets }),
    goneAssets: t.field({ type: [DiffAssetRef], resolve: (diff) => diff.goneAssets }),
    changedAssets: t.field({ type: [DiffChangedAssetRef], resolve: (diff) => diff.changedAssets }),
    newFindings: t.field({ type: [DiffFindingRef], resolve: (diff) => diff.newFindings }),
    fixedFindings: t.field({ type: [DiffFindingRef], resolve: (diff) => diff.fixedFindings }),
    counts: t.field({ type: DiffCountsRef, resolve: (diff) => diff.counts }),
    truncated: t.exposeBoolean('truncated', { description: 'A list holds only its first 1000 items (the counts are complete).' }),
  }),
});

builder.prismaObjectField('Scan', 'diff', (t) =>
  t.field({
    type: ScanDiffRef,
    description: 'What this scan changed: new, gone and changed assets, new and fixed findings.',
    select: { id: true },
    resolve: (scan, _args, ctx) => getScanDiff(ctx, scan.id),
  }),
);

builder.objectField(WorkspaceEventRef, 'change', (t) =>
  t.field({
    type: ChangeEventRef,
    nullable: true,
    description: 'The stored change, when the event is one of the change feed (the same row as Workspace.changes); null for other events.',
    resolve: (event) => event.change ?? null,
  }),
);
