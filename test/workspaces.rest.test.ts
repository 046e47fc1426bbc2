import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';

let server: TestApp;
let client: ReturnType<typeof clientFor>;

beforeAll(async () => {
  server = await startTestApp();
  client = clientFor(server);
});
afterAll(() => server?.stop());

const BASE = '/api/v1/api/workspaces';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

type Workspace = { id: string; name: string; createdAt: string; updatedAt: string; [key: string]: any };

/** GET the list with a query string built from `query`. */
async function list(as: TestUser, query: Record<string, string | number | boolean> = {}) {
  const params = new URLSearchParams(Object.entries(query).map(([key, value]) => [key, String(value)]));
  const qs = params.toString();
  return client.api('GET', `${BASE}${qs ? `?${qs}` : ''}`, { as });
}

async function createMany(owner: TestUser, count: number, fields: (i: number) => Record<string, unknown> = () => ({})) {
  const created: Workspace[] = [];
  for (let i = 0; i < count; i++) created.push((await client.createWorkspace(owner, fields(i))) as Workspace);
  return created;
}

const REASON: Record<number, string> = { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 409: 'Conflict' };

/** The one REST error shape: {statusCode, error, code, message, details?: [{field, message}]}. */
function expectError(response: { status: number; body: any }, status: number, code: string) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body).toMatchObject({ statusCode: status, error: REASON[status], code, message: expect.any(String) });
  expect(
    Object.keys(response.body).every((key) => ['statusCode', 'error', 'code', 'message', 'details'].includes(key)),
    JSON.stringify(response.body),
  ).toBe(true);
  for (const detail of response.body.details ?? []) expect(detail).toEqual({ field: expect.any(String), message: expect.any(String) });
}

const WORKSPACE_KEYS = [
  'archivedAt',
  'createdAt',
  'description',
  'id',
  'isAssetsDiscovery',
  'isAutoEnableAssetAfterDiscovered',
  'memberCount',
  'name',
  'nodeId',
  'ownerId',
  'role',
  'targetCount',
  'updatedAt',
  'workspaceMembers',
];

function fields(response: { body: any }): string[] {
  return (response.body.details ?? []).map((detail: { field: string }) => detail.field);
}

/** Expected order of a sort: by the field, ties broken by id in the same direction (as the service does). */
function sorted(items: Workspace[], field: 'createdAt' | 'updatedAt' | 'name', direction: 'ASC' | 'DESC') {
  const sign = direction === 'ASC' ? 1 : -1;
  return [...items].sort((a, b) => {
    const primary = a[field] < b[field] ? -1 : a[field] > b[field] ? 1 : 0;
    return sign * (primary || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  });
}

describe('GET /api/workspaces: paging', () => {
  let owner: TestUser;
  let all: Workspace[];

  beforeAll(async () => {
    owner = await client.signUp('Pager');
    all = await createMany(owner, 23);
  });

  it('uses page 1, limit 10, createdAt DESC by default', async () => {
    const response = await list(owner);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ total: 23, page: 1, limit: 10, hasNextPage: true, pageCount: 3 });
    expect(Object.keys(response.body).sort()).toEqual(['data', 'hasNextPage', 'limit', 'page', 'pageCount', 'total']);
    expect(response.body.data.map((w: Workspace) => w.id)).toEqual(
      sorted(all, 'createdAt', 'DESC')
        .slice(0, 10)
        .map((w) => w.id),
    );
    for (const item of response.body.data) {
      expect(Object.keys(item).sort()).toEqual(WORKSPACE_KEYS);
      expect(item).toMatchObject({ role: 'owner', ownerId: owner.id, memberCount: 1, targetCount: 0, archivedAt: null });
      expect(item.workspaceMembers).toEqual([
        {
          id: expect.stringMatching(UUID),
          role: 'owner',
          user: { id: owner.id, name: 'Pager', image: null },
          createdAt: expect.stringMatching(ISO),
          updatedAt: expect.stringMatching(ISO),
        },
      ]);
    }
  });

  it('computes pageCount and hasNextPage, and the last page holds the remainder', async () => {
    const expected = sorted(all, 'createdAt', 'DESC').map((w) => w.id);
    const seen: string[] = [];
    for (const page of [1, 2, 3]) {
      const response = await list(owner, { page, limit: 10 });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ total: 23, page, limit: 10, pageCount: 3, hasNextPage: page < 3 });
      expect(response.body.data).toHaveLength(page < 3 ? 10 : 3);
      seen.push(...response.body.data.map((w: Workspace) => w.id));
    }
    expect(seen).toEqual(expected);
  });

  it('answers a page beyond the end with no items and the right totals', async () => {
    const response = await list(owner, { page: 4, limit: 10 });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ data: [], total: 23, page: 4, limit: 10, hasNextPage: false, pageCount: 3 });
    const far = await list(owner, { page: 99 });
    expect(far.body).toMatchObject({ data: [], total: 23, page: 99, hasNextPage: false, pageCount: 3 });
  });

  it('handles exact multiples and single-item pages', async () => {
    const exact = await list(owner, { limit: 23 });
    expect(exact.body).toMatchObject({ total: 23, pageCount: 1, hasNextPage: false });
    expect(exact.body.data).toHaveLength(23);
    const ones = await list(owner, { limit: 1, page: 23 });
    expect(ones.body).toMatchObject({ total: 23, page: 23, limit: 1, pageCount: 23, hasNextPage: false });
    expect(ones.body.data).toHaveLength(1);
    const second = await list(owner, { limit: 1, page: 22 });
    expect(second.body.hasNextPage).toBe(true);
  });

  it('accepts limit 100 and refuses 101 with a 400 naming limit', async () => {
    const ok = await list(owner, { limit: 100 });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ total: 23, limit: 100, pageCount: 1, hasNextPage: false });
    expect(ok.body.data).toHaveLength(23);

    const tooMany = await list(owner, { limit: 101 });
    expectError(tooMany, 400, 'VALIDATION_FAILED');
    expect(fields(tooMany)).toEqual(['limit']);
    expect(tooMany.body.message).toContain('limit');
  });

  it.each([
    ['limit', '0'],
    ['limit', '-1'],
    ['limit', 'ten'],
    ['limit', '2.5'],
    ['page', '0'],
    ['page', '-3'],
    ['page', 'abc'],
    ['isArchived', 'yes'],
    ['sortOrder', 'sideways'],
  ])('refuses %s=%s with a 400 naming the field', async (field, value) => {
    const response = await list(owner, { [field]: value });
    expectError(response, 400, 'VALIDATION_FAILED');
    expect(fields(response)).toEqual([field]);
    expect(response.body.details[0].message).toEqual(expect.any(String));
    expect(response.body.message).toContain(field);
  });

  it('refuses an unknown sortBy with a 400 naming the allowed values', async () => {
    const response = await list(owner, { sortBy: 'ownerId' });
    expectError(response, 400, 'VALIDATION_FAILED');
    expect(fields(response)).toEqual(['sortBy']);
    for (const allowed of ['createdAt', 'updatedAt', 'name']) expect(response.body.message).toContain(allowed);
  });

  it('names the allowed sort orders', async () => {
    const response = await list(owner, { sortOrder: 'up' });
    expectError(response, 400, 'VALIDATION_FAILED');
    expect(response.body.message).toContain('ASC');
    expect(response.body.message).toContain('DESC');
  });

  it('refuses an unknown query parameter with a 400 naming it', async () => {
    const response = await list(owner, { pageSize: 5 });
    expectError(response, 400, 'VALIDATION_FAILED');
    expect(fields(response)).toEqual(['pageSize']);
    expect(response.body.message).toContain('pageSize');
  });
});

