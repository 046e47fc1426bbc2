import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { encodeGlobalID } from '@pothos/plugin-relay';
import pkg from '../package.json' with { type: 'json' };
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { ensureBuiltinTools } from '../src/modules/tools/catalogue.js';
import { recordFindings } from '../src/modules/vulnerabilities/ingest.js';
import { findingFingerprint, type FindingObservation } from '../src/scanner/index.js';

let server: TestApp;
let client: ReturnType<typeof clientFor>;
let admin: TestUser;
let owner: TestUser;
let member: TestUser;
let outsider: TestUser;
let workspaceId: string;
let otherWorkspaceId: string;

const BASE = '/api/v1/api/tools';
const BUILTINS = ['discovery', 'dns', 'ports', 'http', 'tls', 'checks', 'nuclei-templates'];

beforeAll(async () => {
  server = await startTestApp();
  client = clientFor(server);
  // The first account of a fresh instance administers it.
  admin = await client.signUp('Admin');
  owner = await client.signUp('Owner');
  member = await client.signUp('Member');
  outsider = await client.signUp('Outsider');
  workspaceId = (await client.createWorkspace(owner)).id;
  await client.addMember(owner, workspaceId, member);
  otherWorkspaceId = (await client.createWorkspace(outsider)).id;
});
afterAll(() => server?.stop());

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

async function register(name: string, as: TestUser = owner, wid = workspaceId, fields: Record<string, unknown> = {}) {
  return client.api('POST', BASE, { as, workspaceId: wid, body: { name, category: 'vulnerability_scanner', ...fields } });
}

async function customToolWithKey(name: string, wid = workspaceId, as = owner) {
  const tool = await register(name, as, wid);
  expect(tool.status).toBe(201);
  const rotated = await client.api('POST', `${BASE}/${tool.body.id}/api-key/rotate`, { as, workspaceId: wid });
  expect(rotated.status).toBe(201);
  return { tool: tool.body as { id: string; name: string }, apiKey: rotated.body.apiKey as string };
}

function submit(apiKey: string | undefined, body: unknown, headers: Record<string, string> = {}, wid?: string) {
  return client.api('POST', `${BASE}/results`, { body, workspaceId: wid, headers: { ...(apiKey ? { 'x-tool-api-key': apiKey } : {}), ...headers } });
}

async function builtinId(name: string): Promise<string> {
  const list = await client.api('GET', BASE, { as: owner, workspaceId });
  return list.body.data.find((tool: { name: string }) => tool.name === name).id;
}

