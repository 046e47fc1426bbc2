import type { ServiceContext } from '../../context.js';
import { ConflictError, NotFoundError } from '../../errors.js';
import { assertCan, isUuid, requireViewer, visibleWorkspacesWhere } from '../../auth/authz.js';
import { validate } from '../../validate.js';
import type { Prisma } from '../../db.js';
import { addMemberInput, updateMemberInput, type AddMemberInput } from './schemas.js';
import { toMemberResponse, type WorkspaceMemberResponse } from './response.js';
import { publishWorkspaceEvent } from './events.js';
import type { WorkspaceRole } from '../../auth/permissions.js';

const memberInclude = { user: { select: { id: true, name: true, image: true } } } as const;

type Tx = Prisma.TransactionClient;

/** A member with the user fields the schema shows, as the workspace list's statement reads them (page-sql.ts). */
export type MemberWithUser = Prisma.WorkspaceMemberGetPayload<{ include: typeof memberInclude }>;

/**
 * The members of each of these workspaces, oldest membership first, in one statement: for workspace rows that
 * did not come with them (GraphQL batches the rows of a request). A workspace the caller does not belong to
 * answers no members.
 */
export async function membersOfWorkspaces(ctx: ServiceContext, workspaceIds: readonly string[]): Promise<MemberWithUser[][]> {
  const viewer = requireViewer(ctx);
  const members = await ctx.deps.prisma.workspaceMember.findMany({
    where: { workspaceId: { in: workspaceIds.filter(isUuid) }, workspace: visibleWorkspacesWhere(viewer) },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    include: memberInclude,
  });
  const byWorkspace = new Map<string, MemberWithUser[]>();
  for (const member of members) {
    const list = byWorkspace.get(member.workspaceId);
    if (list) list.push(member);
    else byWorkspace.set(member.workspaceId, [member]);
  }
  return workspaceIds.map((id) => byWorkspace.get(id) ?? []);
}

export async function listMembers(ctx: ServiceContext, workspaceId: string): Promise<WorkspaceMemberResponse[]> {
  await assertCan(ctx, 'member:read', { workspaceId });
  const members = await ctx.deps.prisma.workspaceMember.findMany({ where: { workspaceId }, orderBy: { createdAt: 'asc' }, include: memberInclude });
  return members.map(toMemberResponse);
}

/** Adds an existing account by email (an e-mail without an account is invited instead: invitations.ts). */
export async function addMember(ctx: ServiceContext, workspaceId: string, input: AddMemberInput): Promise<WorkspaceMemberResponse> {
  const { email, role } = validate(addMemberInput, input);
  await assertCan(ctx, 'member:manage', { workspaceId });
  const user = await ctx.deps.prisma.user.findUnique({ where: { email }, select: { id: true } });
  if (!user) {
    // A NotFoundError (GraphQL's typed error) whose message says what to do instead.
    const message =
      'No account has this email: invite it instead (POST /api/workspaces/{id}/invitations, or the inviteWorkspaceMember mutation); it joins when it signs up';
    throw Object.assign(new NotFoundError('Account'), { message });
  }
  const alreadyMember = () => new ConflictError('This user is already a member of the workspace');
  const existing = await ctx.deps.prisma.workspaceMember.findUnique({ where: { workspaceId_userId: { workspaceId, userId: user.id } } });
  if (existing) throw alreadyMember();
  // A concurrent add of the same user can pass the check above: the unique index decides, and that is a 409 too.
  const member = await ctx.deps.prisma.workspaceMember
    .create({ data: { workspaceId, userId: user.id, role }, include: memberInclude })
    .catch((error: unknown) => {
      throw (error as { code?: unknown } | null)?.code === 'P2002' ? alreadyMember() : error;
    });
  await publishWorkspaceEvent(ctx, workspaceId, 'member.added', member.id);
  return toMemberResponse(member);
}

/**
 * Serialises membership changes of one workspace (row lock on the workspace) so that two concurrent
 * demotions cannot both pass the "one owner remains" check.
 */
async function lockWorkspace(tx: Tx, workspaceId: string): Promise<void> {
  await tx.$queryRaw`SELECT id FROM "workspace" WHERE id = ${workspaceId}::uuid FOR UPDATE`;
}

async function findMemberOrThrow(tx: Tx, workspaceId: string, memberId: string) {
  const member = isUuid(memberId) ? await tx.workspaceMember.findFirst({ where: { id: memberId, workspaceId } }) : null;
  if (!member) throw new NotFoundError('Member');
  return member;
}

async function assertAnotherOwnerRemains(tx: Tx, workspaceId: string, leavingUserId: string): Promise<string> {
  const other = await tx.workspaceMember.findFirst({
    where: { workspaceId, role: 'owner', userId: { not: leavingUserId } },
    orderBy: { createdAt: 'asc' },
    select: { userId: true },
  });
  if (!other) throw new ConflictError('A workspace must keep at least one owner: promote another member first');
  return other.userId;
}

export async function updateMemberRole(ctx: ServiceContext, workspaceId: string, memberId: string, input: { role: WorkspaceRole }) {
  const { role } = validate(updateMemberInput, input);
  await assertCan(ctx, 'member:manage', { workspaceId });
  const member = await ctx.deps.prisma.$transaction(async (tx) => {
    await lockWorkspace(tx, workspaceId);
    const current = await findMemberOrThrow(tx, workspaceId, memberId);
    if (current.role === 'owner' && role !== 'owner') {
      const nextOwnerId = await assertAnotherOwnerRemains(tx, workspaceId, current.userId);
      // As on removal: ownerId keeps naming someone who is still an owner.
      await tx.workspace.updateMany({ where: { id: workspaceId, ownerId: current.userId }, data: { ownerId: nextOwnerId } });
    }
    return tx.workspaceMember.update({ where: { id: memberId }, data: { role }, include: memberInclude });
  });
  ctx.roleMemo.delete(workspaceId);
  ctx.deps.authCache.invalidate();
  await publishWorkspaceEvent(ctx, workspaceId, 'member.updated', member.id);
  return toMemberResponse(member);
}

/** Owners remove anyone; any member may remove themselves (leave). The last owner can do neither. */
export async function removeMember(ctx: ServiceContext, workspaceId: string, memberId: string): Promise<{ id: string }> {
  const viewer = requireViewer(ctx);
  await assertCan(ctx, 'member:read', { workspaceId });
  await ctx.deps.prisma.$transaction(async (tx) => {
    await lockWorkspace(tx, workspaceId);
    const member = await findMemberOrThrow(tx, workspaceId, memberId);
    if (member.userId !== viewer.id) await assertCan(ctx, 'member:manage', { workspaceId });
    if (member.role === 'owner') {
      const nextOwnerId = await assertAnotherOwnerRemains(tx, workspaceId, member.userId);
      // ownerId names an owner who is still a member.
      await tx.workspace.updateMany({ where: { id: workspaceId, ownerId: member.userId }, data: { ownerId: nextOwnerId } });
    }
    await tx.workspaceMember.delete({ where: { id: memberId } });
  });
  ctx.roleMemo.delete(workspaceId);
  ctx.deps.authCache.invalidate();
  await publishWorkspaceEvent(ctx, workspaceId, 'member.removed', memberId);
  return { id: memberId };
}