describe('GET /api/workspaces: filters and sorts', () => {
  let owner: TestUser;
  let byName: Record<string, Workspace>;

  beforeAll(async () => {
    owner = await client.signUp('Sorter');
    const specs = [
      { name: 'delta', description: 'Perimeter of the EXTERNAL network' },
      { name: 'alpha', description: null },
      { name: 'charlie', description: 'internal only' },
      { name: 'bravo', description: 'staging hosts' },
      { name: 'echo external', description: 'mixed' },
    ];
    const created = await createMany(owner, specs.length, (i) => specs[i]!);
    byName = Object.fromEntries(created.map((w) => [w.name, w]));
    // Touch in a different order than creation so updatedAt sorts differently from createdAt.
    for (const name of ['charlie', 'alpha', 'echo external']) {
      const response = await client.api('PATCH', `${BASE}/${byName[name]!.id}`, {
        as: owner,
        body: { description: `${byName[name]!.description ?? ''} touched` },
      });
      expect(response.status).toBe(200);
      byName[name] = response.body;
    }
    // Archive two of them.
    for (const name of ['bravo', 'echo external']) {
      const response = await client.api('PATCH', `${BASE}/${byName[name]!.id}/archived`, { as: owner, body: { isArchived: true } });
      expect(response.status).toBe(200);
      byName[name] = response.body;
    }
  });

  const names = (response: { body: { data: Workspace[] } }) => response.body.data.map((w) => w.name);

  it('searches the name, case-insensitively', async () => {
    const response = await list(owner, { search: 'ALPH' });
    expect(response.status).toBe(200);
    expect(names(response)).toEqual(['alpha']);
    expect(response.body.total).toBe(1);
  });

  it('searches the description, case-insensitively, and name or description together', async () => {
    const staging = await list(owner, { search: 'StAgInG' });
    expect(names(staging)).toEqual(['bravo']);
    // "external" is in delta's description (upper case) and echo's name.
    const external = await list(owner, { search: 'external', sortBy: 'name', sortOrder: 'ASC' });
    expect(names(external)).toEqual(['delta', 'echo external']);
    expect(external.body.total).toBe(2);
  });

  it('treats LIKE wildcards in search literally', async () => {
    const percent = await list(owner, { search: '%' });
    expect(percent.status).toBe(200);
    expect(percent.body.total).toBe(0);
    const underscore = await list(owner, { search: '_' });
    expect(underscore.body.total).toBe(0);

    const other = await client.signUp();
    await client.createWorkspace(other, { name: '100% up_time' });
    await client.createWorkspace(other, { name: 'back\\slash' });
    await client.createWorkspace(other, { name: '1000 upstime' });
    expect(names(await list(other, { search: '0% UP_' }))).toEqual(['100% up_time']);
    expect(names(await list(other, { search: '%' }))).toEqual(['100% up_time']);
    expect(names(await list(other, { search: '_' }))).toEqual(['100% up_time']);
    expect(names(await list(other, { search: 'k\\s' }))).toEqual(['back\\slash']);
  });

  it('finds nothing for an unmatched search, with consistent totals', async () => {
    const response = await list(owner, { search: 'no-such-thing' });
    expect(response.body).toEqual({ data: [], total: 0, page: 1, limit: 10, hasNextPage: false, pageCount: 0 });
  });

  it('filters on isArchived true / false, and lists both when absent', async () => {
    const archived = await list(owner, { isArchived: true, sortBy: 'name', sortOrder: 'ASC' });
    expect(names(archived)).toEqual(['bravo', 'echo external']);
    expect(archived.body.total).toBe(2);
    for (const w of archived.body.data) expect(w.archivedAt).toMatch(ISO);

    const active = await list(owner, { isArchived: false, sortBy: 'name', sortOrder: 'ASC' });
    expect(names(active)).toEqual(['alpha', 'charlie', 'delta']);
    for (const w of active.body.data) expect(w.archivedAt).toBeNull();

    const both = await list(owner, { sortBy: 'name', sortOrder: 'ASC' });
    expect(names(both)).toEqual(['alpha', 'bravo', 'charlie', 'delta', 'echo external']);
  });

  it('combines search, isArchived and paging', async () => {
    const response = await list(owner, { search: 'e', isArchived: false, limit: 2, sortBy: 'name', sortOrder: 'DESC' });
    // Active names or descriptions containing "e": alpha (description "touched"), charlie, delta.
    expect(response.body).toMatchObject({ total: 3, pageCount: 2, hasNextPage: true });
    expect(names(response)).toEqual(['delta', 'charlie']);
  });

  it.each([
    ['createdAt', 'ASC'],
    ['createdAt', 'DESC'],
    ['updatedAt', 'ASC'],
    ['updatedAt', 'DESC'],
    ['name', 'ASC'],
    ['name', 'DESC'],
  ] as const)('sorts by %s %s', async (sortBy, sortOrder) => {
    const response = await list(owner, { sortBy, sortOrder });
    expect(response.status).toBe(200);
    expect(response.body.data.map((w: Workspace) => w.id)).toEqual(sorted(Object.values(byName), sortBy, sortOrder).map((w) => w.id));
  });

  it('sorts by name alphabetically and by updatedAt by last change', async () => {
    expect(names(await list(owner, { sortBy: 'name', sortOrder: 'ASC' }))).toEqual(['alpha', 'bravo', 'charlie', 'delta', 'echo external']);
    // Last touched first: echo (archived last), bravo (archived), alpha, charlie (description updates), delta (never).
    expect(names(await list(owner, { sortBy: 'updatedAt', sortOrder: 'DESC' }))).toEqual(['echo external', 'bravo', 'alpha', 'charlie', 'delta']);
    expect(names(await list(owner, { sortBy: 'createdAt', sortOrder: 'ASC' }))).toEqual(['delta', 'alpha', 'charlie', 'bravo', 'echo external']);
  });

  it('accepts a lower-case sortOrder and defaults the direction to DESC', async () => {
    expect(names(await list(owner, { sortBy: 'name', sortOrder: 'asc' }))).toEqual(['alpha', 'bravo', 'charlie', 'delta', 'echo external']);
    expect(names(await list(owner, { sortBy: 'name', sortOrder: 'desc' }))).toEqual(['echo external', 'delta', 'charlie', 'bravo', 'alpha']);
    expect(names(await list(owner, { sortBy: 'name' }))).toEqual(['echo external', 'delta', 'charlie', 'bravo', 'alpha']);
  });
});

