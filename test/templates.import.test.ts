import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { encodeGlobalID } from '@pothos/plugin-relay';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { tarGz, zip, type ArchiveItem } from './support/archives.js';
import { archiveEntries, type ArchiveFormat } from '../src/modules/templates/archive.js';
import { Readable } from 'node:stream';

/**
 * Importing a template library in one request (POST /api/v1/api/templates/import and GraphQL importTemplates):
 * archives built here hold valid, warning and invalid templates, files that are not templates, nested
 * folders, traversal attempts, links and an oversized file; what is answered, stored and audited; re-imports.
 */

let server: TestApp;
let client: ReturnType<typeof clientFor>;
let owner: TestUser;
let member: TestUser;
let outsider: TestUser;
let workspaceId: string;

const BASE = '/api/v1/api/templates';
const IMPORT = `${BASE}/import`;
const MAX_BYTES = 512 * 1024;

beforeAll(async () => {
  server = await startTestApp({ TEMPLATE_IMPORT_MAX_BYTES: String(MAX_BYTES) });
  client = clientFor(server);
  owner = await client.signUp('Owner');
  member = await client.signUp('Member');
  outsider = await client.signUp('Outsider');
  workspaceId = (await client.createWorkspace(owner)).id;
  await client.addMember(owner, workspaceId, member);
});
afterAll(() => server?.stop());

function templateYaml(id: string, options: { name?: string; extra?: string } = {}): string {
  return `id: ${id}
info:
  name: ${options.name ?? 'Acme admin panel'}
  author: tests
  severity: medium
  tags: panel,acme
http:
  - method: GET
    path:
      - "{{BaseURL}}/acme-admin"
    matchers-condition: and
    matchers:
      - type: status
        status: [200]
      - type: word
        words: ["Acme Admin Console"]
${options.extra ?? ''}`;
}

/** A second request with fuzzing payloads (aggression levels): the engine does not run those (a warning), and runs the rest. */
const PAYLOADS = `  - method: GET
    path: ["{{BaseURL}}/login?user={{user}}"]
    payloads:
      user:
        low: [admin, root]
    matchers:
      - type: word
        words: ["welcome"]
`;

