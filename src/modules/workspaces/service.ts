import type { ServiceContext } from '../../context.js';
import { NotFoundError } from '../../errors.js';
import { assertCan, isUuid, requireViewer, visibleWorkspacesWhere, workspaceRole } from '../../auth/authz.js';
import type { Prisma, PrismaClient } from '../../db.js';
import { validate } from '../../validate.js';
import { escapeLike, pageEnvelope, type Page } from '../../pagination.js';
import { publishWorkspaceEvent } from './events.js';
import {
  createWorkspaceInput,
  listWorkspacesInput,
  setArchivedInput,
  updateWorkspaceInput,
  type CreateWorkspaceInput,
  type ListWorkspacesInput,
  type UpdateWorkspaceInput,
} from './schemas.js';
import { toWorkspaceResponse, workspaceResponseInclude, type WorkspaceResponse } from './response.js';
import { findWorkspacePage } from './page-sql.js';
import { servedByPageStatement } from './connection-page.js';
import { servedByTargetPage } from '../targets/connection-page.js';
import { findWorkspaceWithTargets } from '../targets/service.js';
import { servedByAssetPage } from '../assets/connection-page.js';
import { findWorkspaceWithAssets } from '../assets/service.js';
import { servedByFindingPage } from '../vulnerabilities/connection-page.js';
import { findWorkspaceWithFindings } from '../vulnerabilities/service.js';

export interface WorkspaceFilters {
  search?: string;
  isArchived?: boolean;
}

/** The visibility rule AND-ed with the list filters: shared by the REST page and the GraphQL connection. */
export function workspaceListWhere(ctx: ServiceContext, filters: WorkspaceFilters): Prisma.WorkspaceWhereInput {
  const viewer = requireViewer(ctx);
  const and: Prisma.WorkspaceWhereInput[] = [visibleWorkspacesWhere(viewer)];
  if (filters.search) {
    const search = escapeLike(filters.search);
    and.push({
      OR: [{ name: { contains: search, mode: 'insensitive' } }, { description: { contains: search, mode: 'insensitive' } }],
    });
  }
  if (filters.isArchived !== undefined) and.push({ archivedAt: filters.isArchived ? { not: null } : null });
  return { AND: and };
}

export async function listWorkspaces(ctx: ServiceContext, input: ListWorkspacesInput): Promise<Page<WorkspaceResponse>> {
  const viewer = requireViewer(ctx);
  const { search, page, limit, sortBy, sortOrder, isArchived } = validate(listWorkspacesInput, input);
  const rows = await findWorkspacePage(ctx.deps.db.read, { viewer, search, isArchived, sortBy, direction: sortOrder, offset: (page - 1) * limit, limit });
  // Each row carries the list's total; a page past the end has no row to carry it, so it is counted then.
  const total = rows[0]?.total ?? (page > 1 ? await countWorkspaces(ctx, { search, isArchived }) : 0);
  return pageEnvelope(
    rows.map((row) => toWorkspaceResponse(row, viewer.id)),
    total,
    page,
    limit,
  );
}

/**
 * The GraphQL connection's rows, and the list's total when the statement that read them carried it. Pothos
 * passes its own include/select in `query`; the service adds who may see what. A forward page whose selection
 * the REST page's statement covers is read by it (connection-page.ts); anything else by Prisma.
 */
export async function findWorkspacesForConnection<Q extends object>(
  ctx: ServiceContext,
  filters: WorkspaceFilters,
  orderBy: { field: 'createdAt' | 'updatedAt' | 'name'; direction: 'asc' | 'desc' },
  query: Q,
): Promise<{ rows: Prisma.WorkspaceGetPayload<Q>[]; total?: number }> {
  const viewer = requireViewer(ctx);
  // Prisma places a cursor by reading that row whatever the filter: a cursor naming a workspace the caller is not
  // a member of would reveal that it exists and where it sorts. Such a cursor answers as one that names nothing.
  const cursorId = (query as { cursor?: { id?: unknown } }).cursor?.id;
  if (cursorId !== undefined && !(typeof cursorId === 'string' && (await workspaceRole(ctx, cursorId)))) return { rows: [] };
  const served = servedByPageStatement(query);
  if (served) {
    const rows = await findWorkspacePage(ctx.deps.db.read, {
      viewer,
      ...filters,
      sortBy: orderBy.field,
      direction: orderBy.direction === 'asc' ? 'ASC' : 'DESC',
      offset: 0,
      limit: served.take,
      after: served.after,
    });
    return { rows: rows as never, total: rows[0]?.total };
  }
  const rows = await ctx.deps.prisma.workspace.findMany({
    ...query,
    where: workspaceListWhere(ctx, filters),
    orderBy: [{ [orderBy.field]: orderBy.direction }, { id: orderBy.direction }],
  });
  return { rows: rows as never };
}

export async function countWorkspaces(ctx: ServiceContext, filters: WorkspaceFilters): Promise<number> {
  return ctx.deps.prisma.workspace.count({ where: workspaceListWhere(ctx, filters) });
}

