import { nodeIdOf } from '../../graphql/ids.js';
import type { ScheduleRow, ScheduleRunRow } from './fire.js';
import type { Prisma } from '../../db.js';
import type { RunOutcome, RunTrigger } from './schemas.js';

export interface ScheduleResponse {
  id: string;
  /** The GraphQL global id. */
  nodeId: string;
  workspaceId: string;
  targetId: string | null;
  cron: string;
  timeZone: string;
  options: Prisma.JsonObject;
  enabled: boolean;
  nextRunAt: Date | null;
  lastRunAt: Date | null;
  lastScanId: string | null;
  createdById: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export function toScheduleResponse(row: ScheduleRow): ScheduleResponse {
  return {
    id: row.id,
    nodeId: nodeIdOf('ScanSchedule', row.id),
    workspaceId: row.workspaceId,
    targetId: row.targetId,
    cron: row.cron,
    timeZone: row.timeZone,
    options: (row.options ?? {}) as Prisma.JsonObject,
    enabled: row.enabled,
    nextRunAt: row.nextRunAt,
    lastRunAt: row.lastRunAt,
    lastScanId: row.lastScanId,
    createdById: row.createdById,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

export interface ScheduleRunResponse {
  id: string;
  scheduleId: string;
  trigger: RunTrigger;
  dueAt: Date | null;
  ranAt: Date;
  started: number;
  skipped: number;
  outcomes: RunOutcome[];
  requestedById: string | null;
}

export function toScheduleRunResponse(row: ScheduleRunRow): ScheduleRunResponse {
  return {
    id: row.id,
    scheduleId: row.scheduleId,
    trigger: row.trigger as RunTrigger,
    dueAt: row.dueAt,
    ranAt: row.ranAt,
    started: row.started,
    skipped: row.skipped,
    outcomes: row.outcomes as unknown as RunOutcome[],
    requestedById: row.requestedById,
  };
}
