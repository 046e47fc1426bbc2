import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { addTarget, getScan, startScan, waitForScan, type Client } from './support/scans.js';
import { listen } from './scanner/helpers.js';

/**
 * Template variables from the user: a workspace stores `{{token}}`, `{{username}}`, `{{password}}` (sealed,
 * masked on every read), a scan may give its own (never stored in clear, never echoed), and the loopback server
 * sees the values in the requests. A template whose variables are not all given is skipped with their names.
 */

const LOOPBACK_ONLY = { SCAN_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128', QUEUE_SUPERVISE_SECONDS: '1' };

/** Uses {{token}} bare (the parser warns that nothing in the template provides it). */
const VAR_AUTH = `id: var-auth
info:
  name: Token accepted
  author: tests
  severity: medium
http:
  - method: GET
    path: ["{{BaseURL}}/var-auth"]
    headers:
      X-Api-Token: "{{token}}"
    matchers:
      - type: word
        words: ["welcome"]
`;

/** Declares its inputs as nuclei-templates do (`username: "{{username}}"`). */
const VAR_LOGIN = `id: var-login
info:
  name: Login accepted
  author: tests
  severity: high
variables:
  username: "{{username}}"
  password: "{{password}}"
http:
  - method: POST
    path: ["{{BaseURL}}/var-login"]
    headers:
      Content-Type: application/x-www-form-urlencoded
    body: "user={{username}}&pass={{url_encode(password)}}"
    matchers:
      - type: word
        words: ["logged in"]
`;

const TOKEN = 'tok-3f9a1c77e2';
const PASSWORD = 'p@ss {{word}}';
const SCAN_TOKEN = 'scan-only-88d1e0';
/** nuclei's url_encode is Go's url.QueryEscape: a space is `+`, as form encoding has it. */
const LOGIN_BODY = `user=alice&pass=${new URLSearchParams({ p: PASSWORD }).toString().slice(2)}`;

interface Seen {
  path: string;
  token?: string;
  body: string;
}

let server: TestApp;
let client: Client;
let site: { port: number; close(): Promise<void> };
const seen: Seen[] = [];

beforeAll(async () => {
  site = await listen(
    http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        const path = new URL(req.url ?? '/', 'http://x').pathname;
        seen.push({ path, token: req.headers['x-api-token'] as string | undefined, body });
        if (path === '/var-auth' && (req.headers['x-api-token'] === TOKEN || req.headers['x-api-token'] === SCAN_TOKEN))
          return res.writeHead(200, { 'content-type': 'text/plain' }).end('welcome');
        if (path === '/var-login' && body === LOGIN_BODY) return res.writeHead(200, { 'content-type': 'text/plain' }).end('logged in');
        res.writeHead(403, { 'content-type': 'text/plain' }).end('no');
      });
    }),
  );
  server = await startTestApp(LOOPBACK_ONLY);
  client = clientFor(server);
});

afterAll(async () => {
  await server?.stop();
  await site?.close();
});

async function upload(user: TestUser, workspaceId: string, fileName: string, content: string) {
  const created = await client.api('POST', '/api/v1/api/templates', { as: user, workspaceId, body: { fileName } });
  expect(created.status).toBe(201);
  const uploaded = await client.api('POST', '/api/v1/api/templates/upload', {
    as: user,
    workspaceId,
    body: { templateId: created.body.id, fileContent: content },
  });
  expect(uploaded.status, JSON.stringify(uploaded.body)).toBe(200);
}

const settingsPath = (workspaceId: string) => `/api/v1/api/workspaces/${workspaceId}/template-settings`;

