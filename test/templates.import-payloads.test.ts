import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { tarGz, type ArchiveItem } from './support/archives.js';
import { loadScanTemplates } from '../src/modules/templates/loader.js';
import { createNodeHttpSender, runTemplatesDetailed } from '../src/scanner/nuclei/index.js';

/**
 * Payload files come from the archive a template is imported with, and from nowhere else: a wordlist inside
 * the archive (even after the template in it) is stored beside the template and used by scans; a file named
 * outside the archive (absolute, `..`, missing) refuses the template; a single upload cannot name one.
 */

let server: TestApp;
let client: ReturnType<typeof clientFor>;
let owner: TestUser;
let workspaceId: string;
let login: http.Server;
let loginUrl: string;
const attempts: string[] = [];

const BASE = '/api/v1/api/templates';

beforeAll(async () => {
  server = await startTestApp();
  client = clientFor(server);
  owner = await client.signUp('Owner');
  workspaceId = (await client.createWorkspace(owner)).id;
  login = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      attempts.push(body);
      res.writeHead(body === 'user=operator&pass=s3cret' ? 302 : 200, { location: '/home' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => login.listen(0, '127.0.0.1', resolve));
  loginUrl = `http://127.0.0.1:${(login.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => login.close(() => resolve()));
  await server?.stop();
});

function loginTemplate(id: string, userPayload: string, extra = ''): string {
  return `id: ${id}
info:
  name: Acme default login
  author: tests
  severity: high
http:
  - raw:
      - |
        POST /login HTTP/1.1
        Host: {{Hostname}}
        Content-Type: application/x-www-form-urlencoded

        user={{user}}&pass={{pass}}
    attack: clusterbomb
    payloads:
      user: ${userPayload}
      pass: [admin, s3cret]
${extra}    stop-at-first-match: true
    matchers:
      - type: status
        status: [302]
`;
}

async function importArchive(items: ArchiveItem[]) {
  const response = await fetch(`${server.url}${BASE}/import`, {
    method: 'POST',
    headers: { 'content-type': 'application/gzip', authorization: `Bearer ${owner.token}`, 'x-workspace-id': workspaceId },
    body: new Uint8Array(tarGz(items)),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as {
    totals: Record<string, number>;
    files: { path: string; status: string; change?: string; templateId?: string; errors?: string[] }[];
  };
}

function library(users: string): ArchiveItem[] {
  return [
    // the template comes before the wordlist it reads: the import reads the whole archive first
    { path: 'lib/http/default-logins/acme-login.yaml', content: loginTemplate('acme-default-login', 'helpers/wordlists/acme-users.txt') },
    { path: 'lib/http/default-logins/escape.yaml', content: loginTemplate('acme-escape', '../../../etc/passwd') },
    { path: 'lib/http/default-logins/absolute.yaml', content: loginTemplate('acme-absolute', '/etc/passwd') },
    { path: 'lib/http/default-logins/missing.yaml', content: loginTemplate('acme-missing', 'helpers/wordlists/nowhere.txt') },
    {
      path: 'lib/http/default-logins/uneven.yaml',
      content: loginTemplate('acme-uneven', '[a, b, c]').replace('attack: clusterbomb', 'attack: pitchfork'),
    },
    { path: 'lib/helpers/wordlists/acme-users.txt', content: users },
  ];
}

describe('payload files of an imported library', () => {
  it('are read from the archive only, stored beside the template, and used by scans', async () => {
    const answer = await importArchive(library('admin\nroot\noperator\n'));
    const byPath = new Map(answer.files.map((file) => [file.path.replace('lib/http/default-logins/', ''), file]));
    expect(byPath.get('acme-login.yaml')).toMatchObject({ status: 'loaded', change: 'created' });
    expect(byPath.get('escape.yaml')?.errors?.join()).toContain("may not leave the template library ('..')");
    expect(byPath.get('absolute.yaml')?.errors?.join()).toContain('absolute paths are refused');
    expect(byPath.get('missing.yaml')?.errors?.join()).toContain('is not in the template library it came with');
    expect(byPath.get('uneven.yaml')?.errors?.join()).toContain('pitchfork');
    expect(answer.totals).toMatchObject({ loaded: 1, rejected: 4, created: 1 });

    const templateId = byPath.get('acme-login.yaml')!.templateId!;
    const stored = await server.app.deps.storage.get(`nuclei-templates/${templateId}.payloads.json`);
    expect(JSON.parse(stored!.toString('utf8'))).toEqual({ 'helpers/wordlists/acme-users.txt': 'admin\nroot\noperator\n' });

    // What a scan of the workspace runs: the template with the wordlist's values.
    const scanTemplates = await loadScanTemplates(server.app.deps, workspaceId);
    const template = scanTemplates.map((entry) => entry.template).find((t) => t.id === 'acme-default-login')!;
    expect(template.requests[0]!.payloads!.sets[0]!.values).toEqual(['admin', 'root', 'operator']);
    const send = createNodeHttpSender();
    attempts.length = 0;
    const out = await runTemplatesDetailed([template], { baseUrl: loginUrl }, { send });
    send.destroy();
    // clusterbomb, user varying fastest: admin/admin, root/admin, operator/admin, admin/s3cret, root/s3cret, operator/s3cret
    expect(attempts).toEqual([
      'user=admin&pass=admin',
      'user=root&pass=admin',
      'user=operator&pass=admin',
      'user=admin&pass=s3cret',
      'user=root&pass=s3cret',
      'user=operator&pass=s3cret',
    ]);
    expect(out.results).toHaveLength(1);
  });

  it('re-imported unchanged stay unchanged; a changed wordlist updates the template', async () => {
    const again = await importArchive(library('admin\nroot\noperator\n'));
    expect(again.files.find((file) => file.path.endsWith('acme-login.yaml'))).toMatchObject({ change: 'unchanged' });
    const changed = await importArchive(library('operator\n'));
    const file = changed.files.find((entry) => entry.path.endsWith('acme-login.yaml'))!;
    expect(file).toMatchObject({ change: 'updated' });
    const template = (await loadScanTemplates(server.app.deps, workspaceId)).map((entry) => entry.template).find((t) => t.id === 'acme-default-login')!;
    expect(template.requests[0]!.payloads!.sets[0]!.values).toEqual(['operator']);
  });

  it('may be YAML lists larger than a template (read whole, up to the payload-file bound), and not past that bound', async () => {
    const lines = Array.from({ length: 30_000 }, (_, i) => `user-${i}`).join('\n');
    const answer = await importArchive([
      { path: 'big/http/a.yaml', content: loginTemplate('acme-big-list', 'helpers/users.yaml') },
      { path: 'big/helpers/users.yaml', content: lines },
      { path: 'big/http/b.yaml', content: loginTemplate('acme-huge-list', 'helpers/huge.txt') },
      { path: 'big/helpers/huge.txt', content: 'x'.repeat(1024 * 1024 + 10) },
    ]);
    expect(answer.files.find((file) => file.path === 'big/http/a.yaml')).toMatchObject({ status: 'loaded' });
    expect(answer.files.find((file) => file.path === 'big/http/b.yaml')?.errors?.join()).toContain('is larger than 1048576 bytes');
    const template = (await loadScanTemplates(server.app.deps, workspaceId)).map((entry) => entry.template).find((t) => t.id === 'acme-big-list')!;
    expect(template.requests[0]!.payloads!.sets[0]!.values).toHaveLength(30_000);
  });

  it('cannot be named by a single upload (only an archive carries them); inline payloads can', async () => {
    const created = await client.api('POST', BASE, { as: owner, workspaceId, body: { fileName: 'single.yaml' } });
    const withFile = await client.api('POST', `${BASE}/upload`, {
      as: owner,
      workspaceId,
      body: { templateId: created.body.id, fileContent: loginTemplate('acme-single', 'helpers/wordlists/acme-users.txt') },
    });
    expect(withFile.status).toBe(400);
    expect(withFile.body.message).toContain('can only be read from the template library the template is imported with');
    const inline = await client.api('POST', `${BASE}/upload`, {
      as: owner,
      workspaceId,
      body: { templateId: created.body.id, fileContent: loginTemplate('acme-single', '[admin, operator]') },
    });
    expect(inline.status, JSON.stringify(inline.body)).toBe(200);
    expect(inline.body.warnings).toEqual([]);
  });
});