describe('WorkspaceResponse shape', () => {
  it('carries every field of the seed, the caller role, counts and members with their users', async () => {
    const owner = await client.signUp('Shape Owner');
    const member = await client.signUp('Shape Member');
    const created = await client.createWorkspace(owner, { name: 'Shape', description: 'described' });
    const membership = await client.addMember(owner, created.id, member);
    await server.db.prisma.target.createMany({
      data: [
        { workspaceId: created.id, value: 'example.com', type: 'domain' },
        { workspaceId: created.id, value: '10.0.0.1', type: 'ip' },
      ],
    });

    const memberShape = {
      id: expect.stringMatching(UUID),
      role: expect.stringMatching(/^(owner|member)$/),
      user: { id: expect.any(String), name: expect.any(String), image: null },
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
    };
    const expected = (role: string) => ({
      id: created.id,
      nodeId: Buffer.from(`Workspace:${created.id}`).toString('base64'),
      name: 'Shape',
      description: 'described',
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
      archivedAt: null,
      isAssetsDiscovery: true,
      isAutoEnableAssetAfterDiscovered: true,
      ownerId: owner.id,
      targetCount: 2,
      memberCount: 2,
      role,
      workspaceMembers: [
        { ...memberShape, role: 'owner', user: { id: owner.id, name: 'Shape Owner', image: null } },
        { ...memberShape, id: membership.id, role: 'member', user: { id: member.id, name: 'Shape Member', image: null } },
      ],
    });

    const ownerList = await list(owner);
    expect(ownerList.body.data).toEqual([expected('owner')]);
    const memberList = await list(member);
    expect(memberList.body.data).toEqual([expected('member')]);
    const got = await client.api('GET', `${BASE}/${created.id}`, { as: member });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(expected('member'));
    // The list's one statement (page-sql.ts) and the ORM's read of one workspace answer the very same body,
    // timestamps to the millisecond.
    expect(memberList.body.data[0]).toEqual(got.body);
    // No email or other private user fields leak through the members.
    expect(JSON.stringify(got.body)).not.toContain(member.email);
  });
});

