import { builder } from '../../graphql/builder.js';
import { MUTATION_ERRORS } from '../../graphql/errors.js';
import { can } from '../../auth/authz.js';
import { UserRef } from '../accounts/graphql.js';
import * as workspaces from './service.js';
import * as members from './members.js';
import * as invitations from './invitations.js';
import { memberCountsOf, rolesInWorkspaces, targetCountsOf, workspaceEvents } from './graphql-support.js';
import { WORKSPACE_SORT_FIELDS } from './schemas.js';

const WorkspaceRole = builder.enumType('WorkspaceRole', { values: ['owner', 'member'] as const });

builder.prismaObject('WorkspaceMember', {
  fields: (t) => ({
    id: t.exposeID('id'),
    role: t.expose('role', { type: WorkspaceRole }),
    user: t.relation('user', { type: UserRef }),
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
    isArchived: t.boolean({ select: { archivedAt: true }, resolve: (workspace) => workspace.archivedAt !== null }),
    isAssetsDiscovery: t.exposeBoolean('isAssetsDiscovery'),
    isAutoEnableAssetAfterDiscovered: t.exposeBoolean('isAutoEnableAssetAfterDiscovered'),
    ownerId: t.exposeString('ownerId'),
    owner: t.relation('owner', { type: UserRef }),
    targetCount: t.loadable({ type: 'Int', load: (ids: string[], ctx) => targetCountsOf(ctx, ids), resolve: (workspace) => workspace.id }),
    memberCount: t.loadable({ type: 'Int', load: (ids: string[], ctx) => memberCountsOf(ctx, ids), resolve: (workspace) => workspace.id }),
    members: t.relation('members', { query: { orderBy: { createdAt: 'asc' } } }),
    role: t.loadable({
      type: WorkspaceRole,
      description: "The caller's role in this workspace.",
      load: (ids: string[], ctx) => rolesInWorkspaces(ctx, ids),
      resolve: (workspace) => workspace.id,
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
      totalCount: (_parent, args, ctx) => workspaces.countWorkspaces(ctx, { search: args.search ?? undefined, isArchived: args.isArchived ?? undefined }),
      resolve: (query, _parent, args, ctx) =>
        workspaces.findWorkspacesForConnection(
          ctx,
          { search: args.search ?? undefined, isArchived: args.isArchived ?? undefined },
          { field: args.orderBy?.field ?? 'createdAt', direction: args.orderBy?.direction === 'ASC' ? 'asc' : 'desc' },
          query,
        ),
    },
    { name: 'WorkspaceConnection' },
    { name: 'WorkspaceEdge' },
  ),
  workspace: t.prismaField({
    type: 'Workspace',
    nullable: true,
    authScopes: { signedIn: true },
    args: { id: t.arg.globalID({ required: true, for: [WorkspaceRef] }) },
    resolve: (query, _root, args, ctx) => workspaces.findVisibleWorkspace(ctx, args.id.id, query),
  }),
}));

/** Mutations return the workspace re-read through the Prisma plugin so nested selections resolve. */
function reload(ctx: Parameters<typeof workspaces.findVisibleWorkspace>[0], id: string) {
  return workspaces.findVisibleWorkspace(ctx, id, {}).then((row) => row!);
}

builder.mutationFields((t) => ({
  createWorkspace: t.field({
    type: WorkspaceRef,
    errors: { types: MUTATION_ERRORS },
    args: { input: t.arg({ type: CreateWorkspaceInput, required: true }) },
    resolve: async (_root, { input }, ctx) => reload(ctx, (await workspaces.createWorkspace(ctx, withoutNulls(input) as never)).id),
  }),
  updateWorkspace: t.field({
    type: WorkspaceRef,
    errors: { types: MUTATION_ERRORS },
    args: { id: t.arg.globalID({ required: true, for: [WorkspaceRef] }), input: t.arg({ type: UpdateWorkspaceInput, required: true }) },
    resolve: async (_root, { id, input }, ctx) => reload(ctx, (await workspaces.updateWorkspace(ctx, id.id, withoutNulls(input, ['description']) as never)).id),
  }),
  setWorkspaceArchived: t.field({
    type: WorkspaceRef,
    errors: { types: MUTATION_ERRORS },
    args: { id: t.arg.globalID({ required: true, for: [WorkspaceRef] }), isArchived: t.arg.boolean({ required: true }) },
    resolve: async (_root, { id, isArchived }, ctx) => reload(ctx, (await workspaces.setWorkspaceArchived(ctx, id.id, { isArchived })).id),
  }),
  deleteWorkspace: t.field({
    type: 'ID',
    errors: { types: MUTATION_ERRORS },
    description: 'Deletes the workspace and everything in it; returns its id.',
    args: { id: t.arg.globalID({ required: true, for: [WorkspaceRef] }) },
    resolve: async (_root, { id }, ctx) => {
      await workspaces.deleteWorkspace(ctx, id.id);
      return id.id;
    },
  }),
  addWorkspaceMember: t.prismaField({
    type: 'WorkspaceMember',
    errors: { types: MUTATION_ERRORS },
    args: {
      workspaceId: t.arg.globalID({ required: true, for: [WorkspaceRef] }),
      email: t.arg.string({ required: true }),
      role: t.arg({ type: WorkspaceRole }),
    },
    resolve: async (_query, _root, args, ctx) => {
      const member = await members.addMember(ctx, args.workspaceId.id, { email: args.email, role: args.role ?? undefined });
      return { ...member, workspaceId: args.workspaceId.id, userId: member.user.id } as never;
    },
  }),
  updateWorkspaceMemberRole: t.prismaField({
    type: 'WorkspaceMember',
    errors: { types: MUTATION_ERRORS },
    args: {
      workspaceId: t.arg.globalID({ required: true, for: [WorkspaceRef] }),
      memberId: t.arg.id({ required: true }),
      role: t.arg({ type: WorkspaceRole, required: true }),
    },
    resolve: async (_query, _root, args, ctx) => {
      const member = await members.updateMemberRole(ctx, args.workspaceId.id, String(args.memberId), { role: args.role });
      return { ...member, workspaceId: args.workspaceId.id, userId: member.user.id } as never;
    },
  }),
  removeWorkspaceMember: t.field({
    type: 'ID',
    errors: { types: MUTATION_ERRORS },
    args: { workspaceId: t.arg.globalID({ required: true, for: [WorkspaceRef] }), memberId: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => (await members.removeMember(ctx, args.workspaceId.id, String(args.memberId))).id,
  }),
}));

const WorkspaceEventRef = builder.objectRef<{ type: string; workspaceId: string; entityId: string; at: string }>('WorkspaceEvent').implement({
  description: 'Something changed in a workspace; re-read what you show.',
  fields: (t) => ({
    type: t.exposeString('type'),
    workspaceId: t.exposeString('workspaceId'),
    entityId: t.exposeString('entityId'),
    at: t.exposeString('at'),
  }),
});

builder.subscriptionFields((t) => ({
  workspaceEvents: t.field({
    type: WorkspaceEventRef,
    description: 'Events of one workspace, for dashboards. Membership is checked when subscribing.',
    args: { workspaceId: t.arg.globalID({ required: true, for: [WorkspaceRef] }) },
    subscribe: (_root, args, ctx) => workspaceEvents(ctx, args.workspaceId.id),
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
    errors: { types: MUTATION_ERRORS },
    description: 'Invites an e-mail that has no account yet (owners). Re-inviting refreshes role and expiry.',
    args: { workspaceId: t.arg.globalID({ required: true, for: [WorkspaceRef] }), email: t.arg.string({ required: true }), role: t.arg({ type: WorkspaceRole }) },
    resolve: (_root, args, ctx) => invitations.inviteMember(ctx, args.workspaceId.id, { email: args.email, role: args.role ?? undefined }),
  }),
  revokeWorkspaceInvitation: t.field({
    type: 'ID',
    errors: { types: MUTATION_ERRORS },
    args: { workspaceId: t.arg.globalID({ required: true, for: [WorkspaceRef] }), invitationId: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => (await invitations.revokeInvitation(ctx, args.workspaceId.id, String(args.invitationId))).id,
  }),
}));
