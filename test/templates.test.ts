import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { encodeGlobalID } from '@pothos/plugin-relay';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { ensureBuiltinTemplates, loadPack } from '../src/modules/templates/pack.js';

/**
 * The template registry through both front doors: create, upload (validated, stored in the blob store),
 * list, read, rename, enable/disable, delete; who may do what; and content that is wrong, huge or hostile.
 */

let server: TestApp;
let client: ReturnType<typeof clientFor>;
let owner: TestUser;
let member: TestUser;
let outsider: TestUser;
let workspaceId: string;
let otherWorkspaceId: string;
let packSize: number;

const BASE = '/api/v1/api/templates';
const gid = (id: string) => encodeGlobalID('Workspace', id);
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

beforeAll(async () => {
  server = await startTestApp();
  client = clientFor(server);
  owner = await client.signUp('Owner');
  member = await client.signUp('Member');
  outsider = await client.signUp('Outsider');
  workspaceId = (await client.createWorkspace(owner)).id;
  await client.addMember(owner, workspaceId, member);
  otherWorkspaceId = (await client.createWorkspace(outsider)).id;
  packSize = (await loadPack()).length;
});
afterAll(() => server?.stop());

/** A small valid template, in nuclei's syntax. */
function templateYaml(id: string, extra = ''): string {
  return `id: ${id}
info:
  name: Acme admin panel
  author: tests
  severity: medium
  description: The Acme admin panel is reachable.
  remediation: Put it behind the VPN.
  tags: panel,acme
  classification:
    cwe-id: CWE-284
    cve-id: CVE-2024-0001
    cvss-score: 6.5
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
${extra}`;
}

async function create(fileName: string, as: TestUser = owner, wid = workspaceId) {
  return client.api('POST', BASE, { as, workspaceId: wid, body: { fileName } });
}

async function upload(templateId: string, fileContent: string, as: TestUser = owner, wid = workspaceId) {
  return client.api('POST', `${BASE}/upload`, { as, workspaceId: wid, body: { templateId, fileContent } });
}

async function createAndUpload(fileName: string, content: string, wid = workspaceId, as: TestUser = owner) {
  const created = await create(fileName, as, wid);
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const uploaded = await upload(created.body.id, content, as, wid);
  expect(uploaded.status, JSON.stringify(uploaded.body)).toBe(200);
  return uploaded.body as { path: string; warnings: unknown[]; template: { id: string; [key: string]: unknown } };
}

async function builtinByFile(fileName: string, wid = workspaceId, as: TestUser = owner) {
  const list = await client.api('GET', `${BASE}?builtin=true&limit=100`, { as, workspaceId: wid });
  return list.body.data.find((t: { fileName: string }) => t.fileName === fileName);
}

