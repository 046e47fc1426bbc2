import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor } from './support/client.js';

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');
const signIn = (client: ReturnType<typeof clientFor>, email: string, headers: Record<string, string> = {}) =>
  client.api('POST', '/api/v1/api/auth/sign-in/email', { body: { email, password: 'not the password' }, headers });

let server: TestApp;
let client: ReturnType<typeof clientFor>;

beforeAll(async () => {
  server = await startTestApp();
  client = clientFor(server);
});
afterAll(() => server?.stop());

describe('session tokens at rest', () => {
  it('the session table holds only a hash of the token, and the token still works as bearer', async () => {
    const user = await client.signUp('Hashed');
    const rows = await server.db.prisma.session.findMany({ where: { userId: user.id } });
    expect(rows.map((row) => row.token)).toEqual([sha256(user.token)]);
    expect(JSON.stringify(rows)).not.toContain(user.token);
    expect((await client.api('GET', '/api/v1/api/users/me', { as: user })).status).toBe(200);
    // The stored value is no credential: presented as a token it is hashed again and names no session.
    expect((await client.api('GET', '/api/v1/api/users/me', { as: { token: rows[0]!.token } })).status).toBe(401);
  });
});

describe('personal API tokens cannot manage tokens', () => {
  it('a request authenticated by an API token may not create, list or revoke tokens (403), REST and GraphQL', async () => {
    const user = await client.signUp('Minter');
    const created = await client.api('POST', '/api/v1/api/users/me/api-tokens', { as: user, body: { name: 'ci' } });
    const viaToken = { token: created.body.token as string };

    const mint = await client.api('POST', '/api/v1/api/users/me/api-tokens', { as: viaToken, body: { name: 'another' } });
    expect(mint.status).toBe(403);
    expect(mint.body).toMatchObject({ statusCode: 403, code: 'FORBIDDEN', message: expect.stringContaining('signed-in session') });
    expect((await client.api('GET', '/api/v1/api/users/me/api-tokens', { as: viaToken })).status).toBe(403);
    expect((await client.api('DELETE', `/api/v1/api/users/me/api-tokens/${created.body.apiToken.id}`, { as: viaToken })).status).toBe(403);

    const gqlMint = await client.gql('mutation { createApiToken(name: "x") { __typename ... on Error { code } } }', { as: viaToken });
    expect(gqlMint.data?.createApiToken).toEqual({ __typename: 'ForbiddenError', code: 'FORBIDDEN' });
    const gqlRevoke = await client.gql(`mutation { revokeApiToken(id: "${created.body.apiToken.id}") { __typename ... on Error { code } } }`, { as: viaToken });
    expect(gqlRevoke.data?.revokeApiToken).toEqual({ __typename: 'ForbiddenError', code: 'FORBIDDEN' });
    const gqlList = await client.gql('{ apiTokens { id } }', { as: viaToken });
    expect(gqlList.errors?.[0]?.message).toContain('signed-in session');

    // Only one token exists, still valid; the session may manage it.
    const listed = await client.api('GET', '/api/v1/api/users/me/api-tokens', { as: user });
    expect(listed.body).toHaveLength(1);
    expect(listed.body[0].revokedAt).toBeNull();
    expect((await client.api('GET', '/api/v1/api/users/me', { as: viaToken })).status).toBe(200);
  });
});

describe('client address behind proxies', () => {
  it('a spoofed X-Forwarded-For is ignored by default: the per-address sign-in limit still hits', async () => {
    const limited = await startTestApp({ AUTH_RATE_LIMIT_MAX: '2' });
    try {
      const limitedClient = clientFor(limited);
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await signIn(limitedClient, `spoof${i}@example.test`, { 'x-forwarded-for': `198.51.100.${i + 1}` })).status);
      expect(statuses).toEqual([401, 401, 429]);
    } finally {
      await limited.stop();
    }
  });

  it('with TRUST_PROXY=1 the rightmost X-Forwarded-For hop is the client', async () => {
    const limited = await startTestApp({ AUTH_RATE_LIMIT_MAX: '2', TRUST_PROXY: '1' });
    try {
      const limitedClient = clientFor(limited);
      // Each request from another client (as the proxy reports it): none is limited.
      const distinct: number[] = [];
      for (let i = 0; i < 3; i++) distinct.push((await signIn(limitedClient, `proxied${i}@example.test`, { 'x-forwarded-for': `198.51.100.${i + 1}` })).status);
      expect(distinct).toEqual([401, 401, 401]);
      // One client forging the left part of the header: the hop our proxy appended decides.
      const same: number[] = [];
      for (let i = 0; i < 3; i++)
        same.push((await signIn(limitedClient, `forged${i}@example.test`, { 'x-forwarded-for': `10.0.0.${i + 1}, 203.0.113.9` })).status);
      expect(same).toEqual([401, 401, 429]);
    } finally {
      await limited.stop();
    }
  });
});

describe('per-account sign-in throttling', () => {
  it('attempts on one account from many addresses meet AUTH_ACCOUNT_RATE_LIMIT_MAX (429 + Retry-After); other accounts are unaffected', async () => {
    const limited = await startTestApp({ AUTH_ACCOUNT_RATE_LIMIT_MAX: '2', TRUST_PROXY: '1' });
    try {
      const limitedClient = clientFor(limited);
      const statuses: number[] = [];
      let last: Awaited<ReturnType<typeof signIn>> | undefined;
      for (const [i, email] of ['victim@example.test', 'Victim@Example.test', ' victim@example.TEST '].entries()) {
        last = await signIn(limitedClient, email, { 'x-forwarded-for': `198.51.100.${i + 1}` });
        statuses.push(last.status);
      }
      expect(statuses).toEqual([401, 401, 429]);
      expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(last!.body).toMatchObject({ statusCode: 429, code: 'RATE_LIMITED' });
      expect((await signIn(limitedClient, 'bystander@example.test', { 'x-forwarded-for': '198.51.100.50' })).status).toBe(401);
      const viaGraphQL = await limitedClient.gql(
        'mutation { signIn(input: { email: "VICTIM@example.test", password: "whatever1" }) { __typename ... on RateLimitedError { retryAfterSeconds } } }',
      );
      expect(viaGraphQL.data?.signIn.__typename).toBe('RateLimitedError');
    } finally {
      await limited.stop();
    }
  });
});
