import type { AppDeps, ServiceContext, Viewer } from '../../context.js';
import { AppError, ConflictError, NotFoundError } from '../../errors.js';
import { assertCan, isUuid, requireViewer } from '../../auth/authz.js';
import type { Prisma, PrismaClient } from '../../db.js';
import { validate } from '../../validate.js';
import { pageEnvelope, type Page } from '../../pagination.js';
import { getTargetForScan } from '../targets/service.js';
import { discoveryFlagsOf } from '../workspaces/service.js';
import { disabledBuiltinTools } from '../tools/service.js';
import {
  listScansInput,
  withoutDisabledTools,
  resolveScanOptions,
  startScanInput,
  TERMINAL_STATUSES,
  type ListScansInput,
  type ScanOptionsInput,
} from './schemas.js';
import { enqueueStep } from './queue.js';
import { sealVariables } from '../templates/variables.js';
import { publishScanUpdate } from './events.js';

export const scanInclude = { steps: { orderBy: { position: 'asc' } } } satisfies Prisma.ScanInclude;
export type ScanWithSteps = Prisma.ScanGetPayload<{ include: typeof scanInclude }>;

export function visibleScansWhere(viewer: Viewer): Prisma.ScanWhereInput {
  return { workspace: { members: { some: { userId: viewer.id } } } };
}

/** Names the system resolves itself (RFC 6761): never sent to DNS, so there is nothing to discover under them. */
function isLocalhostName(value: string): boolean {
  return value === 'localhost' || value.endsWith('.localhost');
}

/**
 * Starts a scan of one target: the scan row, its steps and the first step's job commit together. A domain
 * target of a workspace with isAssetsDiscovery starts with the discovery step unless the steps are chosen.
 * `only.hosts` limits the scan to some host names of the target (candidates a member enabled).
 */
export async function startScan(
  ctx: ServiceContext,
  workspaceId: string,
  input: { targetId: string; options?: ScanOptionsInput },
  only: { hosts?: string[] } = {},
): Promise<ScanWithSteps> {
  const viewer = requireViewer(ctx);
  const { targetId, options } = validate(startScanInput, input);
  const target = await getTargetForScan(ctx, workspaceId, targetId);
  return createScanOfTarget(ctx.deps, ctx.deps.prisma, { target, options, requestedById: viewer.id, hosts: only.hosts });
}

/**
 * Starts a scan with no signed-in caller (a schedule firing): the caller has already decided who may. With
 * `tx` every read and write goes through that open transaction and the scan commits with it; the caller
 * then publishes the update (publishScanUpdate) once it committed.
 */
export async function startScanAs(
  deps: AppDeps,
  input: { workspaceId: string; targetId: string; options?: ScanOptionsInput; requestedById: string | null },
  tx?: Prisma.TransactionClient,
): Promise<ScanWithSteps> {
  const { targetId, options } = validate(startScanInput, { targetId: input.targetId, options: input.options });
  const db = tx ?? deps.prisma;
  const target = await db.target.findFirst({ where: { id: targetId, workspaceId: input.workspaceId } });
  if (!target) throw new NotFoundError('Target');
  return createScanOfTarget(deps, db, { target, options, requestedById: input.requestedById }, tx);
}

/** The one code path of both: resolve the options for this target and workspace, then create and enqueue. */
async function createScanOfTarget(
  deps: AppDeps,
  db: PrismaClient | Prisma.TransactionClient,
  request: { target: Prisma.TargetGetPayload<object>; options?: ScanOptionsInput; requestedById: string | null; hosts?: string[] },
  tx?: Prisma.TransactionClient,
): Promise<ScanWithSteps> {
  const { target, options: optionsInput, requestedById, hosts } = request;
  const workspaceId = target.workspaceId;
  const { isAssetsDiscovery } = await discoveryFlagsOf(db, workspaceId);
  const discoverByDefault = isAssetsDiscovery && target.type === 'domain' && !isLocalhostName(target.value) && !hosts;
  const resolved = resolveScanOptions(optionsInput, discoverByDefault);
  const disabled = await disabledBuiltinTools(db, workspaceId);
  const options = { ...resolved, steps: withoutDisabledTools(resolved.steps, disabled), ...(hosts ? { hosts } : {}) };
  if (!options.steps.length) throw new ConflictError(`Every step of this scan uses a tool switched off in this workspace (${[...disabled].join(', ')})`);
  const create = async (client: Prisma.TransactionClient) => {
    const created = await client.scan.create({
      data: {
        workspaceId,
        targetId: target.id,
        options: options as unknown as Prisma.InputJsonValue,
        // Sealed: the options hold their names only, and nothing returns these.
        templateVariables: sealVariables(deps.secrets, optionsInput?.templateVariables ?? {}),
        stepsTotal: options.steps.length,
        requestedById,
        steps: { create: options.steps.map((name, position) => ({ name, position })) },
      },
      include: scanInclude,
    });
    await enqueueStep(deps, { scanId: created.id, stepId: created.steps[0]!.id }, client);
    return created;
  };
  if (tx) return create(tx);
  const scan = await deps.prisma.$transaction(create);
  publishScanUpdate(deps, scan);
  return scan;
}

