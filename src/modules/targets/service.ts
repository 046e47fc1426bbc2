import type { ServiceContext } from '../../context.js';
import { ConflictError, NotFoundError, ValidationError } from '../../errors.js';
import { assertCan, isUuid, requireViewer, visibleWorkspacesWhere } from '../../auth/authz.js';
import type { Prisma } from '../../db.js';
import { validate } from '../../validate.js';
import { escapeLike, pageEnvelope, type Page } from '../../pagination.js';
import { publishWorkspaceEvent } from '../workspaces/events.js';
import { normalizeTarget, type NormalizedTarget, type TargetType } from './normalize.js';
import { createTargetInput, createTargetsInput, listTargetsInput, type CreateTargetInput, type CreateTargetsInput, type ListTargetsInput } from './schemas.js';
import { targetResponseInclude, toTargetResponse, type TargetResponse, type TargetRow } from './response.js';
import { countsOfTargets } from './counts.js';
import { findTargetPage } from './page-sql.js';
import type { ServedTargetPage } from './connection-page.js';
import { findWorkspaceWithTargetPage } from './workspace-page-sql.js';
import { createScopeMatcher, type ReportedPlace } from './scope.js';

/** Rows as responses, with their counts read in two grouped queries for all of them. */
async function withCounts(ctx: ServiceContext, rows: TargetRow[]): Promise<TargetResponse[]> {
  const counts = await countsOfTargets(
    ctx.deps.prisma,
    rows.map((row) => row.id),
  );
  return rows.map((row, index) => toTargetResponse(row, counts[index]!));
}

export interface TargetFilters {
  workspaceId?: string;
  search?: string;
  type?: TargetType;
}

/** The visibility rule AND-ed with the filters: shared by the REST page, the GraphQL connection and lookups. */
export function targetWhere(ctx: ServiceContext, filters: TargetFilters): Prisma.TargetWhereInput {
  const viewer = requireViewer(ctx);
  const and: Prisma.TargetWhereInput[] = [{ workspace: visibleWorkspacesWhere(viewer) }];
  if (filters.workspaceId) and.push({ workspaceId: filters.workspaceId });
  if (filters.search) and.push({ value: { contains: escapeLike(filters.search), mode: 'insensitive' } });
  if (filters.type) and.push({ type: filters.type });
  return { AND: and };
}

/**
 * How many targets each of these workspaces has, in one statement: for workspace rows that did not come with
 * the count (GraphQL batches the rows of a request). A workspace the caller does not belong to counts 0.
 */
export async function countTargetsOfWorkspaces(ctx: ServiceContext, workspaceIds: readonly string[]): Promise<number[]> {
  const groups = await ctx.deps.prisma.target.groupBy({
    by: ['workspaceId'],
    where: { AND: [targetWhere(ctx, {}), { workspaceId: { in: workspaceIds.filter(isUuid) } }] },
    _count: { _all: true },
  });
  const counts = new Map(groups.map((group) => [group.workspaceId, group._count._all]));
  return workspaceIds.map((id) => counts.get(id) ?? 0);
}

/**
 * GraphQL's `workspace(id)` with its target page, in one statement, for the workspaces module when
 * connection-page.ts says the statement serves its query: null when the viewer is no member.
 */
export function findWorkspaceWithTargets(ctx: ServiceContext, workspaceId: string, page: ServedTargetPage) {
  return findWorkspaceWithTargetPage(ctx.deps.db.read, { ...page, viewerId: requireViewer(ctx).id, workspaceId });
}

function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'P2002';
}

function duplicateError(value: string): ConflictError {
  return new ConflictError(`Target ${value} already exists in this workspace`);
}