describe('workspace CRUD', () => {
  it('creates (201) with defaults; the caller becomes the owner', async () => {
    const owner = await client.signUp('Creator');
    const response = await client.api('POST', BASE, { as: owner, body: { name: '  Trimmed  ' } });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      id: expect.stringMatching(UUID),
      name: 'Trimmed',
      description: null,
      archivedAt: null,
      isAssetsDiscovery: true,
      isAutoEnableAssetAfterDiscovered: true,
      ownerId: owner.id,
      targetCount: 0,
      memberCount: 1,
      role: 'owner',
      workspaceMembers: [{ role: 'owner', user: { id: owner.id, name: 'Creator', image: null } }],
    });

    const withSettings = await client.api('POST', BASE, {
      as: owner,
      body: { name: 'Quiet', description: 'no discovery', isAssetsDiscovery: false, isAutoEnableAssetAfterDiscovered: false },
    });
    expect(withSettings.status).toBe(201);
    expect(withSettings.body).toMatchObject({ description: 'no discovery', isAssetsDiscovery: false, isAutoEnableAssetAfterDiscovered: false });
  });

  it('refuses an invalid body with 400 naming each field', async () => {
    const owner = await client.signUp();
    const missing = await client.api('POST', BASE, { as: owner, body: {} });
    expectError(missing, 400, 'VALIDATION_FAILED');
    expect(fields(missing)).toEqual(['name']);

    const blank = await client.api('POST', BASE, { as: owner, body: { name: '   ' } });
    expect(fields(blank)).toEqual(['name']);

    const tooLong = await client.api('POST', BASE, { as: owner, body: { name: 'x'.repeat(101) } });
    expect(fields(tooLong)).toEqual(['name']);

    // JSON booleans are not coerced from strings, numbers or null.
    for (const value of ['yes', 'false', 0, null]) {
      const wrongType = await client.api('POST', BASE, { as: owner, body: { name: 'ok', isAssetsDiscovery: value } });
      expectError(wrongType, 400, 'VALIDATION_FAILED');
      expect(fields(wrongType)).toEqual(['isAssetsDiscovery']);
    }

    const unknown = await client.api('POST', BASE, { as: owner, body: { name: 'ok', colour: 'red' } });
    expectError(unknown, 400, 'VALIDATION_FAILED');
    expect(fields(unknown)).toEqual(['colour']);
    expect(unknown.body.message).toContain('colour');
  });

  it('gets, updates and deletes', async () => {
    const owner = await client.signUp();
    const created = await client.createWorkspace(owner, { name: 'Before', description: 'old' });

    const got = await client.api('GET', `${BASE}/${created.id}`, { as: owner });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(created);

    const updated = await client.api('PATCH', `${BASE}/${created.id}`, { as: owner, body: { name: 'After', description: 'new' } });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ id: created.id, name: 'After', description: 'new', createdAt: created.createdAt });
    expect(new Date(updated.body.updatedAt).getTime()).toBeGreaterThanOrEqual(new Date(created.updatedAt as string).getTime());

    // Absent fields are left alone; an explicit null clears the description.
    const cleared = await client.api('PATCH', `${BASE}/${created.id}`, { as: owner, body: { description: null } });
    expect(cleared.body).toMatchObject({ name: 'After', description: null });

    const unknown = await client.api('PATCH', `${BASE}/${created.id}`, { as: owner, body: { ownerId: 'someone' } });
    expectError(unknown, 400, 'VALIDATION_FAILED');
    expect(fields(unknown)).toEqual(['ownerId']);

    const deleted = await client.api('DELETE', `${BASE}/${created.id}`, { as: owner });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ id: created.id });
    expectError(await client.api('GET', `${BASE}/${created.id}`, { as: owner }), 404, 'NOT_FOUND');
    expectError(await client.api('DELETE', `${BASE}/${created.id}`, { as: owner }), 404, 'NOT_FOUND');
    expect((await list(owner)).body.total).toBe(0);
  });

  it('deleting removes members and targets with the workspace', async () => {
    const owner = await client.signUp();
    const member = await client.signUp();
    const ws = await client.createWorkspace(owner);
    await client.addMember(owner, ws.id, member);
    await server.db.prisma.target.create({ data: { workspaceId: ws.id, value: 'gone.example', type: 'domain' } });
    expect((await client.api('DELETE', `${BASE}/${ws.id}`, { as: owner })).status).toBe(200);
    expect(await server.db.prisma.workspaceMember.count({ where: { workspaceId: ws.id } })).toBe(0);
    expect(await server.db.prisma.target.count({ where: { workspaceId: ws.id } })).toBe(0);
    expect((await list(member)).body.total).toBe(0);
  });

  it('refuses a malformed uuid in the path with 400', async () => {
    const owner = await client.signUp();
    for (const [method, path, body] of [
      ['GET', `${BASE}/not-a-uuid`, undefined],
      ['PATCH', `${BASE}/not-a-uuid`, { name: 'x' }],
      ['DELETE', `${BASE}/not-a-uuid`, undefined],
      ['PATCH', `${BASE}/not-a-uuid/archived`, { isArchived: true }],
      ['POST', `${BASE}/not-a-uuid/members`, { email: 'a@example.test' }],
    ] as const) {
      const response = await client.api(method, path, { as: owner, body });
      expectError(response, 400, 'VALIDATION_FAILED');
      expect(fields(response)).toEqual(['id']);
    }
    const member = await client.api('PATCH', `${BASE}/members/not-a-uuid`, { as: owner, workspaceId: randomUUID(), body: { role: 'owner' } });
    expectError(member, 400, 'VALIDATION_FAILED');
    expect(fields(member)).toEqual(['memberId']);
  });

  it('requires authentication on every route', async () => {
    const id = randomUUID();
    for (const [method, path] of [
      ['GET', BASE],
      ['POST', BASE],
      ['GET', `${BASE}/${id}`],
      ['PATCH', `${BASE}/${id}`],
      ['DELETE', `${BASE}/${id}`],
      ['PATCH', `${BASE}/${id}/archived`],
      ['POST', `${BASE}/${id}/members`],
      ['GET', `${BASE}/members`],
    ] as const) {
      const response = await client.api(method, path, { workspaceId: id });
      expectError(response, 401, 'UNAUTHENTICATED');
    }
  });
});

