import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
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

/** Relay global id of a workspace (what `id` is on GraphQL; `databaseId` is the REST uuid). */
const gid = (uuid: string) => Buffer.from(`Workspace:${uuid}`).toString('base64');

const WORKSPACES = `
  query Workspaces($first: Int, $after: String, $last: Int, $before: String, $search: String, $isArchived: Boolean, $orderBy: WorkspaceOrder) {
    workspaces(first: $first, after: $after, last: $last, before: $before, search: $search, isArchived: $isArchived, orderBy: $orderBy) {
      totalCount
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      edges { cursor node { id databaseId name } }
    }
  }
`;

type Connection = {
  totalCount: number;
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  edges: { cursor: string; node: { id: string; databaseId: string; name: string } }[];
};

async function connection(as: TestUser, variables: Record<string, unknown>): Promise<Connection> {
  const result = await client.gql(WORKSPACES, { as, variables });
  expect(result.errors, JSON.stringify(result.errors)).toBeUndefined();
  return result.data.workspaces;
}

async function restIds(as: TestUser, query: Record<string, string | number | boolean>) {
  const params = new URLSearchParams(Object.entries({ limit: 100, ...query }).map(([key, value]) => [key, String(value)]));
  const response = await client.api('GET', `${BASE}?${params}`, { as });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return { ids: response.body.data.map((w: { id: string }) => w.id) as string[], total: response.body.total as number };
}

const WORKSPACE_FIELDS = `id databaseId name description role isArchived archivedAt ownerId memberCount targetCount viewerCanManage members { id role user { id name } }`;