describe('the built-in pack', () => {
  it('is listed for every workspace, enabled, with its metadata and content', async () => {
    const list = await client.api('GET', `${BASE}?builtin=true&limit=100`, { as: member, workspaceId });
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ total: packSize, page: 1, hasNextPage: false });
    expect(list.body.data.every((t: any) => t.builtin && t.enabled && t.uploaded && t.workspaceId === null && t.path === null && t.warnings.length === 0)).toBe(
      true,
    );
    const env = list.body.data.find((t: any) => t.fileName === 'exposed-env-file.yaml');
    expect(env).toMatchObject({ nucleiId: 'exposed-env-file', name: 'Exposed .env file', severity: 'high', tags: ['exposure', 'config', 'secrets'] });
    const got = await client.api('GET', `${BASE}/${env.id}`, { as: member, workspaceId });
    expect(got.status).toBe(200);
    expect(got.body.content).toContain('id: exposed-env-file');
    expect(got.body.checksum).toBe(sha256(got.body.content));
  });

  it('is seeded idempotently, also by processes starting at once', async () => {
    const deps = { prisma: server.db.prisma, log: server.app.deps.log };
    await Promise.all([ensureBuiltinTemplates(deps), ensureBuiltinTemplates(deps), ensureBuiltinTemplates(deps)]);
    expect(await server.db.prisma.template.count({ where: { builtin: true, workspaceId: null } })).toBe(packSize);
  });

  it('can be switched off per workspace by its owners, and stays on elsewhere', async () => {
    const env = await builtinByFile('exposed-env-file.yaml');
    const off = await client.api('PATCH', `${BASE}/${env.id}`, { as: owner, workspaceId, body: { enabled: false } });
    expect(off.status).toBe(200);
    expect(off.body).toMatchObject({ id: env.id, enabled: false, builtin: true });
    expect((await builtinByFile('exposed-env-file.yaml')).enabled).toBe(false);
    expect((await builtinByFile('exposed-env-file.yaml', otherWorkspaceId, outsider)).enabled).toBe(true);
    const on = await client.api('PATCH', `${BASE}/${env.id}`, { as: owner, workspaceId, body: { enabled: true } });
    expect(on.body.enabled).toBe(true);
  });

  it('cannot be renamed, overwritten or deleted', async () => {
    const env = await builtinByFile('exposed-env-file.yaml');
    const rename = await client.api('PATCH', `${BASE}/${env.id}`, { as: owner, workspaceId, body: { fileName: 'mine.yaml' } });
    expect(rename.status).toBe(403);
    const overwrite = await upload(env.id, templateYaml('exposed-env-file'));
    expect(overwrite.status).toBe(403);
    const removed = await client.api('DELETE', `${BASE}/${env.id}`, { as: owner, workspaceId });
    expect(removed.status).toBe(403);
    expect((await client.api('GET', `${BASE}/${env.id}`, { as: owner, workspaceId })).body.content).toContain('id: exposed-env-file');
  });
});

