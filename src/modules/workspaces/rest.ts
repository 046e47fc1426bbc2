import { z } from 'zod';
import { procedure, router } from '../../rest/trpc.js';
import { dateTime, idOutput, idParam, pageSchema, uuidParam } from '../../rest/schemas.js';
import { requireViewer, requireWorkspaceId } from '../../auth/authz.js';
import * as workspaces from './service.js';
import * as members from './members.js';
import { invitationProcedures } from './invitations-rest.js';
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

/** Every workspace route needs a signed-in caller: checked before the input, so anonymous calls get 401, not 400. */
const signedIn = procedure.use(({ ctx, next }) => {
  requireViewer(ctx.svc);
  return next();
});
const workspaceHeader = z.object({ 'x-workspace-id': z.string().optional() });

export const workspacesRest = router({
  list: signedIn
    .meta({ openapi: { method: 'GET', path: '/api/workspaces', tags, summary: 'List the workspaces the caller belongs to' } })
    .input(listWorkspacesInput)
    .output(pageSchema(workspaceSchema))
    .query(({ ctx, input }) => workspaces.listWorkspaces(ctx.svc, input)),

  create: signedIn
    .meta({ successStatus: 201, openapi: { method: 'POST', path: '/api/workspaces', tags, summary: 'Create a workspace (the caller becomes its owner)' } })
    .input(createWorkspaceInput)
    .output(workspaceSchema)
    .mutation(({ ctx, input }) => workspaces.createWorkspace(ctx.svc, input)),

  listMembers: signedIn
    .meta({ openapi: { method: 'GET', path: '/api/workspaces/members', tags, summary: 'List the members of the workspace named by X-Workspace-Id', requestHeaders: workspaceHeader } })
    .input(z.object({}).strict().optional())
    .output(z.array(memberSchema))
    .query(({ ctx }) => members.listMembers(ctx.svc, requireWorkspaceId(ctx.svc))),

  updateMember: signedIn
    .meta({ openapi: { method: 'PATCH', path: '/api/workspaces/members/{memberId}', tags, summary: "Change a member's role", requestHeaders: workspaceHeader } })
    .input(updateMemberInput.extend({ memberId: uuidParam }))
    .output(memberSchema)
    .mutation(({ ctx, input: { memberId, ...patch } }) => members.updateMemberRole(ctx.svc, requireWorkspaceId(ctx.svc), memberId, patch)),

  removeMember: signedIn
    .meta({ openapi: { method: 'DELETE', path: '/api/workspaces/members/{memberId}', tags, summary: 'Remove a member (or leave)', requestHeaders: workspaceHeader } })
    .input(z.object({ memberId: uuidParam }).strict())
    .output(idOutput)
    .mutation(({ ctx, input }) => members.removeMember(ctx.svc, requireWorkspaceId(ctx.svc), input.memberId)),

  get: signedIn
    .meta({ openapi: { method: 'GET', path: '/api/workspaces/{id}', tags, summary: 'Get one workspace' } })
    .input(idParam)
    .output(workspaceSchema)
    .query(({ ctx, input }) => workspaces.getWorkspace(ctx.svc, input.id)),

  update: signedIn
    .meta({ openapi: { method: 'PATCH', path: '/api/workspaces/{id}', tags, summary: 'Update name, description and discovery settings' } })
    .input(updateWorkspaceInput.extend({ id: uuidParam }))
    .output(workspaceSchema)
    .mutation(({ ctx, input: { id, ...patch } }) => workspaces.updateWorkspace(ctx.svc, id, patch)),

  delete: signedIn
    .meta({ openapi: { method: 'DELETE', path: '/api/workspaces/{id}', tags, summary: 'Delete a workspace and everything in it' } })
    .input(idParam)
    .output(idOutput)
    .mutation(({ ctx, input }) => workspaces.deleteWorkspace(ctx.svc, input.id)),

  setArchived: signedIn
    .meta({ openapi: { method: 'PATCH', path: '/api/workspaces/{id}/archived', tags, summary: 'Archive or unarchive a workspace' } })
    .input(setArchivedInput.extend({ id: uuidParam }))
    .output(workspaceSchema)
    .mutation(({ ctx, input: { id, ...body } }) => workspaces.setWorkspaceArchived(ctx.svc, id, body)),

  addMember: signedIn
    .meta({ successStatus: 201, openapi: { method: 'POST', path: '/api/workspaces/{id}/members', tags, summary: 'Add an existing user by email' } })
    .input(addMemberInput.extend({ id: uuidParam }))
    .output(memberSchema)
    .mutation(({ ctx, input: { id, ...body } }) => members.addMember(ctx.svc, id, body)),

  ...invitationProcedures,
});