export async function getWorkspace(ctx: ServiceContext, id: string): Promise<WorkspaceResponse> {
  const viewer = requireViewer(ctx);
  await assertCan(ctx, 'workspace:read', { workspaceId: id });
  const row = await ctx.deps.prisma.workspace.findUnique({ where: { id }, include: workspaceResponseInclude });
  if (!row) throw new NotFoundError('Workspace');
  return toWorkspaceResponse(row, viewer.id);
}

export async function createWorkspace(ctx: ServiceContext, input: CreateWorkspaceInput): Promise<WorkspaceResponse> {
  const viewer = requireViewer(ctx);
  const data = validate(createWorkspaceInput, input);
  const row = await ctx.deps.prisma.workspace.create({
    data: { ...data, ownerId: viewer.id, members: { create: { userId: viewer.id, role: 'owner' } } },
    include: workspaceResponseInclude,
  });
  await publishWorkspaceEvent(ctx, row.id, 'workspace.created', row.id);
  return toWorkspaceResponse(row, viewer.id);
}

export async function updateWorkspace(ctx: ServiceContext, id: string, input: UpdateWorkspaceInput): Promise<WorkspaceResponse> {
  const viewer = requireViewer(ctx);
  const data = validate(updateWorkspaceInput, input);
  await assertCan(ctx, 'workspace:update', { workspaceId: id });
  const row = await ctx.deps.prisma.workspace.update({ where: { id }, data, include: workspaceResponseInclude });
  await publishWorkspaceEvent(ctx, id, 'workspace.updated', id);
  return toWorkspaceResponse(row, viewer.id);
}

export async function setWorkspaceArchived(ctx: ServiceContext, id: string, input: { isArchived: boolean }): Promise<WorkspaceResponse> {
  const viewer = requireViewer(ctx);
  const { isArchived } = validate(setArchivedInput, input);
  await assertCan(ctx, 'workspace:archive', { workspaceId: id });
  const current = await ctx.deps.prisma.workspace.findUniqueOrThrow({ where: { id }, select: { archivedAt: true } });
  // Archiving an archived workspace keeps its original archival time.
  const archivedAt = isArchived ? (current.archivedAt ?? new Date()) : null;
  const row = await ctx.deps.prisma.workspace.update({ where: { id }, data: { archivedAt }, include: workspaceResponseInclude });
  await publishWorkspaceEvent(ctx, id, isArchived ? 'workspace.archived' : 'workspace.unarchived', id);
  return toWorkspaceResponse(row, viewer.id);
}

export async function deleteWorkspace(ctx: ServiceContext, id: string): Promise<{ id: string }> {
  await assertCan(ctx, 'workspace:delete', { workspaceId: id });
  await ctx.deps.prisma.workspace.delete({ where: { id } });
  ctx.deps.authCache.invalidate();
  await publishWorkspaceEvent(ctx, id, 'workspace.deleted', id);
  return { id };
}

/** The nil UUID is never generated: a malformed id then simply finds nothing. */
const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/** node(id) lookups: a unique where that also carries the visibility rule. */
export function visibleWorkspaceWhereUnique(ctx: ServiceContext, id: string): Prisma.WorkspaceWhereUniqueInput {
  const viewer = requireViewer(ctx);
  return { id: isUuid(id) ? id : NIL_UUID, AND: [visibleWorkspacesWhere(viewer)] };
}

/** For node(id) and workspace(id) on GraphQL: null when absent or not visible, never an error that leaks existence. */
export async function findVisibleWorkspace<Q extends object>(ctx: ServiceContext, id: string, query: Q) {
  const viewer = requireViewer(ctx);
  if (!isUuid(id)) return null;
  // Its row and a page of its targets, assets or findings, in one statement (that module's; see its connection-page.ts).
  const targetPage = servedByTargetPage(query);
  if (targetPage) return findWorkspaceWithTargets(ctx, id, targetPage) as never;
  const assetPage = servedByAssetPage(query);
  if (assetPage) return findWorkspaceWithAssets(ctx, id, assetPage) as never;
  const findingPage = servedByFindingPage(query);
  if (findingPage) return findWorkspaceWithFindings(ctx, id, findingPage) as never;
  return ctx.deps.prisma.workspace.findFirst({ ...query, where: { id, ...visibleWorkspacesWhere(viewer) } });
}

/** The discovery switches, for the scans module (which decides whether a scan discovers and how it records hosts). */
export async function discoveryFlagsOf(
  prisma: PrismaClient | Prisma.TransactionClient,
  workspaceId: string,
): Promise<{ isAssetsDiscovery: boolean; isAutoEnableAssetAfterDiscovered: boolean }> {
  const row = await prisma.workspace.findUnique({ where: { id: workspaceId }, select: { isAssetsDiscovery: true, isAutoEnableAssetAfterDiscovered: true } });
  return row ?? { isAssetsDiscovery: false, isAutoEnableAssetAfterDiscovered: false };
}
