import { z } from 'zod';
import { signedInProcedure } from '../../rest/procedures.js';
import { dateTime, idOutput, uuidParam } from '../../rest/schemas.js';
import * as invitations from './invitations.js';
import { addMemberInput } from './schemas.js';

const tags = ['Workspaces'];

const invitationSchema = z
  .object({ id: z.string(), workspaceId: z.string(), email: z.string(), role: z.enum(['owner', 'member']), expiresAt: dateTime, createdAt: dateTime })
  .meta({ id: 'WorkspaceInvitation' });

/** Invitations of e-mails without an account; spread into the workspaces router. */
export const invitationProcedures = {
  inviteMember: signedInProcedure
    .meta({
      successStatus: 201,
      openapi: {
        method: 'POST',
        path: '/api/workspaces/{id}/invitations',
        tags,
        summary: 'Invite an e-mail that has no account: it may sign up (SIGNUP=invite) and joins the workspace',
      },
    })
    .input(addMemberInput.extend({ id: uuidParam }))
    .output(invitationSchema)
    .mutation(({ ctx, input: { id, ...body } }) => invitations.inviteMember(ctx.svc, id, body)),

  listInvitations: signedInProcedure
    .meta({ openapi: { method: 'GET', path: '/api/workspaces/{id}/invitations', tags, summary: 'Pending invitations (owners)' } })
    .input(z.object({ id: uuidParam }).strict())
    .output(z.array(invitationSchema))
    .query(({ ctx, input }) => invitations.listInvitations(ctx.svc, input.id)),

  revokeInvitation: signedInProcedure
    .meta({ openapi: { method: 'DELETE', path: '/api/workspaces/{id}/invitations/{invitationId}', tags, summary: 'Withdraw an invitation' } })
    .input(z.object({ id: uuidParam, invitationId: uuidParam }).strict())
    .output(idOutput)
    .mutation(({ ctx, input }) => invitations.revokeInvitation(ctx.svc, input.id, input.invitationId)),
};
