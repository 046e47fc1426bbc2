import type { AppDeps } from '../../context.js';
import { publishScanUpdate } from '../scans/events.js';
import { nextTick } from './cadence.js';
import { fireInTransaction, type ScheduleRow } from './fire.js';

/** Schedules fired per tick at most; the rest wait for the next tick (a backlog cannot hold a worker forever). */
const MAX_FIRINGS_PER_TICK = 100;
/** A workspace-wide schedule starts a scan per target in one transaction: allow it more than Prisma's 5 s. */
const FIRING_TIMEOUT_MS = 120_000;

/**
 * Fires every schedule due at `now` (nextRunAt <= now), each exactly once, whichever processes tick at the
 * same time: a firing claims its schedule's row with FOR UPDATE SKIP LOCKED, and in the same transaction starts
 * the scans, records the run and moves nextRunAt to the first tick AFTER now. A schedule that missed many ticks
 * (everything was down) therefore fires once, not once per missed tick. Returns how many schedules fired.
 */
export async function fireDueSchedules(deps: AppDeps, now: Date = new Date()): Promise<number> {
  const failed: string[] = [];
  let fired = 0;
  while (fired < MAX_FIRINGS_PER_TICK) {
    let claimedId: string | undefined;
    try {
      const firing = await deps.prisma.$transaction(
        async (tx) => {
          // Timestamps are stored as UTC without a zone: compare in UTC whatever the session's TimeZone.
          const due = await tx.$queryRaw<{ id: string }[]>`
            SELECT id FROM scan_schedule
            WHERE enabled AND "nextRunAt" <= (${now.toISOString()}::timestamptz AT TIME ZONE 'UTC')
              AND NOT (id = ANY(${failed}::uuid[]))
            ORDER BY "nextRunAt", id
            LIMIT 1
            FOR UPDATE SKIP LOCKED`;
          if (!due.length) return null;
          claimedId = due[0]!.id;
          const schedule = (await tx.scanSchedule.findUniqueOrThrow({ where: { id: claimedId } })) as ScheduleRow;
          const next = safeNextTick(schedule, now);
          const result = await fireInTransaction(deps, tx, schedule, {
            trigger: 'schedule',
            dueAt: schedule.nextRunAt,
            requestedById: schedule.createdById,
            now,
          });
          // A cron expression that no longer parses (it was checked when stored) switches the schedule off rather than firing every tick.
          await tx.scanSchedule.update({ where: { id: schedule.id }, data: next ? { nextRunAt: next } : { nextRunAt: null, enabled: false } });
          return result;
        },
        { timeout: FIRING_TIMEOUT_MS, maxWait: FIRING_TIMEOUT_MS },
      );
      if (!firing) return fired;
      fired += 1;
      for (const scan of firing.scans) publishScanUpdate(deps, scan);
      deps.log.info({ scheduleId: firing.run.scheduleId, started: firing.run.started, skipped: firing.run.skipped }, 'scan schedule fired');
    } catch (error) {
      // This schedule is left due and retried at the next tick; the others still fire now.
      if (!claimedId) throw error;
      failed.push(claimedId);
      deps.log.error({ err: error, scheduleId: claimedId }, 'scan schedule firing failed');
    }
  }
  return fired;
}

function safeNextTick(schedule: ScheduleRow, now: Date): Date | null {
  try {
    return nextTick(schedule.cron, schedule.timeZone, now);
  } catch {
    return null;
  }
}

export interface ScheduleTicker {
  stop(): Promise<void>;
}

/**
 * Looks for due schedules every SCHEDULE_TICK_SECONDS in a process that runs workers. Every such process
 * ticks: the row claim above makes them share the work, and any one of them alive keeps schedules firing.
 */
export function startScheduleTicker(deps: AppDeps): ScheduleTicker {
  let inFlight: Promise<void> | undefined;
  let stopped = false;
  const tick = () => {
    if (inFlight || stopped) return;
    inFlight = fireDueSchedules(deps)
      .then(() => undefined)
      .catch((error: unknown) => deps.log.error({ err: error }, 'scan schedule tick failed'))
      .finally(() => {
        inFlight = undefined;
      });
  };
  const timer = setInterval(tick, deps.env.SCHEDULE_TICK_SECONDS * 1000);
  timer.unref();
  // The first look at once: a tick missed while the process was down fires as soon as it is back.
  tick();
  return {
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await inFlight;
    },
  };
}
