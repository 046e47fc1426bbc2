import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, usingPostgres, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { upsertAssets, type AssetInput } from '../src/modules/assets/ingest.js';
import { recordFindings, resolveUnseenFindings, type FindingScope, type TargetedFinding } from '../src/modules/vulnerabilities/ingest.js';
import { countFindingsByStatus } from '../src/modules/vulnerabilities/service.js';

/**
 * The counters behind large-workspace lists and statistics (asset_count, finding_count, finding_target_count,
 * kept by the database's triggers) must equal a fresh COUNT(*) after every way rows are written: scan ingest
 * (new, seen again with another severity, fixed, reopened, linked to more targets), triage, asset updates,
 * target and workspace deletion, a deleted finding, a set-based insert and a link moved to another target.
 * The lists and statistics that read them must answer what counting the rows answers.
 */
let server: TestApp;
let client: ReturnType<typeof clientFor>;

beforeAll(async () => {
  server = await startTestApp();
  client = clientFor(server);
});
afterAll(() => server?.stop());

type Row = Record<string, unknown>;

async function rows(sql: string, ...params: unknown[]): Promise<Row[]> {
  return server.db.prisma.$queryRawUnsafe<Row[]>(sql, ...params);
}

/** Every counter of the workspace next to the same numbers counted from the rows (zero counters left out). */
async function expectCountersExact(workspaceId: string): Promise<void> {
  const assetCounters = await rows(
    `SELECT kind::text, enabled, dismissed, count FROM asset_count WHERE "workspaceId" = $1::uuid AND count <> 0 ORDER BY 1, 2, 3`,
    workspaceId,
  );
  const assetFresh = await rows(
    `SELECT kind::text, enabled, "dismissedAt" IS NOT NULL AS dismissed, count(*)::int AS count FROM asset WHERE "workspaceId" = $1::uuid GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
    workspaceId,
  );
  expect(assetCounters).toEqual(assetFresh);
  const findingCounters = await rows(
    `SELECT status::text, severity::text, count FROM finding_count WHERE "workspaceId" = $1::uuid AND count <> 0 ORDER BY 1, 2`,
    workspaceId,
  );
  const findingFresh = await rows(
    `SELECT status::text, severity::text, count(*)::int AS count FROM finding WHERE "workspaceId" = $1::uuid GROUP BY 1, 2 ORDER BY 1, 2`,
    workspaceId,
  );
  expect(findingCounters).toEqual(findingFresh);
  const targetCounters = await rows(
    `SELECT c."targetId"::text, c.open FROM finding_target_count c JOIN target t ON t.id = c."targetId" WHERE t."workspaceId" = $1::uuid AND c.open <> 0 ORDER BY 1`,
    workspaceId,
  );
  const targetFresh = await rows(
    `SELECT l."targetId"::text, count(*)::int AS open FROM finding_target l JOIN finding f ON f.id = l."findingId" JOIN target t ON t.id = l."targetId"
     WHERE t."workspaceId" = $1::uuid AND f.status = 'open' GROUP BY 1 ORDER BY 1`,
    workspaceId,
  );
  expect(targetCounters).toEqual(targetFresh);
}

const host = (name: string): AssetInput => ({ kind: 'host', key: `host:${name}`, value: name, data: { host: name } });
const web = (name: string): AssetInput => ({ kind: 'web', key: `web:https://${name}:443`, value: `https://${name}`, data: {}, parentKey: `host:${name}` });

function finding(checkId: string, assetKey: string, severity: TargetedFinding['severity'], targetIds?: string[]): TargetedFinding {
  return {
    kind: 'finding',
    checkId,
    name: `Check ${checkId}`,
    severity,
    description: 'What the check saw',
    remediation: 'Fix it',
    asset: { type: 'web', key: assetKey },
    matcher: 'word',
    fingerprintParts: [checkId, assetKey, 'word'],
    evidence: { url: 'https://example.com/' },
    source: 'builtin',
    ...(targetIds ? { targetIds } : {}),
  } as TargetedFinding;
}

describe('counters of assets and findings', () => {
  let owner: TestUser;
  let workspaceId: string;
  let targetA: string;
  let targetB: string;

  async function ingest(assets: AssetInput[], findings: TargetedFinding[], resolve?: { checkIds: string[] }) {
    const now = new Date();
    return server.db.prisma.$transaction(async (tx) => {
      const { idByKey } = await upsertAssets(tx, { workspaceId, targetId: targetA, scanId: null, autoEnable: true, now }, assets);
      const scope: FindingScope = { workspaceId, targetId: targetA, scanId: null, now };
      const recorded = await recordFindings(tx, scope, findings, idByKey);
      if (resolve) await resolveUnseenFindings(tx, scope, { checkIds: resolve.checkIds, assetIds: [...idByKey.values()], erroredPairs: new Set() });
      return { idByKey, recorded };
    });
  }

  async function findingIds(checkIds: string[]): Promise<string[]> {
    const found = await server.db.prisma.finding.findMany({ where: { workspaceId, checkId: { in: checkIds } }, select: { id: true } });
    return found.map((row) => row.id);
  }

  /** What the REST statistics and list totals answer, against counting the rows. */
  async function expectApiExact(): Promise<void> {
    const prisma = server.db.prisma;
    const stats = await client.api('GET', '/api/v1/api/vulnerabilities/statistics', { as: owner, workspaceId });
    expect(stats.status).toBe(200);
    for (const status of ['open', 'fixed', 'dismissed'] as const)
      expect(stats.body.byStatus[status], status).toBe(await prisma.finding.count({ where: { workspaceId, status } }));
    for (const { severity, count } of stats.body.data as { severity: 'high'; count: number }[])
      expect(count, severity).toBe(await prisma.finding.count({ where: { workspaceId, status: 'open', severity } }));
    const all = await client.api('GET', '/api/v1/api/vulnerabilities?status=all&severity=high&severity=low', { as: owner, workspaceId });
    expect(all.body.total).toBe(await prisma.finding.count({ where: { workspaceId, severity: { in: ['high', 'low'] } } }));
    const hosts = await client.api('GET', '/api/v1/api/assets?kind=host&enabled=true', { as: owner, workspaceId });
    expect(hosts.body.total).toBe(await prisma.asset.count({ where: { workspaceId, kind: 'host', enabled: true } }));
    const dismissed = await client.api('GET', '/api/v1/api/assets?dismissed=true', { as: owner, workspaceId });
    expect(dismissed.body.total).toBe(await prisma.asset.count({ where: { workspaceId, dismissedAt: { not: null } } }));
    const targets = await client.api('GET', '/api/v1/api/targets', { as: owner, workspaceId });
    for (const target of targets.body.data as { id: string; findingCount: number }[])
      expect(target.findingCount).toBe(await prisma.findingTarget.count({ where: { targetId: target.id, finding: { status: 'open' } } }));
  }

  async function expectExact(): Promise<void> {
    await expectCountersExact(workspaceId);
    await expectApiExact();
    // The operator's /metrics sums the counters of every workspace.
    const fresh = await server.db.prisma.finding.groupBy({ by: ['status'], _count: { _all: true } });
    expect(await countFindingsByStatus(server.db)).toEqual({
      open: 0,
      fixed: 0,
      dismissed: 0,
      ...Object.fromEntries(fresh.map((row) => [row.status, row._count._all])),
    });
  }

  beforeAll(async () => {
    owner = await client.signUp('Counter');
    workspaceId = (await client.createWorkspace(owner)).id;
    const created = await client.api('POST', '/api/v1/api/targets/bulk', {
      as: owner,
      workspaceId,
      body: { targets: [{ value: 'a.example.com' }, { value: 'b.example.com' }] },
    });
    expect(created.status, JSON.stringify(created.body)).toBeLessThan(300);
    const byValue = new Map(created.body.results.map((result: { value: string; target: { id: string } }) => [result.value, result.target.id]));
    targetA = byValue.get('a.example.com') as string;
    targetB = byValue.get('b.example.com') as string;
  });

  it('match after ingest: new, seen again with another severity, linked to another target', async () => {
    await ingest(
      [host('a.example.com'), web('a.example.com'), host('b.example.com')],
      [
        finding('c1', 'web:https://a.example.com:443', 'high'),
        finding('c2', 'web:https://a.example.com:443', 'low', [targetB]),
        finding('c3', 'host:b.example.com', 'critical'),
      ],
    );
    await expectExact();
    await ingest(
      [web('a.example.com')],
      [finding('c1', 'web:https://a.example.com:443', 'medium', [targetB]), finding('c4', 'web:https://a.example.com:443', 'info')],
    );
    await expectExact();
  });

  it('match after findings are fixed by a scan and reopened when seen again', async () => {
    await ingest([web('a.example.com')], [finding('c1', 'web:https://a.example.com:443', 'medium')], { checkIds: ['c2', 'c4'] });
    expect(await server.db.prisma.finding.count({ where: { workspaceId, status: 'fixed' } })).toBe(2);
    await expectExact();
    await ingest([web('a.example.com')], [finding('c2', 'web:https://a.example.com:443', 'low')]);
    await expectExact();
  });

  it('match after triage (dismiss, reopen) and asset updates (disable, dismiss, enable)', async () => {
    const ids = await findingIds(['c1', 'c2', 'c4']);
    const dismissed = await client.api('POST', '/api/v1/api/vulnerabilities/dismiss', { as: owner, workspaceId, body: { ids, reason: 'false_positive' } });
    expect(dismissed.status, JSON.stringify(dismissed.body)).toBe(200);
    await expectExact();
    const reopened = await client.api('POST', '/api/v1/api/vulnerabilities/reopen', { as: owner, workspaceId, body: { ids: ids.slice(0, 2) } });
    expect(reopened.status, JSON.stringify(reopened.body)).toBe(200);
    await expectExact();
    const assets = await server.db.prisma.asset.findMany({ where: { workspaceId }, select: { id: true }, orderBy: { key: 'asc' } });
    for (const body of [{ enabled: false }, { dismissed: true }, { enabled: true }]) {
      const updated = await client.api('PATCH', '/api/v1/api/assets', {
        as: owner,
        workspaceId,
        body: { ids: assets.slice(0, 2).map((row) => row.id), ...body },
      });
      expect(updated.status, JSON.stringify(updated.body)).toBe(200);
      await expectExact();
    }
  });

  it('match after a finding is deleted, a set-based insert and a target is deleted', async () => {
    const [c3] = await findingIds(['c3']);
    await server.db.prisma.finding.delete({ where: { id: c3! } });
    await expectExact();
    await rows(
      `INSERT INTO finding (id, "workspaceId", fingerprint, "checkId", source, name, severity, description, remediation, matcher, status, evidence, "targetId", "updatedAt")
       SELECT gen_random_uuid(), $1::uuid, 'bulk' || i, 'bulk', 'bulk', 'Bulk', (ARRAY['low','high'])[1 + i % 2]::"Severity", '', '', 'word',
              (ARRAY['open','fixed','dismissed'])[1 + i % 3]::"FindingStatus", '{}', $2::uuid, now()
       FROM generate_series(1, 30) i`,
      workspaceId,
      targetB,
    );
    await rows(
      `INSERT INTO finding_target ("findingId", "targetId") SELECT id, "targetId" FROM finding WHERE "workspaceId" = $1::uuid AND "checkId" = 'bulk'`,
      workspaceId,
    );
    await expectExact();
    // No writer moves a link to another target, but the counters follow if one does.
    await rows(
      `UPDATE finding_target SET "targetId" = $1::uuid WHERE "targetId" = $2::uuid AND "findingId" IN (SELECT id FROM finding WHERE "checkId" = 'bulk' AND severity = 'low')`,
      targetA,
      targetB,
    );
    await expectExact();
    const deleted = await client.api('DELETE', `/api/v1/api/targets/${targetB}`, { as: owner, workspaceId });
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    expect(await server.db.prisma.findingTargetCount.count({ where: { targetId: targetB } })).toBe(0);
    await expectExact();
  });

  it('are gone with their workspace', async () => {
    const deleted = await client.api('DELETE', `/api/v1/api/workspaces/${workspaceId}`, { as: owner });
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    expect(await server.db.prisma.assetCount.count({ where: { workspaceId } })).toBe(0);
    expect(await server.db.prisma.findingCount.count({ where: { workspaceId } })).toBe(0);
    expect(await server.db.prisma.findingTargetCount.count({ where: { targetId: { in: [targetA, targetB] } } })).toBe(0);
  });
});

/**
 * A link added while its finding changes state in another transaction: whichever commits first, the target's
 * open count ends up as counting the rows says (the link's trigger reads the status under a share lock).
 * PostgreSQL only: PGlite runs one transaction at a time.
 */
(usingPostgres ? describe : describe.skip)('per-target open counts under concurrent writes', () => {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  async function setup() {
    const owner = await client.signUp('Concurrent');
    const workspaceId = (await client.createWorkspace(owner)).id;
    const prisma = server.db.prisma;
    const [first, second] = await Promise.all(
      ['one.example.com', 'two.example.com'].map((value) => prisma.target.create({ data: { workspaceId, value, type: 'domain' } })),
    );
    const now = new Date();
    await prisma.$transaction(async (tx) => {
      const { idByKey } = await upsertAssets(tx, { workspaceId, targetId: first!.id, scanId: null, autoEnable: true, now }, [host('one.example.com')]);
      await recordFindings(tx, { workspaceId, targetId: first!.id, scanId: null, now }, [finding('k1', 'host:one.example.com', 'high')], idByKey);
    });
    const { id } = await prisma.finding.findFirstOrThrow({ where: { workspaceId }, select: { id: true } });
    return { workspaceId, findingId: id, secondTarget: second!.id };
  }

  /** Runs `first` in a transaction held open until `second` (another transaction) has had time to block on it. */
  async function overlap(first: (tx: any) => Promise<unknown>, second: (tx: any) => Promise<unknown>): Promise<void> {
    const prisma = server.db.prisma;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const firstDone = new Promise<void>((resolve) => (started = resolve));
    const one = prisma.$transaction(
      async (tx) => {
        await first(tx);
        started();
        await held;
      },
      { timeout: 10_000 },
    );
    await firstDone;
    const two = prisma.$transaction((tx) => second(tx), { timeout: 10_000 });
    await sleep(300);
    release();
    await Promise.all([one, two]);
  }

  it('dismissed while being linked, and linked while being dismissed', async () => {
    const a = await setup();
    await overlap(
      (tx) => tx.finding.update({ where: { id: a.findingId }, data: { status: 'dismissed' } }),
      (tx) => tx.findingTarget.create({ data: { findingId: a.findingId, targetId: a.secondTarget } }),
    );
    await expectCountersExact(a.workspaceId);
    const b = await setup();
    await overlap(
      (tx) => tx.findingTarget.create({ data: { findingId: b.findingId, targetId: b.secondTarget } }),
      (tx) => tx.finding.update({ where: { id: b.findingId }, data: { status: 'dismissed' } }),
    );
    await expectCountersExact(b.workspaceId);
    expect(await server.db.prisma.findingTargetCount.findMany({ where: { targetId: { in: [a.secondTarget, b.secondTarget] }, open: { not: 0 } } })).toEqual([]);
  });
});