/** nuclei -jsonl lines as nuclei writes them (fields trimmed to what matters). */
function nucleiLine(fields: Record<string, unknown> = {}): string {
  return JSON.stringify({
    'template-id': 'git-config',
    'template-path': '/root/nuclei-templates/http/exposures/configs/git-config.yaml',
    info: {
      name: 'Git Configuration - Detect',
      author: ['pdteam'],
      tags: ['config', 'git', 'exposure'],
      description: 'Git configuration was detected.',
      severity: 'medium',
      remediation: 'Deny access to /.git.',
      classification: { 'cve-id': null, 'cwe-id': ['cwe-200'], 'cvss-score': 5.3, 'cvss-metrics': 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:L/I:N/A:N' },
    },
    type: 'http',
    host: 'https://app.example.com',
    port: '443',
    scheme: 'https',
    url: 'https://app.example.com',
    'matched-at': 'https://app.example.com/.git/config',
    request: 'GET /.git/config HTTP/1.1\r\nHost: app.example.com\r\n\r\n',
    response: 'HTTP/1.1 200 OK\r\n\r\n[core]\n\trepositoryformatversion = 0',
    ip: '10.0.0.7',
    timestamp: '2026-01-05T10:00:00.000Z',
    'curl-command': "curl -X 'GET' 'https://app.example.com/.git/config'",
    'matcher-status': true,
    ...fields,
  });
}

describe('catalogue', () => {
  it('lists the built-in scan steps as tools, enabled, with this release as version', async () => {
    const response = await client.api('GET', BASE, { as: member, workspaceId });
    expect(response.status).toBe(200);
    const builtins = response.body.data.filter((tool: { builtin: boolean }) => tool.builtin);
    expect(builtins.map((tool: { name: string }) => tool.name)).toEqual(BUILTINS);
    expect(builtins.map((tool: { category: string }) => tool.category)).toEqual([
      'subdomain_discovery',
      'dns',
      'port_scanner',
      'http_probe',
      'tls',
      'vulnerability_scanner',
      'vulnerability_scanner',
    ]);
    for (const tool of builtins) {
      expect(tool).toMatchObject({
        id: expect.any(String),
        builtin: true,
        enabled: true,
        workspaceId: null,
        version: pkg.version,
        description: expect.stringMatching(/\w/),
      });
    }
  });

  it('is seeded once however many processes start at the same time', async () => {
    const deps = server.app.deps;
    await Promise.all([ensureBuiltinTools(deps), ensureBuiltinTools(deps), ensureBuiltinTools(deps)]);
    const rows = await server.db.prisma.tool.findMany({ where: { builtin: true }, select: { name: true, workspaceId: true } });
    expect(rows.map((row) => row.name).sort()).toEqual([...BUILTINS].sort());
    expect(rows.every((row) => row.workspaceId === null)).toBe(true);
  });

  it('needs a caller (401), a workspace (400) that the caller belongs to (404)', async () => {
    expect((await client.api('GET', BASE, { workspaceId })).status).toBe(401);
    const noWorkspace = await client.api('GET', BASE, { as: owner });
    expect(noWorkspace.status).toBe(400);
    expect(noWorkspace.body.code).toBe('WORKSPACE_REQUIRED');
    expect((await client.api('GET', BASE, { as: outsider, workspaceId })).status).toBe(404);
  });
});

describe('custom tools', () => {
  it('owners register one; members, outsiders and anonymous callers cannot', async () => {
    const created = await register('acme-scanner', owner, workspaceId, { description: 'Our in-house scanner', version: '2.1.0' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      name: 'acme-scanner',
      category: 'vulnerability_scanner',
      description: 'Our in-house scanner',
      version: '2.1.0',
      builtin: false,
      enabled: true,
      workspaceId,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect((await register('by-member', member)).status).toBe(403);
    expect((await register('by-outsider', outsider)).status).toBe(404);
    expect((await client.api('POST', BASE, { workspaceId, body: { name: 'anon', category: 'other' } })).status).toBe(401);
  });

  it('refuses a taken name (409), a built-in name (409) and bad fields (400)', async () => {
    await register('taken');
    expect((await register('taken')).status).toBe(409);
    expect((await register('nuclei-templates')).status).toBe(409);
    const bad = await client.api('POST', BASE, { as: owner, workspaceId, body: { name: 'has space', category: 'laser' } });
    expect(bad.status).toBe(400);
    expect(bad.body.details.map((detail: { field: string }) => detail.field).sort()).toEqual(['category', 'name']);
    // The same name in another workspace is fine.
    expect((await register('taken', outsider, otherWorkspaceId)).status).toBe(201);
  });

  it('shows a custom tool to its workspace only', async () => {
    const { body: tool } = await register('private-tool');
    const mine = await client.api('GET', BASE, { as: member, workspaceId });
    expect(mine.body.data.map((t: { name: string }) => t.name)).toContain('private-tool');
    const theirs = await client.api('GET', BASE, { as: outsider, workspaceId: otherWorkspaceId });
    expect(theirs.body.data.map((t: { name: string }) => t.name)).not.toContain('private-tool');
    expect((await client.api('GET', `${BASE}/${tool.id}`, { as: member, workspaceId })).body).toMatchObject({ id: tool.id, name: 'private-tool' });
    expect((await client.api('GET', `${BASE}/${tool.id}`, { as: outsider, workspaceId: otherWorkspaceId })).status).toBe(404);
    expect((await client.api('GET', `${BASE}/${tool.id}`, { as: outsider, workspaceId })).status).toBe(404);
    expect((await client.api('GET', `${BASE}/not-a-uuid`, { as: owner, workspaceId })).status).toBe(400);
  });

  it('owners update it; members cannot', async () => {
    const { body: tool } = await register('renamable');
    const updated = await client.api('PATCH', `${BASE}/${tool.id}`, {
      as: owner,
      workspaceId,
      body: { name: 'renamed', version: '3.0', category: 'web_crawler' },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ name: 'renamed', version: '3.0', category: 'web_crawler', enabled: true });
    expect((await client.api('PATCH', `${BASE}/${tool.id}`, { as: member, workspaceId, body: { version: '4' } })).status).toBe(403);
    expect((await client.api('PATCH', `${BASE}/${tool.id}`, { as: outsider, workspaceId: otherWorkspaceId, body: { version: '4' } })).status).toBe(404);
    expect((await client.api('PATCH', `${BASE}/${tool.id}`, { workspaceId, body: { version: '4' } })).status).toBe(401);
  });

  it('enables and disables custom tools, and built-in tools per workspace', async () => {
    const { body: tool } = await register('switchable');
    const off = await client.api('PATCH', `${BASE}/${tool.id}`, { as: owner, workspaceId, body: { enabled: false } });
    expect(off.body.enabled).toBe(false);
    expect((await client.api('GET', `${BASE}/${tool.id}`, { as: member, workspaceId })).body.enabled).toBe(false);
    expect((await client.api('PATCH', `${BASE}/${tool.id}`, { as: owner, workspaceId, body: { enabled: true } })).body.enabled).toBe(true);
    expect((await client.api('PATCH', `${BASE}/${tool.id}`, { as: member, workspaceId, body: { enabled: false } })).status).toBe(403);
    expect((await client.api('PATCH', `${BASE}/${tool.id}`, { as: owner, workspaceId, body: { enabled: 'false' } })).status).toBe(400);

    const tls = await builtinId('tls');
    const tlsOff = await client.api('PATCH', `${BASE}/${tls}`, { as: owner, workspaceId, body: { enabled: false } });
    expect(tlsOff.status).toBe(200);
    expect(tlsOff.body).toMatchObject({ name: 'tls', builtin: true, enabled: false });
    // Only this workspace's choice: the other workspace still has it, and the instance row is unchanged.
    expect((await client.api('GET', `${BASE}/${tls}`, { as: outsider, workspaceId: otherWorkspaceId })).body.enabled).toBe(true);
    expect((await server.db.prisma.tool.findUniqueOrThrow({ where: { id: tls } })).enabled).toBe(true);
    expect((await client.api('PATCH', `${BASE}/${tls}`, { as: owner, workspaceId, body: { enabled: true } })).body.enabled).toBe(true);
    // A built-in tool's fields belong to the instance.
    const rename = await client.api('PATCH', `${BASE}/${tls}`, { as: owner, workspaceId, body: { name: 'mine' } });
    expect(rename.status).toBe(400);
    expect(rename.body.details).toEqual([{ field: 'name', message: expect.any(String) }]);
  });

  it('owners delete a custom tool (and its key); built-in tools cannot be deleted', async () => {
    const { tool, apiKey } = await customToolWithKey('deletable');
    expect((await client.api('DELETE', `${BASE}/${tool.id}`, { as: member, workspaceId })).status).toBe(403);
    expect((await client.api('DELETE', `${BASE}/${tool.id}`, { as: outsider, workspaceId: otherWorkspaceId })).status).toBe(404);
    const deleted = await client.api('DELETE', `${BASE}/${tool.id}`, { as: owner, workspaceId });
    expect(deleted).toMatchObject({ status: 200, body: { id: tool.id } });
    expect((await client.api('GET', `${BASE}/${tool.id}`, { as: owner, workspaceId })).status).toBe(404);
    expect(await server.db.prisma.toolKey.count({ where: { toolId: tool.id } })).toBe(0);
    expect((await submit(apiKey, { format: 'json', findings: [] })).status).toBe(401);

    const dns = await builtinId('dns');
    const refused = await client.api('DELETE', `${BASE}/${dns}`, { as: owner, workspaceId });
    expect(refused.status).toBe(403);
  });
});

describe('tool API keys', () => {
  it('shows a new key once, stores only its SHA-256, and revokes the previous key at once', async () => {
    const { body: tool } = await register('rotating');
    const first = await client.api('POST', `${BASE}/${tool.id}/api-key/rotate`, { as: owner, workspaceId });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      apiKey: expect.stringMatching(/^ptk_[A-Za-z0-9_-]{43}$/),
      prefix: first.body.apiKey.slice(0, 12),
      createdAt: expect.any(String),
    });
    const firstKey: string = first.body.apiKey;

    const rows = await server.db.prisma.toolKey.findMany({ where: { toolId: tool.id } });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ keyHash: sha256(firstKey), prefix: firstKey.slice(0, 12), workspaceId, revokedAt: null, createdById: owner.id });
    expect(JSON.stringify(rows)).not.toContain(firstKey);

    expect((await submit(firstKey, { format: 'json', findings: [] })).status).toBe(200);

    const second = await client.api('POST', `${BASE}/${tool.id}/api-key/rotate`, { as: owner, workspaceId });
    const secondKey: string = second.body.apiKey;
    expect(secondKey).not.toBe(firstKey);
    const old = await submit(firstKey, { format: 'json', findings: [] });
    expect(old.status).toBe(401);
    expect(old.body.code).toBe('UNAUTHENTICATED');
    expect((await submit(secondKey, { format: 'json', findings: [] })).status).toBe(200);

    const after = await server.db.prisma.toolKey.findMany({ where: { toolId: tool.id }, orderBy: { createdAt: 'asc' } });
    expect(after.map((row) => row.revokedAt === null)).toEqual([false, true]);
    expect(after.map((row) => row.keyHash)).toEqual([sha256(firstKey), sha256(secondKey)]);
  });

  it('answers key metadata, never the secret', async () => {
    const { tool, apiKey } = await customToolWithKey('described');
    await submit(apiKey, { format: 'json', findings: [] });
    const response = await client.api('GET', `${BASE}/${tool.id}/api-key`, { as: owner, workspaceId });
    expect(response.status).toBe(200);
    expect(response.body.key).toEqual({
      id: expect.any(String),
      toolId: tool.id,
      workspaceId,
      prefix: apiKey.slice(0, 12),
      createdAt: expect.any(String),
      lastUsedAt: expect.any(String),
      createdById: owner.id,
    });
    expect(JSON.stringify(response.body)).not.toContain(apiKey);
    const { body: bare } = await register('keyless');
    expect((await client.api('GET', `${BASE}/${bare.id}/api-key`, { as: owner, workspaceId })).body).toEqual({ key: null });
    expect((await client.api('GET', `${BASE}/${tool.id}/api-key`, { as: member, workspaceId })).status).toBe(403);
  });

  it("rotates a custom tool's key for its workspace's owners only", async () => {
    const { body: tool } = await register('guarded');
    const rotate = (as: TestUser | undefined, wid?: string) => client.api('POST', `${BASE}/${tool.id}/api-key/rotate`, { as, workspaceId: wid });
    expect((await rotate(undefined, workspaceId)).status).toBe(401);
    expect((await rotate(member, workspaceId)).status).toBe(403);
    expect((await rotate(outsider, workspaceId)).status).toBe(404);
    expect((await rotate(outsider, otherWorkspaceId)).status).toBe(404);
    expect((await rotate(admin, workspaceId)).status).toBe(404);
    const noHeader = await rotate(owner);
    expect(noHeader.status).toBe(400);
    expect(noHeader.body.code).toBe('WORKSPACE_REQUIRED');
    expect(await server.db.prisma.toolKey.count({ where: { toolId: tool.id } })).toBe(0);
    expect((await rotate(owner, workspaceId)).status).toBe(201);
  });

  it("rotates a built-in tool's key for one workspace, for that workspace's owners only", async () => {
    const checks = await builtinId('checks');
    const rotate = (as: TestUser | undefined, wid?: string) => client.api('POST', `${BASE}/${checks}/api-key/rotate`, { as, workspaceId: wid });
    expect((await rotate(undefined, workspaceId)).status).toBe(401);
    expect((await rotate(member, workspaceId)).status).toBe(403);
    // The administrator of the instance is no owner here: a workspace's key is its owners' business.
    expect((await rotate(admin, workspaceId)).status).toBe(404);
    const noHeader = await rotate(owner);
    expect(noHeader.status).toBe(400);
    expect(noHeader.body.code).toBe('WORKSPACE_REQUIRED');
    const rotated = await rotate(owner, workspaceId);
    expect(rotated.status).toBe(201);
    expect(rotated.body.apiKey).toMatch(/^ptk_/);
    const row = await server.db.prisma.toolKey.findUniqueOrThrow({ where: { keyHash: sha256(rotated.body.apiKey) } });
    expect(row).toMatchObject({ toolId: checks, workspaceId, revokedAt: null });
    expect((await client.api('GET', `${BASE}/${checks}/api-key`, { as: owner, workspaceId })).body.key).toMatchObject({ toolId: checks, workspaceId });
    // The other workspace has no key for it: this one is not shown there.
    expect((await client.api('GET', `${BASE}/${checks}/api-key`, { as: outsider, workspaceId: otherWorkspaceId })).body).toEqual({ key: null });
    expect((await client.api('POST', `${BASE}/00000000-0000-4000-8000-000000000000/api-key/rotate`, { as: owner, workspaceId })).status).toBe(404);
  });

  it("rotating a built-in tool's key in one workspace leaves another workspace's key for it working", async () => {
    const dns = await builtinId('dns');
    const first = await client.api('POST', `${BASE}/${dns}/api-key/rotate`, { as: owner, workspaceId });
    expect(first.status).toBe(201);
    const second = await client.api('POST', `${BASE}/${dns}/api-key/rotate`, { as: outsider, workspaceId: otherWorkspaceId });
    expect(second.status).toBe(201);
    const empty = { format: 'json', findings: [] };
    expect((await submit(first.body.apiKey, empty)).status).toBe(200);
    expect((await submit(second.body.apiKey, empty)).status).toBe(200);
    expect(await server.db.prisma.toolKey.count({ where: { toolId: dns, revokedAt: null } })).toBe(2);
  });

  it('keeps exactly one valid key after concurrent rotations', async () => {
    const { body: tool } = await register('raced');
    const results = await Promise.all(Array.from({ length: 4 }, () => client.api('POST', `${BASE}/${tool.id}/api-key/rotate`, { as: owner, workspaceId })));
    expect(results.map((result) => result.status)).toEqual([201, 201, 201, 201]);
    expect(await server.db.prisma.toolKey.count({ where: { toolId: tool.id, revokedAt: null } })).toBe(1);
  });
});