async function findScanOrThrow(ctx: ServiceContext, scanId: string, workspaceId?: string): Promise<ScanWithSteps> {
  const viewer = requireViewer(ctx);
  const scan = isUuid(scanId)
    ? await ctx.deps.prisma.scan.findFirst({
        where: { id: scanId, ...(workspaceId ? { workspaceId } : {}), ...visibleScansWhere(viewer) },
        include: scanInclude,
      })
    : null;
  if (!scan) throw new NotFoundError('Scan');
  return scan;
}

export async function getScan(ctx: ServiceContext, scanId: string, workspaceId?: string): Promise<ScanWithSteps> {
  const scan = await findScanOrThrow(ctx, scanId, workspaceId);
  await assertCan(ctx, 'scan:read', { workspaceId: scan.workspaceId });
  return scan;
}

export async function listScans(ctx: ServiceContext, workspaceId: string, input: ListScansInput): Promise<Page<ScanWithSteps>> {
  await assertCan(ctx, 'scan:read', { workspaceId });
  const { page, limit, sortOrder, sortBy, targetId, status } = validate(listScansInput, input);
  const where: Prisma.ScanWhereInput = { workspaceId, ...(targetId ? { targetId } : {}), ...(status ? { status } : {}) };
  const direction = sortOrder === 'ASC' ? 'asc' : 'desc';
  const [rows, total] = await Promise.all([
    ctx.deps.prisma.scan.findMany({
      where,
      include: scanInclude,
      orderBy: [{ [sortBy]: direction }, { id: direction }],
      skip: (page - 1) * limit,
      take: limit,
    }),
    ctx.deps.prisma.scan.count({ where }),
  ]);
  return pageEnvelope(rows, total, page, limit);
}

/** Pothos connection reads: the caller's query (include/select) plus the visibility rule. */
export async function findScansForConnection<Q extends object>(ctx: ServiceContext, where: Prisma.ScanWhereInput, query: Q) {
  const viewer = requireViewer(ctx);
  return ctx.deps.prisma.scan.findMany({ ...query, where: { AND: [where, visibleScansWhere(viewer)] }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] });
}

export async function countScans(ctx: ServiceContext, where: Prisma.ScanWhereInput): Promise<number> {
  const viewer = requireViewer(ctx);
  return ctx.deps.prisma.scan.count({ where: { AND: [where, visibleScansWhere(viewer)] } });
}

/** Stops a scan: pending steps never run; a running step's results are discarded when it finishes. */
export async function cancelScan(ctx: ServiceContext, scanId: string, workspaceId?: string): Promise<ScanWithSteps> {
  const scan = await findScanOrThrow(ctx, scanId, workspaceId);
  await assertCan(ctx, 'scan:start', { workspaceId: scan.workspaceId });
  if (TERMINAL_STATUSES.has(scan.status)) throw new ConflictError(`The scan is already ${scan.status}`);
  const now = new Date();
  const updated = await ctx.deps.prisma.$transaction(async (tx) => {
    await tx.scanStep.updateMany({ where: { scanId, status: { in: ['PENDING', 'IN_PROGRESS'] } }, data: { status: 'CANCELLED', finishedAt: now } });
    return tx.scan.update({ where: { id: scanId }, data: { status: 'CANCELLED', finishedAt: now }, include: scanInclude });
  });
  publishScanUpdate(ctx.deps, updated);
  return updated;
}

