import { builder } from '../../graphql/builder.js';
import { decodeId, decodeQueryId } from '../../graphql/ids.js';
import DataLoader from 'dataloader';
import { createContextCache } from '@pothos/core';
import type { ServiceContext } from '../../context.js';
import { WorkspaceRef } from '../workspaces/graphql.js';
import type { WorkspaceSource } from '../workspaces/graphql-support.js';
import * as targets from './service.js';
import { TARGET_TYPES } from './schemas.js';
import { connectionWhere } from '../../graphql/relation-page-query.js';

export const TargetTypeEnum = builder.enumType('TargetType', { values: TARGET_TYPES });

export const TargetRef = builder.prismaNode('Target', {
  id: { field: 'id' },
  description: 'Something a workspace asks us to look at: a domain, an IP address, a CIDR range or a URL.',
  // node(id), target(id) and every nested lookup go through the service's visibility rule.
  findUnique: (id, ctx) => targets.visibleTargetWhereUnique(ctx, id),
  // node(id) of one that is absent or not visible is null, not findUniqueOrThrow's masked INTERNAL error.
  nullable: true,
  fields: (t) => ({
    databaseId: t.exposeString('id', { description: 'The UUID the REST API uses.' }),
    value: t.exposeString('value', { description: 'Normalised: lower-case host, canonical IP or network, URL without credentials or fragment.' }),
    type: t.expose('type', { type: TargetTypeEnum }),
    lastScannedAt: t.expose('lastScannedAt', { type: 'DateTime', nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    workspace: t.relation('workspace'),
  }),
});

const targetCountLoaders = createContextCache((ctx: ServiceContext) => new DataLoader<string, number>((ids) => targets.countTargetsOfWorkspaces(ctx, ids)));

// Counted in the workspace list's statement (a correlated count per row, on workspaceId's index): a number rather
// than a promise per row. A workspace read elsewhere is counted with the request's other rows, in one statement
// (see workspaces/graphql-support.ts for why this is not the Prisma plugin's relationCount).
builder.prismaObjectField('Workspace', 'targetCount', (t) =>
  t.int({
    resolve: (workspace, _args, ctx) => (workspace as WorkspaceSource)._count?.targets ?? targetCountLoaders(ctx).load(workspace.id),
  }),
);

builder.prismaObjectField('Workspace', 'targets', (t) =>
  t.relatedConnection(
    'targets',
    {
      cursor: 'id',
      totalCount: true,
      description: "The workspace's targets, newest first.",
      args: {
        search: t.arg.string({ description: 'Matches the value, case-insensitive.' }),
        type: t.arg({ type: TargetTypeEnum }),
      },
      query: (args, ctx) => {
        const filters = { search: args.search ?? undefined, type: args.type ?? undefined };
        // Marked as the connection's, so workspace(id) may read the page by its statement (connection-page.ts).
        return { where: connectionWhere(targets.targetWhere(ctx, filters), filters), orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] };
      },
    },
    { name: 'TargetConnection' },
    { name: 'TargetEdge' },
  ),
);

builder.queryFields((t) => ({
  target: t.prismaField({
    type: 'Target',
    nullable: true,
    authScopes: { signedIn: true },
    args: { id: t.arg.id({ required: true }) },
    resolve: (query, _root, args, ctx) => targets.findVisibleTarget(ctx, decodeQueryId(args.id, TargetRef, 'id'), query),
  }),
}));

const AddTargetStatus = builder.enumType('AddTargetStatus', { values: ['created', 'duplicate', 'invalid'] as const });

const AddTargetResult = builder.objectRef<targets.BulkTargetResult>('AddTargetResult').implement({
  description: 'What became of one value of addTargets.',
  fields: (t) => ({
    value: t.exposeString('value', { description: 'The value as sent.' }),
    status: t.expose('status', { type: AddTargetStatus }),
    target: t.expose('target', { type: TargetRef, nullable: true, description: 'The created target, or the existing one for a duplicate.' }),
    error: t.exposeString('error', { nullable: true, description: 'Why an invalid value was refused.' }),
  }),
});

const AddTargetsPayload = builder.objectRef<targets.BulkCreateTargetsResult>('AddTargetsPayload').implement({
  fields: (t) => ({
    results: t.expose('results', { type: [AddTargetResult] }),
    created: t.int({ resolve: (payload) => payload.summary.created }),
    duplicate: t.int({ resolve: (payload) => payload.summary.duplicate }),
    invalid: t.int({ resolve: (payload) => payload.summary.invalid }),
  }),
});

builder.mutationFields((t) => ({
  addTarget: t.field({
    type: TargetRef,
    errors: {},
    description: 'Adds one target; a value the workspace already has is a ConflictError.',
    args: { workspaceId: t.arg.id({ required: true }), value: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => targets.createTarget(ctx, decodeId(args.workspaceId, WorkspaceRef, 'workspaceId'), { value: args.value }),
  }),
  addTargets: t.field({
    type: AddTargetsPayload,
    errors: {},
    description: 'Adds up to 500 targets; each value reports created, duplicate or invalid.',
    args: { workspaceId: t.arg.id({ required: true }), values: t.arg.stringList({ required: true }) },
    resolve: (_root, args, ctx) =>
      targets.createTargets(ctx, decodeId(args.workspaceId, WorkspaceRef, 'workspaceId'), { targets: args.values.map((value) => ({ value })) }),
  }),
  deleteTarget: t.field({
    type: 'ID',
    errors: {},
    description: 'Deletes the target and its scans; returns its database id.',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => (await targets.deleteVisibleTarget(ctx, decodeId(args.id, TargetRef, 'id'))).id,
  }),
}));
