import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { addTarget, waitForScan } from './support/scans.js';
import { waitFor } from './support/wait.js';
import { fireDueSchedules } from '../src/modules/schedules/ticker.js';

/**
 * Schedules firing. With a fake clock: fireDueSchedules(deps, now) on an app without workers (scans stay
 * PENDING, no ticker runs), so each tick is the test's. With a real short interval: an app whose workers tick
 * every second (SCHEDULE_TICK_SECONDS=1) fires a due schedule and the scan runs to its end.
 */

const BASE = '/api/v1/api/scan-schedules';
const FIVE_MINUTES = 5 * 60_000;

async function ownerWithWorkspace(client: ReturnType<typeof clientFor>) {
  const owner = await client.signUp('Owner');
  const workspace = await client.createWorkspace(owner);
  return { owner, workspaceId: workspace.id as string };
}

async function createSchedule(client: ReturnType<typeof clientFor>, owner: TestUser, workspaceId: string, body: Record<string, unknown>) {
  const response = await client.api('POST', BASE, { as: owner, workspaceId, body });
  if (response.status !== 201) throw new Error(`create schedule failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

describe('firing with a fake clock', () => {
  let server: TestApp;
  let client: ReturnType<typeof clientFor>;

  beforeAll(async () => {
    server = await startTestApp({ WORKERS: 'false' });
    client = clientFor(server);
  });
  afterAll(() => server?.stop());

  const runsOf = (scheduleId: string) => server.db.prisma.scanScheduleRun.findMany({ where: { scheduleId }, orderBy: { ranAt: 'asc' } });
  const scheduleRow = (id: string) => server.db.prisma.scanSchedule.findUniqueOrThrow({ where: { id } });

  it('fires once when due, as its creator; the next tick is the first after now; a tick already served never fires again', async () => {
    const { owner, workspaceId } = await ownerWithWorkspace(client);
    const target = await addTarget(client, owner, workspaceId, '192.0.2.40');
    const schedule = await createSchedule(client, owner, workspaceId, { targetId: target.id, cron: '*/5 * * * *', options: { steps: ['dns'] } });
    const due = new Date(schedule.nextRunAt);

    // A moment before the tick: nothing.
    await fireDueSchedules(server.app.deps, new Date(due.getTime() - 1000));
    expect(await runsOf(schedule.id)).toEqual([]);

    const now = new Date(due.getTime() + 1500);
    expect(await fireDueSchedules(server.app.deps, now)).toBeGreaterThanOrEqual(1);
    const [run, ...more] = await runsOf(schedule.id);
    expect(more).toEqual([]);
    expect(run).toMatchObject({ trigger: 'schedule', dueAt: due, ranAt: now, started: 1, skipped: 0, requestedById: owner.id });
    const scanId = (run!.outcomes as { scanId: string }[])[0]!.scanId;
    const scan = await server.db.prisma.scan.findUniqueOrThrow({ where: { id: scanId } });
    expect(scan).toMatchObject({ targetId: target.id, workspaceId, requestedById: owner.id, status: 'PENDING' });
    expect(await scheduleRow(schedule.id)).toMatchObject({ lastRunAt: now, lastScanId: scanId, nextRunAt: new Date(due.getTime() + FIVE_MINUTES) });

    // The same moment again, and two ticks racing: the tick was served.
    await Promise.all([fireDueSchedules(server.app.deps, now), fireDueSchedules(server.app.deps, now)]);
    expect(await runsOf(schedule.id)).toHaveLength(1);

    // The next tick: the scan of the last one is still PENDING (no workers), so the target is skipped and that is recorded.
    const later = new Date(due.getTime() + FIVE_MINUTES + 500);
    await fireDueSchedules(server.app.deps, later);
    const runs = await runsOf(schedule.id);
    expect(runs).toHaveLength(2);
    expect(runs[1]).toMatchObject({ trigger: 'schedule', dueAt: new Date(due.getTime() + FIVE_MINUTES), started: 0, skipped: 1 });
    expect(runs[1]!.outcomes).toEqual([{ targetId: target.id, skipped: `the previous scan of this target (${scanId}) is still running` }]);
    expect(await server.db.prisma.scan.count({ where: { targetId: target.id } })).toBe(1);
    // Once the scan has finished, the following tick scans again.
    await server.db.prisma.scan.update({ where: { id: scanId }, data: { status: 'COMPLETED', finishedAt: later } });
    await fireDueSchedules(server.app.deps, new Date(due.getTime() + 2 * FIVE_MINUTES + 500));
    expect((await runsOf(schedule.id)).map((r) => r.started)).toEqual([1, 0, 1]);
    expect(await server.db.prisma.scan.count({ where: { targetId: target.id } })).toBe(2);
  });

  it('ticks missed while everything was down fire once, not once per missed tick', async () => {
    const { owner, workspaceId } = await ownerWithWorkspace(client);
    await addTarget(client, owner, workspaceId, '192.0.2.41');
    await addTarget(client, owner, workspaceId, '192.0.2.42');
    const schedule = await createSchedule(client, owner, workspaceId, { cron: '*/5 * * * *', options: { steps: ['dns'] } });
    const due = new Date(schedule.nextRunAt);
    // Three days later: 864 ticks were missed.
    const back = new Date(due.getTime() + 3 * 86_400_000 + 61_000);
    await fireDueSchedules(server.app.deps, back);
    await fireDueSchedules(server.app.deps, back);
    const runs = await runsOf(schedule.id);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ dueAt: due, started: 2, skipped: 0 });
    expect(await server.db.prisma.scan.count({ where: { workspaceId } })).toBe(2);
    const next = (await scheduleRow(schedule.id)).nextRunAt!;
    expect(next.getTime()).toBeGreaterThan(back.getTime());
    expect(next.getTime() - back.getTime()).toBeLessThanOrEqual(FIVE_MINUTES);
    expect(next.getUTCMinutes() % 5).toBe(0);
  });

  it('a tick starts nothing, and says why, once the creator left the workspace or it was archived', async () => {
    const { owner, workspaceId } = await ownerWithWorkspace(client);
    const member = await client.signUp('Member');
    await client.addMember(owner, workspaceId, member, 'member');
    const target = await addTarget(client, owner, workspaceId, '192.0.2.43');
    const byMember = await createSchedule(client, member, workspaceId, { targetId: target.id, cron: '0 * * * *' });
    await server.db.prisma.workspaceMember.deleteMany({ where: { workspaceId, userId: member.id } });
    // Written behind the service's back: forget cached roles as the service's own removal does.
    server.app.deps.authCache.invalidate();
    await fireDueSchedules(server.app.deps, new Date(new Date(byMember.nextRunAt).getTime() + 1000));
    expect((await runsOf(byMember.id))[0]).toMatchObject({
      started: 0,
      skipped: 1,
      outcomes: [{ targetId: target.id, skipped: expect.stringContaining('creator may no longer start scans') }],
    });

    expect(await server.db.prisma.scan.count({ where: { workspaceId } })).toBe(0);

    const archived = await ownerWithWorkspace(client);
    const archivedTarget = await addTarget(client, archived.owner, archived.workspaceId, '192.0.2.44');
    const byOwner = await createSchedule(client, archived.owner, archived.workspaceId, { targetId: archivedTarget.id, cron: '30 * * * *' });
    await server.db.prisma.workspace.update({ where: { id: archived.workspaceId }, data: { archivedAt: new Date() } });
    await fireDueSchedules(server.app.deps, new Date(new Date(byOwner.nextRunAt).getTime() + 1000));
    expect((await runsOf(byOwner.id))[0]).toMatchObject({
      started: 0,
      skipped: 1,
      outcomes: [{ targetId: archivedTarget.id, skipped: 'the workspace is archived' }],
    });
    expect(await server.db.prisma.scan.count({ where: { workspaceId: archived.workspaceId } })).toBe(0);
  });

  it('a disabled schedule never fires; a workspace without targets records an empty run', async () => {
    const { owner, workspaceId } = await ownerWithWorkspace(client);
    const off = await createSchedule(client, owner, workspaceId, { cron: '0 * * * *', enabled: false });
    const empty = await createSchedule(client, owner, workspaceId, { cron: '0 * * * *' });
    const far = new Date(Date.now() + 30 * 86_400_000);
    await fireDueSchedules(server.app.deps, far);
    expect(await runsOf(off.id)).toEqual([]);
    expect(await runsOf(empty.id)).toEqual([expect.objectContaining({ started: 0, skipped: 0, outcomes: [] })]);
  });
});

describe('firing on a real short interval', () => {
  let server: TestApp;
  let client: ReturnType<typeof clientFor>;

  beforeAll(async () => {
    server = await startTestApp({ SCHEDULE_TICK_SECONDS: '1', SCAN_ALLOWED_NETWORKS: '127.0.0.0/8' });
    client = clientFor(server);
  });
  afterAll(() => server?.stop());

  it('a due schedule fires within a tick or two in the worker and its scan runs to the end', async () => {
    const { owner, workspaceId } = await ownerWithWorkspace(client);
    const target = await addTarget(client, owner, workspaceId, '127.0.0.1');
    const schedule = await createSchedule(client, owner, workspaceId, { targetId: target.id, cron: '0 0 1 1 *', options: { steps: ['dns'] } });
    // Not due for months: a couple of ticks pass without a run.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(await server.db.prisma.scanScheduleRun.count({ where: { scheduleId: schedule.id } })).toBe(0);

    // Due a moment ago (as if the process had been down over the tick).
    const due = new Date(Date.now() - 1000);
    await server.db.prisma.scanSchedule.update({ where: { id: schedule.id }, data: { nextRunAt: due } });
    const started = Date.now();
    const fired = await waitFor(async () => (await client.api('GET', `${BASE}/${schedule.id}`, { as: owner, workspaceId })).body.lastScanId as string | null, {
      timeoutMs: 10_000,
      intervalMs: 100,
      what: 'the schedule to fire',
    });
    expect(Date.now() - started).toBeLessThan(5000);
    const scan = await waitForScan(client, owner, workspaceId, fired);
    expect(scan).toMatchObject({ status: 'COMPLETED', requestedById: owner.id, targetId: target.id });
    const runs = (await client.api('GET', `${BASE}/${schedule.id}/runs`, { as: owner, workspaceId })).body;
    expect(runs.total).toBe(1);
    expect(runs.data[0]).toMatchObject({ trigger: 'schedule', dueAt: due.toISOString(), started: 1, outcomes: [{ targetId: target.id, scanId: fired }] });
    const after = (await client.api('GET', `${BASE}/${schedule.id}`, { as: owner, workspaceId })).body;
    expect(new Date(after.nextRunAt).getTime()).toBeGreaterThan(Date.now());
  });
});