describe('archive and discovery settings', () => {
  it('archives (archivedAt set) and unarchives (cleared), idempotently', async () => {
    const owner = await client.signUp();
    const ws = await client.createWorkspace(owner);
    const archived = await client.api('PATCH', `${BASE}/${ws.id}/archived`, { as: owner, body: { isArchived: true } });
    expect(archived.status).toBe(200);
    expect(archived.body.archivedAt).toMatch(ISO);
    expect(archived.body.id).toBe(ws.id);

    const again = await client.api('PATCH', `${BASE}/${ws.id}/archived`, { as: owner, body: { isArchived: true } });
    expect(again.status).toBe(200);
    expect(again.body.archivedAt).toBe(archived.body.archivedAt);

    const unarchived = await client.api('PATCH', `${BASE}/${ws.id}/archived`, { as: owner, body: { isArchived: false } });
    expect(unarchived.status).toBe(200);
    expect(unarchived.body.archivedAt).toBeNull();
    const stillUnarchived = await client.api('PATCH', `${BASE}/${ws.id}/archived`, { as: owner, body: { isArchived: false } });
    expect(stillUnarchived.status).toBe(200);
    expect(stillUnarchived.body.archivedAt).toBeNull();

    expect((await client.api('GET', `${BASE}/${ws.id}`, { as: owner })).body.archivedAt).toBeNull();
  });

  it('refuses a missing or non-boolean isArchived and unknown fields', async () => {
    const owner = await client.signUp();
    const ws = await client.createWorkspace(owner);
    for (const body of [{}, { isArchived: 'true' }, { isArchived: 'false' }, { isArchived: null }, { isArchived: 0 }]) {
      const response = await client.api('PATCH', `${BASE}/${ws.id}/archived`, { as: owner, body });
      expectError(response, 400, 'VALIDATION_FAILED');
      expect(fields(response)).toEqual(['isArchived']);
    }
    const unknown = await client.api('PATCH', `${BASE}/${ws.id}/archived`, { as: owner, body: { isArchived: true, reason: 'x' } });
    expect(fields(unknown)).toEqual(['reason']);
    expect((await client.api('GET', `${BASE}/${ws.id}`, { as: owner })).body.archivedAt).toBeNull();
  });

  it('updates the discovery settings independently', async () => {
    const owner = await client.signUp();
    const ws = await client.createWorkspace(owner);
    const off = await client.api('PATCH', `${BASE}/${ws.id}`, { as: owner, body: { isAssetsDiscovery: false } });
    expect(off.status).toBe(200);
    expect(off.body).toMatchObject({ isAssetsDiscovery: false, isAutoEnableAssetAfterDiscovered: true, name: ws.name });
    const both = await client.api('PATCH', `${BASE}/${ws.id}`, { as: owner, body: { isAutoEnableAssetAfterDiscovered: false, isAssetsDiscovery: true } });
    expect(both.body).toMatchObject({ isAssetsDiscovery: true, isAutoEnableAssetAfterDiscovered: false });
    const reread = await client.api('GET', `${BASE}/${ws.id}`, { as: owner });
    expect(reread.body).toMatchObject({ isAssetsDiscovery: true, isAutoEnableAssetAfterDiscovered: false });
    for (const value of [1, 'false', null]) {
      const bad = await client.api('PATCH', `${BASE}/${ws.id}`, { as: owner, body: { isAssetsDiscovery: value } });
      expectError(bad, 400, 'VALIDATION_FAILED');
      expect(fields(bad)).toEqual(['isAssetsDiscovery']);
    }
    expect((await client.api('GET', `${BASE}/${ws.id}`, { as: owner })).body.isAssetsDiscovery).toBe(true);
  });
});

