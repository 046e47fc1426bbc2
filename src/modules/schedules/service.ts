import type { ServiceContext } from '../../context.js';
import { NotFoundError } from '../../errors.js';
import { assertCan, isUuid, requireViewer, visibleWorkspacesWhere } from '../../auth/authz.js';
import type { Prisma } from '../../db.js';
import { validate } from '../../validate.js';
import { pageEnvelope, pageWindow, prismaDirection, type Page } from '../../pagination.js';
import { publishScanUpdate } from '../scans/events.js';
import { checkCadence } from './cadence.js';
import { fireInTransaction, type ScheduleRow } from './fire.js';
import { toScheduleResponse, toScheduleRunResponse, type ScheduleResponse, type ScheduleRunResponse } from './response.js';
import {
  createScheduleInput,
  listRunsInput,
  listSchedulesInput,
  updateScheduleInput,
  type CreateScheduleInput,
  type ListRunsInput,
  type ListSchedulesInput,
  type UpdateScheduleInput,
} from './schemas.js';

/**
 * Scan schedules: who may is the same as for scans (members read and start them). The ticker (ticker.ts)
 * fires them; "run now" fires one at once as the caller, without moving its next tick.
 */

/** The visibility rule AND-ed with the filters: shared by the REST page, the GraphQL connection and lookups. */
export function scheduleWhere(ctx: ServiceContext, filters: { workspaceId?: string; targetId?: string }): Prisma.ScanScheduleWhereInput {
  const viewer = requireViewer(ctx);
  const and: Prisma.ScanScheduleWhereInput[] = [{ workspace: visibleWorkspacesWhere(viewer) }];
  if (filters.workspaceId) and.push({ workspaceId: filters.workspaceId });
  if (filters.targetId) and.push({ targetId: filters.targetId });
  return { AND: and };
}

async function findScheduleOrThrow(ctx: ServiceContext, workspaceId: string, id: string): Promise<ScheduleRow> {
  const row = isUuid(id) ? await ctx.deps.prisma.scanSchedule.findFirst({ where: { AND: [{ id }, scheduleWhere(ctx, { workspaceId })] } }) : null;
  if (!row) throw new NotFoundError('Scan schedule');
  return row;
}

function minInterval(ctx: ServiceContext): number {
  return ctx.deps.env.SCHEDULE_MIN_INTERVAL_SECONDS;
}

export async function createSchedule(ctx: ServiceContext, workspaceId: string, input: CreateScheduleInput): Promise<ScheduleResponse> {
  const viewer = requireViewer(ctx);
  const { targetId, cron, timeZone: zone, options, enabled } = validate(createScheduleInput, input);
  const now = new Date();
  const { timeZone, nextRunAt } = checkCadence(cron, zone, minInterval(ctx), now);
  await assertCan(ctx, 'scan:start', { workspaceId });
  if (targetId) {
    const target = await ctx.deps.prisma.target.findFirst({ where: { id: targetId, workspaceId }, select: { id: true } });
    if (!target) throw new NotFoundError('Target');
  }
  const row = await ctx.deps.prisma.scanSchedule.create({
    data: {
      workspaceId,
      targetId: targetId ?? null,
      cron: cron.split(/\s+/).join(' '),
      timeZone,
      options: (options ?? {}) as Prisma.InputJsonValue,
      enabled,
      nextRunAt: enabled ? nextRunAt : null,
      createdById: viewer.id,
    },
  });
  return toScheduleResponse(row);
}

export async function listSchedules(ctx: ServiceContext, workspaceId: string, input: ListSchedulesInput): Promise<Page<ScheduleResponse>> {
  const { page, limit, sortOrder, targetId } = validate(listSchedulesInput, input);
  await assertCan(ctx, 'scan:read', { workspaceId });
  const where = scheduleWhere(ctx, { workspaceId, targetId });
  const direction = prismaDirection(sortOrder);
  const [rows, total] = await Promise.all([
    ctx.deps.prisma.scanSchedule.findMany({ where, orderBy: [{ createdAt: direction }, { id: direction }], ...pageWindow(page, limit) }),
    ctx.deps.prisma.scanSchedule.count({ where }),
  ]);
  return pageEnvelope(rows.map(toScheduleResponse), total, page, limit);
}

export async function getSchedule(ctx: ServiceContext, workspaceId: string, id: string): Promise<ScheduleResponse> {
  await assertCan(ctx, 'scan:read', { workspaceId });
  return toScheduleResponse(await findScheduleOrThrow(ctx, workspaceId, id));
}

/**
 * Changes the cadence, options or enabled flag. A new cadence, or switching it back on, counts its next tick
 * from now; switching it off clears nextRunAt (it never fires while off, and does not catch up when back on).
 */
