import { builder } from '../../graphql/builder.js';
import type { WorkspaceEvent } from '../../pubsub.js';
import { rechecked } from '../../graphql/live-access.js';
import { can } from '../../auth/authz.js';
import { decodeId, decodeQueryId, nodeIdOf, type NodeTypeName } from '../../graphql/ids.js';
import { UserRef } from '../accounts/graphql.js';
import * as workspaces from './service.js';
import * as members from './members.js';
import * as invitations from './invitations.js';
import { membersOf, viewerRoleAmong, whenReady, workspaceEvents } from './graphql-support.js';
import { WORKSPACE_SORT_FIELDS } from './schemas.js';

const WorkspaceRole = builder.enumType('WorkspaceRole', { values: ['owner', 'member'] as const });

function missingUser(memberId: string): never {
  throw new Error(`Workspace member ${memberId} was handed to GraphQL without its user`);
}

const WorkspaceMemberRef = builder.prismaObject('WorkspaceMember', {
  fields: (t) => ({
    id: t.exposeID('id'),
    role: t.expose('role', { type: WorkspaceRole }),
    // Every member this schema hands out carries its user: `members` (membersOf) and the member mutations. It holds
    // the fields the User type shows (id, name, image), not the whole account row Pothos types it as.
    user: t.field({ type: UserRef, resolve: (member) => ((member as Partial<members.MemberWithUser>).user ?? missingUser(member.id)) as never }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

export const WorkspaceRef = builder.prismaNode('Workspace', {
  id: { field: 'id' },
  description: 'A security workspace: members, targets and discovery settings.',
  // node(id) and every other lookup go through the service's visibility rule.
  findUnique: (id, ctx) => workspaces.visibleWorkspaceWhereUnique(ctx, id),
  // node(id) of a workspace that is absent or not visible is null, not findUniqueOrThrow's masked INTERNAL error.
  nullable: true,
  fields: (t) => ({
    databaseId: t.exposeString('id', { description: 'The UUID the REST API uses.' }),
    name: t.exposeString('name'),
    description: t.exposeString('description', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    archivedAt: t.expose('archivedAt', { type: 'DateTime', nullable: true }),
    isArchived: t.boolean({ resolve: (workspace) => workspace.archivedAt !== null }),
    isAssetsDiscovery: t.exposeBoolean('isAssetsDiscovery'),
    isAutoEnableAssetAfterDiscovered: t.exposeBoolean('isAutoEnableAssetAfterDiscovered'),
    ownerId: t.exposeString('ownerId'),
    owner: t.relation('owner', { type: UserRef }),
    // memberCount, members and role read the members the list's own statement joins in, as the REST list; a row
    // read elsewhere loads them with the request's other rows (graphql-support.ts).
    memberCount: t.int({ resolve: (workspace, _args, ctx) => whenReady(membersOf(ctx, workspace), (members) => members.length) }),
    members: t.field({
      type: [WorkspaceMemberRef],
      description: 'Oldest membership first.',
      resolve: (workspace, _args, ctx) => membersOf(ctx, workspace),
    }),
    role: t.field({
      type: WorkspaceRole,
      description: "The caller's role in this workspace.",
      resolve: (workspace, _args, ctx) => whenReady(membersOf(ctx, workspace), (members) => viewerRoleAmong(ctx, members)),
    }),
    viewerCanManage: t.boolean({
      description: 'Whether the caller may change settings, members and keys.',
      resolve: (workspace, _args, ctx) => can(ctx, 'workspace:update', { workspaceId: workspace.id }),
    }),
  }),
});

const WorkspaceSortField = builder.enumType('WorkspaceSortField', { values: WORKSPACE_SORT_FIELDS });
const SortDirection = builder.enumType('SortDirection', { values: ['ASC', 'DESC'] as const });
const WorkspaceOrder = builder.inputType('WorkspaceOrder', {
  fields: (t) => ({
    field: t.field({ type: WorkspaceSortField, required: true }),
    direction: t.field({ type: SortDirection, required: true }),
  }),
});

const CreateWorkspaceInput = builder.inputType('CreateWorkspaceInput', {
  fields: (t) => ({
    name: t.string({ required: true }),
    description: t.string(),
    isAssetsDiscovery: t.boolean(),
    isAutoEnableAssetAfterDiscovered: t.boolean(),
  }),
});

const UpdateWorkspaceInput = builder.inputType('UpdateWorkspaceInput', {
  fields: (t) => ({
    name: t.string(),
    description: t.string(),
    isAssetsDiscovery: t.boolean(),
    isAutoEnableAssetAfterDiscovered: t.boolean(),
  }),
});

/** GraphQL's "absent" is undefined and "explicit null" is null; services take undefined for absent. */
function withoutNulls<T extends Record<string, unknown>>(input: T, nullable: string[] = []) {
  return Object.fromEntries(Object.entries(input).filter(([key, value]) => value !== undefined && (value !== null || nullable.includes(key))));
}

/** The total a workspace page's statement read, by the connection field's args object (one per execution). */
const pageTotals = new WeakMap<object, number>();

builder.queryFields((t) => ({
  workspaces: t.prismaConnection(
    {
      type: 'Workspace',
      cursor: 'id',
      authScopes: { signedIn: true },
      description: 'The workspaces the caller belongs to.',
      args: {
        search: t.arg.string({ description: 'Matches name and description, case-insensitive.' }),
        isArchived: t.arg.boolean({ description: 'Absent lists both.' }),
        orderBy: t.arg({ type: WorkspaceOrder }),
      },
      // The page's statement may have counted the list already (see findWorkspacesForConnection); Pothos calls
      // this after the page resolved, with the same args object.
      totalCount: (_parent, args, ctx) =>
        pageTotals.get(args) ?? workspaces.countWorkspaces(ctx, { search: args.search ?? undefined, isArchived: args.isArchived ?? undefined }),
      resolve: async (query, _parent, args, ctx) => {
        const { rows, total } = await workspaces.findWorkspacesForConnection(
          ctx,
          { search: args.search ?? undefined, isArchived: args.isArchived ?? undefined },
          { field: args.orderBy?.field ?? 'createdAt', direction: args.orderBy?.direction === 'ASC' ? 'asc' : 'desc' },
          query,
        );
        if (total !== undefined) pageTotals.set(args, total);
        return rows;
      },
    },
    { name: 'WorkspaceConnection' },
    { name: 'WorkspaceEdge' },
  ),
  workspace: t.prismaField({
    type: 'Workspace',
    nullable: true,
    authScopes: { signedIn: true },
    args: { id: t.arg.id({ required: true }) },
    resolve: (query, _root, args, ctx) => workspaces.findVisibleWorkspace(ctx, decodeQueryId(args.id, WorkspaceRef, 'id'), query),
  }),
}));

/** Mutations return the workspace re-read through the Prisma plugin so nested selections resolve. */
function reload(ctx: Parameters<typeof workspaces.findVisibleWorkspace>[0], id: string) {
  return workspaces.findVisibleWorkspace(ctx, id, {}).then((row) => row!);
}

builder.mutationFields((t) => ({
  createWorkspace: t.field({
    type: WorkspaceRef,
    errors: {},
    args: { input: t.arg({ type: CreateWorkspaceInput, required: true }) },
    resolve: async (_root, { input }, ctx) => reload(ctx, (await workspaces.createWorkspace(ctx, withoutNulls(input) as never)).id),
  }),
  updateWorkspace: t.field({
    type: WorkspaceRef,
    errors: {},
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: UpdateWorkspaceInput, required: true }) },
    resolve: async (_root, { id, input }, ctx) =>
      reload(ctx, (await workspaces.updateWorkspace(ctx, decodeId(id, WorkspaceRef, 'id'), withoutNulls(input, ['description']) as never)).id),
  }),
  setWorkspaceArchived: t.field({
    type: WorkspaceRef,
    errors: {},
    args: { id: t.arg.id({ required: true }), isArchived: t.arg.boolean({ required: true }) },
    resolve: async (_root, { id, isArchived }, ctx) =>
      reload(ctx, (await workspaces.setWorkspaceArchived(ctx, decodeId(id, WorkspaceRef, 'id'), { isArchived })).id),
  }),
  deleteWorkspace: t.field({
    type: 'ID',
    errors: {},
    description: 'Deletes the workspace and everything in it; returns its id.',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => {
      const id = decodeId(args.id, WorkspaceRef, 'id');
      await workspaces.deleteWorkspace(ctx, id);
      return id;
    },
  }),
  addWorkspaceMember: t.prismaField({
    type: 'WorkspaceMember',
    errors: {},
    args: {
      workspaceId: t.arg.id({ required: true }),
      email: t.arg.string({ required: true }),
      role: t.arg({ type: WorkspaceRole }),
    },
    resolve: async (_query, _root, args, ctx) => {
      const workspaceId = decodeId(args.workspaceId, WorkspaceRef, 'workspaceId');
      const member = await members.addMember(ctx, workspaceId, { email: args.email, role: args.role ?? undefined });
      return { ...member, workspaceId, userId: member.user.id } as never;
    },
  }),
  updateWorkspaceMemberRole: t.prismaField({
    type: 'WorkspaceMember',
    errors: {},
    args: {
      workspaceId: t.arg.id({ required: true }),
      memberId: t.arg.id({ required: true }),
      role: t.arg({ type: WorkspaceRole, required: true }),
    },
    resolve: async (_query, _root, args, ctx) => {
      const workspaceId = decodeId(args.workspaceId, WorkspaceRef, 'workspaceId');
      const member = await members.updateMemberRole(ctx, workspaceId, decodeId(args.memberId, null, 'memberId'), { role: args.role });
      return { ...member, workspaceId, userId: member.user.id } as never;
    },
  }),
  removeWorkspaceMember: t.field({
    type: 'ID',
    errors: {},
    args: { workspaceId: t.arg.id({ required: true }), memberId: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) =>
      (await members.removeMember(ctx, decodeId(args.workspaceId, WorkspaceRef, 'workspaceId'), decodeId(args.memberId, null, 'memberId'))).id,
  }),
}));

/** Events name their entity by the id GraphQL gives it: the global id of a node, the UUID of anything else. */
const NODE_OF_EVENT: Record<string, NodeTypeName> = { workspace: 'Workspace', target: 'Target', scan: 'Scan', asset: 'Asset', finding: 'Finding' };

export const WorkspaceEventRef = builder.objectRef<WorkspaceEvent>('WorkspaceEvent').implement({
  description: 'Something changed in a workspace; re-read what you show.',
  fields: (t) => ({
    type: t.exposeString('type'),
    workspaceId: t.string({ description: "The workspace's global id.", resolve: (event) => nodeIdOf('Workspace', event.workspaceId) }),
    entityId: t.string({
      description:
        'What changed, by its GraphQL id: the global id of a workspace, target, scan, asset or finding (for node(id:)); the UUID of a member, template, tool, key or MCP server.',
      resolve: (event) => {
        const node = NODE_OF_EVENT[event.type.split('.')[0]!];
        return node ? nodeIdOf(node, event.entityId) : event.entityId;
      },
    }),
    at: t.exposeString('at'),
  }),
});

builder.subscriptionFields((t) => ({
  workspaceEvents: t.field({
    type: WorkspaceEventRef,
    description: 'Events of one workspace, for dashboards. Membership is checked when subscribing and again before each event.',
    args: { workspaceId: t.arg.id({ required: true }) },
    subscribe: (_root, args, ctx) => {
      const workspaceId = decodeQueryId(args.workspaceId, WorkspaceRef, 'workspaceId');
      return rechecked(ctx, workspaceEvents(ctx, workspaceId), () => workspaces.getWorkspace(ctx, workspaceId));
    },
    resolve: (event) => event,
  }),
}));

const WorkspaceInvitationRef = builder.objectRef<invitations.WorkspaceInvitationResponse>('WorkspaceInvitation').implement({
  description: 'A pending invitation of an e-mail without an account: it may sign up, and joins the workspace with this role.',
  fields: (t) => ({
    id: t.exposeID('id'),
    email: t.exposeString('email'),
    role: t.field({ type: WorkspaceRole, resolve: (invitation) => invitation.role }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

builder.mutationFields((t) => ({
  inviteWorkspaceMember: t.field({
    type: WorkspaceInvitationRef,
    errors: {},
    description: 'Invites an e-mail that has no account yet (owners). Re-inviting refreshes role and expiry.',
    args: { workspaceId: t.arg.id({ required: true }), email: t.arg.string({ required: true }), role: t.arg({ type: WorkspaceRole }) },
    resolve: (_root, args, ctx) =>
      invitations.inviteMember(ctx, decodeId(args.workspaceId, WorkspaceRef, 'workspaceId'), { email: args.email, role: args.role ?? undefined }),
  }),
  revokeWorkspaceInvitation: t.field({
    type: 'ID',
    errors: {},
    args: { workspaceId: t.arg.id({ required: true }), invitationId: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) =>
      (await invitations.revokeInvitation(ctx, decodeId(args.workspaceId, WorkspaceRef, 'workspaceId'), decodeId(args.invitationId, null, 'invitationId'))).id,
  }),
}));
