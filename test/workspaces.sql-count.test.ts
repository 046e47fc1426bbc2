import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';

/**
 * The list must cost a fixed number of SQL statements whatever the page size: no N+1 on members, their
 * users, counts or the caller's role. Fixtures are bulk-inserted; the requests go through the front doors.
 */
let server: TestApp;
let client: ReturnType<typeof clientFor>;
let viewer: TestUser;
const statements: string[] = [];
let recording = false;

const WORKSPACE_COUNT = 100;

beforeAll(async () => {
  // Every request counted cold (no auth cache: it would spare a repeated request its session and membership
  // lookups, test/auth-cache.test.ts), so the counts do not depend on which request came first.
  server = await startTestApp({ AUTH_CACHE_TTL_MS: '0' }, { logQueries: true });
  client = clientFor(server);
  // Prisma's statements and the hand-written page statement (db/prepared-read.ts) alike.
  server.db.onStatement((text) => {
    if (recording) statements.push(text);
  });

  viewer = await client.signUp('Counter');
  const prisma = server.db.prisma;
  const others = Array.from({ length: 5 }, (_, i) => ({
    id: `sql-count-user-${i}`,
    name: `Colleague ${i}`,
    email: `colleague${i}.${randomUUID()}@example.test`,
  }));
  await prisma.user.createMany({ data: others });

  const start = Date.now() - WORKSPACE_COUNT * 60_000;
  const workspaces = Array.from({ length: WORKSPACE_COUNT }, (_, i) => ({
    id: randomUUID(),
    name: `Bulk ${String(i).padStart(3, '0')}`,
    ownerId: viewer.id,
    createdAt: new Date(start + i * 60_000),
    archivedAt: i % 7 === 0 ? new Date() : null,
  }));
  await prisma.workspace.createMany({ data: workspaces });
  await prisma.workspaceMember.createMany({
    data: workspaces.flatMap((workspace, i) => [
      { workspaceId: workspace.id, userId: viewer.id, role: i % 3 === 0 ? ('member' as const) : ('owner' as const) },
      { workspaceId: workspace.id, userId: others[i % others.length]!.id, role: 'owner' as const },
      { workspaceId: workspace.id, userId: others[(i + 1) % others.length]!.id, role: 'member' as const },
    ]),
  });
  await prisma.target.createMany({
    data: workspaces.flatMap((workspace, i) =>
      Array.from({ length: 1 + (i % 4) }, (_, t) => ({ workspaceId: workspace.id, value: `host${t}.ws${i}.example`, type: 'domain' as const })),
    ),
  });
});
afterAll(() => server?.stop());

/**
 * Statement count is not the whole cost: Prisma's `_count` on a list is a join to `GROUP BY` over the whole
 * table (`... FROM target WHERE 1=1 GROUP BY ...`), every tenant's rows, whatever the page. Counts must be
 * restricted to the page's workspaces.
 */
function expectNoWholeTableAggregate(recorded: string[]) {
  const unrestricted = recorded.filter((sql) => /WHERE 1=1 GROUP BY/i.test(sql));
  expect(unrestricted, unrestricted.join('\n')).toEqual([]);
}

async function counted<T>(run: () => Promise<T>): Promise<{ result: T; count: number; statements: string[] }> {
  statements.length = 0;
  recording = true;
  try {
    const result = await run();
    return { result, count: statements.length, statements: [...statements] };
  } finally {
    recording = false;
  }
}

const LIST = `query($first: Int!) {
  workspaces(first: $first) {
    totalCount
    edges { node { id name role targetCount memberCount members { role user { id name } } } }
  }
}`;

