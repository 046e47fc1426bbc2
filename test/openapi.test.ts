import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildOpenApiDocument } from '../src/rest/openapi.js';
import { restRouter } from '../src/rest/router.js';
import type { RestMeta } from '../src/rest/trpc.js';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor } from './support/client.js';

type Operation = {
  security?: Record<string, string[]>[];
  parameters?: { in: string; name: string }[];
  responses: Record<string, { headers?: Record<string, unknown> }>;
};

const document = buildOpenApiDocument();
const operation = (method: string, path: string) => (document.paths as Record<string, Record<string, Operation>>)[path]![method.toLowerCase()]!;
const metas = Object.values(restRouter._def.procedures).map(
  (procedure) => (procedure as unknown as { _def: { meta: RestMeta & { openapi: NonNullable<RestMeta['openapi']> } } })._def.meta,
);

describe('the OpenAPI document', () => {
  it('passes `redocly lint` with the recommended rules, without errors', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'perimeter-openapi-'));
    try {
      const file = join(dir, 'openapi.json');
      writeFileSync(file, JSON.stringify(document, null, 2));
      const cli = join(process.cwd(), 'node_modules/@redocly/cli/bin/cli.js');
      const run = await promisify(execFile)(process.execPath, [cli, 'lint', file, '--config', 'redocly.yaml', '--format', 'stylish'], {
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
      }).then(
        ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
        (error: { code?: number; stdout?: string; stderr?: string }) => error,
      );
      expect(run.code ?? 0, `${run.stdout}\n${run.stderr}`).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('declares the success status each operation answers: 201 for creations, never a 200 beside it', () => {
    const created = metas.filter((meta) => meta.successStatus === 201);
    expect(created.length).toBeGreaterThan(10);
    for (const meta of created) {
      const responses = operation(meta.openapi.method, meta.openapi.path).responses;
      expect(Object.keys(responses), meta.openapi.path).toContain('201');
      expect(Object.keys(responses), meta.openapi.path).not.toContain('200');
    }
    expect(Object.keys(operation('GET', '/api/workspaces').responses)).toContain('200');
  });

  it('needs no credentials on the public operations, and credentials on every other one', () => {
    const open = metas.filter((meta) => operation(meta.openapi.method, meta.openapi.path).security?.length === 0);
    expect(open.map((meta) => meta.openapi.path).sort()).toEqual([
      '/api/auth/get-session',
      '/api/auth/sign-in/email',
      '/api/auth/sign-up/email',
      '/api/system-configs/public',
      '/api/version',
    ]);
    for (const meta of open) expect(Object.keys(operation(meta.openapi.method, meta.openapi.path).responses)).not.toContain('401');
    expect(operation('GET', '/api/targets').security).toEqual([{ bearerAuth: [] }]);
    expect(Object.keys(document.components?.securitySchemes ?? {}).sort()).toEqual(['bearerAuth', 'toolApiKey']);
  });

  it('authenticates the results push with X-Tool-Api-Key, not a bearer token', () => {
    const push = operation('POST', '/api/tools/results');
    expect(push.security).toEqual([{ toolApiKey: [] }]);
    expect(document.components?.securitySchemes?.toolApiKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-Tool-Api-Key' });
    expect(push.parameters?.map((p) => p.name)).not.toContain('x-tool-api-key');
  });

  it('documents every error in the one Error shape, and 413/415 wherever a body is read', () => {
    for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, Operation>>)) {
      for (const [method, op] of Object.entries(item)) {
        for (const [status, response] of Object.entries(op.responses)) {
          if (Number(status) >= 400)
            expect(response, `${method} ${path} ${status}`).toMatchObject({
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
            });
        }
        if (method !== 'get') expect(Object.keys(op.responses), `${method} ${path}`).toEqual(expect.arrayContaining(['413', '415']));
      }
    }
    expect(Object.keys(document.components?.schemas ?? {}).filter((name) => name.startsWith('error.'))).toEqual([]);
  });
});

describe('the statuses the document declares are the ones the service answers', () => {
  let server: TestApp;
  let client: ReturnType<typeof clientFor>;
  beforeAll(async () => {
    server = await startTestApp({ AUTH_RATE_LIMIT_MAX: '3' });
    client = clientFor(server);
  });
  afterAll(() => server?.stop());

  it('409 on a duplicate target and on a member added twice, both declared', async () => {
    const owner = await client.signUp('Owner');
    const other = await client.signUp('Other');
    const workspace = await client.createWorkspace(owner);
    expect((await client.api('POST', '/api/v1/api/targets', { as: owner, workspaceId: workspace.id, body: { value: 'dup.example.test' } })).status).toBe(201);
    expect((await client.api('POST', '/api/v1/api/targets', { as: owner, workspaceId: workspace.id, body: { value: 'dup.example.test' } })).status).toBe(409);
    expect(Object.keys(operation('POST', '/api/targets').responses)).toContain('409');
    await client.addMember(owner, workspace.id, other);
    expect((await client.api('POST', `/api/v1/api/workspaces/${workspace.id}/members`, { as: owner, body: { email: other.email } })).status).toBe(409);
    expect(Object.keys(operation('POST', '/api/workspaces/{id}/members').responses)).toContain('409');
  });

  it('429 with Retry-After on sign-in past the rate limit', async () => {
    let last = 0;
    for (let attempt = 0; attempt < 5 && last !== 429; attempt++) {
      last = (await client.api('POST', '/api/v1/api/auth/sign-in/email', { body: { email: 'nobody@example.test', password: 'wrong password' } })).status;
    }
    expect(last).toBe(429);
    const declared = operation('POST', '/api/auth/sign-in/email').responses['429'];
    expect(declared?.headers).toHaveProperty('Retry-After');
  });
});
