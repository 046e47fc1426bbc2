import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createTestDatabase, startTestApp, usingPostgres, type TestApp } from './support/app.js';
import { clientFor } from './support/client.js';
import { openDatabase } from '../src/db.js';

const password = 'correct horse battery';
const body = (name: string, email: string) => ({ name, email, password });

describe('SIGNUP unset: open for the first account, then by invitation', () => {
  let server: TestApp;
  let client: ReturnType<typeof clientFor>;
  beforeAll(async () => {
    // '' is "unset" for loadEnv: the default, not the tests' SIGNUP=open.
    server = await startTestApp({ SIGNUP: '' });
    client = clientFor(server);
  });
  afterAll(() => server?.stop());

  it('the first sign-up becomes admin; the next is refused with 403 SIGNUP_CLOSED on REST and GraphQL', async () => {
    const first = await client.api('POST', '/api/v1/api/auth/sign-up/email', { body: body('Root', 'root@example.test') });
    expect(first.status).toBe(200);
    expect((await client.api('GET', '/api/v1/api/users/me', { as: first.body })).body.role).toBe('admin');

    const second = await client.api('POST', '/api/v1/api/auth/sign-up/email', { body: body('Stranger', 'stranger@example.test') });
    expect(second.status).toBe(403);
    expect(second.body).toEqual({ statusCode: 403, error: 'Forbidden', code: 'SIGNUP_CLOSED', message: expect.stringContaining('by invitation') });
    const viaGraphQL = await client.gql(
      `mutation { signUp(input: { name: "S", email: "s2@example.test", password: "${password}" }) { __typename ... on Error { code message } } }`,
    );
    expect(viaGraphQL.data?.signUp).toMatchObject({ code: 'SIGNUP_CLOSED' });
    expect(await server.db.prisma.user.count()).toBe(1);
  });

  it('an invited e-mail may sign up and joins the workspace with the invited role; others still may not', async () => {
    const root = await client.api('POST', '/api/v1/api/auth/sign-in/email', { body: { email: 'root@example.test', password } });
    const owner = { ...root.body.user, token: root.body.token };
    const workspace = await client.createWorkspace(owner);

    // Adding an e-mail without an account says how to invite it.
    const add = await client.api('POST', `/api/v1/api/workspaces/${workspace.id}/members`, { as: owner, body: { email: 'newcomer@example.test' } });
    expect(add.status).toBe(404);
    expect(add.body.message).toContain('invite');

    const invited = await client.api('POST', `/api/v1/api/workspaces/${workspace.id}/invitations`, {
      as: owner,
      body: { email: 'NewComer@Example.test', role: 'owner' },
    });
    expect(invited.status).toBe(201);
    expect(invited.body).toMatchObject({ workspaceId: workspace.id, email: 'newcomer@example.test', role: 'owner', expiresAt: expect.any(String) });
    expect((await client.api('GET', `/api/v1/api/workspaces/${workspace.id}/invitations`, { as: owner })).body).toHaveLength(1);

    const signUp = await client.api('POST', '/api/v1/api/auth/sign-up/email', { body: body('Newcomer', 'newcomer@EXAMPLE.test') });
    expect(signUp.status).toBe(200);
    const newcomer = { ...signUp.body.user, token: signUp.body.token };
    const mine = await client.api('GET', '/api/v1/api/workspaces', { as: newcomer });
    expect(mine.body.data.map((w: { id: string; role: string }) => [w.id, w.role])).toEqual([[workspace.id, 'owner']]);
    // Used up: the list is empty and the e-mail has its account.
    expect((await client.api('GET', `/api/v1/api/workspaces/${workspace.id}/invitations`, { as: owner })).body).toEqual([]);
    expect((await client.api('POST', '/api/v1/api/auth/sign-up/email', { body: body('Other', 'other@example.test') })).status).toBe(403);
  });

  it('only owners invite; an e-mail with an account is added, not invited; a withdrawn invitation no longer opens sign-up', async () => {
    const root = await client.api('POST', '/api/v1/api/auth/sign-in/email', { body: { email: 'root@example.test', password } });
    const owner = { ...root.body.user, token: root.body.token };
    const newcomer = await client.api('POST', '/api/v1/api/auth/sign-in/email', { body: { email: 'newcomer@example.test', password } });
    const workspace = await client.createWorkspace(owner);
    await client.addMember(owner, workspace.id, { ...newcomer.body.user, token: newcomer.body.token });
    const asMember = { token: newcomer.body.token as string };

    expect((await client.api('POST', `/api/v1/api/workspaces/${workspace.id}/invitations`, { as: asMember, body: { email: 'x@example.test' } })).status).toBe(
      403,
    );
    const existing = await client.api('POST', `/api/v1/api/workspaces/${workspace.id}/invitations`, { as: owner, body: { email: 'newcomer@example.test' } });
    expect(existing.status).toBe(409);

    const viaGraphQL = await client.gql(
      `mutation($ws: ID!) { inviteWorkspaceMember(workspaceId: $ws, email: "later@example.test") { __typename ... on MutationInviteWorkspaceMemberSuccess { data { id email role } } } }`,
      { as: owner, variables: { ws: Buffer.from(`Workspace:${workspace.id}`).toString('base64') } },
    );
    const invitation = viaGraphQL.data?.inviteWorkspaceMember.data;
    expect(invitation).toMatchObject({ email: 'later@example.test', role: 'member' });
    const withdrawn = await client.api('DELETE', `/api/v1/api/workspaces/${workspace.id}/invitations/${invitation.id}`, { as: owner });
    expect(withdrawn.status).toBe(200);
    expect((await client.api('POST', '/api/v1/api/auth/sign-up/email', { body: body('Later', 'later@example.test') })).status).toBe(403);
  });

  it('an administrator creates accounts (REST and GraphQL); others may not; the person signs in with the password', async () => {
    const root = await client.api('POST', '/api/v1/api/auth/sign-in/email', { body: { email: 'root@example.test', password } });
    const admin = { token: root.body.token as string };
    const created = await client.api('POST', '/api/v1/api/users', { as: admin, body: body('Made', 'Made@Example.test') });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: expect.any(String), name: 'Made', email: 'made@example.test', role: 'user' });
    const signIn = await client.api('POST', '/api/v1/api/auth/sign-in/email', { body: { email: 'made@example.test', password } });
    expect(signIn.status).toBe(200);

    expect((await client.api('POST', '/api/v1/api/users', { as: { token: signIn.body.token }, body: body('Nope', 'nope@example.test') })).status).toBe(403);
    expect((await client.api('POST', '/api/v1/api/users', { as: admin, body: body('Made', 'made@example.test') })).status).toBe(409);
    const bad = await client.api('POST', '/api/v1/api/users', { as: admin, body: { name: '', email: 'bad', password: 'short' } });
    expect(bad.status).toBe(400);
    expect(bad.body.details.map((d: { field: string }) => d.field).sort()).toEqual(['email', 'name', 'password']);
    const withNul = await client.api('POST', '/api/v1/api/users', { as: admin, body: { name: 'x\u0000y', email: 'nul@example.test', password } });
    expect(withNul.status).toBe(400);
    expect(withNul.body.details.map((d: { field: string }) => d.field)).toEqual(['name']);

    const viaGraphQL = await client.gql(
      `mutation { createUser(input: { name: "Second Admin", email: "admin2@example.test", password: "${password}", role: admin }) { __typename ... on MutationCreateUserSuccess { data { email role } } } }`,
      { as: admin },
    );
    expect(viaGraphQL.data?.createUser.data).toEqual({ email: 'admin2@example.test', role: 'admin' });
  });
});