export async function updateSchedule(ctx: ServiceContext, workspaceId: string, id: string, input: UpdateScheduleInput): Promise<ScheduleResponse> {
  const change = validate(updateScheduleInput, input);
  await assertCan(ctx, 'scan:start', { workspaceId });
  const current = await findScheduleOrThrow(ctx, workspaceId, id);
  const cron = change.cron?.split(/\s+/).join(' ') ?? current.cron;
  const enabled = change.enabled ?? current.enabled;
  const { timeZone, nextRunAt } = checkCadence(cron, change.timeZone ?? current.timeZone, minInterval(ctx), new Date());
  const cadenceChanged = cron !== current.cron || timeZone !== current.timeZone || (enabled && !current.enabled);
  const row = await ctx.deps.prisma.scanSchedule.update({
    where: { id: current.id },
    data: {
      cron,
      timeZone,
      enabled,
      ...(change.options !== undefined ? { options: change.options as Prisma.InputJsonValue } : {}),
      ...(!enabled ? { nextRunAt: null } : cadenceChanged ? { nextRunAt } : {}),
    },
  });
  return toScheduleResponse(row);
}

export async function deleteSchedule(ctx: ServiceContext, workspaceId: string, id: string): Promise<{ id: string }> {
  await assertCan(ctx, 'scan:start', { workspaceId });
  const { count } = isUuid(id) ? await ctx.deps.prisma.scanSchedule.deleteMany({ where: { id, workspaceId } }) : { count: 0 };
  if (!count) throw new NotFoundError('Scan schedule');
  return { id };
}

/** Fires the schedule now as the caller (recorded as a manual run); its next tick stays where it was. */
export async function runSchedule(ctx: ServiceContext, workspaceId: string, id: string): Promise<ScheduleRunResponse> {
  const viewer = requireViewer(ctx);
  await assertCan(ctx, 'scan:start', { workspaceId });
  const schedule = await findScheduleOrThrow(ctx, workspaceId, id);
  const firing = await ctx.deps.prisma.$transaction(
    async (tx) => {
      // Waits for a tick firing it at this moment, so the two see each other's scans as running.
      await tx.$queryRaw`SELECT id FROM scan_schedule WHERE id = ${schedule.id}::uuid FOR UPDATE`;
      const fresh = await tx.scanSchedule.findUnique({ where: { id: schedule.id } });
      if (!fresh) throw new NotFoundError('Scan schedule');
      return fireInTransaction(ctx.deps, tx, fresh, { trigger: 'manual', dueAt: null, requestedById: viewer.id, now: new Date() });
    },
    { timeout: 120_000, maxWait: 120_000 },
  );
  for (const scan of firing.scans) publishScanUpdate(ctx.deps, scan);
  return toScheduleRunResponse(firing.run);
}

export async function listRuns(ctx: ServiceContext, workspaceId: string, id: string, input: ListRunsInput): Promise<Page<ScheduleRunResponse>> {
  const { page, limit, sortOrder } = validate(listRunsInput, input);
  await assertCan(ctx, 'scan:read', { workspaceId });
  const schedule = await findScheduleOrThrow(ctx, workspaceId, id);
  const direction = prismaDirection(sortOrder);
  const where = { scheduleId: schedule.id };
  const [rows, total] = await Promise.all([
    ctx.deps.prisma.scanScheduleRun.findMany({ where, orderBy: [{ ranAt: direction }, { id: direction }], ...pageWindow(page, limit) }),
    ctx.deps.prisma.scanScheduleRun.count({ where }),
  ]);
  return pageEnvelope(rows.map(toScheduleRunResponse), total, page, limit);
}

/** For GraphQL, where a schedule is named by its id alone: the workspace it belongs to, if the caller may see it. */
export async function workspaceOfVisibleSchedule(ctx: ServiceContext, id: string): Promise<string> {
  const row = isUuid(id)
    ? await ctx.deps.prisma.scanSchedule.findFirst({ where: { AND: [{ id }, scheduleWhere(ctx, {})] }, select: { workspaceId: true } })
    : null;
  if (!row) throw new NotFoundError('Scan schedule');
  return row.workspaceId;
}

/** For GraphQL's createScanSchedule, which names a workspace or a target: the workspace of the target when only that is given. */
export async function workspaceOfVisibleTarget(ctx: ServiceContext, targetId: string): Promise<string> {
  const viewer = requireViewer(ctx);
  const row = isUuid(targetId)
    ? await ctx.deps.prisma.target.findFirst({ where: { id: targetId, workspace: visibleWorkspacesWhere(viewer) }, select: { workspaceId: true } })
    : null;
  if (!row) throw new NotFoundError('Target');
  return row.workspaceId;
}

const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/** node(id) lookups: a unique where that also carries the visibility rule. */
export function visibleScheduleWhereUnique(ctx: ServiceContext, id: string): Prisma.ScanScheduleWhereUniqueInput {
  return { id: isUuid(id) ? id : NIL_UUID, AND: [scheduleWhere(ctx, {})] };
}

/** The latest runs of schedules reached through visible parents (GraphQL's recentRuns). */
export async function recentRunsOf(ctx: ServiceContext, scheduleId: string, limit: number): Promise<ScheduleRunResponse[]> {
  requireViewer(ctx);
  const rows = await ctx.deps.prisma.scanScheduleRun.findMany({ where: { scheduleId }, orderBy: [{ ranAt: 'desc' }, { id: 'desc' }], take: limit });
  return rows.map(toScheduleRunResponse);
}