describe('rotating a key takes no body', () => {
  /** Exactly these headers and chunks: fetch would add Content-Length or Content-Type of its own. */
  function rawPost(path: string, headers: Record<string, string>, chunks: string[]): Promise<{ status: number; body: any }> {
    return new Promise((resolve, reject) => {
      const req = request(`${server.url}${path}`, { method: 'POST', headers }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }));
      });
      req.on('error', reject);
      for (const chunk of chunks) req.write(chunk);
      req.end();
    });
  }

  it.each([
    ['no body and no Content-Type', {}, []],
    ['no body with Content-Type application/json', { 'content-type': 'application/json' }, []],
    ['an empty chunked body', { 'transfer-encoding': 'chunked' }, ['']],
    ['an empty chunked body with Content-Type application/json', { 'transfer-encoding': 'chunked', 'content-type': 'application/json' }, ['']],
    ['an empty JSON object', { 'content-type': 'application/json' }, ['{}']],
  ] as [string, Record<string, string>, string[]][])(
    'POST /api/tools/{id}/api-key/rotate with %s answers 201 and a new key',
    async (_label, headers, chunks) => {
      const { body: tool } = await register(`bodyless-${Math.random().toString(36).slice(2, 8)}`);
      const rotated = await rawPost(
        `${BASE}/${tool.id}/api-key/rotate`,
        { authorization: `Bearer ${owner.token}`, 'x-workspace-id': workspaceId, ...headers },
        chunks,
      );
      expect(rotated.status, JSON.stringify(rotated.body)).toBe(201);
      expect(rotated.body.apiKey).toMatch(/^ptk_/);
    },
  );
});

