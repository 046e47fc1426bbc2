import type { AppDeps } from '../../context.js';
import type { Prisma } from '../../db.js';
import { AppError } from '../../errors.js';
import { roleAllows } from '../../auth/permissions.js';
import { startScanAs, type ScanWithSteps } from '../scans/service.js';
import type { ScanOptionsInput } from '../scans/schemas.js';
import type { RunOutcome, RunTrigger } from './schemas.js';

export type ScheduleRow = Prisma.ScanScheduleGetPayload<object>;
export type ScheduleRunRow = Prisma.ScanScheduleRunGetPayload<object>;

export interface Firing {
  run: ScheduleRunRow;
  /** Started inside the transaction: publish their updates once it committed. */
  scans: ScanWithSteps[];
}

const RUNNING = ['PENDING', 'IN_PROGRESS'] as const;

/**
 * Why a tick starts nothing: the workspace was archived, or the schedule's creator may no longer start scans
 * there (left the workspace, account deleted). The run is still recorded, each target with this reason.
 */
async function whyTickMayNotScan(tx: Prisma.TransactionClient, schedule: ScheduleRow): Promise<string | null> {
  const workspace = await tx.workspace.findUnique({ where: { id: schedule.workspaceId }, select: { archivedAt: true } });
  if (workspace?.archivedAt) return 'the workspace is archived';
  const membership = schedule.createdById
    ? await tx.workspaceMember.findUnique({
        where: { workspaceId_userId: { workspaceId: schedule.workspaceId, userId: schedule.createdById } },
        select: { role: true },
      })
    : null;
  if (!membership || !roleAllows(membership.role, 'scan:start')) {
    return "the schedule's creator may no longer start scans in this workspace: a member should re-create it";
  }
  return null;
}

/**
 * One firing of a schedule, inside the caller's transaction (which holds the schedule's row lock): a scan of
 * each target whose previous scan finished, a skip with the reason for the others, and the run record. The
 * scans, their first jobs, the run and lastRunAt commit together or not at all.
 */
export async function fireInTransaction(
  deps: AppDeps,
  tx: Prisma.TransactionClient,
  schedule: ScheduleRow,
  firing: { trigger: RunTrigger; dueAt: Date | null; requestedById: string | null; now: Date },
): Promise<Firing> {
  const targetIds = schedule.targetId
    ? [schedule.targetId]
    : (await tx.target.findMany({ where: { workspaceId: schedule.workspaceId }, select: { id: true }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] })).map(
        (target) => target.id,
      );
  const running = await tx.scan.findMany({
    where: { targetId: { in: targetIds }, status: { in: [...RUNNING] } },
    select: { id: true, targetId: true },
  });
  const runningOf = new Map(running.map((scan) => [scan.targetId, scan.id]));
  // "Run now" was checked against its caller; a tick acts in the creator's name, so it checks them now.
  const refusal = firing.trigger === 'schedule' ? await whyTickMayNotScan(tx, schedule) : null;

  const outcomes: RunOutcome[] = [];
  const scans: ScanWithSteps[] = [];
  for (const targetId of targetIds) {
    if (refusal) {
      outcomes.push({ targetId, skipped: refusal });
      continue;
    }
    const previous = runningOf.get(targetId);
    if (previous) {
      outcomes.push({ targetId, skipped: `the previous scan of this target (${previous}) is still running` });
      continue;
    }
    try {
      const scan = await startScanAs(
        deps,
        { workspaceId: schedule.workspaceId, targetId, options: schedule.options as ScanOptionsInput, requestedById: firing.requestedById },
        tx,
      );
      scans.push(scan);
      outcomes.push({ targetId, scanId: scan.id });
    } catch (error) {
      // Refusals decided before anything is written (every step's tool switched off, target gone): recorded,
      // and the other targets still run. A database error aborts the whole firing.
      if (!(error instanceof AppError)) throw error;
      outcomes.push({ targetId, skipped: error.message });
    }
  }

  const run = await tx.scanScheduleRun.create({
    data: {
      scheduleId: schedule.id,
      trigger: firing.trigger,
      dueAt: firing.dueAt,
      ranAt: firing.now,
      started: scans.length,
      skipped: outcomes.length - scans.length,
      outcomes: outcomes as unknown as Prisma.InputJsonValue,
      requestedById: firing.requestedById,
    },
  });
  await tx.scanSchedule.update({
    where: { id: schedule.id },
    data: { lastRunAt: firing.now, ...(scans.length ? { lastScanId: scans.at(-1)!.id } : {}) },
  });
  return { run, scans };
}
