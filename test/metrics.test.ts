import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { addTarget, startScan, waitForScan } from './support/scans.js';
import { listen } from './scanner/helpers.js';

/**
 * /metrics as an operator scrapes it: labels from a bounded set whatever anonymous clients send, an
 * optional bearer token, and the series that say how scanning is going.
 */

const METRICS_TOKEN = 'metrics-token-for-tests-0123456789';
let server: TestApp;
let client: ReturnType<typeof clientFor>;
let owner: TestUser;

beforeAll(async () => {
  server = await startTestApp({ METRICS_TOKEN, SCAN_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128', QUEUE_SUPERVISE_SECONDS: '1' });
  client = clientFor(server);
  owner = await client.signUp('Operator');
});
afterAll(() => server?.stop());

async function scrape(): Promise<string> {
  const response = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  expect(response.status).toBe(200);
  return response.text();
}

/** Every series (metric name and labels) in an exposition, without values and comments. */
function seriesOf(text: string): Set<string> {
  return new Set(
    text
      .split('\n')
      .filter((line) => line && !line.startsWith('#'))
      .map((line) => line.slice(0, line.lastIndexOf(' '))),
  );
}

function seriesValue(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  if (!line) throw new Error(`no series ${series} in:\n${text}`);
  return Number(line.slice(series.length + 1));
}

/** `count` requests at once at most `parallel` at a time. */
async function inBatches(count: number, parallel: number, send: (i: number) => Promise<unknown>): Promise<void> {
  for (let start = 0; start < count; start += parallel) {
    await Promise.all(Array.from({ length: Math.min(parallel, count - start) }, (_, j) => send(start + j)));
  }
}

describe('/metrics', () => {
  it('requires the METRICS_TOKEN bearer when one is set', async () => {
    const anonymous = await fetch(`${server.url}/metrics`);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ statusCode: 401, code: 'UNAUTHENTICATED', message: expect.any(String) });
    const wrong = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}x` } });
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).not.toContain('http_requests_total');
    const scraped = await scrape();
    expect(scraped).toContain('http_requests_total');
  });

  it('2,000 requests to distinct unknown paths add no series: they share one "unmatched" route label', async () => {
    // One first, so the `unmatched` series exist before the baseline.
    await fetch(`${server.url}/api/v1/api/unknown-first`);
    const before = seriesOf(await scrape());
    const paths = (i: number) => [`/api/v1/api/probe-${i.toString(36)}x`, `/api/v1/probe${i}/x`, `/wp-admin/${i}`, `/api/v1/api/workspaces/${i}/nope`][i % 4]!;
    await inBatches(2000, 50, async (i) => (await fetch(`${server.url}${paths(i)}`)).arrayBuffer());
    const after = await scrape();
    const added = [...seriesOf(after)].filter((series) => !before.has(series));
    // Node's own collectors may show a new kind of GC or of active handle meanwhile; nothing else may appear.
    expect(added.filter((series) => !/^nodejs_(gc_duration_seconds|active_)/.test(series))).toEqual([]);
    expect(after).not.toContain('probe-');
    expect(after).not.toContain('wp-admin');
    expect(seriesValue(after, 'http_requests_total{method="GET",route="unmatched",status="404"}')).toBeGreaterThanOrEqual(1500);
  });

  it('labels REST requests by their route template and fixed routes by themselves', async () => {
    const workspace = await client.createWorkspace(owner);
    expect((await client.api('GET', `/api/v1/api/workspaces/${workspace.id}`, { as: owner })).status).toBe(200);
    // A template matches whatever the id; the wrong id is still that route (404), not a new label.
    expect((await client.api('GET', '/api/v1/api/workspaces/00000000-0000-4000-8000-000000000000', { as: owner })).status).toBe(404);
    expect((await client.api('GET', '/health')).status).toBe(200);
    const text = await scrape();
    expect(text).toMatch(/^http_requests_total\{method="GET",route="\/api\/v1\/api\/workspaces\/:id",status="200"\} \d+/m);
    expect(text).toMatch(/^http_requests_total\{method="GET",route="\/api\/v1\/api\/workspaces\/:id",status="404"\} \d+/m);
    expect(text).toMatch(/^http_requests_total\{method="GET",route="\/health",status="200"\} \d+/m);
    expect(text).not.toContain(workspace.id);
  });

  it('GraphQL operation names chosen by clients stay a bounded set of labels', async () => {
    await inBatches(300, 30, (i) => client.gql(`query Probe${i} { __typename }`));
    const text = await scrape();
    const names = text.split('\n').filter((line) => line.startsWith('graphql_operations_total{'));
    expect(names.length).toBeLessThanOrEqual(101 + 2);
    expect(seriesValue(text, 'graphql_operations_total{type="query",name="other"}')).toBeGreaterThanOrEqual(200);
  });

  it('after a scan: scans by status, findings by status and transitions, queue depth and step durations', async () => {
    const site = http.createServer((req, res) => {
      if (req.url === '/.git/HEAD') res.writeHead(200, { server: 'nginx/1.18.0', 'content-type': 'text/plain' }).end('ref: refs/heads/main\n');
      else res.writeHead(200, { server: 'nginx/1.18.0', 'content-type': 'text/html' }).end('<html><head><title>Fixture</title></head><body>hi</body></html>');
    });
    const started = await listen(site);
    try {
      const workspace = await client.createWorkspace(owner);
      const target = await addTarget(client, owner, workspace.id, '127.0.0.1');
      const scan = await startScan(client, owner, workspace.id, target.id, { ports: String(started.port), timeoutMs: 15_000 });
      const done = await waitForScan(client, owner, workspace.id, scan.id, { timeoutMs: 90_000 });
      expect(done.status).toBe('COMPLETED');
    } finally {
      await started.close();
    }

    const text = await scrape();
    expect(seriesValue(text, 'perimeter_scans{status="COMPLETED"}')).toBeGreaterThanOrEqual(1);
    for (const status of ['PENDING', 'IN_PROGRESS', 'FAILED', 'CANCELLED']) expect(seriesValue(text, `perimeter_scans{status="${status}"}`)).toBe(0);
    const open = seriesValue(text, 'perimeter_findings{status="open"}');
    expect(open).toBeGreaterThanOrEqual(1);
    expect(seriesValue(text, 'perimeter_findings{status="fixed"}')).toBe(0);
    expect(seriesValue(text, 'perimeter_finding_transitions_total{type="opened"}')).toBe(open);
    expect(seriesValue(text, 'perimeter_finding_transitions_total{type="fixed"}')).toBe(0);
    expect(seriesValue(text, 'perimeter_queue_jobs{queue="scan-step",state="waiting"}')).toBe(0);
    expect(seriesValue(text, 'perimeter_queue_jobs{queue="scan-step",state="active"}')).toBe(0);
    // Every step of the scan was timed once, as completed.
    const steps = text.split('\n').filter((line) => line.startsWith('perimeter_scan_step_duration_seconds_count{'));
    expect(steps.length).toBeGreaterThanOrEqual(3);
    for (const line of steps) {
      expect(line).toMatch(/outcome="completed"/);
      expect(Number(line.split(' ').pop())).toBeGreaterThanOrEqual(1);
    }
    const sums = text.split('\n').filter((line) => line.startsWith('perimeter_scan_step_duration_seconds_sum{'));
    for (const line of sums) expect(Number(line.split(' ').pop())).toBeGreaterThan(0);
  });
});