export async function createTarget(ctx: ServiceContext, workspaceId: string, input: CreateTargetInput): Promise<TargetResponse> {
  const viewer = requireViewer(ctx);
  const { value: raw } = validate(createTargetInput, input);
  const { value, type } = normalizeTarget(raw);
  await assertCan(ctx, 'target:write', { workspaceId });
  const existing = await ctx.deps.prisma.target.findUnique({ where: { workspaceId_value: { workspaceId, value } }, select: { id: true } });
  if (existing) throw duplicateError(value);
  let row: TargetRow;
  try {
    row = await ctx.deps.prisma.target.create({ data: { workspaceId, value, type, createdById: viewer.id }, include: targetResponseInclude });
  } catch (error) {
    // Someone added the same target between our check and the insert.
    if (isUniqueViolation(error)) throw duplicateError(value);
    throw error;
  }
  await publishWorkspaceEvent(ctx, workspaceId, 'target.created', row.id);
  return toTargetResponse(row, { assetCount: 0, findingCount: 0 });
}

export type BulkTargetStatus = 'created' | 'duplicate' | 'invalid';

export interface BulkTargetResult {
  /** The value as sent. */
  value: string;
  status: BulkTargetStatus;
  /** The created target, or for a duplicate the one that already holds this value. */
  target?: TargetResponse;
  error?: string;
}

export interface BulkCreateTargetsResult {
  results: BulkTargetResult[];
  summary: Record<BulkTargetStatus, number>;
}

/**
 * Adds many targets at once. Each item is reported on its own: invalid ones are skipped with their error, a
 * value already in the workspace (or earlier in the same request, after normalisation) is a duplicate.
 */
export async function createTargets(ctx: ServiceContext, workspaceId: string, input: CreateTargetsInput): Promise<BulkCreateTargetsResult> {
  const viewer = requireViewer(ctx);
  const { targets } = validate(createTargetsInput, input);
  await assertCan(ctx, 'target:write', { workspaceId });

  const parsed = targets.map(({ value }): { value: string; target?: NormalizedTarget; error?: string } => {
    try {
      return { value, target: normalizeTarget(value) };
    } catch (error) {
      if (error instanceof ValidationError) return { value, error: error.message };
      throw error;
    }
  });
  const wanted = new Map<string, TargetType>();
  for (const item of parsed) if (item.target && !wanted.has(item.target.value)) wanted.set(item.target.value, item.target.type);

  const prisma = ctx.deps.prisma;
  const created = wanted.size
    ? await prisma.target.createManyAndReturn({
        data: [...wanted].map(([value, type]) => ({ workspaceId, value, type, createdById: viewer.id })),
        // Values already present are skipped, not errors: they come back as duplicates.
        skipDuplicates: true,
        select: { id: true, value: true },
      })
    : [];
  const createdValues = new Set(created.map((row) => row.value));
  const rows = wanted.size ? await prisma.target.findMany({ where: { workspaceId, value: { in: [...wanted.keys()] } }, include: targetResponseInclude }) : [];
  const responses = await withCounts(ctx, rows);
  const byValue = new Map(responses.map((response) => [response.value, response]));

  const summary: Record<BulkTargetStatus, number> = { created: 0, duplicate: 0, invalid: 0 };
  const reported = new Set<string>();
  const results = parsed.map((item): BulkTargetResult => {
    if (!item.target) {
      summary.invalid += 1;
      return { value: item.value, status: 'invalid', error: item.error };
    }
    const normalized = item.target.value;
    const isNew = createdValues.has(normalized) && !reported.has(normalized);
    reported.add(normalized);
    summary[isNew ? 'created' : 'duplicate'] += 1;
    return { value: item.value, status: isNew ? 'created' : 'duplicate', target: byValue.get(normalized) };
  });
  for (const row of created) await publishWorkspaceEvent(ctx, workspaceId, 'target.created', row.id);
  return { results, summary };
}

