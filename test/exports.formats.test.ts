import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor } from './support/client.js';
import { csvObjects, parseCsv } from './support/csv-parse.js';
import { ASSETS, exportRequests, type ExportsWorkspace, exportsWorkspace, FINDINGS, sarifValidator, today, TRICKY } from './support/exports-fixture.js';
import { FINGERPRINT_KEY } from '../src/modules/exports/sarif.js';

/** What the findings and assets exports contain, format by format: CSV, JSON and SARIF. */
let server: TestApp;
let client: ReturnType<typeof clientFor>;
let fx: ExportsWorkspace;

beforeAll(async () => {
  server = await startTestApp();
  client = clientFor(server);
  fx = await exportsWorkspace(server);
});
afterAll(() => server?.stop());

const { exportOf } = exportRequests(() => server);

describe('findings as CSV', () => {
  it('is RFC 4180 with a header row, named after the workspace and the day, and reads back cell for cell', async () => {
    const response = await exportOf(fx.owner, fx.workspaceId, FINDINGS, [
      ['format', 'csv'],
      ['status', 'all'],
    ]);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8; header=present');
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="perimeter-acme-prod-eu-unit-findings-${today()}.csv"`);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const records = parseCsv(response.text);
    expect(records[0]).toEqual(expect.arrayContaining(['id', 'fingerprint', 'checkId', 'name', 'severity', 'status', 'asset', 'cve', 'cwe', 'description']));
    const rows = csvObjects(response.text);
    expect(rows).toHaveLength(6);
    const sqli = rows.find((row) => row.checkId === 'sqli-login')!;
    expect(sqli).toMatchObject({
      name: 'SQL injection',
      severity: 'critical',
      status: 'open',
      asset: 'https://web.example.com',
      assetKind: 'web',
      target: 'web.example.com',
      cve: 'CVE-2024-1234',
      cwe: 'CWE-89',
      cvssScore: '9.8',
      description: TRICKY.quoted,
      remediation: TRICKY.multiline,
      evidenceUrl: 'https://web.example.com/login',
      occurrences: '1',
    });
    expect(new Date(sqli.firstSeenAt!).toISOString()).toBe(sqli.firstSeenAt);
    expect(rows.find((row) => row.checkId === 'banner')).toMatchObject({ status: 'dismissed', dismissReason: 'accepted_risk', dismissComment: 'only staging' });
  });

  it('prefixes cells a spreadsheet would run as a formula with a single quote (= + - @ and tab), and only those', async () => {
    const rows = csvObjects((await exportOf(fx.owner, fx.workspaceId, FINDINGS, [['format', 'csv']])).text);
    const admin = rows.find((row) => row.checkId === 'admin-panel')!;
    expect(admin.name).toBe(`'${TRICKY.formula}`);
    expect(admin.description).toBe(`'${TRICKY.plus}`);
    expect(admin.remediation).toBe(`'${TRICKY.minus}`);
    const hsts = rows.find((row) => row.checkId === 'hsts-missing')!;
    expect(hsts.description).toBe(`'${TRICKY.at}`);
    expect(hsts.remediation).toBe(`'${TRICKY.tab}`);
    // Quoting alone changes nothing: the text reads back as it was.
    expect(rows.find((row) => row.checkId === 'sqli-login')!.description).toBe(TRICKY.quoted);
    for (const row of rows) for (const cell of Object.values(row)) expect(cell).not.toMatch(/^[=+\-@\t\r]/);
  });
});

describe('findings as JSON', () => {
  it("is one JSON array of the list's elements, every matching one, in id order", async () => {
    const response = await exportOf(fx.owner, fx.workspaceId, FINDINGS, [['format', 'json']]);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('content-disposition')).toMatch(/^attachment; filename="perimeter-acme-prod-eu-unit-findings-\d{4}-\d\d-\d\d\.json"$/);
    const exported = JSON.parse(response.text) as { id: string }[];
    const listed = await client.api('GET', `${FINDINGS}?limit=100`, { as: fx.owner, workspaceId: fx.workspaceId });
    expect(exported).toHaveLength(4);
    const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : 1);
    expect(exported).toEqual([...listed.body.data].sort(byId));
    expect(exported.map((row) => row.id)).toEqual(exported.map((row) => row.id).sort());
  });

  it('is an empty array when nothing matches', async () => {
    const response = await exportOf(fx.owner, fx.workspaceId, FINDINGS, [
      ['format', 'json'],
      ['q', 'nothing like this'],
    ]);
    expect(response.status).toBe(200);
    expect(JSON.parse(response.text)).toEqual([]);
  });
});