describe('members', () => {
  it('adds an existing user by email (201), case-insensitively, as member by default', async () => {
    const owner = await client.signUp('Olga');
    const user = await client.signUp('Uma');
    const ws = await client.createWorkspace(owner);
    const added = await client.api('POST', `${BASE}/${ws.id}/members`, { as: owner, body: { email: user.email.toUpperCase() } });
    expect(added.status).toBe(201);
    expect(added.body).toEqual({
      id: expect.stringMatching(UUID),
      role: 'member',
      user: { id: user.id, name: 'Uma', image: null },
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
    });
    const got = await client.api('GET', `${BASE}/${ws.id}`, { as: user });
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ role: 'member', memberCount: 2 });

    const asOwner = await client.api('POST', `${BASE}/${ws.id}/members`, { as: owner, body: { email: (await client.signUp()).email, role: 'owner' } });
    expect(asOwner.status).toBe(201);
    expect(asOwner.body.role).toBe('owner');
  });

  it('answers 404 for an unknown email, 409 for an existing member, 400 for bad input', async () => {
    const owner = await client.signUp();
    const user = await client.signUp();
    const ws = await client.createWorkspace(owner);
    expectError(await client.api('POST', `${BASE}/${ws.id}/members`, { as: owner, body: { email: 'nobody@example.test' } }), 404, 'NOT_FOUND');
    await client.addMember(owner, ws.id, user);
    expectError(await client.api('POST', `${BASE}/${ws.id}/members`, { as: owner, body: { email: user.email } }), 409, 'CONFLICT');
    expectError(await client.api('POST', `${BASE}/${ws.id}/members`, { as: owner, body: { email: owner.email, role: 'owner' } }), 409, 'CONFLICT');

    const badEmail = await client.api('POST', `${BASE}/${ws.id}/members`, { as: owner, body: { email: 'not-an-email' } });
    expectError(badEmail, 400, 'VALIDATION_FAILED');
    expect(fields(badEmail)).toEqual(['email']);
    const badRole = await client.api('POST', `${BASE}/${ws.id}/members`, { as: owner, body: { email: user.email, role: 'admin' } });
    expect(fields(badRole)).toEqual(['role']);
    const unknown = await client.api('POST', `${BASE}/${ws.id}/members`, { as: owner, body: { email: user.email, nickname: 'x' } });
    expect(fields(unknown)).toEqual(['nickname']);
  });

  it('lists members of the workspace named by X-Workspace-Id, oldest first', async () => {
    const owner = await client.signUp('First');
    const a = await client.signUp('Second');
    const b = await client.signUp('Third');
    const ws = await client.createWorkspace(owner);
    await client.addMember(owner, ws.id, a);
    await client.addMember(owner, ws.id, b, 'owner');
    const response = await client.api('GET', `${BASE}/members`, { as: a, workspaceId: ws.id });
    expect(response.status).toBe(200);
    expect(response.body.map((m: any) => [m.user.name, m.role])).toEqual([
      ['First', 'owner'],
      ['Second', 'member'],
      ['Third', 'owner'],
    ]);
    const workspace = await client.api('GET', `${BASE}/${ws.id}`, { as: a });
    expect(workspace.body.workspaceMembers).toEqual(response.body);
  });

  it('changes a role and removes a member', async () => {
    const owner = await client.signUp();
    const user = await client.signUp();
    const ws = await client.createWorkspace(owner);
    const membership = await client.addMember(owner, ws.id, user);

    const promoted = await client.api('PATCH', `${BASE}/members/${membership.id}`, { as: owner, workspaceId: ws.id, body: { role: 'owner' } });
    expect(promoted.status).toBe(200);
    expect(promoted.body).toMatchObject({ id: membership.id, role: 'owner', user: { id: user.id } });
    expect((await client.api('GET', `${BASE}/${ws.id}`, { as: user })).body.role).toBe('owner');

    const demoted = await client.api('PATCH', `${BASE}/members/${membership.id}`, { as: owner, workspaceId: ws.id, body: { role: 'member' } });
    expect(demoted.body.role).toBe('member');

    const badRole = await client.api('PATCH', `${BASE}/members/${membership.id}`, { as: owner, workspaceId: ws.id, body: { role: 'boss' } });
    expectError(badRole, 400, 'VALIDATION_FAILED');
    expect(fields(badRole)).toEqual(['role']);

    const removed = await client.api('DELETE', `${BASE}/members/${membership.id}`, { as: owner, workspaceId: ws.id });
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual({ id: membership.id });
    expectError(await client.api('GET', `${BASE}/${ws.id}`, { as: user }), 404, 'NOT_FOUND');
    expect((await list(user)).body.total).toBe(0);
    expectError(await client.api('DELETE', `${BASE}/members/${membership.id}`, { as: owner, workspaceId: ws.id }), 404, 'NOT_FOUND');
    expectError(await client.api('PATCH', `${BASE}/members/${randomUUID()}`, { as: owner, workspaceId: ws.id, body: { role: 'owner' } }), 404, 'NOT_FOUND');
  });

  it('keeps at least one owner: the last owner can neither leave nor be demoted (409)', async () => {
    const owner = await client.signUp();
    const ws = await client.createWorkspace(owner);
    const [ownMembership] = (await client.api('GET', `${BASE}/members`, { as: owner, workspaceId: ws.id })).body;

    const demote = await client.api('PATCH', `${BASE}/members/${ownMembership.id}`, { as: owner, workspaceId: ws.id, body: { role: 'member' } });
    expectError(demote, 409, 'CONFLICT');
    const leave = await client.api('DELETE', `${BASE}/members/${ownMembership.id}`, { as: owner, workspaceId: ws.id });
    expectError(leave, 409, 'CONFLICT');
    expect((await client.api('GET', `${BASE}/${ws.id}`, { as: owner })).body.role).toBe('owner');

    // With a second owner the first may step down or leave; ownerId always names a remaining owner.
    const other = await client.signUp();
    await client.addMember(owner, ws.id, other, 'owner');
    const stepDown = await client.api('PATCH', `${BASE}/members/${ownMembership.id}`, { as: owner, workspaceId: ws.id, body: { role: 'member' } });
    expect(stepDown.status).toBe(200);
    const afterDemotion = await client.api('GET', `${BASE}/${ws.id}`, { as: other });
    expect(afterDemotion.body.ownerId).toBe(other.id);

    // The remaining owner is now the last one.
    const otherMembership = afterDemotion.body.workspaceMembers.find((m: any) => m.user.id === other.id);
    expectError(await client.api('DELETE', `${BASE}/members/${otherMembership.id}`, { as: other, workspaceId: ws.id }), 409, 'CONFLICT');
  });

  it('an owner leaving hands ownerId to the remaining owner', async () => {
    const owner = await client.signUp();
    const other = await client.signUp();
    const ws = await client.createWorkspace(owner);
    await client.addMember(owner, ws.id, other, 'owner');
    const [mine] = (await client.api('GET', `${BASE}/members`, { as: owner, workspaceId: ws.id })).body;
    const left = await client.api('DELETE', `${BASE}/members/${mine.id}`, { as: owner, workspaceId: ws.id });
    expect(left.status).toBe(200);
    const got = await client.api('GET', `${BASE}/${ws.id}`, { as: other });
    expect(got.body).toMatchObject({ ownerId: other.id, memberCount: 1 });
    expectError(await client.api('GET', `${BASE}/${ws.id}`, { as: owner }), 404, 'NOT_FOUND');
  });

  it('a member may leave, but not remove anyone else', async () => {
    const owner = await client.signUp();
    const a = await client.signUp();
    const b = await client.signUp();
    const ws = await client.createWorkspace(owner);
    const aMembership = await client.addMember(owner, ws.id, a);
    const bMembership = await client.addMember(owner, ws.id, b);
    const [ownerMembership] = (await client.api('GET', `${BASE}/members`, { as: owner, workspaceId: ws.id })).body;

    expectError(await client.api('DELETE', `${BASE}/members/${bMembership.id}`, { as: a, workspaceId: ws.id }), 403, 'FORBIDDEN');
    expectError(await client.api('DELETE', `${BASE}/members/${ownerMembership.id}`, { as: a, workspaceId: ws.id }), 403, 'FORBIDDEN');

    const left = await client.api('DELETE', `${BASE}/members/${aMembership.id}`, { as: a, workspaceId: ws.id });
    expect(left.status).toBe(200);
    expect(left.body).toEqual({ id: aMembership.id });
    expectError(await client.api('GET', `${BASE}/${ws.id}`, { as: a }), 404, 'NOT_FOUND');
    const remaining = await client.api('GET', `${BASE}/members`, { as: owner, workspaceId: ws.id });
    expect(remaining.body.map((m: any) => m.id)).toEqual([ownerMembership.id, bMembership.id]);
  });
});

