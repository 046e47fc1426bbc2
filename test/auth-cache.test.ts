import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUTH_CACHE_MAX_ENTRIES, createAuthCache } from '../src/auth/auth-cache.js';
import type { Viewer } from '../src/context.js';
import { redisUrl, startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { waitFor } from './support/wait.js';

/**
 * The auth cache (src/auth/auth-cache.ts) saves a list request its session and membership lookups; these tests
 * hold it to what it must never do: answer from memory after a write that changed the answer, in this process
 * or another one.
 */
const viewer = (id: string): Viewer => ({ id, name: id, email: `${id}@example.test`, image: null, role: 'user', via: 'session' });

describe('createAuthCache', () => {
  it('remembers until the TTL or the credential ends, whichever is first', () => {
    let now = 1_000;
    const cache = createAuthCache({ ttlMs: 100, now: () => now });
    cache.rememberViewer('a', viewer('a'), cache.generation());
    cache.rememberViewer('b', viewer('b'), cache.generation(), 1_050);
    cache.rememberRole('a', 'w', 'owner', cache.generation());
    now = 1_049;
    expect(cache.viewer('a')?.id).toBe('a');
    expect(cache.viewer('b')?.id).toBe('b');
    expect(cache.role('a', 'w')).toBe('owner');
    now = 1_050;
    expect(cache.viewer('b')).toBeUndefined();
    now = 1_100;
    expect(cache.viewer('a')).toBeUndefined();
    expect(cache.role('a', 'w')).toBeUndefined();
  });

  it('does not store an answer read while an invalidation happened, and invalidation announces itself', () => {
    let announced = 0;
    const cache = createAuthCache({ ttlMs: 10_000, announce: () => (announced += 1) });
    const before = cache.generation();
    cache.invalidate();
    cache.rememberViewer('a', viewer('a'), before);
    cache.rememberRole('a', 'w', 'member', before);
    expect(cache.viewer('a')).toBeUndefined();
    expect(cache.role('a', 'w')).toBeUndefined();
    expect(announced).toBe(1);

    cache.rememberViewer('a', viewer('a'), cache.generation());
    cache.forget(); // another process's announcement: forgotten here, not announced again
    expect(cache.viewer('a')).toBeUndefined();
    expect(announced).toBe(1);
  });

  it('stays bounded, and a TTL of 0 turns it off', () => {
    const cache = createAuthCache({ ttlMs: 10_000 });
    for (let i = 0; i <= AUTH_CACHE_MAX_ENTRIES; i += 1) cache.rememberViewer(`k${i}`, viewer(`k${i}`), cache.generation());
    expect(cache.viewer('k0')).toBeUndefined();
    expect(cache.viewer(`k${AUTH_CACHE_MAX_ENTRIES}`)).toBeDefined();
    const off = createAuthCache({ ttlMs: 0 });
    off.rememberViewer('a', viewer('a'), off.generation());
    expect(off.viewer('a')).toBeUndefined();
  });
});

describe('the auth cache in one app', () => {
  let server: TestApp;
  let client: ReturnType<typeof clientFor>;
  const statements: string[] = [];
  let recording = false;

  beforeAll(async () => {
    server = await startTestApp({ AUTH_CACHE_TTL_MS: '60000' }, { logQueries: true });
    client = clientFor(server);
    server.db.prisma.$on('query' as never, (event: { query: string }) => {
      if (recording) statements.push(event.query);
    });
  });
  afterAll(() => server?.stop());

  async function recorded<T>(run: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
    statements.length = 0;
    recording = true;
    try {
      return { result: await run(), statements: [...statements] };
    } finally {
      recording = false;
    }
  }

  it('a repeated request looks up neither the session nor the membership again', async () => {
    const owner = await client.signUp('Cached');
    const { id: workspaceId } = await client.createWorkspace(owner);
    // Statements whose own table (not a subquery's) is the session or the membership: the two lookups.
    const lookups = (statements: string[]) => statements.filter((sql) => /^SELECT [^(]*FROM "public"\."(session|workspace_member)"/.test(sql));
    const list = () => client.api('GET', '/api/v1/api/assets', { as: owner, workspaceId });
    server.app.deps.authCache.invalidate();
    const first = await recorded(list);
    expect(first.result.status).toBe(200);
    expect(lookups(first.statements), first.statements.join('\n')).toHaveLength(2);
    const again = await recorded(list);
    expect(again.result.status).toBe(200);
    expect(lookups(again.statements), again.statements.join('\n')).toEqual([]);
    expect(again.statements.length).toBe(first.statements.length - 2);
  });

  it('forgets at once: sign-out, a revoked token, a removed member, a changed role, a deleted workspace, a new name', async () => {
    const owner = await client.signUp('Owner');
    const member = await client.signUp('Member');
    const { id: workspaceId } = await client.createWorkspace(owner);
    const added = await client.addMember(owner, workspaceId, member, 'owner');
    const targets = (as: TestUser | { token: string }) => client.api('GET', '/api/v1/api/targets', { as, workspaceId });

    // A changed role applies to the next request (an owner demoted to member may no longer manage members).
    expect((await client.api('GET', '/api/v1/api/workspaces/members', { as: member, workspaceId })).status).toBe(200);
    const demote = await client.api('PATCH', `/api/v1/api/workspaces/members/${added.id}`, { as: owner, workspaceId, body: { role: 'member' } });
    expect(demote.status).toBe(200);
    const selfPromote = await client.api('PATCH', `/api/v1/api/workspaces/members/${added.id}`, { as: member, workspaceId, body: { role: 'owner' } });
    expect(selfPromote.status).toBe(403);

    // A removed member: the very next request is refused.
    expect((await targets(member)).status).toBe(200);
    expect((await client.api('DELETE', `/api/v1/api/workspaces/members/${added.id}`, { as: owner, workspaceId })).status).toBe(200);
    expect((await targets(member)).status).toBe(404);

    // A new name shows at once.
    expect((await client.api('GET', '/api/v1/api/users/me', { as: owner })).body.name).toBe('Owner');
    expect((await client.gql('mutation { updateProfile(input: { name: "Renamed" }) { __typename } }', { as: owner })).errors).toBeUndefined();
    expect((await client.api('GET', '/api/v1/api/users/me', { as: owner })).body.name).toBe('Renamed');

    // A revoked personal API token.
    const created = await client.api('POST', '/api/v1/api/users/me/api-tokens', { as: owner, body: { name: 'cached' } });
    const token = { token: created.body.token as string };
    expect((await targets(token)).status).toBe(200);
    expect((await client.api('DELETE', `/api/v1/api/users/me/api-tokens/${created.body.apiToken.id}`, { as: owner })).status).toBe(200);
    expect((await targets(token)).status).toBe(401);

    // A deleted workspace.
    expect((await targets(owner)).status).toBe(200);
    expect((await client.api('DELETE', `/api/v1/api/workspaces/${workspaceId}`, { as: owner })).status).toBe(200);
    expect((await targets(owner)).status).toBe(404);

    // Sign-out.
    expect((await client.api('GET', '/api/v1/api/users/me', { as: member })).status).toBe(200);
    expect((await client.api('POST', '/api/v1/api/auth/sign-out', { as: member })).status).toBe(200);
    expect((await client.api('GET', '/api/v1/api/users/me', { as: member })).status).toBe(401);
  });

  it('a row changed behind the service is seen once the TTL has passed', async () => {
    const short = await startTestApp({ AUTH_CACHE_TTL_MS: '300' }, { database: { db: server.db, dispose: async () => {} } });
    try {
      const shortClient = clientFor(short);
      const user = await shortClient.signUp('Short');
      expect((await shortClient.api('GET', '/api/v1/api/users/me', { as: user })).status).toBe(200);
      await server.db.prisma.session.deleteMany({ where: { userId: user.id } });
      await waitFor(async () => (await shortClient.api('GET', '/api/v1/api/users/me', { as: user })).status === 401, {
        timeoutMs: 5_000,
        what: 'the deleted session refused',
      });
    } finally {
      await short.stop();
    }
  });
});

describe('the auth cache across instances (Redis)', () => {
  let first: TestApp;
  let second: TestApp;
  const url = redisUrl ?? 'redis://127.0.0.1:6379';

  beforeAll(async () => {
    // A TTL far beyond the test: only the announcement through Redis can make instance B forget in time.
    first = await startTestApp({ REDIS_URL: url, AUTH_CACHE_TTL_MS: '60000' });
    second = await startTestApp({ REDIS_URL: url, AUTH_CACHE_TTL_MS: '60000' }, { database: { db: first.db, dispose: async () => {} } });
  });
  afterAll(async () => {
    await second?.stop();
    await first?.stop();
  });

  // The waits stay far below the 60 s TTL, so only the announcement can pass them; they are generous because
  // a loaded machine once took more than 5 s to carry it.
  it('a token revoked and a member removed through A are refused by B', async () => {
    const a = clientFor(first);
    const b = clientFor(second);
    const owner = await a.signUp('Owner');
    const member = await a.signUp('Member');
    const { id: workspaceId } = await a.createWorkspace(owner);
    const added = await a.addMember(owner, workspaceId, member);
    expect((await b.api('GET', '/api/v1/api/targets', { as: member, workspaceId })).status).toBe(200);
    expect((await a.api('DELETE', `/api/v1/api/workspaces/members/${added.id}`, { as: owner, workspaceId })).status).toBe(200);
    await waitFor(async () => (await b.api('GET', '/api/v1/api/targets', { as: member, workspaceId })).status === 404, {
      timeoutMs: 20_000,
      what: 'B refusing the removed member',
    });

    const created = await a.api('POST', '/api/v1/api/users/me/api-tokens', { as: owner, body: { name: 'shared' } });
    const token = { token: created.body.token as string };
    expect((await b.api('GET', '/api/v1/api/users/me', { as: token })).status).toBe(200);
    expect((await a.api('DELETE', `/api/v1/api/users/me/api-tokens/${created.body.apiToken.id}`, { as: owner })).status).toBe(200);
    await waitFor(async () => (await b.api('GET', '/api/v1/api/users/me', { as: token })).status === 401, {
      timeoutMs: 20_000,
      what: 'B refusing the revoked token',
    });
  });
});
