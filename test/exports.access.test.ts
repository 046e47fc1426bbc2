import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor } from './support/client.js';
import { csvObjects } from './support/csv-parse.js';
import { ASSETS, exportRequests, type ExportsWorkspace, exportsWorkspace, FINDINGS, type Query, sarifValidator } from './support/exports-fixture.js';
import { insertFindings } from './support/findings-seed.js';
import { createServiceContext } from '../src/context.js';
import { resolveViewer } from '../src/modules/accounts/service.js';
import { exportFindings } from '../src/modules/exports/service.js';
import { buildOpenApiDocument } from '../src/rest/openapi.js';

/** Who may export what: the lists' filters, bad requests and permissions, streaming in batches, the OpenAPI document. */
let server: TestApp;
let client: ReturnType<typeof clientFor>;
let fx: ExportsWorkspace;

beforeAll(async () => {
  server = await startTestApp();
  client = clientFor(server);
  fx = await exportsWorkspace(server);
});
afterAll(() => server?.stop());

const { download, exportOf } = exportRequests(() => server);

describe('filters: the same as the lists', () => {
  const idsOf = (text: string) => (JSON.parse(text) as { id: string }[]).map((row) => row.id).sort();

  it.each<[string, Query, number]>([
    [
      'severity, repeated',
      [
        ['severity', 'high'],
        ['severity', 'critical'],
      ],
      2,
    ],
    ['one severity', [['severity', 'medium']], 1],
    ['status', [['status', 'fixed']], 1],
    ['all statuses', [['status', 'all']], 6],
    ['search', [['q', 'hsts']], 1],
    [
      'asset',
      [
        ['status', 'all'],
        ['assetId', 'host'],
      ],
      2,
    ],
  ])('findings by %s match the list', async (_label, given, count) => {
    const query = given.map(([key, value]): [string, string] => [key, key === 'assetId' ? fx.assets.host.id : value]);
    const exported = await exportOf(fx.owner, fx.workspaceId, FINDINGS, [['format', 'json'], ...query]);
    expect(exported.status).toBe(200);
    const listed = await client.api('GET', `${FINDINGS}?${new URLSearchParams([['limit', '100'], ...query])}`, { as: fx.owner, workspaceId: fx.workspaceId });
    expect(listed.status).toBe(200);
    expect(idsOf(exported.text)).toEqual(listed.body.data.map((row: { id: string }) => row.id).sort());
    expect(idsOf(exported.text)).toHaveLength(count);
  });

  it('findings by target, as CSV and SARIF too', async () => {
    const query: Query = [
      ['targetIds', fx.targets.web.id],
      ['status', 'all'],
    ];
    const csv = csvObjects((await exportOf(fx.owner, fx.workspaceId, FINDINGS, [['format', 'csv'], ...query])).text);
    expect(csv.map((row) => row.checkId).sort()).toEqual(['admin-panel', 'sqli-login']);
    const sarif = JSON.parse((await exportOf(fx.owner, fx.workspaceId, FINDINGS, [['format', 'sarif'], ...query])).text);
    expect(sarif.runs[0].tool.driver.rules.map((rule: { id: string }) => rule.id)).toEqual(['admin-panel', 'sqli-login']);
    expect(sarif.runs[0].results).toHaveLength(2);
  });

  it('assets by kind, search, enabled and target match the list', async () => {
    for (const query of [[['kind', 'host']], [['search', 'WEB.example']], [['enabled', 'false']], [['targetId', fx.targets.api.id]]] as Query[]) {
      const exported = await exportOf(fx.owner, fx.workspaceId, ASSETS, [['format', 'json'], ...query]);
      const listed = await client.api('GET', `${ASSETS}?${new URLSearchParams([['limit', '100'], ...query])}`, { as: fx.owner, workspaceId: fx.workspaceId });
      expect(idsOf(exported.text), JSON.stringify(query)).toEqual(listed.body.data.map((row: { id: string }) => row.id).sort());
      expect(idsOf(exported.text).length).toBeGreaterThan(0);
      expect(idsOf(exported.text).length).toBeLessThan(3);
    }
  });
});

