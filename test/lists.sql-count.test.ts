import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { graphqlQuery, restPath } from '../scripts/bench/api-targets.js';

/**
 * Every REST list costs a fixed number of SQL statements whatever the page size (the workspace list has its
 * own test, workspaces.sql-count.test.ts): no statement per target, asset, finding or message, and no relation
 * read per row. Fixtures are bulk-inserted; the requests go through the front door.
 */
let server: TestApp;
let client: ReturnType<typeof clientFor>;
let viewer: TestUser;
let workspaceId: string;
let conversationId: string;
const statements: string[] = [];
let recording = false;

const ROWS = 120;

beforeAll(async () => {
  // Every request counted cold (no auth cache: it would spare a repeated request its session and membership
  // lookups, test/auth-cache.test.ts), so the counts do not depend on which request came first.
  server = await startTestApp({ AUTH_CACHE_TTL_MS: '0' }, { logQueries: true });
  client = clientFor(server);
  server.db.onStatement((text) => {
    if (recording) statements.push(text);
  });
  viewer = await client.signUp('Lister');
  workspaceId = (await client.createWorkspace(viewer)).id;
  const prisma = server.db.prisma;
  const targets = Array.from({ length: ROWS }, (_, i) => ({ id: randomUUID(), workspaceId, value: `host${i}.lists.example`, type: 'domain' as const }));
  await prisma.target.createMany({ data: targets });
  const assets = targets.map((target, i) => ({
    id: randomUUID(),
    workspaceId,
    kind: 'host' as const,
    key: `host:a${i}.lists.example`,
    value: `a${i}.lists.example`,
    data: {},
    targetId: target.id,
  }));
  await prisma.asset.createMany({ data: assets });
  await prisma.assetTarget.createMany({ data: assets.map((asset) => ({ assetId: asset.id, targetId: asset.targetId })) });
  await prisma.assetDiscovery.createMany({ data: assets.map((asset) => ({ assetId: asset.id, workspaceId, source: 'ct' })) });
  const findings = assets.map((asset, i) => ({
    id: randomUUID(),
    workspaceId,
    fingerprint: `fp-${i}`,
    checkId: 'check',
    source: 'nuclei',
    name: `Finding ${i}`,
    severity: 'high' as const,
    description: 'd',
    remediation: 'r',
    matcher: 'm',
    evidence: {},
    assetId: asset.id,
    targetId: asset.targetId,
  }));
  await prisma.finding.createMany({ data: findings });
  await prisma.findingTarget.createMany({ data: findings.map((finding) => ({ findingId: finding.id, targetId: finding.targetId })) });
  conversationId = (await prisma.conversation.create({ data: { workspaceId, createdById: viewer.id, title: 'Counted' } })).id;
  const messages = Array.from({ length: ROWS }, (_, i) => ({ id: randomUUID(), conversationId, role: 'user', content: `Message ${i}` }));
  await prisma.message.createMany({ data: messages });
  await prisma.toolCall.createMany({ data: messages.map((message) => ({ messageId: message.id, toolCallId: `call-${message.id}`, toolName: 'tool' })) });
});
afterAll(() => server?.stop());

async function counted(path: string): Promise<{ count: number; statements: string[]; rows: number }> {
  statements.length = 0;
  recording = true;
  try {
    const response = await client.api('GET', path, { as: viewer, workspaceId });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return { count: statements.length, statements: [...statements], rows: response.body.data.length };
  } finally {
    recording = false;
  }
}

describe('SQL statements per REST list', () => {
  // Each with the most statements it may cost, the session and membership lookups included (no auth cache here),
  // the hand-written page statements counted as Prisma's are: each page is one statement, its rows with their
  // counts or provenance and the list's total together (targets/, assets/, vulnerabilities/page-sql.ts; messages
  // with its conversation check, agents/messages-page-sql.ts).
  const lists = (): Array<[string, string, number]> => [
    ['targets', '/api/v1/api/targets', 3],
    ['assets', '/api/v1/api/assets?kind=host&enabled=true', 3],
    ['vulnerabilities', '/api/v1/api/vulnerabilities?severity=high&status=open', 3],
    ['messages', `/api/v1/api/agents/conversations/${conversationId}/messages`, 3],
  ];

  it('a page of 10 and a page of 100 cost the same few statements', async () => {
    for (const [name, path, most] of lists()) {
      const join = path.includes('?') ? '&' : '?';
      const ten = await counted(`${path}${join}limit=10`);
      const hundred = await counted(`${path}${join}limit=100`);
      console.log(`REST ${name}: limit=10 → ${ten.count} statements; limit=100 → ${hundred.count}`);
      expect(ten.rows).toBe(10);
      expect(hundred.rows).toBe(100);
      expect(hundred.count, `${name}\n${hundred.statements.join('\n')}`).toBe(ten.count);
      expect(ten.count, `${name}\n${ten.statements.join('\n')}`).toBeLessThanOrEqual(most);
    }
  });
});

describe('SQL statements per GraphQL list', () => {
  /** The page each endpoint's benchmark asks for (scripts/bench/api-targets.ts), every field the REST page has. */
  async function countedGraphql(endpoint: 'targets' | 'assets' | 'vulnerabilities' | 'messages', first: number) {
    const query = graphqlQuery(endpoint, { workspaceId, conversationId }).replace(/\b(first|last): \d+/, `$1: ${first}`);
    statements.length = 0;
    recording = true;
    try {
      const answer = await client.gql(query, { as: viewer });
      expect(answer.errors, JSON.stringify(answer.errors)).toBeUndefined();
      return { count: statements.length, statements: [...statements] };
    } finally {
      recording = false;
    }
  }

  it('a page costs one statement besides the session lookup, whatever its size (with the counts of targets)', async () => {
    for (const endpoint of ['targets', 'assets', 'vulnerabilities', 'messages'] as const) {
      const ten = await countedGraphql(endpoint, 10);
      const forty = await countedGraphql(endpoint, 30);
      const rest = await counted(restPath(endpoint, { workspaceId, conversationId }));
      console.log(`GraphQL ${endpoint}: first:10 → ${ten.count} statements; first:30 → ${forty.count}; REST ${rest.count}`);
      expect(forty.count, `${endpoint}\n${forty.statements.join('\n')}`).toBe(ten.count);
      expect(ten.count, `${endpoint}\n${ten.statements.join('\n')}`).toBeLessThanOrEqual(rest.count);
      // The session lookup (this app runs without the auth cache) and the page: rows, total and counts together.
      expect(ten.count, `${endpoint}\n${ten.statements.join('\n')}`).toBeLessThanOrEqual(2);
      // Assets and findings total from the counters REST sums too, read in the page's statement: counting the
      // matching rows there would read every row of a 100,000-finding workspace on every page.
      if (endpoint === 'assets' || endpoint === 'vulnerabilities') {
        expect(
          ten.statements.some((sql) => /"(public"\.")?(asset|finding)_count"/.test(sql)),
          ten.statements.join('\n'),
        ).toBe(true);
      }
    }
  });
});
