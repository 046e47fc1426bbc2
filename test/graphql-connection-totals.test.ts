import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';

/**
 * The totals of the GraphQL asset and finding connections come from the same counting as the REST lists
 * (counters where the filters allow, the matching rows otherwise), read in the statement that loads the
 * workspaces. Checked here against REST's totals and against the rows themselves, under every kind of filter,
 * in several workspaces, and for their cost in statements.
 */
let server: TestApp;
let client: ReturnType<typeof clientFor>;
let viewer: TestUser;
let stranger: TestUser;
const workspaces: Array<{ id: string; targetIds: string[] }> = [];
const statements: string[] = [];
let recording = false;

const SEVERITIES = ['info', 'low', 'medium', 'high', 'critical'] as const;
const STATUSES = ['open', 'open', 'fixed', 'dismissed'] as const;

/** Workspace n holds 6 + 5n assets of mixed kinds and states, and one finding per asset of mixed severity and status. */
async function seedWorkspace(prisma: TestApp['db']['prisma'], owner: TestUser, n: number) {
  const workspaceId = (await client.createWorkspace(owner, { name: `Totals ${n}` })).id;
  const targets = Array.from({ length: 2 }, (_, i) => ({ id: randomUUID(), workspaceId, value: `t${i}.ws${n}.totals.example`, type: 'domain' as const }));
  await prisma.target.createMany({ data: targets });
  const assets = Array.from({ length: 6 + 5 * n }, (_, i) => ({
    id: randomUUID(),
    workspaceId,
    kind: i % 3 === 0 ? ('service' as const) : ('host' as const),
    key: `key:${n}:${i}`,
    value: i % 4 === 0 ? `needle${i}.totals.example` : `hay${i}.totals.example`,
    data: {},
    enabled: i % 2 === 0,
    dismissedAt: i % 5 === 0 ? new Date() : null,
    targetId: targets[i % 2]!.id,
  }));
  await prisma.asset.createMany({ data: assets });
  await prisma.assetTarget.createMany({ data: assets.map((asset) => ({ assetId: asset.id, targetId: asset.targetId })) });
  await prisma.assetDiscovery.createMany({ data: assets.filter((_, i) => i % 3 === 1).map((asset) => ({ assetId: asset.id, workspaceId, source: 'ct' })) });
  const findings = assets.map((asset, i) => ({
    id: randomUUID(),
    workspaceId,
    fingerprint: `fp-${n}-${i}`,
    checkId: i % 4 === 0 ? 'needle-check' : 'check',
    source: 'nuclei',
    name: `Finding ${i}`,
    severity: SEVERITIES[i % SEVERITIES.length]!,
    status: STATUSES[i % STATUSES.length]!,
    description: 'd',
    remediation: 'r',
    matcher: 'm',
    evidence: {},
    assetId: asset.id,
    targetId: asset.targetId,
  }));
  await prisma.finding.createMany({ data: findings });
  await prisma.findingTarget.createMany({ data: findings.map((finding) => ({ findingId: finding.id, targetId: finding.targetId })) });
  return { id: workspaceId, targetIds: targets.map((target) => target.id) };
}

beforeAll(async () => {
  server = await startTestApp({ AUTH_CACHE_TTL_MS: '0' }, { logQueries: true });
  client = clientFor(server);
  server.db.prisma.$on('query' as never, (event: { query: string }) => {
    if (recording) statements.push(event.query);
  });
  viewer = await client.signUp('Totals');
  stranger = await client.signUp('Stranger');
  for (let n = 0; n < 3; n += 1) workspaces.push(await seedWorkspace(server.db.prisma, viewer, n));
  await seedWorkspace(server.db.prisma, stranger, 3);
});
afterAll(() => server?.stop());

const gid = (type: string, uuid: string) => Buffer.from(`${type}:${uuid}`).toString('base64');

async function restTotal(path: string, workspaceId: string, query: Record<string, string | string[]>): Promise<number> {
  const params = new URLSearchParams({ limit: '1' });
  for (const [key, value] of Object.entries(query)) for (const one of [value].flat()) params.append(key, one);
  const response = await client.api('GET', `/api/v1/api/${path}?${params}`, { as: viewer, headers: { 'x-workspace-id': workspaceId } });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.total;
}

