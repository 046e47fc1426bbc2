import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor } from './support/client.js';

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

let server: TestApp;
let client: ReturnType<typeof clientFor>;

beforeAll(async () => {
  server = await startTestApp();
  client = clientFor(server);
});
afterAll(() => server?.stop());

describe('sign-up and sign-in', () => {
  it('answers {token, user} and the first account administers the instance', async () => {
    const first = await client.api('POST', '/api/v1/api/auth/sign-up/email', {
      body: { name: 'Ada', email: 'Ada@Example.test', password: 'correct horse battery' },
    });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ token: expect.any(String), user: { id: expect.any(String), name: 'Ada', email: 'ada@example.test' } });

    const second = await client.signUp('Bob');
    const adaMe = await client.api('GET', '/api/v1/api/users/me', { as: { token: first.body.token } });
    const bobMe = await client.api('GET', '/api/v1/api/users/me', { as: second });
    expect(adaMe.body.role).toBe('admin');
    expect(bobMe.body).toMatchObject({ id: second.id, role: 'user', email: second.email });
  });

  it('signs in with the password and refuses a wrong one with 401', async () => {
    const user = await client.signUp('Carol');
    const ok = await client.api('POST', '/api/v1/api/auth/sign-in/email', { body: { email: user.email, password: 'correct horse battery' } });
    expect(ok.status).toBe(200);
    expect(ok.body.user).toEqual({ id: user.id, name: 'Carol', email: user.email });
    expect(ok.body.token).not.toBe(user.token);

    const wrong = await client.api('POST', '/api/v1/api/auth/sign-in/email', { body: { email: user.email, password: 'not the password' } });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toMatchObject({ statusCode: 401, code: 'UNAUTHENTICATED', message: 'Invalid email or password' });
  });

  it('refuses a duplicate email with 409 and bad fields with 400 naming them', async () => {
    const user = await client.signUp('Dan');
    const duplicate = await client.api('POST', '/api/v1/api/auth/sign-up/email', { body: { name: 'Dan', email: user.email, password: 'another password' } });
    expect(duplicate.status).toBe(409);

    const bad = await client.api('POST', '/api/v1/api/auth/sign-up/email', { body: { name: '', email: 'nope', password: 'short' } });
    expect(bad.status).toBe(400);
    expect(bad.body.details.map((d: { field: string }) => d.field).sort()).toEqual(['email', 'name', 'password']);
  });

  it('rejects requests without a valid bearer token with 401', async () => {
    const none = await client.api('GET', '/api/v1/api/workspaces');
    expect(none.status).toBe(401);
    const forged = await client.api('GET', '/api/v1/api/workspaces', { as: { token: 'forged-token' } });
    expect(forged.status).toBe(401);
  });

  it('accepts the session cookie set at sign-in', async () => {
    const user = await client.signUp('Eve');
    const response = await fetch(`${server.url}/api/v1/api/auth/sign-in/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: user.email, password: 'correct horse battery' }),
    });
    const cookies = response.headers
      .getSetCookie()
      .map((cookie) => cookie.split(';')[0])
      .join('; ');
    expect(cookies).toContain('session_token');
    const me = await client.api('GET', '/api/v1/api/users/me', { headers: { cookie: cookies } });
    expect(me.status).toBe(200);
    expect(me.body.id).toBe(user.id);
  });

  it('signs out: the session token stops working', async () => {
    const user = await client.signUp('Finn');
    expect((await client.api('POST', '/api/v1/api/auth/sign-out', { as: user })).status).toBe(200);
    expect((await client.api('GET', '/api/v1/api/users/me', { as: user })).status).toBe(401);
  });
});

describe('session lifetime', () => {
  it('a session due for extension is extended on use; an expired one is refused', async () => {
    const user = await client.signUp('Lifetime');
    const dueAt = new Date(Date.now() + 5 * 86_400_000); // last extended two days ago
    await server.db.prisma.session.update({ where: { token: sha256(user.token) }, data: { expiresAt: dueAt } });
    expect((await client.api('GET', '/api/v1/api/users/me', { as: user })).status).toBe(200);
    const extended = await server.db.prisma.session.findUniqueOrThrow({ where: { token: sha256(user.token) } });
    expect(extended.expiresAt.getTime()).toBeGreaterThan(dueAt.getTime() + 86_400_000);

    await server.db.prisma.session.update({ where: { token: sha256(user.token) }, data: { expiresAt: new Date(Date.now() - 1000) } });
    expect((await client.api('GET', '/api/v1/api/users/me', { as: user })).status).toBe(401);
    expect((await client.gql('{ viewer { id } }', { as: user })).data).toEqual({ viewer: null });
  });
});

describe('personal API tokens', () => {
  it('are shown once, stored only as a hash, accepted as bearer, and stop working when revoked', async () => {
    const user = await client.signUp('Gus');
    const created = await client.api('POST', '/api/v1/api/users/me/api-tokens', { as: user, body: { name: 'ci' } });
    expect(created.status).toBe(201);
    const { token, apiToken } = created.body;
    expect(token).toMatch(/^prm_[A-Za-z0-9_-]{43}$/);
    expect(apiToken.prefix).toBe(token.slice(0, 12));

    const stored = await server.db.prisma.apiToken.findUniqueOrThrow({ where: { id: apiToken.id } });
    expect(stored.tokenHash).toBe(createHash('sha256').update(token).digest('hex'));
    expect(JSON.stringify(stored)).not.toContain(token);

    const listed = await client.api('GET', '/api/v1/api/users/me/api-tokens', { as: user });
    expect(listed.body).toHaveLength(1);
    expect(JSON.stringify(listed.body)).not.toContain(token);

    const viaToken = await client.api('GET', '/api/v1/api/users/me', { as: { token } });
    expect(viaToken.status).toBe(200);
    expect(viaToken.body.id).toBe(user.id);
    const viaGraphQL = await client.gql('{ viewer { id } }', { as: { token } });
    expect(viaGraphQL.data?.viewer.id).toBe(user.id);

    const other = await client.signUp('Hal');
    expect((await client.api('DELETE', `/api/v1/api/users/me/api-tokens/${apiToken.id}`, { as: other })).status).toBe(404);
    const revoked = await client.api('DELETE', `/api/v1/api/users/me/api-tokens/${apiToken.id}`, { as: user });
    expect(revoked.status).toBe(200);
    expect(revoked.body.revokedAt).toEqual(expect.any(String));
    expect((await client.api('GET', '/api/v1/api/users/me', { as: { token } })).status).toBe(401);
  });

  it('an expired token is refused', async () => {
    const user = await client.signUp('Ivy');
    const created = await client.api('POST', '/api/v1/api/users/me/api-tokens', { as: user, body: { name: 'short', expiresInDays: 1 } });
    await server.db.prisma.apiToken.update({ where: { id: created.body.apiToken.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    expect((await client.api('GET', '/api/v1/api/users/me', { as: { token: created.body.token } })).status).toBe(401);
  });
});

describe('GraphQL accounts', () => {
  it('signs up and in through mutations, with typed errors', async () => {
    const email = `gql.${Date.now()}@example.test`;
    const signUp = await client.gql(
      `mutation($input: SignUpInput!) { signUp(input: $input) { __typename ... on MutationSignUpSuccess { data { token user { id email } } } } }`,
      { variables: { input: { name: 'Quinn', email, password: 'correct horse battery' } } },
    );
    expect(signUp.data?.signUp.__typename).toBe('MutationSignUpSuccess');
    const token = signUp.data?.signUp.data.token;
    const viewer = await client.gql('{ viewer { email role } }', { as: { token } });
    expect(viewer.data?.viewer.email).toBe(email);

    const wrong = await client.gql(`mutation($input: SignInInput!) { signIn(input: $input) { __typename ... on Error { message code } } }`, {
      variables: { input: { email, password: 'wrong password' } },
    });
    expect(wrong.data?.signIn).toEqual({ __typename: 'UnauthenticatedError', message: 'Invalid email or password', code: 'UNAUTHENTICATED' });

    const invalid = await client.gql(`mutation($input: SignUpInput!) { signUp(input: $input) { __typename ... on ValidationError { details { field } } } }`, {
      variables: { input: { name: 'x', email: 'not-an-email', password: 'correct horse battery' } },
    });
    expect(invalid.data?.signUp).toEqual({ __typename: 'ValidationError', details: [{ field: 'email' }] });
  });

  it('viewer is null without a token', async () => {
    const result = await client.gql('{ viewer { id } }');
    expect(result.data).toEqual({ viewer: null });
  });
});

describe('rate limits', () => {
  it('answers 429 with Retry-After past the sign-in limit, on REST and GraphQL alike', async () => {
    const limited = await startTestApp({ AUTH_RATE_LIMIT_MAX: '3', AUTH_RATE_LIMIT_WINDOW_SECONDS: '60' });
    try {
      const limitedClient = clientFor(limited);
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        const response = await limitedClient.api('POST', '/api/v1/api/auth/sign-in/email', { body: { email: 'nobody@example.test', password: 'whatever1' } });
        statuses.push(response.status);
        if (response.status === 429) {
          expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
          expect(response.body).toMatchObject({ statusCode: 429, code: 'RATE_LIMITED' });
        }
      }
      expect(statuses).toEqual([401, 401, 401, 429]);
      const viaGraphQL = await limitedClient.gql(
        `mutation { signIn(input: { email: "nobody@example.test", password: "whatever1" }) { __typename ... on RateLimitedError { retryAfterSeconds } } }`,
      );
      expect(viaGraphQL.data?.signIn.__typename).toBe('RateLimitedError');
    } finally {
      await limited.stop();
    }
  });
});
