import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor } from './support/client.js';

let server: TestApp;
let client: ReturnType<typeof clientFor>;

beforeAll(async () => {
  server = await startTestApp();
  client = clientFor(server);
});
afterAll(() => server?.stop());

describe('auth routes: only the ones the product needs', () => {
  it("the auth library's other routes answer 404 in our error shape (list-sessions, revoke-sessions, update-session, …)", async () => {
    const user = await client.signUp('Lister');
    for (const [method, path] of [
      ['GET', '/api/v1/api/auth/list-sessions'],
      ['POST', '/api/v1/api/auth/revoke-sessions'],
      ['POST', '/api/v1/api/auth/revoke-session'],
      ['POST', '/api/v1/api/auth/update-session'],
      ['POST', '/api/v1/api/auth/delete-user'],
      ['POST', '/api/v1/api/auth/change-email'],
      ['GET', '/api/v1/api/auth/ok'],
    ] as const) {
      const response = await client.api(method, path, { as: user, body: method === 'POST' ? {} : undefined });
      expect([path, response.status]).toEqual([path, 404]);
      expect(response.body).toMatchObject({ statusCode: 404, code: 'NOT_FOUND' });
    }
  });

  it('get-session answers the session and user without the token, by bearer or cookie; null when signed out', async () => {
    const user = await client.signUp('Sessioned');
    const viaBearer = await client.api('GET', '/api/v1/api/auth/get-session', { as: user });
    expect(viaBearer.status).toBe(200);
    expect(viaBearer.body).toMatchObject({
      session: { userId: user.id, expiresAt: expect.any(String) },
      user: { id: user.id, email: user.email, role: 'user' },
    });
    expect(viaBearer.body.session).not.toHaveProperty('token');
    expect(JSON.stringify(viaBearer.body)).not.toContain(user.token);

    const signIn = await fetch(`${server.url}/api/v1/api/auth/sign-in/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: user.email, password: 'correct horse battery' }),
    });
    const cookie = signIn.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const viaCookie = await client.api('GET', '/api/v1/api/auth/get-session', { headers: { cookie } });
    expect(viaCookie.body.user.id).toBe(user.id);
    expect(JSON.stringify(viaCookie.body)).not.toMatch(/"token"/);

    expect((await client.api('GET', '/api/v1/api/auth/get-session')).body).toBeNull();
  });

  it('update-user changes name and picture with our validation: lengths, no NUL, http(s) pictures only', async () => {
    const user = await client.signUp('Profile');
    const ok = await client.api('POST', '/api/v1/api/auth/update-user', { as: user, body: { name: '  Ada  ', image: 'https://img.example.test/ada.png' } });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ id: user.id, name: 'Ada', image: 'https://img.example.test/ada.png' });

    for (const [bodyIn, field] of [
      [{ image: 'javascript:alert(1)' }, 'image'],
      [{ image: 'data:image/png;base64,AAAA' }, 'image'],
      [{ name: 'a\u0000b' }, 'name'],
      [{ name: 'x'.repeat(101) }, 'name'],
      [{ name: '' }, 'name'],
      [{ role: 'admin' }, 'role'],
    ] as const) {
      const bad = await client.api('POST', '/api/v1/api/auth/update-user', { as: user, body: bodyIn });
      expect([JSON.stringify(bodyIn), bad.status]).toEqual([JSON.stringify(bodyIn), 400]);
      expect(bad.body.details.map((d: { field: string }) => d.field)).toContain(field);
    }
    const cleared = await client.api('POST', '/api/v1/api/auth/update-user', { as: user, body: { image: null } });
    expect(cleared.body.image).toBeNull();
    expect((await client.api('GET', '/api/v1/api/users/me', { as: user })).body).toMatchObject({ name: 'Ada', image: null, role: 'user' });
    expect((await client.api('POST', '/api/v1/api/auth/update-user', { body: { name: 'anon' } })).status).toBe(401);

    const viaGraphQL = await client.gql(
      'mutation { updateProfile(input: { name: "Ada L." }) { __typename ... on MutationUpdateProfileSuccess { data { name } } } }',
      { as: user },
    );
    expect(viaGraphQL.data?.updateProfile.data).toEqual({ name: 'Ada L.' });
    const badImage = await client.gql('mutation { updateProfile(input: { image: "file:///etc/passwd" }) { __typename } }', { as: user });
    expect(badImage.data?.updateProfile.__typename).toBe('ValidationError');
  });

  it('change-password needs the current password; with revokeOtherSessions every other session ends', async () => {
    const user = await client.signUp('Changer');
    const other = await client.api('POST', '/api/v1/api/auth/sign-in/email', { body: { email: user.email, password: 'correct horse battery' } });

    const wrong = await client.api('POST', '/api/v1/api/auth/change-password', {
      as: user,
      body: { currentPassword: 'not it at all', newPassword: 'a brand new password' },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.details).toEqual([{ field: 'currentPassword', message: 'is incorrect' }]);
    const short = await client.api('POST', '/api/v1/api/auth/change-password', {
      as: user,
      body: { currentPassword: 'correct horse battery', newPassword: 'short' },
    });
    expect(short.status).toBe(400);

    const changed = await client.api('POST', '/api/v1/api/auth/change-password', {
      as: user,
      body: { currentPassword: 'correct horse battery', newPassword: 'a brand new password', revokeOtherSessions: true },
    });
    expect(changed.status).toBe(200);
    expect(changed.body.token).toEqual(expect.any(String));
    expect((await client.api('GET', '/api/v1/api/users/me', { as: { token: other.body.token } })).status).toBe(401);
    expect((await client.api('GET', '/api/v1/api/users/me', { as: { token: changed.body.token } })).status).toBe(200);
    const signIn = await client.api('POST', '/api/v1/api/auth/sign-in/email', { body: { email: user.email, password: 'a brand new password' } });
    expect(signIn.status).toBe(200);

    // Not with a personal API token.
    const created = await client.api('POST', '/api/v1/api/users/me/api-tokens', { as: { token: changed.body.token }, body: { name: 'ci' } });
    const viaToken = await client.api('POST', '/api/v1/api/auth/change-password', {
      as: { token: created.body.token },
      body: { currentPassword: 'a brand new password', newPassword: 'yet another password' },
    });
    expect(viaToken.status).toBe(403);
  });

  it('change-password attempts are rate limited per address', async () => {
    const limited = await startTestApp({ AUTH_RATE_LIMIT_MAX: '2' });
    try {
      const limitedClient = clientFor(limited);
      const user = await limitedClient.signUp('Guesser');
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) {
        statuses.push(
          (
            await limitedClient.api('POST', '/api/v1/api/auth/change-password', {
              as: user,
              body: { currentPassword: `guess ${i}`, newPassword: 'a brand new password' },
            })
          ).status,
        );
      }
      expect(statuses).toEqual([400, 400, 429]);
    } finally {
      await limited.stop();
    }
  });
});
