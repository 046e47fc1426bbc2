import { z } from 'zod';
import { router } from '../../rest/trpc.js';
import { requestHeaders, workspaceProcedure } from '../../rest/procedures.js';
import { dateTime, idOutput, idParam, pageSchema, uuidParam } from '../../rest/schemas.js';
import * as schedules from './service.js';
import { createScheduleInput, listRunsInput, listSchedulesInput, RUN_TRIGGERS, updateScheduleInput } from './schemas.js';

export const scheduleSchema = z
  .object({
    id: z.string(),
    nodeId: z.string().meta({ description: 'Its GraphQL global id (`id` there), for node(id:); id arguments take either.' }),
    workspaceId: z.string(),
    targetId: z.string().nullable().meta({ description: 'The target it scans; null: every target of the workspace.' }),
    cron: z.string().meta({ description: 'Five fields: minute hour day-of-month month day-of-week.' }),
    timeZone: z.string().meta({ description: 'The IANA time zone the expression is read in.' }),
    options: z.record(z.string(), z.unknown()).meta({ description: 'Scan options of every scan it starts.' }),
    enabled: z.boolean(),
    nextRunAt: dateTime.nullable().meta({ description: 'When it fires next; null while disabled.' }),
    lastRunAt: dateTime.nullable(),
    lastScanId: z.string().nullable().meta({ description: 'The last scan it started.' }),
    createdById: z.string().nullable().meta({ description: 'Who made it; scheduled scans are requested in their name.' }),
    createdAt: dateTime,
    updatedAt: dateTime,
  })
  .meta({ id: 'ScanSchedule' });

const runSchema = z
  .object({
    id: z.string(),
    scheduleId: z.string(),
    trigger: z.enum(RUN_TRIGGERS).meta({ description: 'schedule: a cron tick; manual: run now.' }),
    dueAt: dateTime.nullable().meta({ description: 'The tick it served (null for run now).' }),
    ranAt: dateTime,
    started: z.number().int(),
    skipped: z.number().int(),
    outcomes: z
      .array(
        z.object({
          targetId: z.string(),
          scanId: z.string().optional().meta({ description: 'The scan started for this target.' }),
          skipped: z.string().optional().meta({ description: 'Why no scan was started (e.g. the previous one is still running).' }),
        }),
      )
      .meta({ description: 'Per target: the scan started, or why none was.' }),
    requestedById: z.string().nullable(),
  })
  .meta({ id: 'ScanScheduleRun' });

const tags = ['Scan schedules'];

export const schedulesRest = router({
  create: workspaceProcedure
    .meta({
      successStatus: 201,
      openapi: {
        method: 'POST',
        path: '/api/scan-schedules',
        tags,
        summary: 'Schedule scans of a target, or of every target of the workspace, on a cron expression in a time zone',
        requestHeaders,
      },
    })
    .input(createScheduleInput)
    .output(scheduleSchema)
    .mutation(async ({ ctx, input }) => {
      const schedule = await schedules.createSchedule(ctx.svc, ctx.workspaceId, input);
      ctx.svc.responseHeaders.set('location', `/api/v1/api/scan-schedules/${schedule.id}`);
      return schedule;
    }),

  list: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: '/api/scan-schedules', tags, summary: "List the workspace's scan schedules", requestHeaders } })
    .input(listSchedulesInput)
    .output(pageSchema(scheduleSchema))
    .query(({ ctx, input }) => schedules.listSchedules(ctx.svc, ctx.workspaceId, input)),

  get: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: '/api/scan-schedules/{id}', tags, summary: 'Get one scan schedule', requestHeaders } })
    .input(idParam)
    .output(scheduleSchema)
    .query(({ ctx, input }) => schedules.getSchedule(ctx.svc, ctx.workspaceId, input.id)),

  update: workspaceProcedure
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/api/scan-schedules/{id}',
        tags,
        summary: 'Change the cadence, options or enabled flag (a new cadence or re-enabling counts the next tick from now)',
        requestHeaders,
      },
    })
    .input(updateScheduleInput.extend({ id: uuidParam }))
    .output(scheduleSchema)
    .mutation(({ ctx, input: { id, ...change } }) => schedules.updateSchedule(ctx.svc, ctx.workspaceId, id, change)),

  delete: workspaceProcedure
    .meta({ openapi: { method: 'DELETE', path: '/api/scan-schedules/{id}', tags, summary: 'Delete a scan schedule (its scans stay)', requestHeaders } })
    .input(idParam)
    .output(idOutput)
    .mutation(({ ctx, input }) => schedules.deleteSchedule(ctx.svc, ctx.workspaceId, input.id)),

  run: workspaceProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/scan-schedules/{id}/run',
        tags,
        summary: 'Run the schedule now as the caller (targets still being scanned are skipped); its next tick does not move',
        requestHeaders,
      },
    })
    .input(idParam)
    .output(runSchema)
    .mutation(({ ctx, input }) => schedules.runSchedule(ctx.svc, ctx.workspaceId, input.id)),

  runs: workspaceProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/scan-schedules/{id}/runs',
        tags,
        summary: 'What each firing did: scans started and targets skipped, newest first',
        requestHeaders,
      },
    })
    .input(listRunsInput.extend({ id: uuidParam }))
    .output(pageSchema(runSchema))
    .query(({ ctx, input: { id, ...query } }) => schedules.listRuns(ctx.svc, ctx.workspaceId, id, query)),
});
