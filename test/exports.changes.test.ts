/** The change feed as JSON lines: every matching change, oldest first, the list's filters and element shape. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';

let server: TestApp;
let client: ReturnType<typeof clientFor>;
let owner: TestUser;
let workspaceId: string;

beforeAll(async () => {
  server = await startTestApp({ WORKERS: 'false' });
  client = clientFor(server);
  owner = await client.signUp('Feed export');
  workspaceId = (await client.createWorkspace(owner)).id;
  // 2,500 events over 2,500 seconds, three types in turn: more than two export batches.
  const types = ['asset.discovered', 'finding.opened', 'scan.completed'];
  const start = Date.parse('2026-01-01T00:00:00Z');
  await server.db.prisma.changeEvent.createMany({
    data: Array.from({ length: 2_500 }, (_, i) => ({ workspaceId, type: types[i % 3]!, at: new Date(start + i * 1000), data: { n: i } })),
  });
});
afterAll(() => server?.stop());

async function exportChanges(query: string, as: TestUser | null = owner, workspace: string | null = workspaceId) {
  const headers: Record<string, string> = {};
  if (as) headers.authorization = `Bearer ${as.token}`;
  if (workspace) headers['x-workspace-id'] = workspace;
  const response = await fetch(`${server.url}/api/v1/api/changes/export?${query}`, { headers });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

describe('GET /api/v1/api/changes/export', () => {
  it('streams every change, oldest first, one JSON object per line, as an attachment', async () => {
    const response = await exportChanges('format=jsonl');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/jsonl; charset=utf-8');
    expect(response.headers.get('content-disposition')).toMatch(/^attachment; filename="perimeter-.*-changes-\d{4}-\d{2}-\d{2}\.jsonl"$/);
    const lines = response.text.split('\n');
    expect(lines.pop()).toBe('');
    const events = lines.map((line) => JSON.parse(line));
    expect(events).toHaveLength(2_500);
    expect(events.map((event) => event.data.n)).toEqual(Array.from({ length: 2_500 }, (_, i) => i));
    expect(events[0]).toMatchObject({ workspaceId, type: 'asset.discovered', at: '2026-01-01T00:00:00.000Z', data: { n: 0 } });
  });

  it("applies the list's filters (types, since inclusive, until exclusive)", async () => {
    const response = await exportChanges('format=jsonl&types=finding.opened,scan.completed&since=2026-01-01T00:00:10Z&until=2026-01-01T00:00:20Z');
    const events = response.text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(events.map((event) => event.data.n)).toEqual([10, 11, 13, 14, 16, 17, 19]);
  });

  it('refuses a bad format or filter with a 400 naming the field, and strangers with 404', async () => {
    for (const [query, field] of [
      ['format=csv', 'format'],
      ['format=jsonl&types=rumour', 'types'],
      ['format=jsonl&since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z', 'until'],
      ['format=jsonl&cursor=abc', 'cursor'],
    ]) {
      const response = await exportChanges(query!);
      expect(response.status, query).toBe(400);
      expect(response.text).toContain(field!);
    }
    const stranger = await client.signUp('Stranger');
    expect((await exportChanges('format=jsonl', stranger)).status).toBe(404);
    expect((await exportChanges('format=jsonl', null)).status).toBe(401);
  });
});