async function importArchive(body: Buffer | ReadableStream<Uint8Array>, options: { type?: string; as?: TestUser | null; workspace?: string | null } = {}) {
  const headers: Record<string, string> = { 'content-type': options.type ?? 'application/gzip' };
  const as = options.as === undefined ? owner : options.as;
  if (as) headers.authorization = `Bearer ${as.token}`;
  const workspace = options.workspace === undefined ? workspaceId : options.workspace;
  if (workspace) headers['x-workspace-id'] = workspace;
  const response = await fetch(`${server.url}${IMPORT}`, { method: 'POST', headers, body, duplex: 'half' } as RequestInit);
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

async function ownTemplates(wid = workspaceId) {
  const list = await client.api('GET', `${BASE}?builtin=false&limit=100`, { as: owner, workspaceId: wid });
  expect(list.status).toBe(200);
  return list.body.data as { id: string; fileName: string; nucleiId: string; name: string; enabled: boolean; checksum: string; warnings: unknown[] }[];
}

/** The library every format test imports: two valid, one with warnings, one invalid, and what must not count or load. */
function library(prefix: string): ArchiveItem[] {
  return [
    { path: `${prefix}/`, type: 'directory' },
    { path: `${prefix}/README.md`, content: '# My templates\n' },
    { path: `${prefix}/http/panels/acme-panel.yaml`, content: templateYaml(`${prefix}-acme-panel`) },
    { path: `${prefix}/http/cves/2024/CVE-2024-0001.yml`, content: templateYaml(`${prefix}-cve-2024-0001`, { name: 'Acme RCE' }) },
    { path: `${prefix}/http/misc/with-payloads.yaml`, content: templateYaml(`${prefix}-with-payloads`, { extra: PAYLOADS }) },
    { path: `${prefix}/http/misc/broken.yaml`, content: templateYaml(`${prefix}-broken`).replace('type: word', 'type: wordz') },
    // Not templates: no top-level id + info, not YAML, hidden.
    { path: `${prefix}/helpers/payloads/users.yaml`, content: 'users:\n  - admin\n  - root\n' },
    { path: `${prefix}/helpers/wordlists/paths.txt`, content: 'admin\nlogin\n' },
    { path: `${prefix}/.github/workflows/ci.yaml`, content: 'id: ci\ninfo: {}\n' },
    { path: `${prefix}/helpers/wordlists/big-list.yaml`, content: `words:\n${'  - word\n'.repeat(40_000)}` },
    // Refused: traversal, absolute, a link, an oversized template.
    { path: '../escape.yaml', content: templateYaml(`${prefix}-escape`) },
    { path: '/etc/absolute.yaml', content: templateYaml(`${prefix}-absolute`) },
    { path: `${prefix}/http/linked.yaml`, type: 'symlink', linkpath: '/etc/passwd' },
    { path: `${prefix}/http/huge.yaml`, content: `${templateYaml(`${prefix}-huge`)}#${'x'.repeat(300 * 1024)}\n` },
  ];
}

function expectLibraryAnswer(body: any, prefix: string) {
  expect(body.totals).toEqual({ files: 8, loaded: 2, warnings: 1, rejected: 5, created: 3, updated: 0, unchanged: 0 });
  const byPath = new Map(body.files.map((file: any) => [file.path, file]));
  expect([...byPath.keys()]).toEqual([
    `${prefix}/http/panels/acme-panel.yaml`,
    `${prefix}/http/cves/2024/CVE-2024-0001.yml`,
    `${prefix}/http/misc/with-payloads.yaml`,
    `${prefix}/http/misc/broken.yaml`,
    '../escape.yaml',
    '/etc/absolute.yaml',
    `${prefix}/http/linked.yaml`,
    `${prefix}/http/huge.yaml`,
  ]);
  expect(byPath.get(`${prefix}/http/panels/acme-panel.yaml`)).toEqual({
    path: `${prefix}/http/panels/acme-panel.yaml`,
    status: 'loaded',
    templateId: expect.any(String),
    nucleiId: `${prefix}-acme-panel`,
    change: 'created',
  });
  expect(byPath.get(`${prefix}/http/misc/with-payloads.yaml`)).toMatchObject({
    status: 'warnings',
    warnings: [expect.stringMatching(/^http\[1\]\.payloads\.user \(line \d+, column \d+\): .*payloads/)],
  });
  expect(byPath.get(`${prefix}/http/misc/broken.yaml`)).toEqual({
    path: `${prefix}/http/misc/broken.yaml`,
    status: 'rejected',
    errors: [expect.stringMatching(/^http\[0\]\.matchers\[1\]\.type \(line \d+, column \d+\): /)],
  });
  expect(byPath.get('../escape.yaml')).toMatchObject({ status: 'rejected', errors: [expect.stringContaining('(..)')] });
  expect(byPath.get('/etc/absolute.yaml')).toMatchObject({ status: 'rejected', errors: [expect.stringContaining('absolute path')] });
  expect(byPath.get(`${prefix}/http/linked.yaml`)).toMatchObject({ status: 'rejected', errors: [expect.stringContaining('symbolic link')] });
  expect(byPath.get(`${prefix}/http/huge.yaml`)).toMatchObject({ status: 'rejected', errors: [expect.stringContaining('at most 262144 bytes')] });
}

describe('POST /api/v1/api/templates/import', () => {
  it('imports the templates of a .tar.gz, reports every other template and refused entry, and stores only the good ones', async () => {
    const wid = (await client.createWorkspace(owner)).id;
    const answer = await importArchive(tarGz(library('tgz')), { workspace: wid });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expectLibraryAnswer(answer.body, 'tgz');

    const stored = await ownTemplates(wid);
    expect(stored.map((row) => [row.fileName, row.nucleiId, row.enabled]).sort()).toEqual([
      ['CVE-2024-0001.yml', 'tgz-cve-2024-0001', true],
      ['acme-panel.yaml', 'tgz-acme-panel', true],
      ['with-payloads.yaml', 'tgz-with-payloads', true],
    ]);
    const panel = answer.body.files[0];
    const read = await client.api('GET', `${BASE}/${panel.templateId}`, { as: owner, workspaceId: wid });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({
      nucleiId: 'tgz-acme-panel',
      uploaded: true,
      path: `nuclei-templates/${panel.templateId}.yaml`,
      content: templateYaml('tgz-acme-panel'),
    });
    const withWarnings = stored.find((row) => row.nucleiId === 'tgz-with-payloads')!;
    expect(withWarnings.warnings).toEqual([expect.objectContaining({ path: 'http[1].payloads.user' })]);
  });

  it('reports the variables a template needs from the user as userVariables, not as warnings (it loads cleanly)', async () => {
    const wid = (await client.createWorkspace(owner)).id;
    const login = `id: acme-login
info:
  name: Acme authenticated export
  author: tests
  severity: high
http:
  - raw:
      - |
        POST /login HTTP/1.1
        Host: {{Hostname}}
        Content-Type: application/x-www-form-urlencoded

        user={{username}}&pass={{password}}
    matchers:
      - type: word
        words: ["exported"]
`;
    // {{probe_later}} is the value block \`probe\` makes: a warning of its own, not a user variable
    const extracted = templateYaml('acme-extracted', {
      extra: `  - id: probe
    method: GET
    path: ["{{BaseURL}}/token"]
    extractors:
      - type: regex
        name: later
        internal: true
        regex: ["t=([a-z]+)"]
`,
    }).replace('"{{BaseURL}}/acme-admin"', '"{{BaseURL}}/acme-admin?t={{probe_later}}"');
    const answer = await importArchive(
      tarGz([
        { path: 'lib/http/acme-login.yaml', content: login },
        { path: 'lib/http/acme-extracted.yaml', content: extracted },
      ]),
      { workspace: wid },
    );
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const [loginFile, extractedFile] = answer.body.files;
    expect(loginFile).toEqual({
      path: 'lib/http/acme-login.yaml',
      status: 'loaded',
      templateId: expect.any(String),
      nucleiId: 'acme-login',
      change: 'created',
      userVariables: ['password', 'username'],
    });
    expect(extractedFile).toMatchObject({ status: 'warnings', warnings: [expect.stringContaining('unknown variable {{probe_later}} in http requests')] });
    expect(extractedFile.userVariables).toBeUndefined();
    const read = await client.api('GET', `${BASE}/${loginFile.templateId}`, { as: owner, workspaceId: wid });
    expect(read.body).toMatchObject({ warnings: [], userVariables: ['password', 'username'] });
    // unchanged on a re-import: the stored needs are answered again
    const again = await importArchive(tarGz([{ path: 'lib/http/acme-login.yaml', content: login }]), { workspace: wid });
    expect(again.body.files[0]).toMatchObject({ status: 'loaded', change: 'unchanged', userVariables: ['password', 'username'] });
  });

  it('imports a .zip the same way', async () => {
    const wid = (await client.createWorkspace(owner)).id;
    const answer = await importArchive(zip(library('zip')), { type: 'application/zip', workspace: wid });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expectLibraryAnswer(answer.body, 'zip');
    expect((await ownTemplates(wid)).map((row) => row.nucleiId).sort()).toEqual(['zip-acme-panel', 'zip-cve-2024-0001', 'zip-with-payloads']);
    // Stored entries (no compression) read the same.
    const stored = await importArchive(zip([{ path: 'one.yaml', content: templateYaml('zip-stored') }], { stored: true }), {
      type: 'application/zip',
      workspace: wid,
    });
    expect(stored.body.totals).toMatchObject({ files: 1, loaded: 1, created: 1 });
  });

  it('re-imports: changed templates are updated in place (name and enabled state kept), unchanged ones left alone, new ones added', async () => {
    const wid = (await client.createWorkspace(owner)).id;
    const first = await importArchive(
      tarGz([
        { path: 'a/keep.yaml', content: templateYaml('re-keep') },
        { path: 'a/change.yaml', content: templateYaml('re-change', { name: 'Version 1' }) },
      ]),
      { workspace: wid },
    );
    expect(first.body.totals).toMatchObject({ files: 2, loaded: 2, created: 2 });
    const before = await ownTemplates(wid);
    const changed = before.find((row) => row.nucleiId === 're-change')!;
    const kept = before.find((row) => row.nucleiId === 're-keep')!;
    // The owner switches one off and renames it: a new version of the library must not undo either.
    const patched = await client.api('PATCH', `${BASE}/${changed.id}`, { as: owner, workspaceId: wid, body: { enabled: false, fileName: 'renamed.yaml' } });
    expect(patched.status).toBe(200);

    const second = await importArchive(
      tarGz([
        { path: 'b/keep.yaml', content: templateYaml('re-keep') },
        { path: 'b/change.yaml', content: templateYaml('re-change', { name: 'Version 2' }) },
        { path: 'b/new.yaml', content: templateYaml('re-new') },
      ]),
      { workspace: wid },
    );
    expect(second.status).toBe(200);
    expect(second.body.totals).toEqual({ files: 3, loaded: 3, warnings: 0, rejected: 0, created: 1, updated: 1, unchanged: 1 });
    expect(second.body.files.map((file: any) => [file.path, file.change, file.templateId])).toEqual([
      ['b/keep.yaml', 'unchanged', kept.id],
      ['b/change.yaml', 'updated', changed.id],
      ['b/new.yaml', 'created', expect.any(String)],
    ]);
    const after = await ownTemplates(wid);
    expect(after).toHaveLength(3);
    const updated = after.find((row) => row.id === changed.id)!;
    expect(updated).toMatchObject({ fileName: 'renamed.yaml', enabled: false, name: 'Version 2' });
    expect(updated.checksum).not.toBe(changed.checksum);
    const content = await client.api('GET', `${BASE}/${changed.id}`, { as: owner, workspaceId: wid });
    expect(content.body.content).toContain('name: Version 2');
    const untouched = after.find((row) => row.id === kept.id)!;
    expect(untouched).toEqual(kept);
  });

  it('names templates after their file, then their folder, then a counter; a second template with an id already seen is refused', async () => {
    const wid = (await client.createWorkspace(owner)).id;
    const answer = await importArchive(
      tarGz([
        { path: 'x/cloudflare.yaml', content: templateYaml('dup-one') },
        { path: 'y/cloudflare.yaml', content: templateYaml('dup-two') },
        { path: 'z/y/cloudflare.yaml', content: templateYaml('dup-three') },
        { path: 'z/again.yaml', content: templateYaml('dup-one', { name: 'Other' }) },
        { path: 'z/shadow.yaml', content: templateYaml('exposed-env-file') },
        { path: 'z/reserved.yaml', content: templateYaml('http-exposed-git') },
      ]),
      { workspace: wid },
    );
    expect(answer.status).toBe(200);
    expect(answer.body.files.map((file: any) => [file.path, file.status])).toEqual([
      ['x/cloudflare.yaml', 'loaded'],
      ['y/cloudflare.yaml', 'loaded'],
      ['z/y/cloudflare.yaml', 'loaded'],
      ['z/again.yaml', 'rejected'],
      ['z/shadow.yaml', 'warnings'],
      ['z/reserved.yaml', 'rejected'],
    ]);
    expect(answer.body.files[3].errors).toEqual([expect.stringContaining('x/cloudflare.yaml')]);
    expect(answer.body.files[4].warnings).toEqual([expect.stringContaining('exposed-env-file.yaml')]);
    expect(answer.body.files[5].errors).toEqual([expect.stringContaining('built-in check')]);
    const names = (await ownTemplates(wid)).map((row) => [row.nucleiId, row.fileName]).sort();
    expect(names).toEqual([
      ['dup-one', 'cloudflare.yaml'],
      ['dup-three', 'cloudflare-2.yaml'],
      ['dup-two', 'y-cloudflare.yaml'],
      ['exposed-env-file', 'shadow.yaml'],
    ]);
  });

  it('refuses hard links and devices as entries, and a broken archive as a whole', async () => {
    const wid = (await client.createWorkspace(owner)).id;
    const links = await importArchive(
      tarGz([
        { path: 'ok.yaml', content: templateYaml('link-ok') },
        { path: 'hard.yaml', type: 'hardlink', linkpath: 'ok.yaml' },
        { path: 'dev.yaml', type: 'device' },
      ]),
      { workspace: wid },
    );
    expect(links.body.files.map((file: any) => [file.path, file.status])).toEqual([
      ['ok.yaml', 'loaded'],
      ['hard.yaml', 'rejected'],
      ['dev.yaml', 'rejected'],
    ]);
    const notGzip = await importArchive(Buffer.from('this is not an archive'), { workspace: wid });
    expect(notGzip.status).toBe(400);
    expect(notGzip.body).toMatchObject({ statusCode: 400, code: 'BAD_REQUEST', message: expect.stringContaining('not a readable') });
    const notZip = await importArchive(Buffer.from('this is not an archive'), { type: 'application/zip', workspace: wid });
    expect(notZip.status).toBe(400);
    const truncated = tarGz([{ path: 'ok2.yaml', content: templateYaml('link-ok2') }]);
    const cut = await importArchive(truncated.subarray(0, truncated.length - 12), { workspace: wid });
    expect(cut.status).toBe(400);
    // Damaged in the middle of a template being read: the read fails with the archive, it does not wait forever.
    const damaged = tarGz([{ path: 'big.yaml', content: `${templateYaml('link-big')}#${randomBytes(60 * 1024).toString('hex')}\n` }]);
    damaged.fill(0xff, damaged.length >> 1, (damaged.length >> 1) + 256);
    const broken = await importArchive(damaged, { workspace: wid });
    expect(broken.status).toBe(400);
    expect(broken.body.message).toContain('not a readable');
    // Nothing of a refused import is stored.
    expect((await ownTemplates(wid)).map((row) => row.nucleiId)).toEqual(['link-ok']);
  });

  it('answers 415 for another media type, 413 past TEMPLATE_IMPORT_MAX_BYTES (declared or streamed), and 401/400/404/403 by the REST edge order', async () => {
    const archive = tarGz([{ path: 'edge.yaml', content: templateYaml('edge') }]);
    const json = await importArchive(archive, { type: 'application/json' });
    expect(json.status).toBe(415);
    expect(json.body).toMatchObject({ statusCode: 415, error: 'Unsupported Media Type', code: 'UNSUPPORTED_MEDIA_TYPE' });
    expect((await importArchive(archive, { type: 'application/octet-stream' })).status).toBe(415);

    // A valid .tar.gz past the cap (an incompressible file that is not a template): only the size can refuse it.
    const oversized = tarGz([{ path: 'noise.bin', content: randomBytes(MAX_BYTES + 1024) }]);
    expect(oversized.length).toBeGreaterThan(MAX_BYTES);
    const declared = await importArchive(oversized);
    expect(declared.status).toBe(413);
    expect(declared.body).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', message: expect.stringContaining('TEMPLATE_IMPORT_MAX_BYTES') });
    // No Content-Length (chunked): counted as it streams.
    const chunks = [oversized.subarray(0, MAX_BYTES / 2), oversized.subarray(MAX_BYTES / 2)];
    const streamed = await importArchive(
      new ReadableStream({
        pull(controller) {
          const next = chunks.shift();
          if (next) controller.enqueue(next);
          else controller.close();
        },
      }),
    );
    expect(streamed.status).toBe(413);

    expect((await importArchive(archive, { as: null })).status).toBe(401);
    expect((await importArchive(archive, { as: null, type: 'text/plain' })).status).toBe(401);
    const noWorkspace = await importArchive(archive, { workspace: null });
    expect(noWorkspace.status).toBe(400);
    expect(noWorkspace.body.code).toBe('WORKSPACE_REQUIRED');
    expect((await importArchive(archive, { workspace: 'not-a-uuid' })).status).toBe(404);
    expect((await importArchive(archive, { as: outsider })).status).toBe(404);
    const byMember = await importArchive(archive, { as: member });
    expect(byMember.status).toBe(403);
    expect(byMember.body.code).toBe('FORBIDDEN');
    expect((await ownTemplates()).map((row) => row.nucleiId)).not.toContain('edge');
  });

  it('is audited like every REST write: who, which templates, and refusals with their code', async () => {
    const since = new Date();
    const wid = (await client.createWorkspace(owner)).id;
    const answer = await importArchive(tarGz([{ path: 'audited.yaml', content: templateYaml('audited') }]), { workspace: wid });
    expect(answer.status).toBe(200);
    const refused = await importArchive(tarGz([{ path: 'audited.yaml', content: templateYaml('audited') }]), { as: member });
    expect(refused.status).toBe(403);
    const entries = await server.app.deps.prisma.auditLog.findMany({
      where: { operation: 'POST /api/templates/import', at: { gte: since }, workspaceId: { in: [wid, workspaceId] }, actorId: { in: [owner.id, member.id] } },
      orderBy: { at: 'asc' },
    });
    expect(entries.map((entry) => [entry.surface, entry.workspaceId, entry.actorId, entry.outcome, entry.entityIds])).toEqual([
      ['rest', wid, owner.id, 'success', [answer.body.files[0].templateId]],
      ['rest', workspaceId, member.id, 'FORBIDDEN', []],
    ]);
  });
});

describe('archive bounds', () => {
  async function drain(bytes: Buffer, format: ArchiveFormat, limits: { maxBytes?: number; maxEntries?: number; maxExpandedBytes?: number }) {
    const paths: string[] = [];
    const bounds = { maxBytes: 1 << 20, maxEntries: 100, maxExpandedBytes: 1 << 20, ...limits };
    for await (const entry of archiveEntries(Readable.from([bytes]), format, bounds)) {
      paths.push(entry.path);
      if (entry.kind === 'file') await entry.read(16);
    }
    return paths;
  }
  const five: ArchiveItem[] = ['a', 'b', 'c', 'd', 'e'].map((name) => ({ path: `${name}.yaml`, content: name }));

  it('refuses the whole archive past the entry bound, in both formats', async () => {
    expect(await drain(tarGz(five), 'tar.gz', { maxEntries: 5 })).toEqual(['a.yaml', 'b.yaml', 'c.yaml', 'd.yaml', 'e.yaml']);
    await expect(drain(tarGz(five), 'tar.gz', { maxEntries: 4 })).rejects.toMatchObject({
      code: 'BAD_REQUEST',
      message: expect.stringContaining('more than 4 entries'),
    });
    expect(await drain(zip(five), 'zip', { maxEntries: 5 })).toHaveLength(5);
    await expect(drain(zip(five), 'zip', { maxEntries: 4 })).rejects.toMatchObject({ code: 'BAD_REQUEST', message: expect.stringContaining('5 entries') });
  });

  it('stops decompressing a .tar.gz past the expansion bound (a small archive of zeros)', async () => {
    const bomb = tarGz([{ path: 'zeros.bin', content: Buffer.alloc(4 << 20) }]);
    expect(bomb.length).toBeLessThan(64 * 1024);
    await expect(drain(bomb, 'tar.gz', { maxExpandedBytes: 1 << 20 })).rejects.toMatchObject({
      code: 'BAD_REQUEST',
      message: expect.stringContaining('expands to more than'),
    });
    expect(await drain(bomb, 'tar.gz', { maxExpandedBytes: 8 << 20 })).toEqual(['zeros.bin']);
  });

  it('counts the body against the cap as it streams, in both formats', async () => {
    const archive = tarGz([{ path: 'noise.bin', content: randomBytes(64 * 1024) }]);
    await expect(drain(archive, 'tar.gz', { maxBytes: 32 * 1024 })).rejects.toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    await expect(drain(zip([{ path: 'noise.bin', content: randomBytes(64 * 1024) }]), 'zip', { maxBytes: 32 * 1024 })).rejects.toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
    });
  });
});

