import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { encodeGlobalID } from '@pothos/plugin-relay';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import type { WorkspaceEvent } from '../src/pubsub.js';

let server: TestApp;
let client: ReturnType<typeof clientFor>;

beforeAll(async () => {
  server = await startTestApp();
  client = clientFor(server);
});
afterAll(() => server?.stop());

const BASE = '/api/v1/api/vulnerabilities';

type Severity = 'info' | 'low' | 'medium' | 'high' | 'critical';
type Finding = { id: string; name: string; severity: Severity; status: string; [key: string]: any };

function get(as: TestUser, workspaceId: string, path: string, query: [string, string | number][] = []) {
  const qs = new URLSearchParams(query.map(([key, value]) => [key, String(value)])).toString();
  return client.api('GET', `${BASE}${path}${qs ? `?${qs}` : ''}`, { as, workspaceId });
}

const list = (as: TestUser, workspaceId: string, query: [string, string | number][] = []) => get(as, workspaceId, '', query);

function names(response: { body: { data: Finding[] } }): string[] {
  return response.body.data.map((finding) => finding.name);
}

function fields(response: { body: any }): string[] {
  return (response.body.details ?? []).map((detail: { field: string }) => detail.field);
}

const day = (n: number) => new Date(Date.UTC(2026, 1, n));

/**
 * Scans write findings (not built yet): fixtures go straight to the database. Two targets, one asset, and
 * findings of every severity; "Old TLS" is fixed and "Banner" was dismissed earlier.
 */
async function findingsWorkspace(label = 'Owner') {
  const owner = await client.signUp(label);
  const workspaceId = (await client.createWorkspace(owner)).id;
  const prisma = server.db.prisma;
  const web = await prisma.target.create({ data: { workspaceId, value: 'web.example.com', type: 'domain' } });
  const api = await prisma.target.create({ data: { workspaceId, value: 'api.example.com', type: 'domain' } });
  const asset = await prisma.asset.create({
    data: {
      workspaceId,
      targetId: web.id,
      kind: 'web',
      key: 'web:https://web.example.com:443',
      value: 'https://web.example.com',
      data: {},
      targetLinks: { create: { targetId: web.id } },
    },
  });
  const base = { workspaceId, source: 'nuclei', remediation: 'Patch it.', matcher: 'word', evidence: { request: 'GET /' } };
  const rows: [name: string, severity: Severity, extra: Record<string, unknown>][] = [
    [
      'SQL injection',
      'critical',
      { targetId: web.id, assetId: asset.id, checkId: 'sqli-login', description: 'Login form is injectable', lastSeenAt: day(10), firstSeenAt: day(1) },
    ],
    [
      'Exposed admin panel',
      'high',
      { targetId: web.id, assetId: asset.id, checkId: 'admin-panel', description: 'Admin UI reachable', lastSeenAt: day(9), firstSeenAt: day(4) },
    ],
    [
      'Missing HSTS',
      'medium',
      { targetId: api.id, checkId: 'hsts-missing', description: 'No Strict-Transport-Security header', lastSeenAt: day(8), firstSeenAt: day(2) },
    ],
    [
      'Cookie without Secure',
      'low',
      { targetId: api.id, checkId: 'cookie-secure', description: 'Session cookie lacks the SECURE flag', lastSeenAt: day(7), firstSeenAt: day(3) },
    ],
    ['Server version disclosed', 'info', { targetId: web.id, checkId: 'tech-detect', description: 'nginx/1.25', lastSeenAt: day(6), firstSeenAt: day(5) }],
    [
      'Old TLS',
      'high',
      { targetId: api.id, checkId: 'tls-old', description: 'TLS 1.0 enabled', status: 'fixed', fixedAt: day(6), lastSeenAt: day(5), firstSeenAt: day(1) },
    ],
    [
      'Banner',
      'low',
      {
        targetId: web.id,
        checkId: 'banner',
        description: 'SSH banner',
        status: 'dismissed',
        dismissReason: 'accepted_risk',
        dismissedAt: day(4),
        lastSeenAt: day(4),
        firstSeenAt: day(1),
      },
    ],
  ];
  const byName: Record<string, Finding> = {};
  for (const [name, severity, extra] of rows) {
    const row = await prisma.finding.create({ data: { ...base, name, severity, fingerprint: `fp-${name}`, ...extra } as never });
    await prisma.findingEvent.create({ data: { findingId: row.id, type: 'opened', createdAt: row.firstSeenAt } });
    // Seen through its target, as a scan would have recorded.
    await prisma.findingTarget.create({ data: { findingId: row.id, targetId: row.targetId! } });
    byName[name] = row as unknown as Finding;
  }
  return { owner, workspaceId, targets: { web, api }, asset, findings: byName };
}