describe("a workspace's own templates", () => {
  it('are created, uploaded to the blob store, read back, renamed and deleted', async () => {
    const created = await create('acme-admin.yaml');
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      workspaceId,
      fileName: 'acme-admin.yaml',
      builtin: false,
      enabled: true,
      uploaded: false,
      path: null,
      nucleiId: null,
      createdById: owner.id,
    });
    const id = created.body.id;
    const before = await client.api('GET', `${BASE}/${id}`, { as: member, workspaceId });
    expect(before.body.content).toBeNull();

    const content = templateYaml('acme-admin-panel');
    const uploaded = await upload(id, content);
    expect(uploaded.status).toBe(200);
    expect(uploaded.body).toMatchObject({ path: `nuclei-templates/${id}.yaml`, warnings: [] });
    expect(uploaded.body.template).toMatchObject({
      id,
      nucleiId: 'acme-admin-panel',
      name: 'Acme admin panel',
      severity: 'medium',
      tags: ['panel', 'acme'],
      uploaded: true,
      path: `nuclei-templates/${id}.yaml`,
      checksum: sha256(content),
      sizeBytes: Buffer.byteLength(content),
    });
    const stored = await server.app.deps.storage.get(`nuclei-templates/${id}.yaml`);
    expect(stored?.toString('utf8')).toBe(content);
    const read = await client.api('GET', `${BASE}/${id}`, { as: member, workspaceId });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ content, nucleiId: 'acme-admin-panel' });

    // A new upload replaces the content under the same key.
    const changed = templateYaml('acme-admin-panel').replace('severity: medium', 'severity: high');
    const again = await upload(id, changed);
    expect(again.body.template).toMatchObject({ severity: 'high', checksum: sha256(changed) });
    expect((await server.app.deps.storage.get(`nuclei-templates/${id}.yaml`))?.toString('utf8')).toBe(changed);

    const renamed = await client.api('PATCH', `${BASE}/${id}`, { as: owner, workspaceId, body: { fileName: 'acme-admin-panel.yml' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ fileName: 'acme-admin-panel.yml', nucleiId: 'acme-admin-panel' });
    const disabled = await client.api('PATCH', `${BASE}/${id}`, { as: owner, workspaceId, body: { enabled: false } });
    expect(disabled.body.enabled).toBe(false);

    const own = await client.api('GET', `${BASE}?builtin=false`, { as: member, workspaceId });
    expect(own.body.data.map((t: any) => [t.fileName, t.enabled])).toEqual([['acme-admin-panel.yml', false]]);
    const searched = await client.api('GET', `${BASE}?search=ACME-ADMIN`, { as: member, workspaceId });
    expect(searched.body.data.map((t: any) => t.id)).toEqual([id]);
    const all = await client.api('GET', `${BASE}?limit=5&page=2&sortBy=fileName&sortOrder=ASC`, { as: member, workspaceId });
    expect(all.body).toMatchObject({ total: packSize + 1, page: 2, limit: 5 });

    const removed = await client.api('DELETE', `${BASE}/${id}`, { as: owner, workspaceId });
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual({ id });
    expect(await server.app.deps.storage.exists(`nuclei-templates/${id}.yaml`)).toBe(false);
    expect((await client.api('GET', `${BASE}/${id}`, { as: owner, workspaceId })).status).toBe(404);
  });

  it('keep the warnings about features the engine does not run', async () => {
    const extra = `  - method: GET
    path: ["{{BaseURL}}/login?user={{user}}"]
    payloads:
      user:
        low: [admin, root]
    matchers:
      - type: word
        words: ["welcome"]
`;
    const result = await createAndUpload('with-payloads.yaml', templateYaml('acme-with-payloads', extra));
    expect(result.warnings).toEqual([
      expect.objectContaining({ path: 'http[1].payloads.user', line: 26, column: 7, message: expect.stringMatching(/aggression levels/) }),
    ]);
    const read = await client.api('GET', `${BASE}/${result.template.id}`, { as: member, workspaceId });
    expect(read.body.warnings).toEqual(result.warnings);
  });

  it('must have unique ids; one may take the place of a built-in template, with a warning', async () => {
    await createAndUpload('first.yaml', templateYaml('acme-unique'));
    const second = await create('second.yaml');
    const clash = await upload(second.body.id, templateYaml('acme-unique'));
    expect(clash.status).toBe(409);
    expect(clash.body.message).toContain('first.yaml');

    const shadow = await upload(second.body.id, templateYaml('exposed-env-file'));
    expect(shadow.status).toBe(200);
    expect(shadow.body.warnings).toEqual([expect.objectContaining({ path: 'id', message: expect.stringContaining('exposed-env-file.yaml') })]);

    const reserved = await upload(second.body.id, templateYaml('http-exposed-git'));
    expect(reserved.status).toBe(409);
    expect(reserved.body.message).toContain('built-in check');
  });

  it('have unique, plain file names', async () => {
    expect((await create('dup.yaml')).status).toBe(201);
    const dup = await create('dup.yaml');
    expect(dup.status).toBe(409);
    // The same name in another workspace is another template.
    expect((await create('dup.yaml', outsider, otherWorkspaceId)).status).toBe(201);
    for (const fileName of ['../etc/passwd.yaml', 'dir/x.yaml', 'x.txt', '', '.hidden.yaml', `${'a'.repeat(130)}.yaml`]) {
      const bad = await create(fileName);
      expect(bad.status, fileName).toBe(400);
      expect(bad.body.details[0].field).toBe('fileName');
    }
    const other = await create('other.yaml');
    const rename = await client.api('PATCH', `${BASE}/${other.body.id}`, { as: owner, workspaceId, body: { fileName: 'dup.yaml' } });
    expect(rename.status).toBe(409);
  });
});