export async function listTargets(ctx: ServiceContext, workspaceId: string, input: ListTargetsInput): Promise<Page<TargetResponse>> {
  const { page, limit, search, type, sortBy, sortOrder } = validate(listTargetsInput, input);
  await assertCan(ctx, 'target:read', { workspaceId });
  const viewerId = requireViewer(ctx).id;
  const rows = await findTargetPage(ctx.deps.db.read, { viewerId, workspaceId, search, type, sortBy, direction: sortOrder, offset: (page - 1) * limit, limit });
  // Each row carries the list's total; a page past the end has no row to carry it, so it is counted then.
  const total = rows[0]?.total ?? (page > 1 ? await ctx.deps.prisma.target.count({ where: targetWhere(ctx, { workspaceId, search, type }) }) : 0);
  return pageEnvelope(
    rows.map(({ assetCount, findingCount, total: _total, ...row }) => toTargetResponse(row, { assetCount, findingCount })),
    total,
    page,
    limit,
  );
}

async function findTargetOrThrow(ctx: ServiceContext, workspaceId: string, id: string) {
  const row = isUuid(id)
    ? await ctx.deps.prisma.target.findFirst({ where: { AND: [{ id }, targetWhere(ctx, { workspaceId })] }, include: targetResponseInclude })
    : null;
  if (!row) throw new NotFoundError('Target');
  return row;
}

export async function getTarget(ctx: ServiceContext, workspaceId: string, id: string): Promise<TargetResponse> {
  await assertCan(ctx, 'target:read', { workspaceId });
  const [response] = await withCounts(ctx, [await findTargetOrThrow(ctx, workspaceId, id)]);
  return response!;
}

/** Deletes the target and its scans; assets and findings stay in the inventory, unlinked from it. */
export async function deleteTarget(ctx: ServiceContext, workspaceId: string, id: string): Promise<{ id: string }> {
  await assertCan(ctx, 'target:write', { workspaceId });
  const { count } = isUuid(id) ? await ctx.deps.prisma.target.deleteMany({ where: { id, workspaceId } }) : { count: 0 };
  if (!count) throw new NotFoundError('Target');
  await publishWorkspaceEvent(ctx, workspaceId, 'target.deleted', id);
  return { id };
}

/** For GraphQL, where a target is named by its id alone: finds its workspace (if visible), then deletes. */
export async function deleteVisibleTarget(ctx: ServiceContext, id: string): Promise<{ id: string }> {
  const row = isUuid(id) ? await ctx.deps.prisma.target.findFirst({ where: { AND: [{ id }, targetWhere(ctx, {})] }, select: { workspaceId: true } }) : null;
  if (!row) throw new NotFoundError('Target');
  return deleteTarget(ctx, row.workspaceId, id);
}

/** The scans service starts scans through this: the caller may start scans here and the target is this workspace's. */
export async function getTargetForScan(ctx: ServiceContext, workspaceId: string, targetId: string) {
  await assertCan(ctx, 'scan:start', { workspaceId });
  const row = isUuid(targetId) ? await ctx.deps.prisma.target.findFirst({ where: { id: targetId, workspaceId } }) : null;
  if (!row) throw new NotFoundError('Target');
  return row;
}

/** The nil UUID is never generated: a malformed id then simply finds nothing. */
const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/** node(id) lookups: a unique where that also carries the visibility rule. */
export function visibleTargetWhereUnique(ctx: ServiceContext, id: string): Prisma.TargetWhereUniqueInput {
  return { id: isUuid(id) ? id : NIL_UUID, AND: [targetWhere(ctx, {})] };
}

/** For target(id) on GraphQL: null when absent or not visible. */
export async function findVisibleTarget<Q extends object>(ctx: ServiceContext, id: string, query: Q) {
  if (!isUuid(id)) return null;
  return ctx.deps.prisma.target.findFirst({ ...query, where: { AND: [{ id }, targetWhere(ctx, {})] } });
}

/**
 * The workspace's targets as a matcher: which of them cover a place a tool reported (see scope.ts). Used by
 * the tools service to tie pushed results to targets; no caller check here, the tool's key was checked.
 */
export async function targetScopeMatcher(prisma: Pick<Prisma.TransactionClient, 'target'>, workspaceId: string): Promise<(place: ReportedPlace) => string[]> {
  const rows = await prisma.target.findMany({ where: { workspaceId }, select: { id: true, type: true, value: true } });
  return createScopeMatcher(rows);
}