describe('GET /api/vulnerabilities', () => {
  let fx: Awaited<ReturnType<typeof findingsWorkspace>>;
  beforeAll(async () => {
    fx = await findingsWorkspace();
  });

  it('lists open findings by default, most recently seen first', async () => {
    const response = await list(fx.owner, fx.workspaceId);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ total: 5, page: 1, limit: 10, pageCount: 1, hasNextPage: false });
    expect(names(response)).toEqual(['SQL injection', 'Exposed admin panel', 'Missing HSTS', 'Cookie without Secure', 'Server version disclosed']);
    const sqli = response.body.data[0];
    expect(sqli).toEqual({
      id: fx.findings['SQL injection'].id,
      nodeId: encodeGlobalID('Finding', fx.findings['SQL injection'].id),
      workspaceId: fx.workspaceId,
      fingerprint: 'fp-SQL injection',
      checkId: 'sqli-login',
      source: 'nuclei',
      name: 'SQL injection',
      severity: 'critical',
      description: 'Login form is injectable',
      remediation: 'Patch it.',
      matcher: 'word',
      status: 'open',
      evidence: { request: 'GET /' },
      classification: null,
      assetId: fx.asset.id,
      targetId: fx.targets.web.id,
      lastScanId: null,
      occurrences: 1,
      firstSeenAt: '2026-02-01T00:00:00.000Z',
      lastSeenAt: '2026-02-10T00:00:00.000Z',
      fixedAt: null,
      dismissReason: null,
      dismissComment: null,
      dismissedAt: null,
      dismissedById: null,
      updatedAt: expect.any(String),
    });
    // Past the end: no rows, the total still told (counted on its own then).
    const past = await list(fx.owner, fx.workspaceId, [
      ['limit', '2'],
      ['page', '4'],
    ]);
    expect(past.body).toMatchObject({ data: [], total: 5, page: 4, pageCount: 3, hasNextPage: false });
    const pastSearch = await list(fx.owner, fx.workspaceId, [
      ['q', 'admin'],
      ['page', '2'],
    ]);
    expect(pastSearch.body).toMatchObject({ data: [], total: 1, page: 2, hasNextPage: false });
  });

  it('filters by status', async () => {
    expect(names(await list(fx.owner, fx.workspaceId, [['status', 'fixed']]))).toEqual(['Old TLS']);
    expect(names(await list(fx.owner, fx.workspaceId, [['status', 'dismissed']]))).toEqual(['Banner']);
    expect((await list(fx.owner, fx.workspaceId, [['status', 'all']])).body.total).toBe(7);
  });

  it('filters by one or many severities', async () => {
    expect(names(await list(fx.owner, fx.workspaceId, [['severity', 'high']]))).toEqual(['Exposed admin panel']);
    expect(
      names(
        await list(fx.owner, fx.workspaceId, [
          ['severity', 'high'],
          ['severity', 'critical'],
        ]),
      ),
    ).toEqual(['SQL injection', 'Exposed admin panel']);
    expect(
      names(
        await list(fx.owner, fx.workspaceId, [
          ['severity', 'high'],
          ['status', 'all'],
        ]),
      ),
    ).toEqual(['Exposed admin panel', 'Old TLS']);
  });

  it('filters by targets, asset and text', async () => {
    expect(names(await list(fx.owner, fx.workspaceId, [['targetIds', fx.targets.api.id]]))).toEqual(['Missing HSTS', 'Cookie without Secure']);
    expect(
      (
        await list(fx.owner, fx.workspaceId, [
          ['targetIds', fx.targets.api.id],
          ['targetIds', fx.targets.web.id],
        ])
      ).body.total,
    ).toBe(5);
    expect((await list(fx.owner, fx.workspaceId, [['targetIds', randomUUID()]])).body.total).toBe(0);
    expect(names(await list(fx.owner, fx.workspaceId, [['assetId', fx.asset.id]]))).toEqual(['SQL injection', 'Exposed admin panel']);
    // q matches name, check id and description, case-insensitive.
    expect(names(await list(fx.owner, fx.workspaceId, [['q', 'sql']]))).toEqual(['SQL injection']);
    expect(names(await list(fx.owner, fx.workspaceId, [['q', 'HSTS-MISSING']]))).toEqual(['Missing HSTS']);
    expect(names(await list(fx.owner, fx.workspaceId, [['q', 'SECUR']]))).toEqual(['Missing HSTS', 'Cookie without Secure']);
    expect((await list(fx.owner, fx.workspaceId, [['q', '%']])).body.total).toBe(0);
  });

  it('sorts by severity rank, name and firstSeenAt', async () => {
    expect(
      names(
        await list(fx.owner, fx.workspaceId, [
          ['sortBy', 'severity'],
          ['sortOrder', 'ASC'],
        ]),
      ),
    ).toEqual(['Server version disclosed', 'Cookie without Secure', 'Missing HSTS', 'Exposed admin panel', 'SQL injection']);
    expect(
      names(
        await list(fx.owner, fx.workspaceId, [
          ['sortBy', 'severity'],
          ['sortOrder', 'DESC'],
          ['status', 'all'],
        ]),
      ).slice(0, 3),
    ).toEqual(['SQL injection', 'Exposed admin panel', 'Old TLS']);
    expect(
      names(
        await list(fx.owner, fx.workspaceId, [
          ['sortBy', 'name'],
          ['sortOrder', 'ASC'],
        ]),
      ),
    ).toEqual(['Cookie without Secure', 'Exposed admin panel', 'Missing HSTS', 'SQL injection', 'Server version disclosed']);
    expect(
      names(
        await list(fx.owner, fx.workspaceId, [
          ['sortBy', 'firstSeenAt'],
          ['sortOrder', 'ASC'],
          ['limit', 2],
        ]),
      ),
    ).toEqual(['SQL injection', 'Missing HSTS']);
  });

  it('refuses bad query parameters with 400 naming them', async () => {
    for (const [query, field] of [
      [[['severity', 'urgent']], 'severity.0'],
      [
        [
          ['severity', 'high'],
          ['severity', 'bogus'],
        ],
        'severity.1',
      ],
      [[['status', 'closed']], 'status'],
      [[['targetIds', 'not-a-uuid']], 'targetIds.0'],
      [[['assetId', '42']], 'assetId'],
      [[['sortBy', 'cvss']], 'sortBy'],
      [[['limit', 500]], 'limit'],
      [[['search', 'x']], 'search'],
    ] as [[string, string | number][], string][]) {
      const response = await list(fx.owner, fx.workspaceId, query);
      expect(response.status, JSON.stringify(query)).toBe(400);
      expect(fields(response)).toEqual([field]);
    }
  });
});

