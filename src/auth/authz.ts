import type { ServiceContext, Viewer } from '../context.js';
import { ForbiddenError, NotFoundError, UnauthenticatedError, AppError } from '../errors.js';
import { roleAllows, type WorkspaceAction, type WorkspaceRole } from './permissions.js';
import type { Prisma } from '../db.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/** The nil UUID is never generated: a malformed id (e.g. from a GraphQL global id) then simply finds nothing. */
export const NIL_UUID = '00000000-0000-0000-0000-000000000000';
export const uuidOrNil = (id: string): string => (isUuid(id) ? id : NIL_UUID);

/** Coarse gate: the caller must be signed in. */
export function requireViewer(ctx: ServiceContext): Viewer {
  if (!ctx.viewer) throw new UnauthenticatedError();
  return ctx.viewer;
}

export function requireAdmin(ctx: ServiceContext): Viewer {
  const viewer = requireViewer(ctx);
  if (viewer.role !== 'admin') throw new ForbiddenError('Only an instance administrator may do this');
  return viewer;
}

/** Row visibility for workspaces: AND it into every read so lists, node lookups and REST cannot drift. */
export function visibleWorkspacesWhere(viewer: Viewer): Prisma.WorkspaceWhereInput {
  return { members: { some: { userId: viewer.id } } };
}

/** The caller's role in a workspace, or null when they are not a member (or it does not exist). */
export async function workspaceRole(ctx: ServiceContext, workspaceId: string): Promise<WorkspaceRole | null> {
  const viewer = requireViewer(ctx);
  if (!isUuid(workspaceId)) return null;
  // A workspace API key acts for its own workspace only, and never above its role cap.
  if (ctx.actsFor && ctx.actsFor.workspaceId !== workspaceId) return null;
  if (ctx.roleMemo.has(workspaceId)) return ctx.roleMemo.get(workspaceId)!;
  const role = capRole(ctx, await membershipRole(ctx, viewer.id, workspaceId));
  ctx.roleMemo.set(workspaceId, role);
  return role;
}

/** The role a workspace API key may use: its membership's, never above the key's cap. */
function capRole(ctx: ServiceContext, role: WorkspaceRole | null): WorkspaceRole | null {
  return role && ctx.actsFor?.maxRole === 'member' ? 'member' : role;
}

/** The membership's role as stored, through the auth cache (auth/auth-cache.ts: membership writes invalidate it). */
async function membershipRole(ctx: ServiceContext, userId: string, workspaceId: string): Promise<WorkspaceRole | null> {
  const { authCache } = ctx.deps;
  const cached = authCache.role(userId, workspaceId);
  if (cached) return cached;
  const generation = authCache.generation();
  const membership = await ctx.deps.prisma.workspaceMember.findUnique({
    where: { workspaceId_userId: { workspaceId, userId } },
    select: { role: true },
  });
  if (membership) authCache.rememberRole(userId, workspaceId, membership.role, generation);
  return membership?.role ?? null;
}

/**
 * Typed action check at the top of each workspace-scoped service function. A workspace the caller does
 * not belong to answers exactly like one that does not exist (no existence leak).
 */
export async function assertCan(ctx: ServiceContext, action: WorkspaceAction, scope: { workspaceId: string }): Promise<WorkspaceRole> {
  const role = await workspaceRole(ctx, scope.workspaceId);
  if (!role) throw new NotFoundError('Workspace');
  if (!roleAllows(role, action)) throw new ForbiddenError(`Your role (${role}) does not allow ${action}`);
  return role;
}

/** Boolean twin of assertCan, for `viewerCan*` fields. */
export async function can(ctx: ServiceContext, action: WorkspaceAction, scope: { workspaceId: string }): Promise<boolean> {
  if (!ctx.viewer) return false;
  const role = await workspaceRole(ctx, scope.workspaceId);
  return role !== null && roleAllows(role, action);
}

/** The workspace a REST call is scoped to (X-Workspace-Id header or wid cookie). */
export function requireWorkspaceId(ctx: ServiceContext): string {
  if (!ctx.workspaceId) {
    throw new AppError('WORKSPACE_REQUIRED', 'This endpoint is workspace-scoped: send the X-Workspace-Id header (or a wid cookie)');
  }
  return ctx.workspaceId;
}