describe('template variables', { timeout: 240_000 }, () => {
  let owner: TestUser;
  let member: TestUser;
  let workspaceId: string;
  let targetId: string;

  beforeAll(async () => {
    owner = await client.signUp('Varowner');
    member = await client.signUp('Varmember');
    workspaceId = (await client.createWorkspace(owner)).id;
    await client.addMember(owner, workspaceId, member);
    targetId = (await addTarget(client, owner, workspaceId, '127.0.0.1')).id;
    await upload(owner, workspaceId, 'var-auth.yaml', VAR_AUTH);
    await upload(owner, workspaceId, 'var-login.yaml', VAR_LOGIN);
  });

  /** A scan of the site with only our two templates; its checks step row and what the server saw. */
  async function scan(user: TestUser, inWorkspace: string, target: string, extra: Record<string, unknown> = {}) {
    seen.length = 0;
    const options = { ports: String(site.port), timeoutMs: 5_000, templateSelection: { includeIds: ['var-auth', 'var-login'] }, ...extra };
    const started = await startScan(client, user, inWorkspace, target, options);
    const done = await waitForScan(client, user, inWorkspace, started.id);
    expect(done.status).toBe('COMPLETED');
    const step = await server.db.prisma.scanStep.findFirstOrThrow({ where: { scanId: started.id, name: 'checks' } });
    return { started, done, step, output: step.output as { checkIds: string[]; skippedTemplates: { templateId: string; reason: string }[] } };
  }

  it('without values both templates are skipped with the names they lack; nothing is sent', async () => {
    const { step, output } = await scan(member, workspaceId, targetId);
    expect(output.skippedTemplates).toEqual([
      { templateId: 'var-auth', reason: 'missing variable {{token}}' },
      { templateId: 'var-login', reason: 'missing variables {{password}}, {{username}}' },
    ]);
    expect(output.checkIds).not.toContain('var-auth');
    expect(step.error).toBe('templates skipped: var-auth (missing variable {{token}}); var-login (missing variables {{password}}, {{username}})');
    expect(seen.map((s) => s.path)).not.toContain('/var-auth');
    expect(seen.map((s) => s.path)).not.toContain('/var-login');
  });

  it('owners set workspace variables; everyone reads them masked (REST and GraphQL); they are sealed at rest', async () => {
    const set = await client.api('PATCH', settingsPath(workspaceId), {
      as: owner,
      body: { variables: { token: TOKEN, username: 'alice', password: PASSWORD } },
    });
    expect(set.status).toBe(200);
    expect(set.body.variables).toEqual({ password: '********', token: '********', username: '********' });
    const read = await client.api('GET', settingsPath(workspaceId), { as: member });
    expect(read.body).toMatchObject({ workspaceId, variables: { password: '********', token: '********', username: '********' } });
    const gql = await client.gql(`query($id: ID!) { workspace(id: $id) { templateSettings { variables { name value } } } }`, {
      as: member,
      variables: { id: workspaceId },
    });
    expect(gql.data).toEqual({
      workspace: {
        templateSettings: {
          variables: [
            { name: 'password', value: '********' },
            { name: 'token', value: '********' },
            { name: 'username', value: '********' },
          ],
        },
      },
    });
    const row = await server.db.prisma.workspaceTemplateRunSettings.findUniqueOrThrow({ where: { workspaceId } });
    const stored = JSON.stringify(row);
    for (const secret of [TOKEN, PASSWORD, 'alice']) expect(stored).not.toContain(secret);
    expect(Object.values(row.variables as Record<string, string>).every((value) => value.startsWith('v1.'))).toBe(true);

    // The change is audited; the entry holds no value.
    const audit = await server.db.prisma.auditLog.findMany({ where: { workspaceId, operation: { contains: 'template-settings' } } });
    expect(audit.map((entry) => [entry.operation, entry.outcome])).toContainEqual(['PATCH /api/workspaces/{id}/template-settings', 'success']);
    expect(JSON.stringify(audit)).not.toContain(TOKEN);

    // Members cannot change them.
    const denied = await client.api('PATCH', settingsPath(workspaceId), { as: member, body: { variables: { token: 'mine' } } });
    expect(denied.status).toBe(403);
  });

  it('the values reach the requests: header and body; the templates run and find', async () => {
    const { output, step } = await scan(member, workspaceId, targetId);
    expect(output.skippedTemplates).toEqual([]);
    expect(step.error).toBeNull();
    expect(output.checkIds).toEqual(expect.arrayContaining(['var-auth', 'var-login']));
    expect(seen.find((s) => s.path === '/var-auth')?.token).toBe(TOKEN);
    expect(seen.find((s) => s.path === '/var-login')?.body).toBe(LOGIN_BODY);
    const findings = await server.db.prisma.finding.findMany({ where: { workspaceId, source: 'nuclei' }, orderBy: { checkId: 'asc' } });
    expect(findings.map((f) => [f.checkId, f.status])).toEqual([
      ['var-auth', 'open'],
      ['var-login', 'open'],
    ]);
    // The evidence quotes the requests, values masked (as typed and form-encoded); so do the API and the artefact.
    const evidence = JSON.stringify(findings.map((f) => f.evidence));
    expect(evidence).toMatch(/X-Api-Token: \*{8}/i);
    expect(evidence).toContain('user=********&pass=********');
    const listed = await client.api('GET', '/api/v1/api/vulnerabilities?limit=100', { as: member, workspaceId });
    const artefact = await client.api('GET', `/api/v1/api/scans/${step.scanId}/artefacts/checks`, { as: member, workspaceId });
    expect(artefact.status).toBe(200);
    for (const text of [evidence, JSON.stringify(listed.body), JSON.stringify(artefact.body), JSON.stringify(step.output)]) {
      for (const secret of [TOKEN, LOGIN_BODY.split('pass=')[1]!, 'alice']) expect(text).not.toContain(secret);
    }
  });

  it('a scan’s own values win for that scan, are sealed, and never come back', async () => {
    const { started } = await scan(member, workspaceId, targetId, { templateVariables: { token: SCAN_TOKEN } });
    expect(seen.find((s) => s.path === '/var-auth')?.token).toBe(SCAN_TOKEN);
    expect(started.options).toMatchObject({ templateVariableNames: ['token'] });
    const rest = await getScan(client, member, workspaceId, started.id);
    const gql = await client.gql(`query($id: ID!) { scan(id: $id) { options } }`, { as: member, variables: { id: started.id } });
    const row = await server.db.prisma.scan.findUniqueOrThrow({ where: { id: started.id } });
    for (const text of [JSON.stringify(started), JSON.stringify(rest), JSON.stringify(gql), JSON.stringify(row)]) expect(text).not.toContain(SCAN_TOKEN);
    expect((row.templateVariables as Record<string, string>).token).toMatch(/^v1\./);
  });

  it('over GraphQL too: a scan’s values and the workspace’s are set there', async () => {
    const set = await client.gql(
      `mutation($id: ID!) { updateTemplateSettings(workspaceId: $id, input: { variables: [{ name: "token", value: "********" }, { name: "extra", value: "e" }] }) {
        __typename ... on MutationUpdateTemplateSettingsSuccess { data { variables { name value } } } } }`,
      { as: owner, variables: { id: workspaceId } },
    );
    expect(set.data?.updateTemplateSettings.data.variables.map((v: { name: string }) => v.name)).toEqual(['extra', 'password', 'token', 'username']);
    const started = await client.gql(
      `mutation($t: ID!) { startScan(targetId: $t, options: { ports: "${site.port}", templateSelection: { includeIds: ["var-auth"] }, templateVariables: [{ name: "token", value: "${SCAN_TOKEN}" }] }) {
        __typename ... on MutationStartScanSuccess { data { databaseId options } } } }`,
      { as: member, variables: { t: targetId } },
    );
    expect(started.data?.startScan.__typename).toBe('MutationStartScanSuccess');
    expect(JSON.stringify(started.data)).not.toContain(SCAN_TOKEN);
    seen.length = 0;
    await waitForScan(client, member, workspaceId, started.data.startScan.data.databaseId);
    expect(seen.find((s) => s.path === '/var-auth')?.token).toBe(SCAN_TOKEN);
  });

  it('unsetting one makes the templates that need it skip again; the mask keeps a stored value', async () => {
    const kept = await client.api('PATCH', settingsPath(workspaceId), { as: owner, body: { variables: { token: '********', password: null, extra: null } } });
    expect(kept.status).toBe(200);
    expect(Object.keys(kept.body.variables)).toEqual(['token', 'username']);
    const { output } = await scan(member, workspaceId, targetId);
    expect(output.skippedTemplates).toEqual([{ templateId: 'var-login', reason: 'missing variable {{password}}' }]);
    expect(seen.find((s) => s.path === '/var-auth')?.token).toBe(TOKEN);
    expect(seen.map((s) => s.path)).not.toContain('/var-login');
  });

  it('refuses bad names and values with 400 naming the field', async () => {
    for (const [variables, field] of [
      [{ BaseURL: 'x' }, 'variables.BaseURL'],
      [{ '9lives': 'x' }, 'variables.9lives'],
      [{ token: 42 }, 'variables.token'],
      [{ token: 'x'.repeat(4097) }, 'variables.token'],
      [{ nothing: '********' }, 'variables.nothing'],
    ] as const) {
      const bad = await client.api('PATCH', settingsPath(workspaceId), { as: owner, body: { variables } });
      expect(bad.status, JSON.stringify(variables).slice(0, 80)).toBe(400);
      expect(bad.body).toMatchObject({ statusCode: 400, code: 'VALIDATION_FAILED' });
      expect(bad.body.details.map((d: { field: string }) => d.field)).toContain(field);
    }
    const badScan = await client.api('POST', '/api/v1/api/scans', {
      as: member,
      workspaceId,
      body: { targetId, options: { templateVariables: { Hostname: 'x' } } },
    });
    expect(badScan.status).toBe(400);
    expect(badScan.body.details[0].field).toBe('options.templateVariables.Hostname');
    // Schedules keep their options in clear and read them back: variables have no place there.
    const schedule = await client.api('POST', '/api/v1/api/scan-schedules', {
      as: member,
      workspaceId,
      body: { targetId, cron: '0 3 * * *', options: { templateVariables: { token: 'x' } } },
    });
    expect(schedule.status).toBe(400);
    expect(JSON.stringify(schedule.body)).toContain('templateVariables');
  });

  it('values that no longer open (the instance secret changed) fail the checks step saying so, never run the templates without them', async () => {
    const owner2 = await client.signUp('Rotated');
    const rotated = (await client.createWorkspace(owner2)).id;
    await upload(owner2, rotated, 'var-auth.yaml', VAR_AUTH);
    const target = (await addTarget(client, owner2, rotated, '127.0.0.1')).id;
    await server.db.prisma.workspaceTemplateRunSettings.create({
      data: { workspaceId: rotated, variables: { token: 'v1.c2VhbGVkIGJ5IGFub3RoZXIgc2VjcmV0IGVudGlyZWx5' } },
    });
    seen.length = 0;
    const started = await startScan(client, owner2, rotated, target, { ports: String(site.port), timeoutMs: 5_000 });
    const done = await waitForScan(client, owner2, rotated, started.id);
    expect(done.status).toBe('FAILED');
    expect(done.error).toMatch(/^checks step failed: template variables cannot be decrypted/);
    expect(seen.map((s) => s.path)).not.toContain('/var-auth');
  });

  it('another workspace can neither read nor use them', async () => {
    const stranger = await client.signUp('Stranger');
    const theirs = (await client.createWorkspace(stranger)).id;
    expect((await client.api('GET', settingsPath(workspaceId), { as: stranger })).status).toBe(404);
    expect((await client.api('PATCH', settingsPath(workspaceId), { as: stranger, body: { variables: { token: 'x' } } })).status).toBe(404);
    const gql = await client.gql(`query($id: ID!) { workspace(id: $id) { templateSettings { variables { name } } } }`, {
      as: stranger,
      variables: { id: workspaceId },
    });
    expect(gql.data).toEqual({ workspace: null });

    // The same template in their workspace, scanned against the same server: our token is not theirs.
    await upload(stranger, theirs, 'var-auth.yaml', VAR_AUTH);
    const theirTarget = (await addTarget(client, stranger, theirs, '127.0.0.1')).id;
    const { output } = await scan(stranger, theirs, theirTarget, { templateSelection: { includeIds: ['var-auth'] } });
    expect(output.skippedTemplates).toEqual([{ templateId: 'var-auth', reason: 'missing variable {{token}}' }]);
    expect(seen.map((s) => s.path)).not.toContain('/var-auth');
    expect((await client.api('GET', settingsPath(theirs), { as: stranger })).body.variables).toEqual({});
  });
});