describe('GET /api/vulnerabilities/statistics and /{id}', () => {
  it('counts open findings per severity (all five) and findings per status', async () => {
    const fx = await findingsWorkspace();
    const stats = await get(fx.owner, fx.workspaceId, '/statistics');
    expect(stats.status).toBe(200);
    expect(stats.body).toEqual({
      data: [
        { severity: 'critical', count: 1 },
        { severity: 'high', count: 1 },
        { severity: 'medium', count: 1 },
        { severity: 'low', count: 1 },
        { severity: 'info', count: 1 },
      ],
      byStatus: { open: 5, fixed: 1, dismissed: 1 },
    });
    const api = await get(fx.owner, fx.workspaceId, '/statistics', [['targetIds', fx.targets.api.id]]);
    expect(api.body).toEqual({
      data: [
        { severity: 'critical', count: 0 },
        { severity: 'high', count: 0 },
        { severity: 'medium', count: 1 },
        { severity: 'low', count: 1 },
        { severity: 'info', count: 0 },
      ],
      byStatus: { open: 2, fixed: 1, dismissed: 0 },
    });
    const empty = await client.createWorkspace(fx.owner);
    const none = await get(fx.owner, empty.id, '/statistics');
    expect(none.body.data.every((row: { count: number }) => row.count === 0)).toBe(true);
    expect(none.body.byStatus).toEqual({ open: 0, fixed: 0, dismissed: 0 });
  });

  it('gets one finding with its history', async () => {
    const fx = await findingsWorkspace();
    const tls = fx.findings['Old TLS'];
    const response = await get(fx.owner, fx.workspaceId, `/${tls.id}`);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ id: tls.id, name: 'Old TLS', status: 'fixed', fixedAt: '2026-02-06T00:00:00.000Z' });
    expect(response.body.events).toEqual([
      { id: expect.any(String), type: 'opened', scanId: null, actorId: null, comment: null, createdAt: '2026-02-01T00:00:00.000Z' },
    ]);
  });

  it("another workspace's finding reads exactly like one that does not exist", async () => {
    const mine = await findingsWorkspace('Mine');
    const theirs = await findingsWorkspace('Theirs');
    const stranger = await get(mine.owner, mine.workspaceId, `/${theirs.findings['SQL injection'].id}`);
    const random = await get(mine.owner, mine.workspaceId, `/${randomUUID()}`);
    expect(stranger.status).toBe(404);
    expect(stranger.body).toEqual(random.body);
    expect(stranger.body).toMatchObject({ code: 'NOT_FOUND', message: 'Finding not found' });
    expect((await get(mine.owner, theirs.workspaceId, '/statistics')).status).toBe(404);
    expect((await list(mine.owner, theirs.workspaceId)).body.message).toBe('Workspace not found');
    expect((await get(mine.owner, mine.workspaceId, '/not-a-uuid')).status).toBe(400);
  });
});