describe('workspaces connection', () => {
  let owner: TestUser;
  let stranger: TestUser;
  let created: { id: string; name: string }[];

  beforeAll(async () => {
    owner = await client.signUp('Connie');
    stranger = await client.signUp('Stranger');
    await client.createWorkspace(stranger, { name: 'not yours (alpha)' });
    const specs = [
      { name: 'alpha', description: 'Edge network' },
      { name: 'bravo', description: null },
      { name: 'charlie', description: 'EDGE devices' },
      { name: 'delta', description: 'core' },
      { name: 'echo', description: null },
      { name: 'foxtrot', description: 'edge' },
      { name: 'golf', description: null },
      { name: 'hotel', description: 'core' },
      { name: 'india', description: null },
      { name: 'juliet edge', description: null },
      { name: 'kilo', description: null },
      { name: 'lima', description: 'core' },
    ];
    created = [];
    for (const spec of specs) created.push(await client.createWorkspace(owner, spec));
    for (const name of ['charlie', 'golf', 'lima']) {
      const id = created.find((w) => w.name === name)!.id;
      expect((await client.api('PATCH', `${BASE}/${id}/archived`, { as: owner, body: { isArchived: true } })).status).toBe(200);
    }
    for (const name of ['echo', 'alpha']) {
      const id = created.find((w) => w.name === name)!.id;
      expect((await client.api('PATCH', `${BASE}/${id}`, { as: owner, body: { description: 'touched' } })).status).toBe(200);
    }
  });

  it('encodes ids as Relay global ids and databaseId as the REST uuid', async () => {
    const result = await connection(owner, { first: 100 });
    for (const { node } of result.edges) expect(node.id).toBe(gid(node.databaseId));
    expect(result.edges.map((edge) => edge.node.databaseId).sort()).toEqual(created.map((w) => w.id).sort());
  });

  it.each([
    [{}, {}],
    [{ orderBy: { field: 'name', direction: 'ASC' } }, { sortBy: 'name', sortOrder: 'ASC' }],
    [{ orderBy: { field: 'name', direction: 'DESC' } }, { sortBy: 'name', sortOrder: 'DESC' }],
    [{ orderBy: { field: 'createdAt', direction: 'ASC' } }, { sortBy: 'createdAt', sortOrder: 'ASC' }],
    [{ orderBy: { field: 'updatedAt', direction: 'DESC' } }, { sortBy: 'updatedAt', sortOrder: 'DESC' }],
    [{ orderBy: { field: 'updatedAt', direction: 'ASC' } }, { sortBy: 'updatedAt', sortOrder: 'ASC' }],
    [{ search: 'EDGE' }, { search: 'EDGE' }],
    [
      { search: 'core', orderBy: { field: 'name', direction: 'ASC' } },
      { search: 'core', sortBy: 'name', sortOrder: 'ASC' },
    ],
    [{ isArchived: true }, { isArchived: true }],
    [
      { isArchived: false, orderBy: { field: 'name', direction: 'DESC' } },
      { isArchived: false, sortBy: 'name', sortOrder: 'DESC' },
    ],
    [
      { search: 'e', isArchived: false },
      { search: 'e', isArchived: false },
    ],
  ])('matches the REST list for %j', async (args, query) => {
    const rest = await restIds(owner, query as Record<string, string>);
    const gql = await connection(owner, { first: 100, ...args });
    expect(gql.edges.map((edge) => edge.node.databaseId)).toEqual(rest.ids);
    expect(gql.totalCount).toBe(rest.total);
    expect(rest.ids.length).toBeGreaterThan(0);
  });

  it('filters as documented: search on name and description, isArchived absent lists both', async () => {
    const names = async (args: Record<string, unknown>) =>
      (await connection(owner, { first: 100, orderBy: { field: 'name', direction: 'ASC' }, ...args })).edges.map((e) => e.node.name);
    // alpha's "Edge network" description was replaced ("touched") in the set-up.
    expect(await names({ search: 'edge' })).toEqual(['charlie', 'foxtrot', 'juliet edge']);
    expect(await names({ isArchived: true })).toEqual(['charlie', 'golf', 'lima']);
    expect((await names({ isArchived: false })).length).toBe(9);
    expect((await names({})).length).toBe(12);
    expect(await names({ search: 'no-such-thing' })).toEqual([]);
  });

  it('walks every page forwards with first/after, without duplicates, in REST order', async () => {
    const expected = (await restIds(owner, { sortBy: 'name', sortOrder: 'ASC' })).ids;
    const seen: string[] = [];
    let after: string | null = null;
    let pages = 0;
    for (;;) {
      const page: Connection = await connection(owner, { first: 5, after, orderBy: { field: 'name', direction: 'ASC' } });
      pages += 1;
      expect(page.totalCount).toBe(12);
      seen.push(...page.edges.map((edge) => edge.node.databaseId));
      expect(page.pageInfo.endCursor).toBe(page.edges.at(-1)?.cursor ?? null);
      if (pages > 1) expect(page.pageInfo.hasPreviousPage).toBe(true);
      if (!page.pageInfo.hasNextPage) break;
      expect(page.edges).toHaveLength(5);
      after = page.pageInfo.endCursor;
      expect(pages).toBeLessThan(10);
    }
    expect(pages).toBe(3);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(expected);
  });

  it('walks with the default order and with filters', async () => {
    for (const args of [{}, { isArchived: false }, { search: 'core', orderBy: { field: 'updatedAt', direction: 'DESC' } }]) {
      const all = (await connection(owner, { first: 100, ...args })).edges.map((e) => e.node.databaseId);
      const seen: string[] = [];
      let after: string | null = null;
      for (let guard = 0; guard < 20; guard++) {
        const page: Connection = await connection(owner, { first: 2, after, ...args });
        seen.push(...page.edges.map((e) => e.node.databaseId));
        if (!page.pageInfo.hasNextPage) break;
        after = page.pageInfo.endCursor;
      }
      expect(seen).toEqual(all);
    }
  });

  it('walks backwards with last/before', async () => {
    const forwards = (await connection(owner, { first: 100 })).edges.map((e) => e.node.databaseId);
    const last = await connection(owner, { last: 5 });
    expect(last.edges.map((e) => e.node.databaseId)).toEqual(forwards.slice(-5));
    expect(last.pageInfo.hasPreviousPage).toBe(true);
    const before = await connection(owner, { last: 5, before: last.pageInfo.startCursor });
    expect(before.edges.map((e) => e.node.databaseId)).toEqual(forwards.slice(-10, -5));
  });

  it('never lists another user\u2019s workspaces', async () => {
    const mine = await connection(stranger, { first: 100, search: 'alpha' });
    expect(mine.totalCount).toBe(1);
    expect(mine.edges.map((e) => e.node.name)).toEqual(['not yours (alpha)']);
  });

  it('answers the full workspace fields with the caller role and members', async () => {
    const member = await client.signUp('Member Mo');
    const ws = created.find((w) => w.name === 'delta')!;
    await client.addMember(owner, ws.id, member);
    await server.db.prisma.target.createMany({ data: [{ workspaceId: ws.id, value: 'delta.example', type: 'domain' }] });
    const query = `query { workspaces(first: 10) { totalCount edges { node { ${WORKSPACE_FIELDS} } } } }`;
    const result = await client.gql(query, { as: member });
    expect(result.errors).toBeUndefined();
    expect(result.data.workspaces.totalCount).toBe(1);
    expect(result.data.workspaces.edges[0].node).toEqual({
      id: gid(ws.id),
      databaseId: ws.id,
      name: 'delta',
      description: 'core',
      role: 'member',
      isArchived: false,
      archivedAt: null,
      ownerId: owner.id,
      memberCount: 2,
      targetCount: 1,
      viewerCanManage: false,
      members: [
        { id: expect.any(String), role: 'owner', user: { id: owner.id, name: 'Connie' } },
        { id: expect.any(String), role: 'member', user: { id: member.id, name: 'Member Mo' } },
      ],
    });
    const asOwner = await client.gql(`query($id: ID!) { workspace(id: $id) { role viewerCanManage } }`, { as: owner, variables: { id: gid(ws.id) } });
    expect(asOwner.data.workspace).toEqual({ role: 'owner', viewerCanManage: true });
  });

  it('refuses invalid orderBy values as GraphQL errors', async () => {
    const badField = await client.gql(`query { workspaces(first: 1, orderBy: { field: ownerId, direction: ASC }) { totalCount } }`, { as: owner });
    expect(badField.errors?.[0]?.message).toMatch(/ownerId/);
    const badDirection = await client.gql(`query { workspaces(first: 1, orderBy: { field: name, direction: asc }) { totalCount } }`, { as: owner });
    expect(badDirection.errors?.length).toBeGreaterThan(0);
  });

  it('works over GET for queries, and refuses mutations over GET', async () => {
    const rest = await restIds(owner, { sortBy: 'name', sortOrder: 'ASC' });
    const result = await client.gql(WORKSPACES, { as: owner, method: 'GET', variables: { first: 100, orderBy: { field: 'name', direction: 'ASC' } } });
    expect(result.status).toBe(200);
    expect(result.errors).toBeUndefined();
    expect(result.data.workspaces.edges.map((e: { node: { databaseId: string } }) => e.node.databaseId)).toEqual(rest.ids);

    const mutation = await client.gql(`mutation { createWorkspace(input: { name: "via GET" }) { __typename } }`, { as: owner, method: 'GET' });
    expect(mutation.status).toBe(405);
    expect((await restIds(owner, { search: 'via GET' })).total).toBe(0);
  });
});

