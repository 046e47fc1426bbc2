import DataLoader from 'dataloader';
import { createContextCache } from '@pothos/core';
import type { ServiceContext } from '../../context.js';
import { assertCan, requireViewer } from '../../auth/authz.js';
import type { WorkspaceRole } from '../../auth/permissions.js';
import type { WorkspaceEvent } from '../../pubsub.js';
import { membersOfWorkspaces, type MemberWithUser } from './members.js';

/**
 * A workspace row as GraphQL receives it. The list's statement (page-sql.ts) brings each row's members (with
 * their users) and target count; a row read any other way (Prisma: node(id), workspace(id), a backward page, a
 * relation from another type) has neither, since no field asks Prisma for them. The fields read what the row
 * carries and load what it lacks with the request's other rows, one statement for all (the DataLoaders below).
 *
 * Why not the Prisma plugin's `select`/`relation` fields: the plugin looks up, for every such field of every
 * row, which query loaded the row (its selection mapper keys strings by response path), and that lookup cost
 * about a sixth of a list's CPU for four such fields (`npm run bench:api`, the OASM query over GraphQL).
 */
export interface WorkspaceSource {
  id: string;
  members?: MemberWithUser[];
  _count?: { targets?: number };
}

const memberLoaders = createContextCache((ctx: ServiceContext) => new DataLoader<string, MemberWithUser[]>((ids) => membersOfWorkspaces(ctx, ids)));

/** The workspace's members, oldest membership first: from its row, or loaded with the request's other rows. */
export function membersOf(ctx: ServiceContext, workspace: WorkspaceSource): MemberWithUser[] | Promise<MemberWithUser[]> {
  return workspace.members ?? memberLoaders(ctx).load(workspace.id);
}

/** `map` over a value that may still be on its way, without a promise when it is not (most rows). */
export function whenReady<T, R>(value: T | Promise<T>, map: (ready: T) => R): R | Promise<R> {
  return value instanceof Promise ? value.then(map) : map(value);
}

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