describe('uploads that are refused', () => {
  let id: string;
  beforeAll(async () => {
    id = (await create('refused.yaml')).body.id;
  });

  async function refused(content: string) {
    const response = await upload(id, content);
    expect((await client.api('GET', `${BASE}/${id}`, { as: owner, workspaceId })).body.uploaded).toBe(false);
    return response;
  }

  it('broken YAML: 400 naming the line', async () => {
    const response = await refused('id: broken\ninfo:\n  name: x\n  severity: low\nhttp:\n  - path: ["{{BaseURL}}"\n    matchers: [}\n');
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('VALIDATION_FAILED');
    expect(response.body.message).toMatch(/^Invalid template: fileContent \(line \d+, column \d+\): YAML syntax error/);
    expect(response.body.details[0].field).toMatch(/^fileContent \(line (6|7), column \d+\)$/);
  });

  it('missing id, name and severity: 400 with every problem, field and line', async () => {
    const response = await refused('info:\n  author: me\nhttp:\n  - path: ["{{BaseURL}}"]\n    matchers:\n      - type: status\n        status: [200]\n');
    expect(response.status).toBe(400);
    const messages = response.body.details.map((d: { message: string }) => d.message);
    expect(messages).toEqual(
      expect.arrayContaining(["missing required field 'id'", "missing required field 'info.name'", "missing required field 'info.severity'"]),
    );
    expect(response.body.details.find((d: { message: string }) => d.message === "missing required field 'info.name'").field).toBe('info (line 2, column 3)');
  });

  it('a matcher of an unknown type: 400 pointing at the field and its line', async () => {
    const content = templateYaml('acme-bad-matcher').replace('type: word', 'type: wordz');
    const response = await refused(content);
    expect(response.status).toBe(400);
    expect(response.body.details[0]).toEqual({ field: 'http[0].matchers[1].type (line 21, column 15)', message: expect.stringContaining('wordz') });
    expect(response.body.message).toContain('http[0].matchers[1].type (line 21, column 15)');
  });

  it('an extractor of the wrong shape and an invalid severity', async () => {
    const content = templateYaml(
      'acme-bad-extractor',
      '    extractors:\n      - type: regex\n        regex: "not-a-list-is-fine"\n        group: -1\n',
    ).replace('severity: medium', 'severity: urgent');
    const response = await refused(content);
    expect(response.status).toBe(400);
    const fields = response.body.details.map((d: { field: string }) => d.field.replace(/ \(.*$/, ''));
    expect(fields).toEqual(expect.arrayContaining(['info.severity', 'http[0].extractors[0].group']));
  });

  it('a protocol the engine does not run: 400', async () => {
    const response = await refused('id: headless-only\ninfo:\n  name: x\n  author: me\n  severity: info\nheadless:\n  - steps:\n      - action: navigate\n');
    expect(response.status).toBe(400);
    expect(response.body.details[0]).toMatchObject({ field: 'headless (line 6, column 1)', message: 'protocol headless is not supported' });
  });

  it('more than 256 KiB: 413', async () => {
    const huge = `${templateYaml('acme-huge')}# ${'x'.repeat(256 * 1024)}\n`;
    const response = await refused(huge);
    expect(response.status).toBe(413);
    expect(response.body.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('an alias bomb: 400, quickly', async () => {
    const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 9; i++) {
      const prev = String.fromCharCode(96 + i);
      const name = String.fromCharCode(97 + i);
      levels.push(`${name}: &${name} [${Array(9).fill(`*${prev}`).join(',')}]`);
    }
    const started = Date.now();
    const response = await refused(`id: bomb\ninfo:\n  name: x\n  severity: info\n${levels.join('\n')}\n${templateYaml('x').split('\n').slice(13).join('\n')}`);
    expect(response.status).toBe(400);
    expect(response.body.message).toMatch(/alias/i);
    expect(Date.now() - started).toBeLessThan(5_000);
    // Fewer aliases that still expand a lot are stopped by the parser's expansion bound.
    const small =
      'id: bomb2\ninfo: {name: x, severity: info}\na: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\nhttp:\n  - path: ["{{BaseURL}}"]\n    matchers: [{type: status, status: [200]}]\n';
    const response2 = await refused(small);
    expect(response2.status).toBe(400);
    expect(response2.body.message).toMatch(/alias|resource exhaustion/i);
  });

  it('binary garbage: 400 naming the position', async () => {
    const garbage = `id: bin\n${Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00]).toString('latin1')}`;
    const response = await refused(garbage);
    expect(response.status).toBe(400);
    expect(response.body.message).toMatch(/not text/);
    expect(response.body.details[0].field).toBe('fileContent (line 2, column 1)');
    const replacement = await refused('id: x\ninfo:\n  name: \ufffd\ufffd\n');
    expect(replacement.status).toBe(400);
    expect(replacement.body.details[0].field).toBe('fileContent (line 3, column 9)');
  });

  it('deep nesting: 400', async () => {
    const response = await refused(`id: deep\ninfo: {name: x, severity: info}\nz: ${'['.repeat(5000)}${']'.repeat(5000)}\n`);
    expect(response.status).toBe(400);
    expect(response.body.details[0]).toEqual({ field: 'fileContent (line 3, column 36)', message: 'collections are nested deeper than 32 levels' });
  });

  it('empty, or not a string: 400', async () => {
    expect((await refused('   \n')).status).toBe(400);
    const notString = await client.api('POST', `${BASE}/upload`, { as: owner, workspaceId, body: { templateId: id, fileContent: 42 } });
    expect(notString.status).toBe(400);
    expect(notString.body.details[0].field).toBe('fileContent');
    const badId = await client.api('POST', `${BASE}/upload`, { as: owner, workspaceId, body: { templateId: 'nope', fileContent: 'x' } });
    expect(badId.status).toBe(400);
    expect(badId.body.details[0].field).toBe('templateId');
  });
});

describe('who may do what', () => {
  let ownId: string;
  let builtinId: string;
  let theirsId: string;

  beforeAll(async () => {
    ownId = (await createAndUpload('perm.yaml', templateYaml('acme-perm'))).template.id;
    builtinId = (await builtinByFile('robots-txt-disclosure.yaml')).id;
    theirsId = (await createAndUpload('theirs.yaml', templateYaml('acme-theirs'), otherWorkspaceId, outsider)).template.id;
  });

  it('members read; only owners create, upload, change and delete', async () => {
    expect((await client.api('GET', BASE, { as: member, workspaceId })).status).toBe(200);
    expect((await client.api('GET', `${BASE}/${ownId}`, { as: member, workspaceId })).status).toBe(200);
    expect((await client.api('GET', `${BASE}/${builtinId}`, { as: member, workspaceId })).status).toBe(200);
    const writes = [
      await create('by-member.yaml', member),
      await upload(ownId, templateYaml('acme-perm'), member),
      await client.api('PATCH', `${BASE}/${ownId}`, { as: member, workspaceId, body: { fileName: 'x.yaml' } }),
      await client.api('PATCH', `${BASE}/${builtinId}`, { as: member, workspaceId, body: { enabled: false } }),
      await client.api('DELETE', `${BASE}/${ownId}`, { as: member, workspaceId }),
    ];
    expect(writes.map((r) => r.status)).toEqual([403, 403, 403, 403, 403]);
    expect(writes.every((r) => r.body.code === 'FORBIDDEN')).toBe(true);
  });

  it("another workspace's templates are 404, in its own workspace or in ours", async () => {
    for (const wid of [otherWorkspaceId, workspaceId]) {
      const calls = [
        await client.api('GET', `${BASE}/${ownId}`, { as: outsider, workspaceId: wid }),
        await upload(ownId, templateYaml('acme-perm'), outsider, wid),
        await client.api('PATCH', `${BASE}/${ownId}`, { as: outsider, workspaceId: wid, body: { enabled: false } }),
        await client.api('DELETE', `${BASE}/${ownId}`, { as: outsider, workspaceId: wid }),
      ];
      expect(
        calls.map((r) => r.status),
        wid,
      ).toEqual([404, 404, 404, 404]);
    }
    // And ours see theirs as absent too.
    expect((await client.api('GET', `${BASE}/${theirsId}`, { as: owner, workspaceId })).status).toBe(404);
    expect((await upload(theirsId, templateYaml('acme-x'))).status).toBe(404);
    expect((await client.api('GET', BASE, { as: outsider, workspaceId })).status).toBe(404);
    expect((await create('x.yaml', outsider, workspaceId)).status).toBe(404);
    const theirList = await client.api('GET', `${BASE}?builtin=false`, { as: outsider, workspaceId: otherWorkspaceId });
    expect(theirList.body.data.map((t: any) => t.id)).not.toContain(ownId);
    expect((await client.api('GET', `${BASE}/${ownId}`, { as: owner, workspaceId })).body.content).toContain('acme-perm');
  });

  it('anonymous callers get 401 everywhere; a missing workspace header is 400', async () => {
    const calls = [
      await client.api('GET', BASE, { workspaceId }),
      await client.api('POST', BASE, { workspaceId, body: { fileName: 'x.yaml' } }),
      await client.api('POST', `${BASE}/upload`, { workspaceId, body: { templateId: ownId, fileContent: 'x' } }),
      await client.api('GET', `${BASE}/${ownId}`, { workspaceId }),
      await client.api('PATCH', `${BASE}/${ownId}`, { workspaceId, body: { enabled: false } }),
      await client.api('DELETE', `${BASE}/${ownId}`, { workspaceId }),
    ];
    expect(calls.map((r) => r.status)).toEqual([401, 401, 401, 401, 401, 401]);
    const noWorkspace = await client.api('GET', BASE, { as: owner });
    expect(noWorkspace.status).toBe(400);
    expect(noWorkspace.body.code).toBe('WORKSPACE_REQUIRED');
  });
});

describe('GraphQL', () => {
  const FIELDS = 'id fileName nucleiId name severity tags builtin enabled uploaded path checksum warnings { path message line column }';

  it('lists a workspace’s templates and reads one with its content', async () => {
    const listed = await client.gql(`query($id: ID!) { workspace(id: $id) { templates { ${FIELDS} } } }`, { as: member, variables: { id: gid(workspaceId) } });
    expect(listed.errors).toBeUndefined();
    const templates = listed.data.workspace.templates;
    expect(templates.filter((t: any) => t.builtin)).toHaveLength(packSize);
    expect(templates.find((t: any) => t.nucleiId === 'acme-perm')).toMatchObject({ builtin: false, uploaded: true, severity: 'medium' });
    const builtin = templates.find((t: any) => t.nucleiId === 'open-redirect');
    const one = await client.gql(`query($w: ID!, $id: ID!) { template(workspaceId: $w, id: $id) { ${FIELDS} content } }`, {
      as: member,
      variables: { w: gid(workspaceId), id: builtin.id },
    });
    expect(one.data.template).toMatchObject({ id: builtin.id, nucleiId: 'open-redirect', path: null });
    expect(one.data.template.content).toContain('id: open-redirect');
    const other = await client.gql(`query($id: ID!) { workspace(id: $id) { templates { id } } }`, { as: outsider, variables: { id: gid(workspaceId) } });
    expect(other.data.workspace).toBeNull();
    const theirs = await client.gql(`query($w: ID!, $id: ID!) { template(workspaceId: $w, id: $id) { id } }`, {
      as: outsider,
      variables: { w: gid(workspaceId), id: builtin.id },
    });
    expect(theirs.data.template).toBeNull();
  });

  it('creates, uploads, renames, switches and deletes, with the same rules as REST', async () => {
    const MUTATE = `
      mutation($w: ID!, $name: String!) { createTemplate(workspaceId: $w, fileName: $name) { __typename ... on MutationCreateTemplateSuccess { data { id fileName } } ... on Error { message code } } }`;
    const created = await client.gql(MUTATE, { as: owner, variables: { w: gid(workspaceId), name: 'gql.yaml' } });
    expect(created.data.createTemplate.__typename).toBe('MutationCreateTemplateSuccess');
    const id = created.data.createTemplate.data.id;

    const UPLOAD = `
      mutation($w: ID!, $id: ID!, $content: String!) {
        uploadTemplate(workspaceId: $w, templateId: $id, fileContent: $content) {
          __typename
          ... on MutationUploadTemplateSuccess { data { path warnings { path } template { nucleiId uploaded } } }
          ... on ValidationError { message details { field message } }
          ... on Error { message code }
        }
      }`;
    const bad = await client.gql(UPLOAD, {
      as: owner,
      variables: { w: gid(workspaceId), id, content: templateYaml('acme-gql').replace('type: word', 'type: wordz') },
    });
    expect(bad.data.uploadTemplate).toMatchObject({ __typename: 'ValidationError', details: [{ field: 'http[0].matchers[1].type (line 21, column 15)' }] });
    const huge = await client.gql(UPLOAD, { as: owner, variables: { w: gid(workspaceId), id, content: 'x'.repeat(300 * 1024) } });
    expect(huge.data.uploadTemplate).toMatchObject({ __typename: 'AppError', code: 'PAYLOAD_TOO_LARGE' });
    const good = await client.gql(UPLOAD, { as: owner, variables: { w: gid(workspaceId), id, content: templateYaml('acme-gql') } });
    expect(good.data.uploadTemplate).toEqual({
      __typename: 'MutationUploadTemplateSuccess',
      data: { path: `nuclei-templates/${id}.yaml`, warnings: [], template: { nucleiId: 'acme-gql', uploaded: true } },
    });
    const byMember = await client.gql(UPLOAD, { as: member, variables: { w: gid(workspaceId), id, content: templateYaml('acme-gql') } });
    expect(byMember.data.uploadTemplate.__typename).toBe('ForbiddenError');
    const byOutsider = await client.gql(UPLOAD, { as: outsider, variables: { w: gid(workspaceId), id, content: templateYaml('acme-gql') } });
    expect(byOutsider.data.uploadTemplate.__typename).toBe('NotFoundError');
    const anonymous = await client.gql(UPLOAD, { variables: { w: gid(workspaceId), id, content: templateYaml('acme-gql') } });
    expect(anonymous.data.uploadTemplate.__typename).toBe('UnauthenticatedError');

    const renamed = await client.gql(
      `mutation($w: ID!, $id: ID!) { renameTemplate(workspaceId: $w, id: $id, fileName: "gql-renamed.yaml") { __typename ... on MutationRenameTemplateSuccess { data { fileName } } } }`,
      { as: owner, variables: { w: gid(workspaceId), id } },
    );
    expect(renamed.data.renameTemplate.data.fileName).toBe('gql-renamed.yaml');
    const switched = await client.gql(
      `mutation($w: ID!, $id: ID!) { setTemplateEnabled(workspaceId: $w, id: $id, enabled: false) { __typename ... on MutationSetTemplateEnabledSuccess { data { enabled } } ... on Error { code } } }`,
      { as: owner, variables: { w: gid(workspaceId), id } },
    );
    expect(switched.data.setTemplateEnabled.data.enabled).toBe(false);
    const memberSwitch = await client.gql(`mutation($w: ID!, $id: ID!) { setTemplateEnabled(workspaceId: $w, id: $id, enabled: true) { __typename } }`, {
      as: member,
      variables: { w: gid(workspaceId), id },
    });
    expect(memberSwitch.data.setTemplateEnabled.__typename).toBe('ForbiddenError');
    const deleted = await client.gql(
      `mutation($w: ID!, $id: ID!) { deleteTemplate(workspaceId: $w, id: $id) { __typename ... on MutationDeleteTemplateSuccess { data } } }`,
      { as: owner, variables: { w: gid(workspaceId), id } },
    );
    expect(deleted.data.deleteTemplate).toEqual({ __typename: 'MutationDeleteTemplateSuccess', data: id });
    expect((await client.api('GET', `${BASE}/${id}`, { as: owner, workspaceId })).status).toBe(404);
  });
});