describe('members under concurrency', () => {
  it('concurrent adds of the same user: one 201, the others 409 (never a 500)', async () => {
    const owner = await client.signUp();
    const user = await client.signUp();
    const ws = await client.createWorkspace(owner);
    const responses = await Promise.all(
      Array.from({ length: 4 }, () => client.api('POST', `${BASE}/${ws.id}/members`, { as: owner, body: { email: user.email } })),
    );
    expect(responses.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
    for (const response of responses.filter((r) => r.status === 409)) expectError(response, 409, 'CONFLICT');
    expect((await client.api('GET', `${BASE}/${ws.id}`, { as: owner })).body.memberCount).toBe(2);
  });

  it('concurrent demotions of the two owners leave exactly one owner', async () => {
    const a = await client.signUp();
    const b = await client.signUp();
    const ws = await client.createWorkspace(a);
    await client.addMember(a, ws.id, b, 'owner');
    const members = (await client.api('GET', `${BASE}/members`, { as: a, workspaceId: ws.id })).body as { id: string }[];
    const responses = await Promise.all(
      members.map((m) => client.api('PATCH', `${BASE}/members/${m.id}`, { as: a, workspaceId: ws.id, body: { role: 'member' } })),
    );
    // One demotion wins; the other is refused: 409 (last owner) or 403 (the caller was demoted first).
    expect(responses.filter((r) => r.status === 200)).toHaveLength(1);
    for (const response of responses.filter((r) => r.status !== 200)) expect([403, 409]).toContain(response.status);
    const after = await client.api('GET', `${BASE}/members`, { as: b, workspaceId: ws.id });
    const owners = after.body.filter((m: any) => m.role === 'owner');
    expect(owners).toHaveLength(1);
    expect((await client.api('GET', `${BASE}/${ws.id}`, { as: b })).body.ownerId).toBe(owners[0].user.id);
  });
});

describe('role-based permissions', () => {
  let owner: TestUser;
  let member: TestUser;
  let other: TestUser;
  let ws: Workspace;
  let ownerMembershipId: string;

  beforeAll(async () => {
    owner = await client.signUp();
    member = await client.signUp();
    other = await client.signUp();
    ws = (await client.createWorkspace(owner, { name: 'Guarded' })) as Workspace;
    await client.addMember(owner, ws.id, member);
    ownerMembershipId = ws.workspaceMembers[0].id;
  });

  it('a member may read the workspace and its members', async () => {
    expect((await client.api('GET', `${BASE}/${ws.id}`, { as: member })).status).toBe(200);
    expect((await client.api('GET', `${BASE}/members`, { as: member, workspaceId: ws.id })).status).toBe(200);
    expect((await list(member)).body.data.map((w: Workspace) => w.id)).toEqual([ws.id]);
  });

  it('a member gets 403 on update, archive, delete and member management', async () => {
    const attempts = [
      client.api('PATCH', `${BASE}/${ws.id}`, { as: member, body: { name: 'Mine now' } }),
      client.api('PATCH', `${BASE}/${ws.id}`, { as: member, body: { isAssetsDiscovery: false } }),
      client.api('PATCH', `${BASE}/${ws.id}/archived`, { as: member, body: { isArchived: true } }),
      client.api('DELETE', `${BASE}/${ws.id}`, { as: member }),
      client.api('POST', `${BASE}/${ws.id}/members`, { as: member, body: { email: other.email } }),
      client.api('PATCH', `${BASE}/members/${ownerMembershipId}`, { as: member, workspaceId: ws.id, body: { role: 'member' } }),
    ];
    for (const response of await Promise.all(attempts)) expectError(response, 403, 'FORBIDDEN');

    const [memberMembership] = (await client.api('GET', `${BASE}/members`, { as: member, workspaceId: ws.id })).body.filter(
      (m: any) => m.user.id === member.id,
    );
    expectError(
      await client.api('PATCH', `${BASE}/members/${memberMembership.id}`, { as: member, workspaceId: ws.id, body: { role: 'owner' } }),
      403,
      'FORBIDDEN',
    );

    const unchanged = await client.api('GET', `${BASE}/${ws.id}`, { as: owner });
    expect(unchanged.body).toMatchObject({ name: 'Guarded', archivedAt: null, isAssetsDiscovery: true, memberCount: 2 });
  });
});

describe('cross-workspace isolation', () => {
  let alice: TestUser;
  let mallory: TestUser;
  let bob: TestUser;
  let secret: Workspace;
  let bobMembershipId: string;

  beforeAll(async () => {
    alice = await client.signUp('Alice');
    bob = await client.signUp('Bob');
    mallory = await client.signUp('Mallory');
    secret = (await client.createWorkspace(alice, { name: 'Secret', description: 'hidden' })) as Workspace;
    bobMembershipId = (await client.addMember(alice, secret.id, bob)).id;
    await client.createWorkspace(mallory, { name: 'Secret too' });
  });

  it('a non-member does not see the workspace in the list, even by searching for it', async () => {
    const response = await list(mallory, { search: 'secret' });
    expect(response.body.data.map((w: Workspace) => w.name)).toEqual(['Secret too']);
    expect(response.body.total).toBe(1);
    expect((await list(mallory, { isArchived: false })).body.total).toBe(1);
  });

  it('every route answers a foreign workspace exactly as a non-existent one', async () => {
    const missing = randomUUID();
    const calls = (id: string) =>
      [
        ['GET', `${BASE}/${id}`, {}],
        ['PATCH', `${BASE}/${id}`, { body: { name: 'pwned' } }],
        ['DELETE', `${BASE}/${id}`, {}],
        ['PATCH', `${BASE}/${id}/archived`, { body: { isArchived: true } }],
        ['POST', `${BASE}/${id}/members`, { body: { email: mallory.email, role: 'owner' } }],
        ['GET', `${BASE}/members`, { workspaceId: id }],
        ['PATCH', `${BASE}/members/${bobMembershipId}`, { workspaceId: id, body: { role: 'owner' } }],
        ['DELETE', `${BASE}/members/${bobMembershipId}`, { workspaceId: id }],
      ] as const;
    const foreign = calls(secret.id);
    const nonexistent = calls(missing);
    for (let i = 0; i < foreign.length; i++) {
      const [method, path, options] = foreign[i]!;
      const a = await client.api(method, path, { as: mallory, ...options });
      const [, missingPath, missingOptions] = nonexistent[i]!;
      const b = await client.api(method, missingPath, { as: mallory, ...missingOptions });
      expectError(a, 404, 'NOT_FOUND');
      expect({ route: `${method} ${path}`, status: a.status, body: a.body }).toEqual({ route: `${method} ${path}`, status: b.status, body: b.body });
    }

    // Nothing changed.
    const got = await client.api('GET', `${BASE}/${secret.id}`, { as: alice });
    expect(got.body).toMatchObject({ name: 'Secret', archivedAt: null, memberCount: 2 });
    expect(got.body.workspaceMembers.map((m: any) => m.user.id)).toEqual([alice.id, bob.id]);
  });

  it('membership ids of another workspace are not reachable through one the caller owns', async () => {
    const own = await client.createWorkspace(mallory);
    const patch = await client.api('PATCH', `${BASE}/members/${bobMembershipId}`, { as: mallory, workspaceId: own.id, body: { role: 'owner' } });
    const remove = await client.api('DELETE', `${BASE}/members/${bobMembershipId}`, { as: mallory, workspaceId: own.id });
    const random = await client.api('DELETE', `${BASE}/members/${randomUUID()}`, { as: mallory, workspaceId: own.id });
    expectError(patch, 404, 'NOT_FOUND');
    expectError(remove, 404, 'NOT_FOUND');
    expect(remove.body).toEqual(random.body);
    expect((await client.api('GET', `${BASE}/members`, { as: alice, workspaceId: secret.id })).body).toHaveLength(2);
  });
});

describe('the workspace of scoped routes', () => {
  let owner: TestUser;
  let ws: Workspace;

  beforeAll(async () => {
    owner = await client.signUp();
    ws = (await client.createWorkspace(owner)) as Workspace;
  });

  it('reads the header whatever the case of its name', async () => {
    for (const name of ['X-Workspace-Id', 'X-WORKSPACE-ID', 'x-workspace-id']) {
      const response = await client.api('GET', `${BASE}/members`, { as: owner, headers: { [name]: ws.id } });
      expect(response.status, name).toBe(200);
      expect(response.body).toHaveLength(1);
    }
    // node:http sends header names exactly as written (fetch may normalise them).
    const raw = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = httpRequest(
        `${server.url}${BASE}/members`,
        { headers: { Authorization: `Bearer ${owner.token}`, 'X-WORKSPACE-ID': ws.id } },
        (response) => {
          let body = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (body += chunk));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
        },
      );
      request.on('error', reject);
      request.end();
    });
    expect(raw.status).toBe(200);
    expect(JSON.parse(raw.body)[0].user.id).toBe(owner.id);
  });

  it('falls back to the wid cookie', async () => {
    const response = await client.api('GET', `${BASE}/members`, { as: owner, headers: { cookie: `theme=dark; wid=${ws.id}` } });
    expect(response.status).toBe(200);
    expect(response.body[0].user.id).toBe(owner.id);
  });

  it('prefers the header over the cookie', async () => {
    const other = await client.createWorkspace(owner);
    await client.addMember(owner, other.id, await client.signUp());
    const response = await client.api('GET', `${BASE}/members`, { as: owner, workspaceId: other.id, headers: { cookie: `wid=${ws.id}` } });
    expect(response.body).toHaveLength(2);
  });

  it('answers 400 WORKSPACE_REQUIRED without one', async () => {
    const responses = [
      await client.api('GET', `${BASE}/members`, { as: owner }),
      await client.api('PATCH', `${BASE}/members/${randomUUID()}`, { as: owner, body: { role: 'owner' } }),
      await client.api('DELETE', `${BASE}/members/${randomUUID()}`, { as: owner }),
      await client.api('GET', `${BASE}/members`, { as: owner, headers: { 'x-workspace-id': '  ' } }),
    ];
    for (const response of responses) {
      expectError(response, 400, 'WORKSPACE_REQUIRED');
      expect(response.body.message).toContain('X-Workspace-Id');
    }
  });

  it('refuses an unknown query parameter on the members list', async () => {
    const response = await client.api('GET', `${BASE}/members?role=owner`, { as: owner, workspaceId: ws.id });
    expectError(response, 400, 'VALIDATION_FAILED');
    expect(fields(response)).toEqual(['role']);
  });
});
