import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { addTarget, getScan, startScan, TERMINAL_STATUSES, type Client } from './support/scans.js';
import { listen } from './scanner/helpers.js';

/**
 * A tenant's template must not be able to stall the server for everyone. One upload carries the classic
 * catastrophic-backtracking regex `^(a+)+$` and points it at a host answering `aaaa…a!`; another carries a regex
 * that is linear but so costly that matching it on a big body takes far longer than a template may run. While the
 * scan's checks step runs them, `/health` keeps answering within its normal time, the scan completes, and the
 * over-budget template is cut off with a warning in the step's output (and no finding).
 */

const BUDGET_MS = 2_000;
/** `/health` answers in a few milliseconds; half a second is the behavioural bound of the issue. */
const HEALTH_BOUND_MS = 500;
/** Characters of `a` before the final `!`: a backtracking engine never finishes `^(a+)+$` on this. */
const BODY_LENGTH = 200_000;

const CATASTROPHIC = `id: catastrophic-regex
info:
  name: Catastrophic regex
  author: tests
  severity: high
http:
  - method: GET
    path: ["{{BaseURL}}/"]
    matchers:
      - type: regex
        regex: ['^(a+)+$']
`;

/** Linear in RE2, but with a 3 000-instruction program its submatch extraction costs seconds per 100 KB. */
const OVER_BUDGET = `id: over-budget-extractor
info:
  name: Over-budget extractor
  author: tests
  severity: high
http:
  - method: GET
    path: ["{{BaseURL}}/"]
    extractors:
      - type: regex
        name: runs
        group: 1
        regex: ['((?:(?:a|b){100}){10})!']
`;

let server: TestApp;
let client: Client;
let site: { port: number; close(): Promise<void> };

beforeAll(async () => {
  const body = `${'a'.repeat(BODY_LENGTH)}!`;
  site = await listen(http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(body)));
  server = await startTestApp({ SCAN_ALLOWED_NETWORKS: '127.0.0.0/8', QUEUE_SUPERVISE_SECONDS: '1', TEMPLATE_BUDGET_MS: String(BUDGET_MS) });
  client = clientFor(server);
});

afterAll(async () => {
  await server?.stop();
  await site?.close();
});

async function uploadTemplate(user: TestUser, workspaceId: string, fileName: string, content: string) {
  const created = await client.api('POST', '/api/v1/api/templates', { as: user, workspaceId, body: { fileName } });
  expect(created.status).toBe(201);
  const uploaded = await client.api('POST', '/api/v1/api/templates/upload', {
    as: user,
    workspaceId,
    body: { templateId: created.body.id, fileContent: content },
  });
  expect(uploaded.status, JSON.stringify(uploaded.body)).toBe(200);
  expect(uploaded.body.warnings).toEqual([]);
}

async function healthLatency(): Promise<number> {
  const started = performance.now();
  const response = await fetch(`${server.url}/health`);
  await response.text();
  expect(response.status).toBe(200);
  return performance.now() - started;
}

describe('template work and the API', { timeout: 120_000 }, () => {
  it('a template with a catastrophic regex does not stop /health from answering; an over-budget template is cut off with a warning', async () => {
    const owner = await client.signUp('Regex tenant');
    const workspaceId = (await client.createWorkspace(owner)).id;
    const targetId = (await addTarget(client, owner, workspaceId, '127.0.0.1')).id;
    await uploadTemplate(owner, workspaceId, 'catastrophic.yaml', CATASTROPHIC);
    await uploadTemplate(owner, workspaceId, 'over-budget.yaml', OVER_BUDGET);

    const scan = await startScan(client, owner, workspaceId, targetId, { ports: String(site.port), timeoutMs: 10_000 });
    const latenciesDuringChecks: number[] = [];
    let latest = scan;
    const deadline = Date.now() + 90_000;
    while (!TERMINAL_STATUSES.includes(latest.status) && Date.now() < deadline) {
      const latency = await healthLatency();
      latest = await getScan(client, owner, workspaceId, scan.id);
      const checks = latest.steps.find((step: { name: string }) => step.name === 'checks');
      if (checks?.status === 'IN_PROGRESS') latenciesDuringChecks.push(latency);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }

    expect(latest.status).toBe('COMPLETED');
    // The checks step ran for at least the over-budget template's budget, and /health was asked throughout.
    expect(latenciesDuringChecks.length).toBeGreaterThan(5);
    expect(Math.max(...latenciesDuringChecks)).toBeLessThan(HEALTH_BOUND_MS);

    const step = await server.db.prisma.scanStep.findFirstOrThrow({ where: { scanId: scan.id, name: 'checks' } });
    const output = step.output as { errors: { code: string; target?: string; message: string }[] };
    // Only the over-budget template is cut off: the catastrophic regex simply does not match (RE2 answers in linear
    // time), and the built-in pack's templates that shared a worker with the stuck one ran again on a fresh one.
    expect(output.errors).toEqual([
      {
        code: 'TEMPLATE_BUDGET_EXCEEDED',
        target: `over-budget-extractor web:http://127.0.0.1:${site.port}`,
        message: expect.stringContaining(`time budget of ${BUDGET_MS} ms`),
      },
    ]);
    const findings = await server.db.prisma.finding.findMany({ where: { workspaceId, checkId: { in: ['catastrophic-regex', 'over-budget-extractor'] } } });
    expect(findings).toEqual([]);
  });

  it('an upload whose regex RE2 refuses (a back-reference) is accepted with a warning, as nuclei would refuse that matcher', async () => {
    const owner = await client.signUp('Backref tenant');
    const workspaceId = (await client.createWorkspace(owner)).id;
    const created = await client.api('POST', '/api/v1/api/templates', { as: owner, workspaceId, body: { fileName: 'backref.yaml' } });
    const uploaded = await client.api('POST', '/api/v1/api/templates/upload', {
      as: owner,
      workspaceId,
      body: { templateId: created.body.id, fileContent: CATASTROPHIC.replace("'^(a+)+$'", "'(a+)\\1!'") },
    });
    expect(uploaded.status, JSON.stringify(uploaded.body)).toBe(200);
    expect(uploaded.body.warnings).toEqual([
      expect.objectContaining({ path: 'http[0].matchers[0].regex[0]', message: expect.stringContaining('back-references are not valid RE2 syntax') }),
    ]);
  });
});