describe('GraphQL asset and finding totals', () => {
  it('equal REST totals and the rows listed, under every filter, in every workspace', async () => {
    const cases = (targetId: string) => ({
      assets: [
        ['', {}],
        ['kind: host', { kind: 'host' }],
        ['enabled: false', { enabled: 'false' }],
        ['kind: service, enabled: true, dismissed: false', { kind: 'service', enabled: 'true', dismissed: 'false' }],
        ['dismissed: true', { dismissed: 'true' }],
        ['search: "needle"', { search: 'needle' }],
        ['source: ct, enabled: true', { source: 'ct', enabled: 'true' }],
        [`targetId: "${gid('Target', targetId)}"`, { targetId }],
      ] as Array<[string, Record<string, string | string[]>]>,
      findings: [
        ['', {}],
        ['status: all', { status: 'all' }],
        ['status: fixed', { status: 'fixed' }],
        ['severity: [high, critical]', { severity: ['high', 'critical'] }],
        ['status: all, severity: [info]', { status: 'all', severity: 'info' }],
        ['search: "needle"', { q: 'needle' }],
        [`status: all, targetId: "${gid('Target', targetId)}"`, { status: 'all', targetIds: targetId }],
      ] as Array<[string, Record<string, string | string[]>]>,
    });
    // One request for all workspaces and all filters: every total, and every row to count them by.
    const fields = (targetId: string, kind: 'assets' | 'findings') =>
      cases(targetId)
        [kind].map(([args], i) => `${kind[0]}${i}: ${kind}(first: 22${args ? `, ${args}` : ''}) { totalCount edges { node { id } } }`)
        .join(' ');
    // Per workspace (the target filter is the workspace's own) and per list, within a request's cost limit.
    const answers = [];
    for (const ws of workspaces) {
      const answer: Record<string, unknown> = {};
      for (const kind of ['assets', 'findings'] as const) {
        const result = await client.gql(`query { workspace(id: "${gid('Workspace', ws.id)}") { ${fields(ws.targetIds[0]!, kind)} } }`, { as: viewer });
        expect(result.errors, JSON.stringify(result.errors)).toBeUndefined();
        Object.assign(answer, result.data.workspace);
      }
      answers.push(answer as Record<string, { totalCount: number; edges: unknown[] }>);
    }
    for (const [w, ws] of workspaces.entries()) {
      const { assets, findings } = cases(ws.targetIds[0]!);
      const node = answers[w];
      for (const [i, [args, rest]] of assets.entries()) {
        const connection = node[`a${i}`];
        expect(connection.totalCount, `workspace ${w} assets(${args})`).toBe(connection.edges.length);
        expect(connection.totalCount, `workspace ${w} assets(${args})`).toBe(await restTotal('assets', ws.id, rest));
      }
      for (const [i, [args, rest]] of findings.entries()) {
        const connection = node[`f${i}`];
        expect(connection.totalCount, `workspace ${w} findings(${args})`).toBe(connection.edges.length);
        expect(connection.totalCount, `workspace ${w} findings(${args})`).toBe(await restTotal('vulnerabilities', ws.id, rest));
      }
    }
    // The filters are not all empty: the numbers differ between them.
    expect(new Set(Object.values(answers[2]).map((connection) => (connection as { totalCount: number }).totalCount)).size).toBeGreaterThanOrEqual(5);
  });

  it('cost no statement per workspace of a list', async () => {
    // (The same relation twice under aliases with other arguments is read per workspace by Pothos' Prisma
    // plugin, totals or not; a list asks for each once.)
    const query = `query($first: Int!) { workspaces(first: $first) { edges { node { databaseId
      assets(search: "needle") { totalCount } findings(status: all) { totalCount } } } } }`;
    const run = async (first: number) => {
      statements.length = 0;
      recording = true;
      try {
        const answer = await client.gql(query, { as: viewer, variables: { first } });
        expect(answer.errors, JSON.stringify(answer.errors)).toBeUndefined();
        return { answer, count: statements.length, statements: [...statements] };
      } finally {
        recording = false;
      }
    };
    const one = await run(1);
    const three = await run(3);
    expect(three.answer.data.workspaces.edges).toHaveLength(3);
    expect(
      three.count,
      `${one.count} statements for one workspace:\n${one.statements.join('\n')}\n\n${three.count} for three:\n${three.statements.join('\n')}`,
    ).toBe(one.count);
    for (const { node } of three.answer.data.workspaces.edges) {
      expect(node.assets.totalCount).toBe(await restTotal('assets', node.databaseId, { search: 'needle' }));
      expect(node.findings.totalCount).toBe(await restTotal('vulnerabilities', node.databaseId, { status: 'all' }));
    }
  });

  it('a stranger reaches neither the workspaces nor their totals', async () => {
    const answer = await client.gql(`query { workspace(id: "${gid('Workspace', workspaces[0]!.id)}") { assets { totalCount } findings { totalCount } } }`, {
      as: stranger,
    });
    expect(answer.errors).toBeUndefined();
    expect(answer.data.workspace).toBeNull();
    const own = await client.gql('query { workspaces(first: 10) { edges { node { assets { totalCount } findings(status: all) { totalCount } } } } }', {
      as: stranger,
    });
    expect(own.data.workspaces.edges).toEqual([{ node: { assets: { totalCount: 21 }, findings: { totalCount: 21 } } }]);
  });
});