describe('SQL statements per workspace list', () => {
  it('GraphQL: workspaces(first: 10) and (first: 100) cost the same few statements', async () => {
    // The viewer's session lookup is part of every request: measure it alone to report the list's own cost.
    const baseline = await counted(() => client.gql('{ viewer { id } }', { as: viewer }));
    const ten = await counted(() => client.gql(LIST, { as: viewer, variables: { first: 10 } }));
    const hundred = await counted(() => client.gql(LIST, { as: viewer, variables: { first: 100 } }));
    console.log(
      `GraphQL SQL statements: session baseline ${baseline.count}; first:10 → ${ten.count} (${ten.count - baseline.count} for the list); first:100 → ${hundred.count} (${hundred.count - baseline.count} for the list)`,
    );

    expect(ten.result.errors).toBeUndefined();
    expect(hundred.result.errors).toBeUndefined();
    expect(ten.result.data.workspaces.edges).toHaveLength(10);
    expect(hundred.result.data.workspaces.edges).toHaveLength(WORKSPACE_COUNT);
    expect(hundred.result.data.workspaces.totalCount).toBe(WORKSPACE_COUNT);
    // The data is right, not just cheap.
    for (const { node } of hundred.result.data.workspaces.edges) {
      const i = Number(node.name.slice(5));
      expect(node.memberCount).toBe(3);
      expect(node.members).toHaveLength(3);
      expect(node.targetCount).toBe(1 + (i % 4));
      expect(node.role).toBe(i % 3 === 0 ? 'member' : 'owner');
    }

    expect(hundred.count, hundred.statements.join('\n')).toBe(ten.count);
    // One statement, REST's (page-sql.ts): the page with its members (role and memberCount read them), target
    // counts and the total as a window count.
    expect(ten.count - baseline.count, ten.statements.join('\n')).toBe(1);
    expectNoWholeTableAggregate(hundred.statements);
  });

  it('GraphQL: further fields (owner, viewerCanManage) do not add statements per workspace either', async () => {
    const query = `query($first: Int!) { workspaces(first: $first) { edges { node { id role viewerCanManage owner { id name } members { user { id } } } } } }`;
    const ten = await counted(() => client.gql(query, { as: viewer, variables: { first: 10 } }));
    const hundred = await counted(() => client.gql(query, { as: viewer, variables: { first: 100 } }));
    console.log(`GraphQL with owner/viewerCanManage: first:10 → ${ten.count}; first:100 → ${hundred.count}`);
    expect(hundred.result.errors).toBeUndefined();
    for (const { node } of hundred.result.data.workspaces.edges) expect(node.viewerCanManage).toBe(node.role === 'owner');
    expect(hundred.count, hundred.statements.join('\n')).toBe(ten.count);
    expectNoWholeTableAggregate(hundred.statements);
  });

  it('GraphQL: a page read by the page statement answers as the same page read by Prisma, on every field', async () => {
    // Every scalar field of Workspace, WorkspaceMember and User, from the schema itself: a field added later that
    // the statement does not return makes the two answers differ here. `owner` sends the same page to Prisma.
    const scalarFields = async (type: string) => {
      const result = await client.gql(`{ __type(name: "${type}") { fields { name args { name } type { kind ofType { kind ofType { kind } } } } } }`, {
        as: viewer,
      });
      type Field = { name: string; args: unknown[]; type: { kind: string; ofType?: { kind: string; ofType?: { kind: string } } } };
      const leaf = (t: Field['type']) => (t.kind === 'NON_NULL' ? (t.ofType!.kind === 'LIST' ? t.ofType!.ofType!.kind : t.ofType!.kind) : t.kind);
      return (result.data.__type.fields as Field[]).filter((f) => f.args.length === 0 && ['SCALAR', 'ENUM'].includes(leaf(f.type))).map((f) => f.name);
    };
    const [workspace, member, user] = await Promise.all([scalarFields('Workspace'), scalarFields('WorkspaceMember'), scalarFields('User')]);
    expect(workspace).toEqual(expect.arrayContaining(['id', 'name', 'role', 'memberCount', 'targetCount', 'isArchived', 'viewerCanManage']));
    const node = `${workspace.join(' ')} members { ${member.join(' ')} user { ${user.join(' ')} } }`;
    const page = (extra: string) => `query($first: Int!, $after: String, $isArchived: Boolean, $orderBy: WorkspaceOrder) {
      workspaces(first: $first, after: $after, isArchived: $isArchived, orderBy: $orderBy) {
        totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor } edges { cursor node { ${node} ${extra} } }
      }
    }`;
    // Members added in one statement share their creation time; both paths order them by it alone.
    const comparable = (data: { workspaces: { edges: { node: { members: { id: string }[]; owner?: unknown } }[] } }) => {
      for (const { node } of data.workspaces.edges) {
        delete node.owner;
        node.members.sort((a, b) => a.id.localeCompare(b.id));
      }
      return data;
    };
    const firstPage = await client.gql(page(''), { as: viewer, variables: { first: 7 } });
    const edge = (i: number) => firstPage.data.workspaces.edges[i].cursor as string; // Bulk 099, 098, 097, …
    // [variables, whether the page has rows]
    const cases: Array<[Record<string, unknown>, boolean]> = [
      [{ first: 7 }, true],
      [{ first: 7, after: firstPage.data.workspaces.pageInfo.endCursor }, true],
      [{ first: 100, isArchived: false, orderBy: { field: 'name', direction: 'ASC' } }, true],
      [{ first: 3, isArchived: true, after: edge(1) }, true],
      [{ first: 5, orderBy: { field: 'name', direction: 'DESC' }, after: edge(6) }, true],
      [{ first: 4, orderBy: { field: 'updatedAt', direction: 'DESC' }, after: edge(2) }, true],
      // A cursor outside the filtered list (097 is not archived) starts nothing, as Prisma's cursors.
      [{ first: 3, isArchived: true, orderBy: { field: 'createdAt', direction: 'ASC' }, after: edge(2) }, false],
    ];
    for (const [variables, hasRows] of cases) {
      const statement = await counted(() => client.gql(page(''), { as: viewer, variables }));
      const prisma = await counted(() => client.gql(page('owner { id }'), { as: viewer, variables }));
      expect(statement.result.errors, JSON.stringify(statement.result.errors)).toBeUndefined();
      expect(prisma.result.errors, JSON.stringify(prisma.result.errors)).toBeUndefined();
      // Each path is the one named: the page statement's `page` CTE, which Prisma never writes.
      expect(
        statement.statements.some((sql) => sql.includes('WITH page AS (')),
        JSON.stringify(variables),
      ).toBe(true);
      expect(
        prisma.statements.some((sql) => sql.includes('WITH page AS (')),
        JSON.stringify(variables),
      ).toBe(false);
      expect(statement.result.data.workspaces.edges.length > 0, JSON.stringify(variables)).toBe(hasRows);
      expect(comparable(statement.result.data), JSON.stringify(variables)).toEqual(comparable(prisma.result.data));
    }
  });

  it('REST: limit=10 and limit=100 cost the same few statements', async () => {
    const baseline = await counted(() => client.api('GET', '/api/v1/api/users/me', { as: viewer }));
    const ten = await counted(() => client.api('GET', '/api/v1/api/workspaces?limit=10', { as: viewer }));
    const hundred = await counted(() => client.api('GET', '/api/v1/api/workspaces?limit=100', { as: viewer }));
    console.log(
      `REST SQL statements: session baseline ${baseline.count}; limit=10 → ${ten.count} (${ten.count - baseline.count} for the list); limit=100 → ${hundred.count} (${hundred.count - baseline.count} for the list)`,
    );

    expect(ten.result.status).toBe(200);
    expect(hundred.result.status).toBe(200);
    expect(ten.result.body.data).toHaveLength(10);
    expect(hundred.result.body).toMatchObject({ total: WORKSPACE_COUNT, pageCount: 1, hasNextPage: false });
    expect(hundred.result.body.data).toHaveLength(WORKSPACE_COUNT);
    for (const workspace of hundred.result.body.data) {
      const i = Number(workspace.name.slice(5));
      expect(workspace).toMatchObject({ memberCount: 3, targetCount: 1 + (i % 4), role: i % 3 === 0 ? 'member' : 'owner' });
      expect(workspace.workspaceMembers).toHaveLength(3);
    }

    expect(hundred.count, hundred.statements.join('\n')).toBe(ten.count);
    // One statement: the page, its members and target counts, and the total (a window count).
    expect(ten.count - baseline.count, ten.statements.join('\n')).toBe(1);
    expectNoWholeTableAggregate(hundred.statements);
  });
});