describe('cursors of workspaces the caller cannot see', () => {
  it('a foreign cursor answers exactly as the cursor of a workspace that no longer exists', async () => {
    const alice = await client.signUp();
    const mallory = await client.signUp();
    for (const name of ['aa', 'bb', 'mm', 'yy', 'zz']) await client.createWorkspace(mallory, { name });
    await client.createWorkspace(alice, { name: 'nn secret' });
    const byName = { orderBy: { field: 'name', direction: 'ASC' } };
    const aliceCursor = (await connection(alice, { first: 1, ...byName })).edges[0]!.cursor;

    const doomed = await client.createWorkspace(mallory, { name: 'nn doomed' });
    const doomedCursor = (await connection(mallory, { first: 100, ...byName })).edges.find((e) => e.node.databaseId === doomed.id)!.cursor;
    expect((await client.api('DELETE', `${BASE}/${doomed.id}`, { as: mallory })).status).toBe(200);

    for (const args of [byName, {}, { orderBy: { field: 'createdAt', direction: 'ASC' } }]) {
      for (const direction of [
        { first: 10, after: 'cursor' },
        { last: 10, before: 'cursor' },
      ]) {
        const variables = (cursor: string) => ({ ...args, ...Object.fromEntries(Object.entries(direction).map(([k, v]) => [k, v === 'cursor' ? cursor : v])) });
        const foreign = await client.gql(WORKSPACES, { as: mallory, variables: variables(aliceCursor) });
        const missing = await client.gql(WORKSPACES, { as: mallory, variables: variables(doomedCursor) });
        expect(foreign.errors).toBeUndefined();
        // Nothing positioned relative to Alice's workspace: no hint of its name or creation time.
        expect(foreign.data.workspaces.edges).toEqual([]);
        expect(foreign).toEqual(missing);
      }
    }
  });
});

