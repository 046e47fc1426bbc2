import { builder } from '../../graphql/builder.js';
import { decodeId } from '../../graphql/ids.js';
import { WorkspaceRef } from '../workspaces/graphql.js';
import { TargetRef } from '../targets/graphql.js';
import { ScanOptionsInput, withoutNulls } from '../scans/graphql.js';
import * as schedules from './service.js';
import type { ScheduleRunResponse } from './response.js';
import type { RunOutcome } from './schemas.js';

const ScanScheduleRunOutcomeRef = builder.objectRef<RunOutcome>('ScanScheduleRunOutcome').implement({
  description: 'What one firing did for one target: the scan it started, or why it started none.',
  fields: (t) => ({
    targetId: t.exposeString('targetId'),
    scanId: t.string({ nullable: true, resolve: (outcome) => ('scanId' in outcome ? outcome.scanId : null) }),
    skipped: t.string({
      nullable: true,
      description: 'Why no scan was started (e.g. the previous scan of the target is still running).',
      resolve: (outcome) => ('skipped' in outcome ? outcome.skipped : null),
    }),
  }),
});

export const ScanScheduleRunRef = builder.objectRef<ScheduleRunResponse>('ScanScheduleRun').implement({
  description: 'One firing of a scan schedule.',
  fields: (t) => ({
    id: t.exposeID('id'),
    trigger: t.exposeString('trigger', { description: 'schedule: a cron tick; manual: run now.' }),
    dueAt: t.expose('dueAt', { type: 'DateTime', nullable: true, description: 'The tick it served (null for run now).' }),
    ranAt: t.expose('ranAt', { type: 'DateTime' }),
    started: t.exposeInt('started'),
    skipped: t.exposeInt('skipped'),
    outcomes: t.field({ type: [ScanScheduleRunOutcomeRef], resolve: (run) => run.outcomes }),
    requestedById: t.exposeString('requestedById', { nullable: true }),
  }),
});

export const ScanScheduleRef = builder.prismaNode('ScanSchedule', {
  id: { field: 'id' },
  description: 'Scans of a target, or of every target of a workspace, on a 5-field cron expression read in an IANA time zone.',
  findUnique: (id, ctx) => schedules.visibleScheduleWhereUnique(ctx, id),
  nullable: true,
  fields: (t) => ({
    databaseId: t.exposeString('id', { description: 'The UUID the REST API uses.' }),
    workspace: t.relation('workspace'),
    target: t.relation('target', { nullable: true, description: 'The target it scans; null: every target of the workspace.' }),
    cron: t.exposeString('cron'),
    timeZone: t.exposeString('timeZone'),
    options: t.expose('options', { type: 'JSON', description: 'Scan options of every scan it starts.' }),
    enabled: t.exposeBoolean('enabled'),
    nextRunAt: t.expose('nextRunAt', { type: 'DateTime', nullable: true, description: 'When it fires next; null while disabled.' }),
    lastRunAt: t.expose('lastRunAt', { type: 'DateTime', nullable: true }),
    lastScan: t.relation('lastScan', { nullable: true, description: 'The last scan it started.' }),
    createdById: t.exposeString('createdById', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    recentRuns: t.field({
      type: [ScanScheduleRunRef],
      description: 'Its latest firings, newest first.',
      args: { limit: t.arg.int({ defaultValue: 10, description: '1 to 50.' }) },
      resolve: (schedule, args, ctx) => schedules.recentRunsOf(ctx, schedule.id, Math.min(Math.max(args.limit ?? 10, 1), 50)),
    }),
  }),
});

builder.prismaObjectField('Workspace', 'scanSchedules', (t) =>
  t.relatedConnection(
    'scanSchedules',
    {
      cursor: 'id',
      totalCount: true,
      description: "The workspace's scan schedules, newest first.",
      query: (_args, ctx) => ({ where: schedules.scheduleWhere(ctx, {}), orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] }),
    },
    { name: 'ScanScheduleConnection' },
    { name: 'ScanScheduleEdge' },
  ),
);

builder.mutationFields((t) => ({
  createScanSchedule: t.field({
    type: ScanScheduleRef,
    errors: {},
    description: 'Schedules scans of a target (targetId) or of every target of the workspace (no targetId).',
    args: {
      workspaceId: t.arg.id({ required: true }),
      targetId: t.arg.id(),
      cron: t.arg.string({ required: true, description: 'Five fields: minute hour day-of-month month day-of-week.' }),
      timeZone: t.arg.string({ description: 'IANA time zone (default UTC).' }),
      options: t.arg({ type: ScanOptionsInput }),
      enabled: t.arg.boolean(),
    },
    resolve: (_root, args, ctx) =>
      schedules.createSchedule(ctx, decodeId(args.workspaceId, WorkspaceRef, 'workspaceId'), {
        targetId: decodeId(args.targetId, TargetRef, 'targetId'),
        cron: args.cron,
        timeZone: args.timeZone ?? undefined,
        options: withoutNulls(args.options),
        enabled: args.enabled ?? undefined,
      }),
  }),
  updateScanSchedule: t.field({
    type: ScanScheduleRef,
    errors: {},
    description: 'Changes the cadence, options (replaced as a whole) or enabled flag; absent arguments stay as they are.',
    args: {
      id: t.arg.id({ required: true }),
      cron: t.arg.string(),
      timeZone: t.arg.string(),
      options: t.arg({ type: ScanOptionsInput }),
      enabled: t.arg.boolean(),
    },
    resolve: async (_root, args, ctx) => {
      const id = decodeId(args.id, ScanScheduleRef, 'id');
      return schedules.updateSchedule(ctx, await schedules.workspaceOfVisibleSchedule(ctx, id), id, {
        cron: args.cron ?? undefined,
        timeZone: args.timeZone ?? undefined,
        options: withoutNulls(args.options),
        enabled: args.enabled ?? undefined,
      });
    },
  }),
  deleteScanSchedule: t.field({
    type: 'ID',
    errors: {},
    description: 'Deletes the schedule (its scans stay); returns its database id.',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => {
      const id = decodeId(args.id, ScanScheduleRef, 'id');
      return (await schedules.deleteSchedule(ctx, await schedules.workspaceOfVisibleSchedule(ctx, id), id)).id;
    },
  }),
  runScanSchedule: t.field({
    type: ScanScheduleRunRef,
    errors: {},
    description: 'Runs the schedule now as the caller; targets still being scanned are skipped. Its next tick does not move.',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => {
      const id = decodeId(args.id, ScanScheduleRef, 'id');
      return schedules.runSchedule(ctx, await schedules.workspaceOfVisibleSchedule(ctx, id), id);
    },
  }),
}));
