import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { addTarget, globalId } from './support/scans.js';

/**
 * Scan schedules through the front doors: CRUD, the 400s that name the field, who may, run now (with the
 * skip while the previous scan is running) and GraphQL. WORKERS=false: scans started here stay PENDING and no
 * ticker runs, so nothing fires behind the test's back (firing is test/schedules.firing.test.ts).
 */

let server: TestApp;
let client: ReturnType<typeof clientFor>;

beforeAll(async () => {
  server = await startTestApp({ WORKERS: 'false' });
  client = clientFor(server);
});
afterAll(() => server?.stop());

const BASE = '/api/v1/api/scan-schedules';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

async function ownerWithWorkspace(name = 'Owner') {
  const owner = await client.signUp(name);
  const workspace = await client.createWorkspace(owner);
  return { owner, workspaceId: workspace.id as string };
}

function create(as: TestUser, workspaceId: string, body: unknown) {
  return client.api('POST', BASE, { as, workspaceId, body });
}

async function createOk(as: TestUser, workspaceId: string, body: Record<string, unknown>) {
  const response = await create(as, workspaceId, body);
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body;
}

function fields(response: { body: any }): string[] {
  return (response.body.details ?? []).map((detail: { field: string }) => detail.field);
}

describe('scan schedules over REST', () => {
  it('creates a schedule of a target (201, Location, next tick in its time zone) and of the whole workspace', async () => {
    const { owner, workspaceId } = await ownerWithWorkspace();
    const target = await addTarget(client, owner, workspaceId, 'example.com');
    const before = Date.now();
    const response = await create(owner, workspaceId, { targetId: target.id, cron: '0 9 * * 1-5', timeZone: 'europe/paris', options: { steps: ['dns'] } });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    const schedule = response.body;
    expect(response.headers.get('location')).toBe(`${BASE}/${schedule.id}`);
    expect(schedule).toMatchObject({
      workspaceId,
      targetId: target.id,
      cron: '0 9 * * 1-5',
      timeZone: 'Europe/Paris',
      options: { steps: ['dns'] },
      enabled: true,
      lastRunAt: null,
      lastScanId: null,
      createdById: owner.id,
      nodeId: globalId('ScanSchedule', schedule.id),
    });
    expect(schedule.nextRunAt).toMatch(ISO);
    const next = new Date(schedule.nextRunAt);
    expect(next.getTime()).toBeGreaterThan(before);
    // 09:00 in Paris is 08:00 UTC in winter, 07:00 in summer; on a weekday.
    expect(new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Paris', hour: '2-digit', minute: '2-digit' }).format(next)).toBe('09:00');
    expect(['Sat', 'Sun']).not.toContain(new Intl.DateTimeFormat('en-US', { timeZone: 'Europe/Paris', weekday: 'short' }).format(next));

    const everything = await createOk(owner, workspaceId, { cron: '*/5 * * * *' });
    expect(everything).toMatchObject({ targetId: null, timeZone: 'UTC', options: {}, enabled: true });
    expect(new Date(everything.nextRunAt).getUTCMinutes() % 5).toBe(0);

    const disabled = await createOk(owner, workspaceId, { cron: '0 3 * * *', enabled: false });
    expect(disabled).toMatchObject({ enabled: false, nextRunAt: null });
  });

  it('lists with paging, gets one, and answers 404 for unknown ids and other workspaces', async () => {
    const { owner, workspaceId } = await ownerWithWorkspace();
    const created = [];
    for (const cron of ['0 1 * * *', '0 2 * * *', '0 3 * * *']) created.push(await createOk(owner, workspaceId, { cron }));
    const page1 = await client.api('GET', `${BASE}?limit=2`, { as: owner, workspaceId });
    expect(page1.status).toBe(200);
    expect(page1.body).toMatchObject({ total: 3, page: 1, limit: 2, hasNextPage: true, pageCount: 2 });
    expect(page1.body.data.map((s: { cron: string }) => s.cron)).toEqual(['0 3 * * *', '0 2 * * *']);
    const page2 = await client.api('GET', `${BASE}?limit=2&page=2&sortOrder=desc`, { as: owner, workspaceId });
    expect(page2.body.data.map((s: { cron: string }) => s.cron)).toEqual(['0 1 * * *']);

    const one = await client.api('GET', `${BASE}/${created[0].id}`, { as: owner, workspaceId });
    expect(one.status).toBe(200);
    expect(one.body).toEqual(created[0]);
    expect((await client.api('GET', `${BASE}/${randomUUID()}`, { as: owner, workspaceId })).status).toBe(404);

    const stranger = await ownerWithWorkspace('Stranger');
    expect((await client.api('GET', `${BASE}/${created[0].id}`, { as: stranger.owner, workspaceId: stranger.workspaceId })).status).toBe(404);
    expect((await client.api('GET', BASE, { as: stranger.owner, workspaceId })).status).toBe(404);
    expect((await client.api('GET', BASE, { workspaceId })).status).toBe(401);
    const bad = await client.api('GET', `${BASE}?limit=500`, { as: owner, workspaceId });
    expect(bad.status).toBe(400);
    expect(fields(bad)).toEqual(['limit']);
  });

  it('refuses bad input with 400 naming the field', async () => {
    const { owner, workspaceId } = await ownerWithWorkspace();
    const cases: [body: Record<string, unknown>, field: string, says: RegExp][] = [
      [{ cron: '* * * *' }, 'cron', /exactly 5 fields/],
      [{ cron: '0 0 * * * *' }, 'cron', /exactly 5 fields/],
      [{ cron: '@daily' }, 'cron', /exactly 5 fields/],
      [{ cron: '61 * * * *' }, 'cron', /not a valid cron expression/],
      [{ cron: 'every day' }, 'cron', /exactly 5 fields|not a valid/],
      [{ cron: 'a b c d e' }, 'cron', /not a valid cron expression/],
      [{ cron: '0 0 31 2 *' }, 'cron', /not a valid|never fires/],
      [{ cron: '* * * * *' }, 'cron', /at most every 300 s/],
      [{ cron: '*/2 * * * *' }, 'cron', /at most every 300 s/],
      // Twice an hour apart at 09:00 and 09:01: the shortest gap counts, not the average.
      [{ cron: '0,1 9 * * *' }, 'cron', /fires every 60 s/],
      [{ cron: '' }, 'cron', /empty/],
      [{ cron: 5 }, 'cron', /string/],
      [{}, 'cron', /./],
      [{ cron: '0 3 * * *', timeZone: 'Mars/Olympus' }, 'timeZone', /IANA time zone/],
      [{ cron: '0 3 * * *', timeZone: '+01:00' }, 'timeZone', /IANA time zone/],
      [{ cron: '0 3 * * *', timeZone: '' }, 'timeZone', /empty/],
      [{ cron: '0 3 * * *', targetId: 'nope' }, 'targetId', /UUID/],
      [{ cron: '0 3 * * *', options: { ports: 'not-a-port' } }, 'options.ports', /./],
      [{ cron: '0 3 * * *', options: { steps: ['teleport'] } }, 'options.steps.0', /./],
      [{ cron: '0 3 * * *', options: { timeoutMs: 5 } }, 'options.timeoutMs', /./],
      [{ cron: '0 3 * * *', enabled: 'yes' }, 'enabled', /true or false/],
      [{ cron: '0 3 * * *', every: 'day' }, 'every', /not a known field/],
    ];
    for (const [body, field, says] of cases) {
      const response = await create(owner, workspaceId, body);
      expect(response.status, `${JSON.stringify(body)} → ${JSON.stringify(response.body)}`).toBe(400);
      expect(response.body.code).toBe('VALIDATION_FAILED');
      expect(fields(response), JSON.stringify(body)).toContain(field);
      expect(response.body.details.find((d: { field: string }) => d.field === field).message, JSON.stringify(body)).toMatch(says);
    }
    // A target of another workspace is not found here.
    const other = await ownerWithWorkspace('Other');
    const theirs = await addTarget(client, other.owner, other.workspaceId, 'other.example');
    expect((await create(owner, workspaceId, { cron: '0 3 * * *', targetId: theirs.id })).status).toBe(404);
    expect((await client.api('GET', BASE, { as: owner, workspaceId })).body.total).toBe(0);
  });

  it('patches the cadence, options and enabled flag; bad patches are 400 and change nothing', async () => {
    const { owner, workspaceId } = await ownerWithWorkspace();
    const schedule = await createOk(owner, workspaceId, { cron: '0 3 * * *' });
    const path = `${BASE}/${schedule.id}`;

    const moved = await client.api('PATCH', path, {
      as: owner,
      workspaceId,
      body: { cron: '30 4 * * *', timeZone: 'America/New_York', options: { steps: ['dns'] } },
    });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body).toMatchObject({ cron: '30 4 * * *', timeZone: 'America/New_York', options: { steps: ['dns'] }, enabled: true });
    expect(new Intl.DateTimeFormat('en-GB', { timeZone: 'America/New_York', hour: '2-digit', minute: '2-digit' }).format(new Date(moved.body.nextRunAt))).toBe(
      '04:30',
    );

    const off = await client.api('PATCH', path, { as: owner, workspaceId, body: { enabled: false } });
    expect(off.body).toMatchObject({ enabled: false, nextRunAt: null, cron: '30 4 * * *' });
    const on = await client.api('PATCH', path, { as: owner, workspaceId, body: { enabled: true } });
    expect(on.body.enabled).toBe(true);
    expect(on.body.nextRunAt).toBe(moved.body.nextRunAt);

    for (const [body, field] of [
      [{ cron: '*/1 * * * *' }, 'cron'],
      [{ timeZone: 'Nowhere/Land' }, 'timeZone'],
      [{ options: { maxRedirects: 99 } }, 'options.maxRedirects'],
      [{ options: { maxRequestsPerTemplatePerEndpoint: 0 } }, 'options.maxRequestsPerTemplatePerEndpoint'],
      [{ options: { maxRequestsPerTemplatePerEndpoint: 10_001 } }, 'options.maxRequestsPerTemplatePerEndpoint'],
      [{ targetId: randomUUID() }, 'targetId'],
    ] as const) {
      const bad = await client.api('PATCH', path, { as: owner, workspaceId, body });
      expect(bad.status, JSON.stringify(bad.body)).toBe(400);
      expect(fields(bad)).toContain(field);
    }
    expect((await client.api('GET', path, { as: owner, workspaceId })).body).toMatchObject({ cron: '30 4 * * *', timeZone: 'America/New_York' });
    expect((await client.api('PATCH', `${BASE}/${randomUUID()}`, { as: owner, workspaceId, body: { enabled: false } })).status).toBe(404);
  });

  it('deletes (its scans stay); a deleted schedule is 404', async () => {
    const { owner, workspaceId } = await ownerWithWorkspace();
    const target = await addTarget(client, owner, workspaceId, '192.0.2.10');
    const schedule = await createOk(owner, workspaceId, { cron: '0 3 * * *', targetId: target.id });
    const run = await client.api('POST', `${BASE}/${schedule.id}/run`, { as: owner, workspaceId });
    expect(run.status).toBe(200);
    const removed = await client.api('DELETE', `${BASE}/${schedule.id}`, { as: owner, workspaceId });
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual({ id: schedule.id });
    expect((await client.api('GET', `${BASE}/${schedule.id}`, { as: owner, workspaceId })).status).toBe(404);
    expect((await client.api('DELETE', `${BASE}/${schedule.id}`, { as: owner, workspaceId })).status).toBe(404);
    expect((await client.api('GET', `/api/v1/api/scans/${run.body.outcomes[0].scanId}`, { as: owner, workspaceId })).status).toBe(200);
  });

  it('members manage schedules like scans; strangers and anonymous callers cannot', async () => {
    const { owner, workspaceId } = await ownerWithWorkspace();
    const member = await client.signUp('Member');
    await client.addMember(owner, workspaceId, member, 'member');
    const schedule = await createOk(member, workspaceId, { cron: '0 3 * * *' });
    expect(schedule.createdById).toBe(member.id);
    expect((await client.api('PATCH', `${BASE}/${schedule.id}`, { as: member, workspaceId, body: { enabled: false } })).status).toBe(200);
    const stranger = await client.signUp('Stranger');
    expect((await create(stranger, workspaceId, { cron: '0 3 * * *' })).status).toBe(404);
    expect((await client.api('POST', `${BASE}/${schedule.id}/run`, { as: stranger, workspaceId })).status).toBe(404);
    expect((await client.api('DELETE', `${BASE}/${schedule.id}`, { as: stranger, workspaceId })).status).toBe(404);
    expect((await client.api('POST', BASE, { workspaceId, body: { cron: '0 3 * * *' } })).status).toBe(401);
    expect((await client.api('DELETE', `${BASE}/${schedule.id}`, { as: member, workspaceId })).status).toBe(200);
  });

  it('run now starts a scan as the caller, then records a skip while that scan is still running', async () => {
    const { owner, workspaceId } = await ownerWithWorkspace();
    const target = await addTarget(client, owner, workspaceId, '192.0.2.20');
    const second = await addTarget(client, owner, workspaceId, '192.0.2.21');
    const schedule = await createOk(owner, workspaceId, { cron: '0 3 * * *', targetId: target.id, options: { steps: ['dns'] } });

    const first = await client.api('POST', `${BASE}/${schedule.id}/run`, { as: owner, workspaceId });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toMatchObject({ scheduleId: schedule.id, trigger: 'manual', dueAt: null, started: 1, skipped: 0, requestedById: owner.id });
    const scanId = first.body.outcomes[0].scanId;
    expect(first.body.outcomes).toEqual([{ targetId: target.id, scanId }]);
    const scan = (await client.api('GET', `/api/v1/api/scans/${scanId}`, { as: owner, workspaceId })).body;
    expect(scan).toMatchObject({ targetId: target.id, status: 'PENDING', requestedById: owner.id, options: { steps: ['dns'] } });

    const after = (await client.api('GET', `${BASE}/${schedule.id}`, { as: owner, workspaceId })).body;
    expect(after).toMatchObject({ lastScanId: scanId, nextRunAt: schedule.nextRunAt });
    expect(after.lastRunAt).toMatch(ISO);

    // No workers here: the scan stays PENDING, so the next firing skips the target and says why.
    const again = await client.api('POST', `${BASE}/${schedule.id}/run`, { as: owner, workspaceId });
    expect(again.body).toMatchObject({ started: 0, skipped: 1 });
    expect(again.body.outcomes).toEqual([{ targetId: target.id, skipped: expect.stringContaining(`(${scanId}) is still running`) }]);

    // A workspace-wide schedule skips the busy target and scans the other.
    const everything = await createOk(owner, workspaceId, { cron: '0 3 * * *', options: { steps: ['dns'] } });
    const wide = await client.api('POST', `${BASE}/${everything.id}/run`, { as: owner, workspaceId });
    expect(wide.body).toMatchObject({ started: 1, skipped: 1 });
    expect(wide.body.outcomes).toEqual([
      { targetId: target.id, skipped: expect.stringContaining('still running') },
      { targetId: second.id, scanId: expect.any(String) },
    ]);

    const runs = await client.api('GET', `${BASE}/${schedule.id}/runs?limit=1`, { as: owner, workspaceId });
    expect(runs.status).toBe(200);
    expect(runs.body).toMatchObject({ total: 2, hasNextPage: true });
    expect(runs.body.data[0].id).toBe(again.body.id);
    const scans = await client.api('GET', `/api/v1/api/scans?targetId=${target.id}`, { as: owner, workspaceId });
    expect(scans.body.total).toBe(1);
  });
});