/** Collects this workspace's published events (the listener starts before the write). */
function collectEvents(workspaceId: string) {
  const iterator = server.app.deps.pubsub.subscribe('workspace:event', workspaceId)[Symbol.asyncIterator]();
  const events: WorkspaceEvent[] = [];
  let pending = iterator.next();
  return {
    async take(count: number): Promise<WorkspaceEvent[]> {
      while (events.length < count) {
        const next = await Promise.race([pending, new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 2000))]);
        if (next === 'timeout') break;
        events.push(next.value);
        pending = iterator.next();
      }
      await iterator.return?.();
      return events;
    },
  };
}

describe('triage: POST /api/vulnerabilities/dismiss and /reopen', () => {
  it('dismisses in bulk with a reason, writes events, and publishes them', async () => {
    const fx = await findingsWorkspace();
    const ids = [fx.findings['SQL injection'].id, fx.findings['Missing HSTS'].id, fx.findings.Banner.id];
    const events = collectEvents(fx.workspaceId);
    const response = await client.api('POST', `${BASE}/dismiss`, {
      as: fx.owner,
      workspaceId: fx.workspaceId,
      body: { ids, reason: 'false_positive', comment: '  only on staging  ' },
    });
    expect(response.status).toBe(200);
    // Banner was dismissed already: it is reported as it is, not changed.
    expect(response.body.updated).toBe(2);
    expect(response.body.data.map((f: Finding) => [f.name, f.status, f.dismissReason, f.dismissComment])).toEqual([
      ['SQL injection', 'dismissed', 'false_positive', 'only on staging'],
      ['Missing HSTS', 'dismissed', 'false_positive', 'only on staging'],
      ['Banner', 'dismissed', 'accepted_risk', null],
    ]);
    expect(response.body.data[0]).toMatchObject({ dismissedById: fx.owner.id, dismissedAt: expect.any(String) });

    const published = await events.take(2);
    expect(published.map((event) => [event.type, event.entityId]).sort()).toEqual(
      [
        ['finding.dismissed', ids[0]],
        ['finding.dismissed', ids[1]],
      ].sort(),
    );
    expect(published[0]).toMatchObject({ workspaceId: fx.workspaceId, at: expect.any(String) });

    const detail = await get(fx.owner, fx.workspaceId, `/${ids[0]}`);
    expect(detail.body.events.map((e: { type: string; actorId: string | null; comment: string | null }) => [e.type, e.actorId, e.comment])).toEqual([
      ['opened', null, null],
      ['dismissed', fx.owner.id, 'false_positive: only on staging'],
    ]);
    expect(await server.db.prisma.findingEvent.count({ where: { findingId: ids[2], type: 'dismissed' } })).toBe(0);

    expect(names(await list(fx.owner, fx.workspaceId))).toEqual(['Exposed admin panel', 'Cookie without Secure', 'Server version disclosed']);
    expect((await list(fx.owner, fx.workspaceId, [['status', 'dismissed']])).body.total).toBe(3);
    const stats = await get(fx.owner, fx.workspaceId, '/statistics');
    expect(stats.body.byStatus).toEqual({ open: 3, fixed: 1, dismissed: 3 });
    expect(stats.body.data.find((row: { severity: string }) => row.severity === 'critical').count).toBe(0);

    // Dismissing again changes nothing and logs nothing.
    const again = await client.api('POST', `${BASE}/dismiss`, { as: fx.owner, workspaceId: fx.workspaceId, body: { ids: [ids[0]], reason: 'other' } });
    expect(again.body.updated).toBe(0);
    expect(again.body.data[0].dismissReason).toBe('false_positive');
  });

  it('reopens dismissed findings, clearing the dismissal, and leaves others alone', async () => {
    const fx = await findingsWorkspace();
    const banner = fx.findings.Banner.id;
    const open = fx.findings['Exposed admin panel'].id;
    const events = collectEvents(fx.workspaceId);
    const response = await client.api('POST', `${BASE}/reopen`, {
      as: fx.owner,
      workspaceId: fx.workspaceId,
      body: { ids: [banner, open], comment: 'needs a second look' },
    });
    expect(response.status).toBe(200);
    expect(response.body.updated).toBe(1);
    expect(response.body.data[0]).toMatchObject({
      id: banner,
      status: 'open',
      dismissReason: null,
      dismissComment: null,
      dismissedAt: null,
      dismissedById: null,
    });
    expect(response.body.data[1]).toMatchObject({ id: open, status: 'open' });
    expect((await events.take(1)).map((event) => [event.type, event.entityId])).toEqual([['finding.reopened', banner]]);

    const detail = await get(fx.owner, fx.workspaceId, `/${banner}`);
    expect(detail.body.events.map((e: { type: string; comment: string | null }) => [e.type, e.comment])).toEqual([
      ['opened', null],
      ['reopened', 'needs a second look'],
    ]);
    expect(await server.db.prisma.findingEvent.count({ where: { findingId: open } })).toBe(1);
    expect((await get(fx.owner, fx.workspaceId, '/statistics')).body.byStatus).toEqual({ open: 6, fixed: 1, dismissed: 0 });
  });

  it('refuses ids of another workspace with 404, like unknown ids, and changes nothing', async () => {
    const mine = await findingsWorkspace('Mine');
    const theirs = await findingsWorkspace('Theirs');
    const own = mine.findings['SQL injection'].id;
    const foreign = theirs.findings['SQL injection'].id;
    const unknown = randomUUID();

    const stranger = await client.api('POST', `${BASE}/dismiss`, {
      as: mine.owner,
      workspaceId: mine.workspaceId,
      body: { ids: [own, foreign], reason: 'other' },
    });
    const random = await client.api('POST', `${BASE}/dismiss`, {
      as: mine.owner,
      workspaceId: mine.workspaceId,
      body: { ids: [own, unknown], reason: 'other' },
    });
    expect(stranger.status).toBe(404);
    expect(stranger.body).toEqual({ ...random.body, message: random.body.message.replace(unknown, foreign) });
    expect(stranger.body).toMatchObject({ code: 'NOT_FOUND', message: `Finding ${foreign} not found` });

    const reopen = await client.api('POST', `${BASE}/reopen`, { as: mine.owner, workspaceId: mine.workspaceId, body: { ids: [theirs.findings.Banner.id] } });
    expect(reopen.status).toBe(404);

    for (const id of [own, foreign]) expect((await server.db.prisma.finding.findUniqueOrThrow({ where: { id } })).status).toBe('open');
    expect((await server.db.prisma.finding.findUniqueOrThrow({ where: { id: theirs.findings.Banner.id } })).status).toBe('dismissed');
    expect(await server.db.prisma.findingEvent.count({ where: { type: { in: ['dismissed', 'reopened'] }, findingId: { in: [own, foreign] } } })).toBe(0);

    // Their own workspace id in the header does not help either.
    const viaHeader = await client.api('POST', `${BASE}/dismiss`, {
      as: mine.owner,
      workspaceId: theirs.workspaceId,
      body: { ids: [foreign], reason: 'other' },
    });
    expect(viaHeader.status).toBe(404);
    expect(viaHeader.body.message).toBe('Workspace not found');
  });

  it('members triage; bad bodies are refused with 400 naming the field', async () => {
    const fx = await findingsWorkspace();
    const member = await client.signUp('Member');
    await client.addMember(fx.owner, fx.workspaceId, member);
    const id = fx.findings['Missing HSTS'].id;
    const ok = await client.api('POST', `${BASE}/dismiss`, { as: member, workspaceId: fx.workspaceId, body: { ids: [id], reason: 'mitigated' } });
    expect(ok.status).toBe(200);
    expect(ok.body.data[0]).toMatchObject({ status: 'dismissed', dismissReason: 'mitigated', dismissComment: null, dismissedById: member.id });

    for (const [path, body, field] of [
      ['/dismiss', { ids: [id] }, 'reason'],
      ['/dismiss', { ids: [id], reason: 'wontfix' }, 'reason'],
      ['/dismiss', { ids: ['nope'], reason: 'other' }, 'ids.0'],
      ['/dismiss', { ids: [], reason: 'other' }, 'ids'],
      ['/dismiss', { ids: Array.from({ length: 501 }, () => randomUUID()), reason: 'other' }, 'ids'],
      ['/dismiss', { ids: [id], reason: 'other', comment: 'x'.repeat(2001) }, 'comment'],
      ['/dismiss', { ids: [id], reason: 'other', force: true }, 'force'],
      ['/reopen', {}, 'ids'],
      ['/reopen', { ids: id }, 'ids'],
    ] as const) {
      const response = await client.api('POST', `${BASE}${path}`, { as: member, workspaceId: fx.workspaceId, body });
      expect(response.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(fields(response)).toEqual([field]);
    }
    expect((await client.api('POST', `${BASE}/reopen`, { workspaceId: fx.workspaceId, body: { ids: [id] } })).status).toBe(401);
  });
});

describe('GraphQL', () => {
  const FINDINGS = `query($id: ID!, $severity: [Severity!], $status: FindingStatusFilter, $targetId: ID, $search: String) {
    node(id: $id) { ... on Workspace { findings(severity: $severity, status: $status, targetId: $targetId, search: $search) {
      totalCount edges { node { name severity status } }
    } } }
  }`;

  it('lists findings as a connection with filters, resolves one with its history, and counts them', async () => {
    const fx = await findingsWorkspace();
    const wsId = encodeGlobalID('Workspace', fx.workspaceId);
    const names = (result: { data?: any }) => result.data?.node.findings.edges.map((e: { node: { name: string } }) => e.node.name);

    const open = await client.gql(FINDINGS, { as: fx.owner, variables: { id: wsId } });
    expect(open.data?.node.findings.totalCount).toBe(5);
    const severe = await client.gql(FINDINGS, { as: fx.owner, variables: { id: wsId, severity: ['high', 'critical'], status: 'all' } });
    expect(names(severe)).toEqual(['SQL injection', 'Exposed admin panel', 'Old TLS']);
    const api = await client.gql(FINDINGS, { as: fx.owner, variables: { id: wsId, targetId: encodeGlobalID('Target', fx.targets.api.id), status: 'fixed' } });
    expect(names(api)).toEqual(['Old TLS']);
    const searched = await client.gql(FINDINGS, { as: fx.owner, variables: { id: wsId, search: 'cookie' } });
    expect(names(searched)).toEqual(['Cookie without Secure']);

    const one = await client.gql(
      `query($id: ID!) { finding(id: $id) { databaseId name severity evidence classification asset { value } target { value } events { type comment } } }`,
      { as: fx.owner, variables: { id: encodeGlobalID('Finding', fx.findings['SQL injection'].id) } },
    );
    expect(one.data?.finding).toEqual({
      databaseId: fx.findings['SQL injection'].id,
      name: 'SQL injection',
      severity: 'critical',
      evidence: { request: 'GET /' },
      classification: null,
      asset: { value: 'https://web.example.com' },
      target: { value: 'web.example.com' },
      events: [{ type: 'opened', comment: null }],
    });

    const stats = await client.gql(
      `query($id: ID!) { findingStatistics(workspaceId: $id) { bySeverity { severity count } byStatus { open fixed dismissed } } }`,
      {
        as: fx.owner,
        variables: { id: wsId },
      },
    );
    expect(stats.data?.findingStatistics).toEqual({
      bySeverity: ['critical', 'high', 'medium', 'low', 'info'].map((severity) => ({ severity, count: 1 })),
      byStatus: { open: 5, fixed: 1, dismissed: 1 },
    });
  });

  it('dismisses and reopens through mutations, with NotFoundError for another workspace’s findings', async () => {
    const fx = await findingsWorkspace();
    const theirs = await findingsWorkspace('Theirs');
    const wsId = encodeGlobalID('Workspace', fx.workspaceId);
    const id = encodeGlobalID('Finding', fx.findings['Exposed admin panel'].id);
    const DISMISS = `mutation($workspaceId: ID!, $ids: [ID!]!, $reason: DismissReason!, $comment: String) {
      dismissFindings(workspaceId: $workspaceId, ids: $ids, reason: $reason, comment: $comment) {
        __typename
        ... on MutationDismissFindingsSuccess { data { databaseId status dismissReason dismissComment events { type comment } } }
        ... on Error { message code }
      }
    }`;
    const dismissed = await client.gql(DISMISS, {
      as: fx.owner,
      variables: { workspaceId: wsId, ids: [id], reason: 'accepted_risk', comment: 'internal only' },
    });
    expect(dismissed.data?.dismissFindings).toEqual({
      __typename: 'MutationDismissFindingsSuccess',
      data: [
        {
          databaseId: fx.findings['Exposed admin panel'].id,
          status: 'dismissed',
          dismissReason: 'accepted_risk',
          dismissComment: 'internal only',
          events: [
            { type: 'opened', comment: null },
            { type: 'dismissed', comment: 'accepted_risk: internal only' },
          ],
        },
      ],
    });

    const reopened = await client.gql(
      `mutation($workspaceId: ID!, $ids: [ID!]!) { reopenFindings(workspaceId: $workspaceId, ids: $ids) { ... on MutationReopenFindingsSuccess { data { status dismissReason } } } }`,
      { as: fx.owner, variables: { workspaceId: wsId, ids: [id] } },
    );
    expect(reopened.data?.reopenFindings.data).toEqual([{ status: 'open', dismissReason: null }]);

    const foreign = encodeGlobalID('Finding', theirs.findings['SQL injection'].id);
    const refused = await client.gql(DISMISS, { as: fx.owner, variables: { workspaceId: wsId, ids: [id, foreign], reason: 'other' } });
    expect(refused.data?.dismissFindings).toMatchObject({ __typename: 'NotFoundError', code: 'NOT_FOUND' });
    expect((await server.db.prisma.finding.findUniqueOrThrow({ where: { id: fx.findings['Exposed admin panel'].id } })).status).toBe('open');

    const otherWorkspace = await client.gql(DISMISS, {
      as: fx.owner,
      variables: { workspaceId: encodeGlobalID('Workspace', theirs.workspaceId), ids: [foreign], reason: 'other' },
    });
    expect(otherWorkspace.data?.dismissFindings).toEqual({ __typename: 'NotFoundError', message: 'Workspace not found', code: 'NOT_FOUND' });
    const lookup = await client.gql('query($id: ID!) { finding(id: $id) { name } node(id: $id) { id } }', { as: fx.owner, variables: { id: foreign } });
    expect(lookup.data).toEqual({ finding: null, node: null });
  });
});