describe('SIGNUP=closed', () => {
  it('refuses every sign-up, even the first (administrators are made with npm run admin:create)', async () => {
    const server = await startTestApp({ SIGNUP: 'closed' });
    try {
      const client = clientFor(server);
      const first = await client.api('POST', '/api/v1/api/auth/sign-up/email', { body: body('First', 'first@example.test') });
      expect(first.status).toBe(403);
      expect(first.body).toMatchObject({ code: 'SIGNUP_CLOSED', message: expect.stringContaining('closed') });
      expect(await server.db.prisma.user.count()).toBe(0);
    } finally {
      await server.stop();
    }
  });
});

describe('npm run admin:create', () => {
  const root = resolve(import.meta.dirname, '..');
  const run = (args: string[], env: Record<string, string>, stdin: string) =>
    new Promise<{ code: number | null; out: string; err: string }>((done) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/admin-create.ts', ...args], {
        cwd: root,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          LOG_LEVEL: 'silent',
          AUTH_SECRET: 'test-secret-that-is-long-enough-0123456789',
          ...env,
        },
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
      child.stdin.end(stdin);
      child.once('exit', (code) => done({ code, out, err }));
    });

  it('creates an administrator on the configured database with the password from standard input; sign-up stays by invitation', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'perimeter-admin-'));
    const testDb = usingPostgres ? await createTestDatabase() : undefined;
    const dbEnv: Record<string, string> = testDb?.url ? { DATABASE_URL: testDb.url } : { DATA_DIR: dataDir };
    let server: TestApp | undefined;
    try {
      if (testDb) await testDb.db.close();
      const refused = await run(['--email', 'ops@example.test', '--password', password], dbEnv, '');
      expect(refused.code).toBe(1);
      expect(refused.err).toContain('Refusing --password');

      const created = await run(['--email', 'Ops@Example.test', '--name', 'Ops'], dbEnv, `${password}\n`);
      expect(created.err).toBe('');
      expect(created.code).toBe(0);
      expect(created.out).toContain('Created administrator ops@example.test');
      expect(created.out).not.toContain(password);

      const again = await run(['--email', 'ops@example.test'], { ...dbEnv, ADMIN_PASSWORD: password }, '');
      expect(again.code).toBe(1);
      expect(again.err).toContain('already exists');

      const db = testDb ? await openDatabase({ url: testDb.url }) : await openDatabase({ pgliteDir: join(dataDir, 'pglite') });
      server = await startTestApp({ SIGNUP: '' }, { database: { db, dispose: () => db.close() } });
      const client = clientFor(server);
      const signIn = await client.api('POST', '/api/v1/api/auth/sign-in/email', { body: { email: 'ops@example.test', password } });
      expect(signIn.status).toBe(200);
      expect((await client.api('GET', '/api/v1/api/users/me', { as: signIn.body })).body).toMatchObject({ role: 'admin', name: 'Ops' });
      expect((await client.api('POST', '/api/v1/api/auth/sign-up/email', { body: body('Walk In', 'walkin@example.test') })).status).toBe(403);
      await server.stop();
      server = undefined;
      await db.close();
    } finally {
      await server?.stop();
      await testDb?.dispose();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 180_000);
});