describe('scan schedules over GraphQL', () => {
  const FIELDS = 'id databaseId cron timeZone enabled nextRunAt lastRunAt options target { databaseId } workspace { databaseId } lastScan { databaseId }';

  it('creates, lists on the workspace, reads by node id, updates, runs and deletes', async () => {
    const { owner, workspaceId } = await ownerWithWorkspace();
    const target = await addTarget(client, owner, workspaceId, '192.0.2.30');
    const created = await client.gql(
      `mutation($w: ID!, $t: ID) { createScanSchedule(workspaceId: $w, targetId: $t, cron: "15 2 * * *", timeZone: "Asia/Tokyo", options: { steps: [dns] }) {
        __typename ... on MutationCreateScanScheduleSuccess { data { ${FIELDS} } } ... on ValidationError { details { field message } } } }`,
      { as: owner, variables: { w: globalId('Workspace', workspaceId), t: globalId('Target', target.id) } },
    );
    expect(created.errors).toBeUndefined();
    const schedule = created.data.createScanSchedule.data;
    expect(schedule).toMatchObject({
      id: globalId('ScanSchedule', schedule.databaseId),
      cron: '15 2 * * *',
      timeZone: 'Asia/Tokyo',
      enabled: true,
      options: { steps: ['dns'] },
      target: { databaseId: target.id },
      workspace: { databaseId: workspaceId },
      lastScan: null,
    });

    const bad = await client.gql(
      `mutation($w: ID!) { createScanSchedule(workspaceId: $w, cron: "* * * * *", timeZone: "Mars/Olympus") { __typename ... on ValidationError { details { field } } } }`,
      {
        as: owner,
        variables: { w: workspaceId },
      },
    );
    expect(bad.data.createScanSchedule).toEqual({ __typename: 'ValidationError', details: [{ field: 'timeZone' }] });

    const listed = await client.gql(`query($w: ID!) { workspace(id: $w) { scanSchedules(first: 10) { totalCount edges { node { databaseId } } } } }`, {
      as: owner,
      variables: { w: workspaceId },
    });
    expect(listed.errors).toBeUndefined();
    expect(listed.data.workspace.scanSchedules).toEqual({ totalCount: 1, edges: [{ node: { databaseId: schedule.databaseId } }] });

    const node = await client.gql(`query($id: ID!) { node(id: $id) { ... on ScanSchedule { cron } } }`, { as: owner, variables: { id: schedule.id } });
    expect(node.data.node).toEqual({ cron: '15 2 * * *' });
    const stranger = await client.signUp('Stranger');
    const hidden = await client.gql(`query($id: ID!) { node(id: $id) { ... on ScanSchedule { cron } } }`, { as: stranger, variables: { id: schedule.id } });
    expect(hidden.data.node).toBeNull();

    const updated = await client.gql(
      `mutation($id: ID!) { updateScanSchedule(id: $id, enabled: false) { __typename ... on MutationUpdateScanScheduleSuccess { data { enabled nextRunAt } } } }`,
      { as: owner, variables: { id: schedule.id } },
    );
    expect(updated.data.updateScanSchedule).toEqual({ __typename: 'MutationUpdateScanScheduleSuccess', data: { enabled: false, nextRunAt: null } });

    const ran = await client.gql(
      `mutation($id: ID!) { runScanSchedule(id: $id) { __typename ... on MutationRunScanScheduleSuccess { data { trigger started skipped outcomes { targetId scanId skipped } } } } }`,
      { as: owner, variables: { id: schedule.databaseId } },
    );
    expect(ran.data.runScanSchedule.data).toMatchObject({ trigger: 'manual', started: 1, skipped: 0, outcomes: [{ targetId: target.id, skipped: null }] });
    const runs = await client.gql(
      `query($id: ID!) { node(id: $id) { ... on ScanSchedule { lastScan { databaseId } recentRuns(limit: 5) { trigger started } } } }`,
      {
        as: owner,
        variables: { id: schedule.id },
      },
    );
    expect(runs.data.node).toEqual({
      lastScan: { databaseId: ran.data.runScanSchedule.data.outcomes[0].scanId },
      recentRuns: [{ trigger: 'manual', started: 1 }],
    });

    const strangerDelete = await client.gql(`mutation($id: ID!) { deleteScanSchedule(id: $id) { __typename } }`, {
      as: stranger,
      variables: { id: schedule.id },
    });
    expect(strangerDelete.data.deleteScanSchedule.__typename).toBe('NotFoundError');
    const deleted = await client.gql(`mutation($id: ID!) { deleteScanSchedule(id: $id) { __typename ... on MutationDeleteScanScheduleSuccess { data } } }`, {
      as: owner,
      variables: { id: schedule.id },
    });
    expect(deleted.data.deleteScanSchedule).toEqual({ __typename: 'MutationDeleteScanScheduleSuccess', data: schedule.databaseId });
  });
});