describe('results submission', () => {
  it('ingests nuclei -jsonl lines into assets and findings, reporting bad lines by number', async () => {
    const { tool, apiKey } = await customToolWithKey('nuclei');
    const data = [
      nucleiLine(),
      '{"template-id": broken',
      nucleiLine({
        'template-id': 'tech-detect',
        'matcher-name': 'nginx',
        info: { name: 'Wappalyzer Technology Detection', severity: 'info' },
        'matched-at': 'https://app.example.com/',
      }),
      JSON.stringify({ info: { name: 'no id' }, 'matched-at': 'https://app.example.com/' }),
      '',
      nucleiLine({ 'template-id': 'weak-cipher', 'matcher-status': false }),
      nucleiLine({
        'template-id': 'ssh-auth-methods',
        type: 'network',
        host: 'app.example.com:22',
        'matched-at': 'app.example.com:22',
        info: { name: 'SSH Auth Methods', severity: 'INFO' },
      }),
      nucleiLine({ info: { name: 'bad severity', severity: 'catastrophic' } }),
    ].join('\n');
    const response = await submit(apiKey, { format: 'nuclei-jsonl', data });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      toolId: tool.id,
      workspaceId,
      accepted: 3,
      rejected: 3,
      skipped: 1,
      errors: [
        { line: 2, message: 'not valid JSON' },
        { line: 4, message: 'template-id is required' },
        { line: 8, message: expect.stringContaining('info.severity') },
      ],
      assets: { created: 4, seen: 0 },
      findings: { opened: 3, seen: 0, reopened: 0 },
    });

    const assets = await server.db.prisma.asset.findMany({ where: { workspaceId }, orderBy: { key: 'asc' } });
    expect(assets.map((asset) => asset.key)).toEqual([
      'host:app.example.com',
      'service:10.0.0.7:22/tcp',
      'service:10.0.0.7:443/tcp',
      'web:https://app.example.com:443',
    ]);
    const byKey = new Map(assets.map((asset) => [asset.key, asset]));
    expect(byKey.get('web:https://app.example.com:443')).toMatchObject({
      kind: 'web',
      value: 'https://app.example.com/',
      parentId: byKey.get('service:10.0.0.7:443/tcp')!.id,
    });
    expect(byKey.get('service:10.0.0.7:443/tcp')!.parentId).toBe(byKey.get('host:app.example.com')!.id);

    const findings = await server.db.prisma.finding.findMany({ where: { workspaceId, source: 'nuclei' }, orderBy: { checkId: 'asc' } });
    expect(findings.map((finding) => [finding.checkId, finding.matcher, finding.severity])).toEqual([
      ['git-config', '/.git/config', 'medium'],
      ['ssh-auth-methods', 'ssh-auth-methods', 'info'],
      ['tech-detect', 'nginx', 'info'],
    ]);
    const git = findings[0]!;
    expect(git).toMatchObject({
      name: 'Git Configuration - Detect',
      description: 'Git configuration was detected.',
      remediation: 'Deny access to /.git.',
      status: 'open',
      occurrences: 1,
      assetId: byKey.get('web:https://app.example.com:443')!.id,
      fingerprint: findingFingerprint(['git-config', 'web:https://app.example.com:443', '/.git/config']),
      classification: { cweId: ['cwe-200'], cvssScore: 5.3, cvssMetrics: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:L/I:N/A:N' },
    });
    expect(git.evidence).toMatchObject({
      url: 'https://app.example.com/.git/config',
      request: expect.stringContaining('GET /.git/config'),
      response: expect.stringContaining('[core]'),
    });
    expect(findings[1]!.assetId).toBe(byKey.get('service:10.0.0.7:22/tcp')!.id);

    // The same results again: nothing new, one more occurrence of each.
    const again = await submit(apiKey, { format: 'nuclei-jsonl', data: nucleiLine() });
    expect(again.body).toMatchObject({ accepted: 1, rejected: 0, assets: { created: 0, seen: 3 }, findings: { opened: 0, seen: 1, reopened: 0 } });
    const rows = await server.db.prisma.finding.findMany({ where: { workspaceId, checkId: 'git-config' } });
    expect(rows).toHaveLength(1);
    expect(rows[0]!.occurrences).toBe(2);
  });

  it('ingests JSON findings and assets, reporting bad items by position and field', async () => {
    const { apiKey } = await customToolWithKey('json-tool');
    const response = await submit(apiKey, {
      format: 'json',
      findings: [
        {
          checkId: 'open-redis',
          name: 'Redis without authentication',
          severity: 'high',
          host: '10.0.0.9',
          port: 6379,
          description: 'Anyone can run commands.',
          evidence: { response: '+PONG' },
        },
        { checkId: 'admin-panel', name: 'Admin panel exposed', severity: 'low', url: 'http://shop.example.com:8080/admin', matcher: '/admin' },
        { checkId: 'bad', name: 'Bad severity', severity: 'urgent', url: 'https://shop.example.com/' },
        { checkId: 'nowhere', name: 'No location', severity: 'low' },
        'not an object',
      ],
      assets: [{ host: 'mail.example.com' }, { url: 'ftp://mail.example.com/' }],
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      accepted: 3,
      rejected: 4,
      findings: { opened: 2, seen: 0, reopened: 0 },
      errors: [
        { line: 3, path: 'findings[2].severity', message: expect.any(String) },
        { line: 4, path: 'findings[3].url', message: expect.stringContaining('url') },
        { line: 5, path: 'findings[4]', message: expect.any(String) },
        { line: 2, path: 'assets[1].url', message: 'must be an http(s) URL' },
      ],
    });
    const keys = (await server.db.prisma.asset.findMany({ where: { workspaceId, key: { contains: 'example.com' } }, select: { key: true } })).map(
      (row) => row.key,
    );
    expect(keys).toEqual(expect.arrayContaining(['host:mail.example.com', 'host:shop.example.com', 'web:http://shop.example.com:8080']));
    // A host a tool reported is in the inventory because of that tool.
    const mail = await client.api('GET', '/api/v1/api/assets?kind=host&source=import&search=mail.example.com', { as: owner, workspaceId });
    expect(mail.body.data.map((asset: any) => [asset.value, asset.discovery.map((d: any) => [d.source, d.from])])).toEqual([
      ['mail.example.com', [['import', 'json-tool']]],
    ]);
    expect(await server.db.prisma.asset.count({ where: { workspaceId, key: 'service:10.0.0.9:6379/tcp' } })).toBe(1);
    const redis = await server.db.prisma.finding.findFirstOrThrow({ where: { workspaceId, checkId: 'open-redis' } });
    expect(redis).toMatchObject({
      source: 'json-tool',
      severity: 'high',
      matcher: 'open-redis',
      description: 'Anyone can run commands.',
      evidence: { response: '+PONG' },
    });
  });

  it('dedupes with a finding the native scan ingestion recorded: one row, two occurrences', async () => {
    const webKey = 'web:https://portal.example.com:443';
    const native: FindingObservation = {
      kind: 'finding',
      checkId: 'http-exposed-git',
      name: 'Exposed .git directory',
      severity: 'high',
      description: 'The /.git directory is served over HTTP.',
      remediation: 'Block /.git.',
      asset: { type: 'web', key: webKey, host: 'portal.example.com', port: 443 },
      matcher: '/.git/HEAD',
      fingerprintParts: ['http-exposed-git', webKey, '/.git/HEAD'],
      evidence: { url: 'https://portal.example.com/.git/HEAD' },
      source: 'builtin',
    };
    const recorded = await server.db.prisma.$transaction((tx) =>
      recordFindings(tx, { workspaceId, targetId: null, scanId: null, now: new Date() }, [native], new Map()),
    );
    expect(recorded.opened).toHaveLength(1);

    const { apiKey } = await customToolWithKey('external-git-check');
    const response = await submit(apiKey, {
      format: 'json',
      findings: [
        { checkId: 'http-exposed-git', name: 'Exposed .git directory', severity: 'high', url: 'https://portal.example.com/.git/HEAD', matcher: '/.git/HEAD' },
      ],
    });
    expect(response.body.findings).toEqual({ opened: 0, seen: 1, reopened: 0 });
    const rows = await server.db.prisma.finding.findMany({ where: { workspaceId, checkId: 'http-exposed-git' } });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: recorded.opened[0], occurrences: 2, source: 'builtin' });
  });

  it('keeps what a scan stored about an asset and only moves its lastSeenAt', async () => {
    const seenBefore = new Date(Date.UTC(2026, 0, 1));
    const stored = await server.db.prisma.asset.create({
      data: {
        workspaceId,
        kind: 'web',
        key: 'web:https://keep.example.com:443',
        value: 'https://keep.example.com/',
        data: { title: 'Welcome', status: 200 },
        firstSeenAt: seenBefore,
        lastSeenAt: seenBefore,
      },
    });
    const { apiKey } = await customToolWithKey('asset-reporter');
    await submit(apiKey, { format: 'json', assets: [{ url: 'https://keep.example.com/login' }] });
    const after = await server.db.prisma.asset.findUniqueOrThrow({ where: { id: stored.id } });
    expect(after.data).toEqual({ title: 'Welcome', status: 200 });
    expect(after.value).toBe('https://keep.example.com/');
    expect(after.lastSeenAt.getTime()).toBeGreaterThan(seenBefore.getTime());
  });

  it('publishes workspace events for new findings', async () => {
    const { apiKey } = await customToolWithKey('eventful');
    const iterator = server.app.deps.pubsub.subscribe('workspace:event', workspaceId)[Symbol.asyncIterator]();
    const next = iterator.next();
    await submit(apiKey, { format: 'json', findings: [{ checkId: 'event-check', name: 'Event', severity: 'info', host: 'events.example.com' }] });
    const types: string[] = [];
    let event = await next;
    types.push(event.value.type);
    while (!types.includes('finding.opened')) {
      event = await iterator.next();
      types.push(event.value.type);
    }
    await iterator.return?.();
    expect(types).toContain('asset.discovered');
    expect(types).toContain('finding.opened');
  });

  it('accepts the key as Authorization: Bearer ptk_…', async () => {
    const { apiKey } = await customToolWithKey('bearer-tool');
    const response = await submit(undefined, { format: 'json', findings: [] }, { authorization: `Bearer ${apiKey}` });
    expect(response.status).toBe(200);
  });

  it("a built-in tool's key writes only into the workspace it was made in, whatever X-Workspace-Id says", async () => {
    const nucleiId = await builtinId('nuclei-templates');
    const { body } = await client.api('POST', `${BASE}/${nucleiId}/api-key/rotate`, { as: owner, workspaceId });
    const apiKey: string = body.apiKey;
    const line = nucleiLine({ 'template-id': 'builtin-key-check', 'matched-at': 'https://builtin.example.com/x' });
    const findingsIn = (wid: string) => server.db.prisma.finding.count({ where: { workspaceId: wid, checkId: 'builtin-key-check' } });
    const assetsIn = (wid: string) => server.db.prisma.asset.count({ where: { workspaceId: wid, value: 'builtin.example.com' } });

    const elsewhere = await submit(apiKey, { format: 'nuclei-jsonl', data: line }, {}, otherWorkspaceId);
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.body.code).toBe('FORBIDDEN');
    expect((await submit(apiKey, { format: 'nuclei-jsonl', data: line }, {}, '00000000-0000-4000-8000-000000000000')).status).toBe(403);
    expect(await findingsIn(otherWorkspaceId)).toBe(0);
    expect(await assetsIn(otherWorkspaceId)).toBe(0);

    // Without the header the key's own workspace is meant; naming it is accepted too.
    const ok = await submit(apiKey, { format: 'nuclei-jsonl', data: line });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ workspaceId, findings: { opened: 1 } });
    expect((await submit(apiKey, { format: 'nuclei-jsonl', data: line }, {}, workspaceId)).status).toBe(200);
    expect(
      await server.db.prisma.finding.findFirst({ where: { workspaceId, checkId: 'builtin-key-check' }, select: { source: true, occurrences: true } }),
    ).toEqual({
      source: 'nuclei-templates',
      occurrences: 2,
    });
    expect(await findingsIn(otherWorkspaceId)).toBe(0);

    // Switched off in its workspace, the key is refused there.
    await client.api('PATCH', `${BASE}/${nucleiId}`, { as: owner, workspaceId, body: { enabled: false } });
    const disabled = await submit(apiKey, { format: 'nuclei-jsonl', data: line });
    expect(disabled.status).toBe(403);
    expect(disabled.body.message).toContain('disabled');
    await client.api('PATCH', `${BASE}/${nucleiId}`, { as: owner, workspaceId, body: { enabled: true } });
  });

  it('refuses a missing, unknown or disabled key, a foreign workspace, an unknown format and too many lines', async () => {
    const { tool, apiKey } = await customToolWithKey('strict-tool');
    const empty = { format: 'json', findings: [] };

    const missing = await submit(undefined, empty);
    expect(missing.status).toBe(401);
    expect(missing.body.message).toContain('x-tool-api-key');
    expect((await submit('ptk_not-a-real-key', empty)).status).toBe(401);
    expect((await submit('prm_personal-token-is-not-a-tool-key', empty)).status).toBe(401);
    // A personal session is not a tool key either.
    expect((await client.api('POST', `${BASE}/results`, { as: owner, workspaceId, body: empty })).status).toBe(401);

    expect((await submit(apiKey, empty, {}, otherWorkspaceId)).status).toBe(403);

    const unknownFormat = await submit(apiKey, { format: 'csv', data: 'a,b' });
    expect(unknownFormat.status).toBe(400);
    expect(unknownFormat.body.details[0].field).toBe('format');
    expect((await submit(apiKey, { format: 'nuclei-jsonl' })).status).toBe(400);
    expect((await submit(apiKey, { format: 'json', data: 'x' })).status).toBe(400);

    const tooMany = await submit(apiKey, { format: 'nuclei-jsonl', data: Array.from({ length: 10_001 }, () => '{}').join('\n') });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.message).toContain('10000');

    const huge = await submit(apiKey, { format: 'nuclei-jsonl', data: 'x'.repeat(1_100_000) });
    expect(huge.status).toBe(413);

    await client.api('PATCH', `${BASE}/${tool.id}`, { as: owner, workspaceId, body: { enabled: false } });
    const disabled = await submit(apiKey, empty);
    expect(disabled.status).toBe(403);
    expect(disabled.body.message).toContain('disabled');
  });
});