describe('bad requests and permissions', () => {
  const fieldsOf = (text: string) => (JSON.parse(text).details ?? []).map((detail: { field: string }) => detail.field);

  it.each<[string, Query, string]>([
    ['no format', [], 'format'],
    ['an unknown format', [['format', 'xlsx']], 'format'],
    [
      'a bad severity',
      [
        ['format', 'csv'],
        ['severity', 'urgent'],
      ],
      'severity.0',
    ],
    [
      'a bad status',
      [
        ['format', 'csv'],
        ['status', 'maybe'],
      ],
      'status',
    ],
    [
      'a malformed target id',
      [
        ['format', 'csv'],
        ['targetIds', 'nope'],
      ],
      'targetIds.0',
    ],
    [
      'a list parameter (paging is not for exports)',
      [
        ['format', 'csv'],
        ['page', '2'],
      ],
      'page',
    ],
  ])('%s: 400 in the standard error shape, naming the field', async (_label, query, field) => {
    const response = await exportOf(fx.owner, fx.workspaceId, FINDINGS, query);
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const body = JSON.parse(response.text);
    expect(body).toMatchObject({ statusCode: 400, error: 'Bad Request', code: 'VALIDATION_FAILED' });
    expect(fieldsOf(response.text)).toContain(field);
  });

  it('a NUL character in the query: 400, as on every REST route', async () => {
    const response = await exportOf(fx.owner, fx.workspaceId, FINDINGS, [
      ['format', 'csv'],
      ['q', 'a\u0000b'],
    ]);
    expect(response.status).toBe(400);
  });

  it('anonymous: 401; no workspace: 400; as on the lists', async () => {
    for (const path of [FINDINGS, ASSETS]) {
      const anonymous = await download(null, fx.workspaceId, `${path}/export`, [['format', 'csv']]);
      const listAnonymous = await download(null, fx.workspaceId, path);
      expect([anonymous.status, JSON.parse(anonymous.text).code]).toEqual([401, JSON.parse(listAnonymous.text).code]);
      const noWorkspace = await download(fx.owner, null, `${path}/export`, [['format', 'csv']]);
      const listNoWorkspace = await download(fx.owner, null, path);
      expect(noWorkspace.status).toBe(listNoWorkspace.status);
      expect(JSON.parse(noWorkspace.text).code).toBe(JSON.parse(listNoWorkspace.text).code);
    }
  });

  it("a member of another workspace gets 404 for this one, exactly as the lists answer, and never this workspace's rows", async () => {
    const stranger = await client.signUp('Stranger');
    const own = (await client.createWorkspace(stranger)).id;
    await insertFindings(server.db.sql, own, 3, 'stranger');
    for (const [path, format] of [
      [FINDINGS, 'sarif'],
      [ASSETS, 'csv'],
    ] as const) {
      const exported = await exportOf(stranger, fx.workspaceId, path, [['format', format]]);
      const listed = await download(stranger, fx.workspaceId, path);
      expect(exported.status).toBe(404);
      expect(JSON.parse(exported.text)).toEqual(JSON.parse(listed.text));
      expect(exported.text).not.toContain('SQL injection');
      const malformed = await exportOf(stranger, 'not-a-workspace', path, [['format', format]]);
      expect(malformed.status).toBe(404);
    }
    // Their own export has their findings only.
    const mine = JSON.parse((await exportOf(stranger, own, FINDINGS, [['format', 'json']])).text) as { workspaceId: string }[];
    expect(mine).toHaveLength(3);
    expect(new Set(mine.map((row) => row.workspaceId))).toEqual(new Set([own]));
  });

  it('a member (not owner) may export, as they may list', async () => {
    const member = await client.signUp('Member');
    await client.addMember(fx.owner, fx.workspaceId, member);
    const response = await exportOf(member, fx.workspaceId, FINDINGS, [['format', 'json']]);
    expect(response.status).toBe(200);
    expect(JSON.parse(response.text)).toHaveLength(4);
  });
});