describe('findings as SARIF 2.1.0', () => {
  it('validates against the official SARIF 2.1.0 JSON schema, and the schema catches a broken log', async () => {
    const validate = sarifValidator();
    const response = await exportOf(fx.owner, fx.workspaceId, FINDINGS, [
      ['format', 'sarif'],
      ['status', 'all'],
    ]);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/sarif+json; charset=utf-8');
    expect(response.headers.get('content-disposition')).toMatch(/filename="perimeter-acme-prod-eu-unit-findings-\d{4}-\d\d-\d\d\.sarif"$/);
    const log = JSON.parse(response.text);
    expect(validate(log), JSON.stringify(validate.errors)).toBe(true);
    // The validator is not a rubber stamp: a level SARIF does not know, or a result without a message, fails.
    const broken = structuredClone(log);
    broken.runs[0].results[0].level = 'critical';
    delete broken.runs[0].results[1].message;
    expect(validate(broken)).toBe(false);
    expect(validate.errors?.length).toBeGreaterThanOrEqual(2);
  });

  it('has a rule per check, results with level, location, fingerprint and properties, and dismissed findings suppressed', async () => {
    const log = JSON.parse(
      (
        await exportOf(fx.owner, fx.workspaceId, FINDINGS, [
          ['format', 'sarif'],
          ['status', 'all'],
        ])
      ).text,
    );
    expect(log.version).toBe('2.1.0');
    const run = log.runs[0];
    const rules = run.tool.driver.rules as { id: string; defaultConfiguration: { level: string } }[];
    expect(run.tool.driver.name).toBe('Perimeter');
    expect(rules.map((rule) => rule.id)).toEqual(['admin-panel', 'banner', 'cookie-secure', 'hsts-missing', 'sqli-login', 'tls-old']);
    expect(run.results).toHaveLength(6);
    for (const result of run.results) expect(rules[result.ruleIndex]!.id).toBe(result.ruleId);
    const byRule = Object.fromEntries(run.results.map((result: { ruleId: string }) => [result.ruleId, result]));
    expect(byRule['sqli-login']).toMatchObject({
      level: 'error',
      message: { text: 'SQL injection on https://web.example.com' },
      locations: [
        {
          physicalLocation: { artifactLocation: { uri: 'https://web.example.com/' } },
          logicalLocations: [{ name: 'https://web.example.com', fullyQualifiedName: 'web:https://web.example.com:443', kind: 'resource' }],
        },
      ],
      partialFingerprints: { [FINGERPRINT_KEY]: 'fp-sqli-login' },
      properties: { severity: 'critical', status: 'open', cve: ['CVE-2024-1234'], cwe: ['CWE-89'], cvssScore: 9.8 },
    });
    expect(byRule['hsts-missing'].level).toBe('warning');
    // A host: no URL of its own, so the URL the check matched at, and the host as the logical location.
    expect(byRule['hsts-missing'].locations[0].logicalLocations[0]).toMatchObject({ name: 'api.example.com', fullyQualifiedName: 'host:api.example.com' });
    expect(byRule['cookie-secure']).toMatchObject({ level: 'note', locations: [{ logicalLocations: [{ name: 'api.example.com' }] }] });
    expect(byRule['cookie-secure'].locations[0].physicalLocation).toBeUndefined();
    expect(byRule.banner.suppressions).toEqual([{ kind: 'external', status: 'accepted', justification: 'accepted_risk: only staging' }]);
    expect(byRule['sqli-login'].suppressions).toBeUndefined();
  });
});

describe('assets', () => {
  it("as JSON: the list's elements; as CSV: a header row and one record per asset, formula cells defused", async () => {
    const json = await exportOf(fx.owner, fx.workspaceId, ASSETS, [['format', 'json']]);
    expect(json.status).toBe(200);
    expect(json.headers.get('content-disposition')).toBe(`attachment; filename="perimeter-acme-prod-eu-unit-assets-${today()}.json"`);
    const listed = await client.api('GET', `${ASSETS}?limit=100`, { as: fx.owner, workspaceId: fx.workspaceId });
    expect(JSON.parse(json.text)).toEqual([...listed.body.data].sort((a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : 1)));
    const csv = await exportOf(fx.owner, fx.workspaceId, ASSETS, [['format', 'csv']]);
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8; header=present');
    const rows = csvObjects(csv.text);
    expect(rows.map((row) => row.value).sort()).toEqual(['10.0.0.1:22', 'api.example.com', 'https://web.example.com']);
    expect(rows.find((row) => row.kind === 'service')).toMatchObject({ enabled: 'false', dismissed: 'false', key: 'service:10.0.0.1:22/tcp' });
    // JSON in a cell starts with {, not a formula character; it reads back as the asset's data.
    expect(JSON.parse(rows.find((row) => row.kind === 'web')!.data!)).toEqual({ title: TRICKY.formula });
  });

  it('refuses SARIF for assets (a format of findings) with 400 naming format', async () => {
    const response = await exportOf(fx.owner, fx.workspaceId, ASSETS, [['format', 'sarif']]);
    expect(response.status).toBe(400);
    expect(JSON.parse(response.text).details).toEqual([expect.objectContaining({ field: 'format' })]);
  });
});