/** Runs a failed or cancelled scan again from its first unfinished step; finished steps keep their results. */
export async function retryScan(ctx: ServiceContext, scanId: string, workspaceId?: string): Promise<ScanWithSteps> {
  const scan = await findScanOrThrow(ctx, scanId, workspaceId);
  await assertCan(ctx, 'scan:start', { workspaceId: scan.workspaceId });
  if (scan.status !== 'FAILED' && scan.status !== 'CANCELLED')
    throw new ConflictError(`Only a failed or cancelled scan can be retried; this one is ${scan.status}`);
  const next = scan.steps.find((step) => step.status !== 'COMPLETED');
  if (!next) throw new AppError('CONFLICT', 'Every step of this scan already completed');
  const updated = await ctx.deps.prisma.$transaction(async (tx) => {
    await tx.scanStep.updateMany({
      where: { scanId, status: { not: 'COMPLETED' } },
      data: { status: 'PENDING', error: null, startedAt: null, finishedAt: null },
    });
    const row = await tx.scan.update({ where: { id: scanId }, data: { status: 'PENDING', error: null, finishedAt: null }, include: scanInclude });
    await enqueueStep(ctx.deps, { scanId, stepId: next.id }, tx);
    return row;
  });
  publishScanUpdate(ctx.deps, updated);
  return updated;
}

/** Checks access once, then streams this scan's updates (the current state first) until it ends. */
export async function subscribeToScan(ctx: ServiceContext, scanId: string): Promise<AsyncIterable<ScanWithSteps>> {
  await getScan(ctx, scanId);
  const { pubsub, prisma } = ctx.deps;
  async function* stream(): AsyncGenerator<ScanWithSteps> {
    // Listen before reading the current state: an update published between the read and the start of
    // listening would be lost, and if it was the last one (COMPLETED) the stream would never end.
    const updates = pubsub.subscribe('scan:updated', scanId)[Symbol.asyncIterator]();
    let next = updates.next();
    try {
      for (;;) {
        const scan = await prisma.scan.findUnique({ where: { id: scanId }, include: scanInclude });
        if (!scan) return;
        yield scan;
        if (TERMINAL_STATUSES.has(scan.status)) return;
        if ((await next).done) return;
        next = updates.next();
      }
    } finally {
      await updates.return?.();
    }
  }
  return stream();
}

/** GraphQL's startScan names only the target; its workspace is the target's (when the caller may see it). */
export async function startScanOfTarget(ctx: ServiceContext, targetId: string, options?: ScanOptionsInput): Promise<ScanWithSteps> {
  const viewer = requireViewer(ctx);
  const target = isUuid(targetId)
    ? await ctx.deps.prisma.target.findFirst({
        where: { id: targetId, workspace: { members: { some: { userId: viewer.id } } } },
        select: { workspaceId: true },
      })
    : null;
  if (!target) throw new NotFoundError('Target');
  return startScan(ctx, target.workspaceId, { targetId, options });
}

/** For scan(id) and node(id) on GraphQL: null when absent or not visible. */
export async function findVisibleScan<Q extends object>(ctx: ServiceContext, id: string, query: Q) {
  const viewer = requireViewer(ctx);
  if (!isUuid(id)) return null;
  return ctx.deps.prisma.scan.findFirst({ ...query, where: { id, ...visibleScansWhere(viewer) } });
}

export function visibleScanWhereUnique(ctx: ServiceContext, id: string): Prisma.ScanWhereUniqueInput {
  const viewer = requireViewer(ctx);
  return { id: isUuid(id) ? id : '00000000-0000-0000-0000-000000000000', AND: [visibleScansWhere(viewer)] };
}

/**
 * Scans per status across the whole instance, for the operator's /metrics (no viewer: it is never
 * shown to users). Every status is present, with 0 where there is none.
 */
export async function countScansByStatus(deps: Pick<AppDeps, 'prisma'>): Promise<Record<string, number>> {
  const rows = await deps.prisma.scan.groupBy({ by: ['status'], _count: { _all: true } });
  const counts: Record<string, number> = { PENDING: 0, IN_PROGRESS: 0, COMPLETED: 0, FAILED: 0, CANCELLED: 0 };
  for (const row of rows) counts[row.status] = row._count._all;
  return counts;
}
