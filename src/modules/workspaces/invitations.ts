import type { AppDeps, ServiceContext } from '../../context.js';
import { AppError, ConflictError, NotFoundError } from '../../errors.js';
import { assertCan, isUuid, requireViewer } from '../../auth/authz.js';
import { validate } from '../../validate.js';
import { addMemberInput, type AddMemberInput } from './schemas.js';
import { publishWorkspaceEvent } from './events.js';
import type { WorkspaceRole } from '../../auth/permissions.js';

/**
 * Invitations of e-mails that have no account yet. With SIGNUP=invite a pending invitation is what lets an
 * e-mail sign up; at sign-up (any mode) the new account joins every workspace that invited it.
 * Without e-mail verification the invitation is bound to the address only: share it with the person.
 */
export const INVITATION_TTL_DAYS = 14;

const publicFields = { id: true, workspaceId: true, email: true, role: true, expiresAt: true, createdAt: true } as const;

export interface WorkspaceInvitationResponse {
  id: string;
  workspaceId: string;
  email: string;
  role: WorkspaceRole;
  expiresAt: Date;
  createdAt: Date;
}

/** Invites (or re-invites, refreshing role and expiry) an e-mail that has no account. Owners only. */
export async function inviteMember(ctx: ServiceContext, workspaceId: string, input: AddMemberInput): Promise<WorkspaceInvitationResponse> {
  const viewer = requireViewer(ctx);
  const { email, role } = validate(addMemberInput, input);
  await assertCan(ctx, 'member:manage', { workspaceId });
  if (ctx.deps.env.SIGNUP === 'closed') {
    throw new AppError('SIGNUP_CLOSED', 'Sign-up is closed on this server (SIGNUP=closed): an administrator creates the account, then add it as a member');
  }
  const existing = await ctx.deps.prisma.user.findUnique({ where: { email }, select: { id: true } });
  if (existing) throw new ConflictError('An account with this email exists: add it as a member instead');
  const expiresAt = new Date(Date.now() + INVITATION_TTL_DAYS * 86_400_000);
  return ctx.deps.prisma.workspaceInvitation.upsert({
    where: { workspaceId_email: { workspaceId, email } },
    create: { workspaceId, email, role, invitedById: viewer.id, expiresAt },
    update: { role, invitedById: viewer.id, expiresAt },
    select: publicFields,
  });
}

/** Pending invitations of a workspace (owners only: they show e-mail addresses). */
export async function listInvitations(ctx: ServiceContext, workspaceId: string): Promise<WorkspaceInvitationResponse[]> {
  await assertCan(ctx, 'member:manage', { workspaceId });
  return ctx.deps.prisma.workspaceInvitation.findMany({
    where: { workspaceId, expiresAt: { gt: new Date() } },
    orderBy: { createdAt: 'asc' },
    select: publicFields,
  });
}

export async function revokeInvitation(ctx: ServiceContext, workspaceId: string, invitationId: string): Promise<{ id: string }> {
  await assertCan(ctx, 'member:manage', { workspaceId });
  const { count } = isUuid(invitationId) ? await ctx.deps.prisma.workspaceInvitation.deleteMany({ where: { id: invitationId, workspaceId } }) : { count: 0 };
  if (count === 0) throw new NotFoundError('Invitation');
  return { id: invitationId };
}

/** Whether a live invitation names this (normalised) e-mail: with SIGNUP=invite, the ticket to sign up. */
export async function hasPendingInvitation(deps: AppDeps, email: string): Promise<boolean> {
  const found = await deps.prisma.workspaceInvitation.findFirst({ where: { email, expiresAt: { gt: new Date() } }, select: { id: true } });
  return Boolean(found);
}

/**
 * At sign-up: the new account joins the workspaces that invited its e-mail; the invitations are used up. (New
 * memberships need no auth-cache invalidation: it only remembers memberships that exist.)
 */
export async function acceptInvitations(ctx: ServiceContext, user: { id: string; email: string }): Promise<void> {
  const { prisma } = ctx.deps;
  const joined = await prisma.$transaction(async (tx) => {
    const invitations = await tx.workspaceInvitation.findMany({
      where: { email: user.email, expiresAt: { gt: new Date() } },
      select: { workspaceId: true, role: true },
    });
    await tx.workspaceInvitation.deleteMany({ where: { email: user.email } });
    if (invitations.length === 0) return [];
    await tx.workspaceMember.createMany({ data: invitations.map(({ workspaceId, role }) => ({ workspaceId, userId: user.id, role })), skipDuplicates: true });
    return tx.workspaceMember.findMany({
      where: { userId: user.id, workspaceId: { in: invitations.map((i) => i.workspaceId) } },
      select: { id: true, workspaceId: true },
    });
  });
  for (const member of joined) await publishWorkspaceEvent(ctx, member.workspaceId, 'member.added', member.id);
}
