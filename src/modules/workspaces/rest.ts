import { z } from 'zod';
import { router } from '../../rest/trpc.js';
import { requestHeaders, signedInProcedure, workspaceProcedure } from '../../rest/procedures.js';
import { dateTime, idOutput, idParam, pageSchema, uuidParam } from '../../rest/schemas.js';
import * as workspaces from './service.js';
import * as members from './members.js';
import { invitationProcedures } from './invitations-rest.js';
import { discoverySettingsProcedures } from './discovery-settings-rest.js';
import { templateSettingsProcedures } from './template-settings-rest.js';
import { addMemberInput, createWorkspaceInput, listWorkspacesInput, setArchivedInput, updateMemberInput, updateWorkspaceInput } from './schemas.js';

const memberSchema = z
  .object({
    id: z.string(),
    role: z.enum(['owner', 'member']),
    user: z.object({ id: z.string(), name: z.string(), image: z.string().nullable() }),
    createdAt: dateTime,
    updatedAt: dateTime,
  })
  .meta({ id: 'WorkspaceMember' });

const workspaceSchema = z
  .object({
    id: z.string(),
    nodeId: z.string().meta({ description: 'Its GraphQL global id (`id` there), for node(id:) and the subscriptions; id arguments take either.' }),
    name: z.string(),
    description: z.string().nullable(),
    createdAt: dateTime,
    updatedAt: dateTime,
    archivedAt: dateTime.nullable(),
    isAssetsDiscovery: z.boolean(),
    isAutoEnableAssetAfterDiscovered: z.boolean(),
    ownerId: z.string(),
    targetCount: z.number().int(),
    memberCount: z.number().int(),
    role: z.enum(['owner', 'member']),
    workspaceMembers: z.array(memberSchema),
  })
  .meta({ id: 'WorkspaceResponse' });

const tags = ['Workspaces'];

export const workspacesRest = router({
  list: signedInProcedure
    .meta({ openapi: { method: 'GET', path: '/api/workspaces', tags, summary: 'List the workspaces the caller belongs to' } })
    .input(listWorkspacesInput)
    .output(pageSchema(workspaceSchema))
    .query(({ ctx, input }) => workspaces.listWorkspaces(ctx.svc, input)),

  create: signedInProcedure
    .meta({ successStatus: 201, openapi: { method: 'POST', path: '/api/workspaces', tags, summary: 'Create a workspace (the caller becomes its owner)' } })
    .input(createWorkspaceInput)
    .output(workspaceSchema)
    .mutation(({ ctx, input }) => workspaces.createWorkspace(ctx.svc, input)),

  listMembers: workspaceProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/workspaces/members', tags, summary: 'List the members of the workspace named by X-Workspace-Id', requestHeaders },
    })
    .input(z.object({}).strict().optional())
    .output(z.array(memberSchema))
    .query(({ ctx }) => members.listMembers(ctx.svc, ctx.workspaceId)),

  updateMember: workspaceProcedure
    .meta({
      errors: { 409: 'The workspace would be left without an owner' },
      openapi: { method: 'PATCH', path: '/api/workspaces/members/{memberId}', tags, summary: "Change a member's role", requestHeaders },
    })
    .input(updateMemberInput.extend({ memberId: uuidParam }))
    .output(memberSchema)
    .mutation(({ ctx, input: { memberId, ...patch } }) => members.updateMemberRole(ctx.svc, ctx.workspaceId, memberId, patch)),

  removeMember: workspaceProcedure
    .meta({
      errors: { 409: 'The workspace would be left without an owner' },
      openapi: { method: 'DELETE', path: '/api/workspaces/members/{memberId}', tags, summary: 'Remove a member (or leave)', requestHeaders },
    })
    .input(z.object({ memberId: uuidParam }).strict())
    .output(idOutput)
    .mutation(({ ctx, input }) => members.removeMember(ctx.svc, ctx.workspaceId, input.memberId)),

  get: signedInProcedure
    .meta({ openapi: { method: 'GET', path: '/api/workspaces/{id}', tags, summary: 'Get one workspace' } })
    .input(idParam)
    .output(workspaceSchema)
    .query(({ ctx, input }) => workspaces.getWorkspace(ctx.svc, input.id)),

  update: signedInProcedure
    .meta({ openapi: { method: 'PATCH', path: '/api/workspaces/{id}', tags, summary: 'Update name, description and discovery settings' } })
    .input(updateWorkspaceInput.extend({ id: uuidParam }))
    .output(workspaceSchema)
    .mutation(({ ctx, input: { id, ...patch } }) => workspaces.updateWorkspace(ctx.svc, id, patch)),

  delete: signedInProcedure
    .meta({ openapi: { method: 'DELETE', path: '/api/workspaces/{id}', tags, summary: 'Delete a workspace and everything in it' } })
    .input(idParam)
    .output(idOutput)
    .mutation(({ ctx, input }) => workspaces.deleteWorkspace(ctx.svc, input.id)),

  setArchived: signedInProcedure
    .meta({ openapi: { method: 'PATCH', path: '/api/workspaces/{id}/archived', tags, summary: 'Archive or unarchive a workspace' } })
    .input(setArchivedInput.extend({ id: uuidParam }))
    .output(workspaceSchema)
    .mutation(({ ctx, input: { id, ...body } }) => workspaces.setWorkspaceArchived(ctx.svc, id, body)),

  addMember: signedInProcedure
    .meta({
      errors: { 409: 'The user is already a member' },
      successStatus: 201,
      openapi: { method: 'POST', path: '/api/workspaces/{id}/members', tags, summary: 'Add an existing user by email' },
    })
    .input(addMemberInput.extend({ id: uuidParam }))
    .output(memberSchema)
    .mutation(({ ctx, input: { id, ...body } }) => members.addMember(ctx.svc, id, body)),

  ...invitationProcedures,
  ...discoverySettingsProcedures,
  ...templateSettingsProcedures,
});
