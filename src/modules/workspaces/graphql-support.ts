import type { ServiceContext } from '../../context.js';
import { assertCan, requireViewer } from '../../auth/authz.js';
import type { WorkspaceRole } from '../../auth/permissions.js';
import type { WorkspaceEvent } from '../../pubsub.js';
import { countMembers, countTargets } from './service.js';

/** Batch for the `role` field: the caller's role in each of many workspaces, in one query. */
export async function rolesInWorkspaces(ctx: ServiceContext, workspaceIds: readonly string[]): Promise<(WorkspaceRole | Error)[]> {
  const viewer = requireViewer(ctx);
  const rows = await ctx.deps.prisma.workspaceMember.findMany({
    where: { userId: viewer.id, workspaceId: { in: [...workspaceIds] } },
    select: { workspaceId: true, role: true },
  });
  const byWorkspace = new Map(rows.map((row) => [row.workspaceId, row.role]));
  return workspaceIds.map((id) => byWorkspace.get(id) ?? new Error('Not a member'));
}

/**
 * Batches for `targetCount` and `memberCount`: one GROUP BY over the requested workspaces (already visible
 * parents). Pothos' relationCount would put Prisma's `_count` in the list query: a GROUP BY of the whole table.
 */
export async function targetCountsOf(ctx: ServiceContext, workspaceIds: readonly string[]): Promise<number[]> {
  const counts = await countTargets(ctx, workspaceIds);
  return workspaceIds.map((id) => counts.get(id) ?? 0);
}

export async function memberCountsOf(ctx: ServiceContext, workspaceIds: readonly string[]): Promise<number[]> {
  const counts = await countMembers(ctx, workspaceIds);
  return workspaceIds.map((id) => counts.get(id) ?? 0);
}

/** Checks membership first, so a client of another workspace gets an error, not events. */
export async function workspaceEvents(ctx: ServiceContext, workspaceId: string): Promise<AsyncIterable<WorkspaceEvent>> {
  await assertCan(ctx, 'workspace:read', { workspaceId });
  return ctx.deps.pubsub.subscribe('workspace:event', workspaceId);
}