describe('workspace(id) and node(id)', () => {
  let owner: TestUser;
  let member: TestUser;
  let outsider: TestUser;
  let wsId: string;

  beforeAll(async () => {
    owner = await client.signUp();
    member = await client.signUp();
    outsider = await client.signUp();
    wsId = (await client.createWorkspace(owner, { name: 'Lookup' })).id;
    await client.addMember(owner, wsId, member);
  });

  const LOOKUP = `query($id: ID!) {
    workspace(id: $id) { id databaseId name role }
    node(id: $id) { id __typename ... on Workspace { databaseId name role } }
  }`;

  it('returns the workspace to its members', async () => {
    for (const [user, role] of [
      [owner, 'owner'],
      [member, 'member'],
    ] as const) {
      const result = await client.gql(LOOKUP, { as: user, variables: { id: gid(wsId) } });
      expect(result.errors).toBeUndefined();
      expect(result.data.workspace).toEqual({ id: gid(wsId), databaseId: wsId, name: 'Lookup', role });
      expect(result.data.node).toEqual({ id: gid(wsId), __typename: 'Workspace', databaseId: wsId, name: 'Lookup', role });
    }
  });

  it('returns null, without an error, to a non-member exactly as for a workspace that does not exist', async () => {
    const foreign = await client.gql(LOOKUP, { as: outsider, variables: { id: gid(wsId) } });
    const missing = await client.gql(LOOKUP, { as: outsider, variables: { id: gid(randomUUID()) } });
    expect(foreign.errors).toBeUndefined();
    expect(foreign.data).toEqual({ workspace: null, node: null });
    expect(missing).toEqual(foreign);
    const malformed = await client.gql(LOOKUP, { as: outsider, variables: { id: gid('not-a-uuid') } });
    expect(malformed.data).toEqual({ workspace: null, node: null });
  });

  it('nodes(ids) hides foreign workspaces too', async () => {
    const own = await client.createWorkspace(outsider);
    const result = await client.gql(`query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, { as: outsider, variables: { ids: [gid(wsId), gid(own.id)] } });
    expect(result.data.nodes).toEqual([null, { id: gid(own.id) }]);
  });
});

describe('workspace mutations', () => {
  const CREATE = `mutation($input: CreateWorkspaceInput!) {
    createWorkspace(input: $input) {
      __typename
      ... on MutationCreateWorkspaceSuccess { data { ${WORKSPACE_FIELDS} isAssetsDiscovery isAutoEnableAssetAfterDiscovered } }
      ... on ValidationError { message code details { field message } }
      ... on Error { message code }
    }
  }`;
  const UPDATE = `mutation($id: ID!, $input: UpdateWorkspaceInput!) {
    updateWorkspace(id: $id, input: $input) {
      __typename
      ... on MutationUpdateWorkspaceSuccess { data { id name description isAssetsDiscovery isAutoEnableAssetAfterDiscovered } }
      ... on ValidationError { details { field message } }
      ... on Error { message code }
    }
  }`;
  const ARCHIVE = `mutation($id: ID!, $isArchived: Boolean!) {
    setWorkspaceArchived(id: $id, isArchived: $isArchived) {
      __typename
      ... on MutationSetWorkspaceArchivedSuccess { data { id isArchived archivedAt } }
      ... on Error { message code }
    }
  }`;
  const DELETE = `mutation($id: ID!) { deleteWorkspace(id: $id) { __typename ... on MutationDeleteWorkspaceSuccess { data } ... on Error { message code } } }`;
  const ADD = `mutation($workspaceId: ID!, $email: String!, $role: WorkspaceRole) {
    addWorkspaceMember(workspaceId: $workspaceId, email: $email, role: $role) {
      __typename
      ... on MutationAddWorkspaceMemberSuccess { data { id role user { id name } } }
      ... on ValidationError { details { field } }
      ... on Error { message code }
    }
  }`;
  const ROLE = `mutation($workspaceId: ID!, $memberId: ID!, $role: WorkspaceRole!) {
    updateWorkspaceMemberRole(workspaceId: $workspaceId, memberId: $memberId, role: $role) {
      __typename
      ... on MutationUpdateWorkspaceMemberRoleSuccess { data { id role user { id } } }
      ... on Error { message code }
    }
  }`;
  const REMOVE = `mutation($workspaceId: ID!, $memberId: ID!) {
    removeWorkspaceMember(workspaceId: $workspaceId, memberId: $memberId) {
      __typename
      ... on MutationRemoveWorkspaceMemberSuccess { data }
      ... on Error { message code }
    }
  }`;

  it('creates a workspace with the caller as owner', async () => {
    const owner = await client.signUp('Gql Owner');
    const result = await client.gql(CREATE, { as: owner, variables: { input: { name: '  Made in GraphQL ', description: 'd', isAssetsDiscovery: false } } });
    expect(result.errors).toBeUndefined();
    const payload = result.data.createWorkspace;
    expect(payload.__typename).toBe('MutationCreateWorkspaceSuccess');
    expect(payload.data).toMatchObject({
      name: 'Made in GraphQL',
      description: 'd',
      role: 'owner',
      isArchived: false,
      ownerId: owner.id,
      memberCount: 1,
      targetCount: 0,
      viewerCanManage: true,
      isAssetsDiscovery: false,
      isAutoEnableAssetAfterDiscovered: true,
      members: [{ role: 'owner', user: { id: owner.id, name: 'Gql Owner' } }],
    });
    expect(payload.data.id).toBe(gid(payload.data.databaseId));
    const rest = await client.api('GET', `${BASE}/${payload.data.databaseId}`, { as: owner });
    expect(rest.body).toMatchObject({ name: 'Made in GraphQL', isAssetsDiscovery: false });
  });

  it('answers a ValidationError with details naming the fields', async () => {
    const owner = await client.signUp();
    const result = await client.gql(CREATE, { as: owner, variables: { input: { name: ' ', description: 'x'.repeat(1001) } } });
    expect(result.errors).toBeUndefined();
    const payload = result.data.createWorkspace;
    expect(payload).toMatchObject({ __typename: 'ValidationError', code: 'VALIDATION_FAILED', message: expect.stringContaining('name') });
    expect(payload.details.map((d: { field: string }) => d.field).sort()).toEqual(['description', 'name']);
    expect((await restIds(owner, {})).total).toBe(0);
  });

  it('updates, archives, unarchives and deletes', async () => {
    const owner = await client.signUp();
    const ws = await client.createWorkspace(owner, { name: 'Before', description: 'keep' });
    const id = gid(ws.id);

    const updated = await client.gql(UPDATE, { as: owner, variables: { id, input: { name: 'After', isAutoEnableAssetAfterDiscovered: false } } });
    expect(updated.data.updateWorkspace).toEqual({
      __typename: 'MutationUpdateWorkspaceSuccess',
      data: { id, name: 'After', description: 'keep', isAssetsDiscovery: true, isAutoEnableAssetAfterDiscovered: false },
    });
    const cleared = await client.gql(UPDATE, { as: owner, variables: { id, input: { description: null, name: null } } });
    expect(cleared.data.updateWorkspace.data).toMatchObject({ name: 'After', description: null });
    const invalid = await client.gql(UPDATE, { as: owner, variables: { id, input: { name: '' } } });
    expect(invalid.data.updateWorkspace).toEqual({
      __typename: 'ValidationError',
      details: [{ field: 'name', message: expect.any(String) }],
      message: expect.any(String),
      code: 'VALIDATION_FAILED',
    });

    const archived = await client.gql(ARCHIVE, { as: owner, variables: { id, isArchived: true } });
    expect(archived.data.setWorkspaceArchived).toMatchObject({
      __typename: 'MutationSetWorkspaceArchivedSuccess',
      data: { id, isArchived: true, archivedAt: expect.any(String) },
    });
    const again = await client.gql(ARCHIVE, { as: owner, variables: { id, isArchived: true } });
    expect(again.data.setWorkspaceArchived.data.archivedAt).toBe(archived.data.setWorkspaceArchived.data.archivedAt);
    const unarchived = await client.gql(ARCHIVE, { as: owner, variables: { id, isArchived: false } });
    expect(unarchived.data.setWorkspaceArchived.data).toEqual({ id, isArchived: false, archivedAt: null });

    const deleted = await client.gql(DELETE, { as: owner, variables: { id } });
    expect(deleted.data.deleteWorkspace.__typename).toBe('MutationDeleteWorkspaceSuccess');
    expect([id, ws.id]).toContain(deleted.data.deleteWorkspace.data);
    expect((await client.api('GET', `${BASE}/${ws.id}`, { as: owner })).status).toBe(404);
    const twice = await client.gql(DELETE, { as: owner, variables: { id } });
    expect(twice.data.deleteWorkspace).toEqual({ __typename: 'NotFoundError', message: 'Workspace not found', code: 'NOT_FOUND' });
  });

  it('answers NotFoundError for a foreign workspace, identical to a missing one', async () => {
    const owner = await client.signUp();
    const outsider = await client.signUp();
    const ws = await client.createWorkspace(owner, { name: 'Private' });
    const membership = await client.addMember(owner, ws.id, await client.signUp());
    const attempts = (workspaceUuid: string) => [
      client.gql(UPDATE, { as: outsider, variables: { id: gid(workspaceUuid), input: { name: 'pwned' } } }),
      client.gql(ARCHIVE, { as: outsider, variables: { id: gid(workspaceUuid), isArchived: true } }),
      client.gql(DELETE, { as: outsider, variables: { id: gid(workspaceUuid) } }),
      client.gql(ADD, { as: outsider, variables: { workspaceId: gid(workspaceUuid), email: outsider.email, role: 'owner' } }),
      client.gql(ROLE, { as: outsider, variables: { workspaceId: gid(workspaceUuid), memberId: membership.id, role: 'owner' } }),
      client.gql(REMOVE, { as: outsider, variables: { workspaceId: gid(workspaceUuid), memberId: membership.id } }),
    ];
    const foreign = await Promise.all(attempts(ws.id));
    const missing = await Promise.all(attempts(randomUUID()));
    for (let i = 0; i < foreign.length; i++) {
      const payload = Object.values(foreign[i]!.data)[0];
      expect(payload).toEqual({ __typename: 'NotFoundError', message: 'Workspace not found', code: 'NOT_FOUND' });
      expect(foreign[i]).toEqual(missing[i]);
    }
    const rest = await client.api('GET', `${BASE}/${ws.id}`, { as: owner });
    expect(rest.body).toMatchObject({ name: 'Private', archivedAt: null, memberCount: 2 });
  });

  it('answers ForbiddenError to a member who tries to manage', async () => {
    const owner = await client.signUp();
    const member = await client.signUp();
    const ws = await client.createWorkspace(owner);
    const membership = await client.addMember(owner, ws.id, member);
    const id = gid(ws.id);
    const results = await Promise.all([
      client.gql(UPDATE, { as: member, variables: { id, input: { name: 'mine' } } }),
      client.gql(ARCHIVE, { as: member, variables: { id, isArchived: true } }),
      client.gql(DELETE, { as: member, variables: { id } }),
      client.gql(ADD, { as: member, variables: { workspaceId: id, email: (await client.signUp()).email } }),
      client.gql(ROLE, { as: member, variables: { workspaceId: id, memberId: membership.id, role: 'owner' } }),
    ]);
    for (const result of results) {
      expect(result.errors).toBeUndefined();
      expect(Object.values(result.data)[0]).toEqual({ __typename: 'ForbiddenError', message: expect.any(String), code: 'FORBIDDEN' });
    }
    expect((await client.api('GET', `${BASE}/${ws.id}`, { as: owner })).body).toMatchObject({ name: ws.name, archivedAt: null, memberCount: 2 });
  });

  it('manages members: add, NotFound, Conflict, change role, last owner, leave', async () => {
    const owner = await client.signUp('Owner O');
    const user = await client.signUp('User U');
    const ws = await client.createWorkspace(owner);
    const workspaceId = gid(ws.id);

    const added = await client.gql(ADD, { as: owner, variables: { workspaceId, email: user.email } });
    expect(added.data.addWorkspaceMember).toEqual({
      __typename: 'MutationAddWorkspaceMemberSuccess',
      data: { id: expect.any(String), role: 'member', user: { id: user.id, name: 'User U' } },
    });
    const memberId = added.data.addWorkspaceMember.data.id;

    const unknown = await client.gql(ADD, { as: owner, variables: { workspaceId, email: 'nobody@example.test' } });
    expect(unknown.data.addWorkspaceMember).toMatchObject({ __typename: 'NotFoundError', code: 'NOT_FOUND' });
    const duplicate = await client.gql(ADD, { as: owner, variables: { workspaceId, email: user.email } });
    expect(duplicate.data.addWorkspaceMember).toMatchObject({ __typename: 'ConflictError', code: 'CONFLICT' });
    const badEmail = await client.gql(ADD, { as: owner, variables: { workspaceId, email: 'nope' } });
    expect(badEmail.data.addWorkspaceMember).toEqual({
      __typename: 'ValidationError',
      details: [{ field: 'email' }],
      message: expect.any(String),
      code: 'VALIDATION_FAILED',
    });

    const ownerMemberId = (await client.api('GET', `${BASE}/members`, { as: owner, workspaceId: ws.id })).body[0].id;
    const demoteLast = await client.gql(ROLE, { as: owner, variables: { workspaceId, memberId: ownerMemberId, role: 'member' } });
    expect(demoteLast.data.updateWorkspaceMemberRole).toMatchObject({ __typename: 'ConflictError', code: 'CONFLICT' });
    const leaveLast = await client.gql(REMOVE, { as: owner, variables: { workspaceId, memberId: ownerMemberId } });
    expect(leaveLast.data.removeWorkspaceMember).toMatchObject({ __typename: 'ConflictError', code: 'CONFLICT' });

    const promoted = await client.gql(ROLE, { as: owner, variables: { workspaceId, memberId, role: 'owner' } });
    expect(promoted.data.updateWorkspaceMemberRole).toEqual({
      __typename: 'MutationUpdateWorkspaceMemberRoleSuccess',
      data: { id: memberId, role: 'owner', user: { id: user.id } },
    });
    const missingMember = await client.gql(ROLE, { as: owner, variables: { workspaceId, memberId: randomUUID(), role: 'owner' } });
    expect(missingMember.data.updateWorkspaceMemberRole).toMatchObject({ __typename: 'NotFoundError', message: 'Member not found' });

    // Now two owners: the first may leave; ownership passes to the other.
    const left = await client.gql(REMOVE, { as: owner, variables: { workspaceId, memberId: ownerMemberId } });
    expect(left.data.removeWorkspaceMember).toEqual({ __typename: 'MutationRemoveWorkspaceMemberSuccess', data: ownerMemberId });
    const after = await client.gql(`query($id: ID!) { workspace(id: $id) { ownerId role memberCount } }`, { as: user, variables: { id: workspaceId } });
    expect(after.data.workspace).toEqual({ ownerId: user.id, role: 'owner', memberCount: 1 });
    const gone = await client.gql(`query($id: ID!) { workspace(id: $id) { id } }`, { as: owner, variables: { id: workspaceId } });
    expect(gone.data.workspace).toBeNull();
  });

  it('lets a member leave but not remove others', async () => {
    const owner = await client.signUp();
    const a = await client.signUp();
    const b = await client.signUp();
    const ws = await client.createWorkspace(owner);
    const workspaceId = gid(ws.id);
    const aMembership = await client.addMember(owner, ws.id, a);
    const bMembership = await client.addMember(owner, ws.id, b);
    const removeOther = await client.gql(REMOVE, { as: a, variables: { workspaceId, memberId: bMembership.id } });
    expect(removeOther.data.removeWorkspaceMember).toMatchObject({ __typename: 'ForbiddenError', code: 'FORBIDDEN' });
    const leave = await client.gql(REMOVE, { as: a, variables: { workspaceId, memberId: aMembership.id } });
    expect(leave.data.removeWorkspaceMember).toEqual({ __typename: 'MutationRemoveWorkspaceMemberSuccess', data: aMembership.id });
    const list = await client.gql(`query { workspaces(first: 5) { totalCount } }`, { as: a });
    expect(list.data.workspaces.totalCount).toBe(0);
  });
});

describe('authentication', () => {
  it('an unauthenticated workspaces query is an error with code UNAUTHENTICATED', async () => {
    const result = await client.gql(`query { workspaces(first: 5) { totalCount edges { node { id } } } }`);
    expect(result.data ?? null).toBeNull();
    expect(result.errors).toHaveLength(1);
    expect(result.errors![0]!.extensions?.code).toBe('UNAUTHENTICATED');
    expect(result.errors![0]!.message).not.toMatch(/Unexpected|Internal/);
  });

  it('an unauthenticated workspace(id) lookup is an error too, and mutations answer UnauthenticatedError', async () => {
    const lookup = await client.gql(`query($id: ID!) { workspace(id: $id) { id } }`, { variables: { id: gid(randomUUID()) } });
    expect(lookup.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const create = await client.gql(`mutation { createWorkspace(input: { name: "anon" }) { __typename ... on Error { code } } }`);
    expect(create.data?.createWorkspace).toEqual({ __typename: 'UnauthenticatedError', code: 'UNAUTHENTICATED' });
  });
});