describe('concurrent imports', () => {
  it('of one workspace are serialised: the second sees what the first stored', async () => {
    const wid = (await client.createWorkspace(owner)).id;
    const archive = tarGz(Array.from({ length: 20 }, (_, i) => ({ path: `lib/t${i}.yaml`, content: templateYaml(`concurrent-${i}`) })));
    const [one, two] = await Promise.all([importArchive(archive, { workspace: wid }), importArchive(archive, { workspace: wid })]);
    expect([one.status, two.status]).toEqual([200, 200]);
    const changes = [one.body.totals, two.body.totals].map((totals: any) => [totals.created, totals.unchanged]).sort();
    expect(changes).toEqual([
      [0, 20],
      [20, 0],
    ]);
    expect(await ownTemplates(wid)).toHaveLength(20);
  });
});

describe('GraphQL importTemplates', () => {
  const MUTATION = `
    mutation($w: ID!, $format: TemplateArchiveFormat!, $archive: String!) {
      importTemplates(workspaceId: $w, format: $format, archiveBase64: $archive) {
        __typename
        ... on MutationImportTemplatesSuccess {
          data { totals { files loaded warnings rejected created updated unchanged } files { path status templateId nucleiId change warnings errors } }
        }
        ... on Error { message code }
      }
    }`;

  it('imports through the same service, with the same rules', async () => {
    const wid = (await client.createWorkspace(owner)).id;
    const w = encodeGlobalID('Workspace', wid);
    const archive = zip([
      { path: 'gql/one.yaml', content: templateYaml('gql-one') },
      { path: 'gql/../../two.yaml', content: templateYaml('gql-two') },
    ]).toString('base64');
    const result = await client.gql(MUTATION, { as: owner, variables: { w, format: 'zip', archive } });
    expect(result.data.importTemplates.__typename).toBe('MutationImportTemplatesSuccess');
    expect(result.data.importTemplates.data.totals).toEqual({ files: 2, loaded: 1, warnings: 0, rejected: 1, created: 1, updated: 0, unchanged: 0 });
    expect(result.data.importTemplates.data.files[0]).toMatchObject({
      path: 'gql/one.yaml',
      status: 'loaded',
      nucleiId: 'gql-one',
      change: 'created',
      warnings: [],
      errors: [],
    });
    expect((await ownTemplates(wid)).map((row) => row.nucleiId)).toEqual(['gql-one']);

    const tgz = tarGz([{ path: 'one.yaml', content: templateYaml('gql-one') }]).toString('base64');
    const again = await client.gql(MUTATION, { as: owner, variables: { w, format: 'tar_gz', archive: tgz } });
    expect(again.data.importTemplates.data.totals).toMatchObject({ files: 1, unchanged: 1 });

    const byMember = await client.gql(MUTATION, { as: member, variables: { w: encodeGlobalID('Workspace', workspaceId), format: 'zip', archive } });
    expect(byMember.data.importTemplates.__typename).toBe('ForbiddenError');
    const notBase64 = await client.gql(MUTATION, { as: owner, variables: { w, format: 'zip', archive: '!!!' } });
    expect(notBase64.data.importTemplates).toMatchObject({ __typename: 'ValidationError', code: 'VALIDATION_FAILED' });
    const tooLarge = await client.gql(MUTATION, { as: owner, variables: { w, format: 'zip', archive: 'A'.repeat(MAX_BYTES * 2) } });
    expect(tooLarge.data.importTemplates).toMatchObject({ __typename: 'AppError', code: 'PAYLOAD_TOO_LARGE' });
  });
});