describe('streaming', () => {
  it('reads many batches by keyset: 2,500 findings, each exactly once, in id order, in every format', async () => {
    const owner = await client.signUp('Bulk');
    const workspaceId = (await client.createWorkspace(owner)).id;
    await insertFindings(server.db.sql, workspaceId, 2500);
    const json = JSON.parse((await exportOf(owner, workspaceId, FINDINGS, [['format', 'json']])).text) as { id: string; fingerprint: string }[];
    expect(json).toHaveLength(2500);
    expect(new Set(json.map((row) => row.fingerprint)).size).toBe(2500);
    expect(json.map((row) => row.id)).toEqual(json.map((row) => row.id).sort());
    expect(csvObjects((await exportOf(owner, workspaceId, FINDINGS, [['format', 'csv']])).text)).toHaveLength(2500);
    const sarif = JSON.parse((await exportOf(owner, workspaceId, FINDINGS, [['format', 'sarif']])).text);
    expect(sarif.runs[0].results).toHaveLength(2500);
    expect(sarif.runs[0].tool.driver.rules).toHaveLength(50);
    expect(sarifValidator()(sarif)).toBe(true);
  });

  it('reads a batch only when the previous one has been taken: memory is one batch, whatever the count', async () => {
    const owner = await client.signUp('Lazy');
    const workspaceId = (await client.createWorkspace(owner)).id;
    await insertFindings(server.db.sql, workspaceId, 35);
    const deps = server.app.deps;
    // Counts the batch reads the export makes, through the service's own database client.
    let reads = 0;
    const finding = new Proxy(deps.prisma.finding, {
      get: (target, key, receiver) =>
        key === 'findMany'
          ? (...args: unknown[]) => {
              reads += 1;
              return (target.findMany as (...a: unknown[]) => unknown)(...args);
            }
          : Reflect.get(target, key, receiver),
    });
    const prisma = new Proxy(deps.prisma, { get: (target, key, receiver) => (key === 'finding' ? finding : Reflect.get(target, key, receiver)) });
    const viewer = await resolveViewer(deps, new Headers({ authorization: `Bearer ${owner.token}` }));
    const ctx = createServiceContext({ ...deps, prisma }, { viewer, requestId: 'test', clientIp: '127.0.0.1', workspaceId });
    const result = await exportFindings(ctx, workspaceId, { format: 'csv' }, { batchSize: 10 });
    expect(reads).toBe(0);
    const pieces = result.body[Symbol.asyncIterator]();
    expect((await pieces.next()).value).toMatch(/^id,fingerprint,/);
    expect(reads).toBe(0);
    expect((await pieces.next()).value.split('\r\n').filter(Boolean)).toHaveLength(10);
    expect(reads).toBe(1);
    await pieces.next();
    expect(reads).toBe(2);
    let rest = 0;
    for (let piece = await pieces.next(); !piece.done; piece = await pieces.next()) rest += piece.value.split('\r\n').filter(Boolean).length;
    expect(rest).toBe(15);
    // 10 + 10 + 10 + 5: the short fourth batch is the last read.
    expect(reads).toBe(4);
  });

  it('a client that goes away mid-export leaves the server serving', async () => {
    const owner = await client.signUp('Leaver');
    const workspaceId = (await client.createWorkspace(owner)).id;
    await insertFindings(server.db.sql, workspaceId, 3000);
    const controller = new AbortController();
    const response = await fetch(`${server.url}${FINDINGS}/export?format=json`, {
      headers: { authorization: `Bearer ${owner.token}`, 'x-workspace-id': workspaceId },
      signal: controller.signal,
    });
    const reader = response.body!.getReader();
    expect((await reader.read()).done).toBe(false);
    controller.abort();
    await expect(reader.read()).rejects.toThrow();
    const again = await exportOf(owner, workspaceId, FINDINGS, [['format', 'csv']]);
    expect(again.status).toBe(200);
    expect(csvObjects(again.text)).toHaveLength(3000);
  });
});

describe('the OpenAPI document', () => {
  it('documents both exports: query filters, format, the media types of each format and Content-Disposition', () => {
    const paths = buildOpenApiDocument().paths as Record<string, Record<string, any>>;
    const findings = paths['/api/vulnerabilities/export']!.get;
    expect(findings.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(['format', 'severity', 'status', 'targetIds', 'assetId', 'q']),
    );
    expect(findings.parameters.find((p: { name: string }) => p.name === 'format')).toMatchObject({
      required: true,
      schema: { enum: ['csv', 'json', 'sarif'] },
    });
    expect(Object.keys(findings.responses['200'].content).sort()).toEqual(['application/json', 'application/sarif+json', 'text/csv']);
    expect(findings.responses['200'].headers['Content-Disposition']).toBeDefined();
    expect(Object.keys(findings.responses)).toEqual(expect.arrayContaining(['400', '401', '403', '404']));
    const assets = paths['/api/assets/export']!.get;
    expect(assets.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(['format', 'kind', 'targetId', 'search', 'enabled', 'source', 'dismissed']),
    );
    expect(Object.keys(assets.responses['200'].content).sort()).toEqual(['application/json', 'text/csv']);
  });
});
