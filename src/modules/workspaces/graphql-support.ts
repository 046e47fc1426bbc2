import type { ServiceContext } from '../../context.js';
import { assertCan, requireViewer } from '../../auth/authz.js';
import type { WorkspaceRole } from '../../auth/permissions.js';
import type { WorkspaceEvent } from '../../pubsub.js';

/**
 * What `memberCount` and `role` select of a workspace: its members' user and role, in the order and with the
 * arguments of the `members` field, so the list statement loads them once (a workspace has a handful of members).
 */
export const MEMBER_ROLES = { members: { orderBy: { createdAt: 'asc' }, select: { userId: true, role: true } } } as const;

/** The caller's role among a workspace's members (the workspace is visible, so the caller is one of them). */
export function viewerRoleAmong(ctx: ServiceContext, members: readonly { userId: string; role: WorkspaceRole }[]): WorkspaceRole {
  const viewer = requireViewer(ctx);
  const role = members.find((member) => member.userId === viewer.id)?.role;
  if (!role) throw new Error('Not a member');
  return role;
}

/** Checks membership first, so a client of another workspace gets an error, not events. */
export async function workspaceEvents(ctx: ServiceContext, workspaceId: string): Promise<AsyncIterable<WorkspaceEvent>> {
  await assertCan(ctx, 'workspace:read', { workspaceId });
  return ctx.deps.pubsub.subscribe('workspace:event', workspaceId);
}