describe('GraphQL', () => {
  const gid = (id: string) => encodeGlobalID('Workspace', id);

  it('lists Workspace.tools with the per-workspace enabled flag', async () => {
    const tls = await builtinId('tls');
    await client.api('PATCH', `${BASE}/${tls}`, { as: owner, workspaceId, body: { enabled: false } });
    const result = await client.gql(`query($id: ID!) { workspace(id: $id) { tools { id name category builtin enabled version } } }`, {
      as: member,
      variables: { id: gid(workspaceId) },
    });
    expect(result.errors).toBeUndefined();
    const tools = result.data.workspace.tools as { name: string; builtin: boolean; enabled: boolean; category: string }[];
    expect(tools.filter((tool) => tool.builtin).map((tool) => tool.name)).toEqual(BUILTINS);
    expect(tools.find((tool) => tool.name === 'tls')).toMatchObject({ enabled: false, category: 'tls' });
    expect(tools.some((tool) => !tool.builtin && tool.name === 'acme-scanner')).toBe(true);
    const other = await client.gql(`query($id: ID!) { workspace(id: $id) { tools { name enabled } } }`, {
      as: outsider,
      variables: { id: gid(otherWorkspaceId) },
    });
    expect(other.data.workspace.tools.find((tool: { name: string }) => tool.name === 'tls').enabled).toBe(true);
    expect(other.data.workspace.tools.map((tool: { name: string }) => tool.name)).not.toContain('acme-scanner');
    await client.api('PATCH', `${BASE}/${tls}`, { as: owner, workspaceId, body: { enabled: true } });
  });

  it('registers, toggles, rotates the key of and deletes a tool, with typed errors', async () => {
    const REGISTER = `mutation($ws: ID!, $input: RegisterToolInput!) { registerTool(workspaceId: $ws, input: $input) {
      __typename ... on MutationRegisterToolSuccess { data { id name category enabled builtin } } ... on Error { code message } } }`;
    const registered = await client.gql(REGISTER, { as: owner, variables: { ws: gid(workspaceId), input: { name: 'gql-tool', category: 'fingerprint' } } });
    expect(registered.data.registerTool).toMatchObject({
      __typename: 'MutationRegisterToolSuccess',
      data: { name: 'gql-tool', category: 'fingerprint', enabled: true, builtin: false },
    });
    const id = registered.data.registerTool.data.id;
    const denied = await client.gql(REGISTER, { as: member, variables: { ws: gid(workspaceId), input: { name: 'nope', category: 'other' } } });
    expect(denied.data.registerTool).toMatchObject({ __typename: 'ForbiddenError', code: 'FORBIDDEN' });
    const invalid = await client.gql(REGISTER, { as: owner, variables: { ws: gid(workspaceId), input: { name: 'bad name!', category: 'other' } } });
    expect(invalid.data.registerTool.__typename).toBe('ValidationError');

    const toggled = await client.gql(
      `mutation($ws: ID!, $id: ID!) { setToolEnabled(workspaceId: $ws, id: $id, enabled: false) { __typename ... on MutationSetToolEnabledSuccess { data { enabled } } } }`,
      { as: owner, variables: { ws: gid(workspaceId), id } },
    );
    expect(toggled.data.setToolEnabled).toEqual({ __typename: 'MutationSetToolEnabledSuccess', data: { enabled: false } });

    const ROTATE = `mutation($id: ID!, $ws: ID) { rotateToolApiKey(id: $id, workspaceId: $ws) {
      __typename ... on MutationRotateToolApiKeySuccess { data { apiKey prefix createdAt } } ... on Error { code } } }`;
    const rotated = await client.gql(ROTATE, { as: owner, variables: { id, ws: gid(workspaceId) } });
    expect(rotated.data.rotateToolApiKey.data.apiKey).toMatch(/^ptk_/);
    expect(rotated.data.rotateToolApiKey.data.prefix).toBe(rotated.data.rotateToolApiKey.data.apiKey.slice(0, 12));
    expect((await client.gql(ROTATE, { as: member, variables: { id, ws: gid(workspaceId) } })).data.rotateToolApiKey).toEqual({
      __typename: 'ForbiddenError',
      code: 'FORBIDDEN',
    });
    const builtin = await builtinId('http');
    expect((await client.gql(ROTATE, { as: owner, variables: { id: builtin } })).data.rotateToolApiKey).toMatchObject({
      __typename: 'AppError',
      code: 'WORKSPACE_REQUIRED',
    });
    expect((await client.gql(ROTATE, { as: admin, variables: { id: builtin, ws: gid(workspaceId) } })).data.rotateToolApiKey).toEqual({
      __typename: 'NotFoundError',
      code: 'NOT_FOUND',
    });
    expect((await client.gql(ROTATE, { as: owner, variables: { id: builtin, ws: gid(workspaceId) } })).data.rotateToolApiKey.data.apiKey).toMatch(/^ptk_/);
    expect((await client.gql(ROTATE, { variables: { id: builtin, ws: gid(workspaceId) } })).data.rotateToolApiKey).toEqual({
      __typename: 'UnauthenticatedError',
      code: 'UNAUTHENTICATED',
    });

    const DELETE = `mutation($ws: ID!, $id: ID!) { deleteTool(workspaceId: $ws, id: $id) { __typename ... on MutationDeleteToolSuccess { data } ... on Error { code } } }`;
    expect((await client.gql(DELETE, { as: outsider, variables: { ws: gid(workspaceId), id } })).data.deleteTool).toEqual({
      __typename: 'NotFoundError',
      code: 'NOT_FOUND',
    });
    expect((await client.gql(DELETE, { as: owner, variables: { ws: gid(workspaceId), id } })).data.deleteTool).toEqual({
      __typename: 'MutationDeleteToolSuccess',
      data: id,
    });
    expect(await server.db.prisma.tool.count({ where: { id } })).toBe(0);
  });
});
