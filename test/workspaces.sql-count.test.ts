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
  server.db.prisma.$on('query' as never, (event: { query: string }) => {
    if (recording) statements.push(event.query);
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
    // The page with its members (role and memberCount read them) and target counts (a correlated count per row), and the total.
    expect(ten.count - baseline.count, ten.statements.join('\n')).toBeLessThanOrEqual(2);
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
