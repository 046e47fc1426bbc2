import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor } from './support/client.js';

const INTROSPECTION = '{ __schema { queryType { name } } }';

async function graphiqlPage(server: TestApp) {
  return fetch(`${server.url}/graphql`, { headers: { accept: 'text/html' } });
}

describe('GraphiQL works without internet', () => {
  let server: TestApp;
  beforeAll(async () => {
    server = await startTestApp();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('the page references no external script, style or worker, and every asset it names answers 200', async () => {
    const response = await graphiqlPage(server);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/html');
    const html = await response.text();
    expect(html).toContain('Perimeter GraphQL');
    expect(html).not.toMatch(/(src|href)\s*=\s*["']?(https?:)?\/\//i);
    expect(html).not.toMatch(/unpkg|jsdelivr|cdn\./i);

    // Every URL the page loads: script and stylesheet attributes, and the editor's worker scripts.
    const urls = new Set<string>();
    for (const match of html.matchAll(/(?:src|href)\s*=\s*"([^"]+)"/g)) if (!match[1]!.startsWith('data:')) urls.add(match[1]!);
    for (const match of html.matchAll(/"(\/graphql\/assets\/[^"]+)"/g)) urls.add(match[1]!);
    expect([...urls].some((url) => url.endsWith('.js'))).toBe(true);
    expect([...urls].some((url) => url.endsWith('.css'))).toBe(true);
    expect([...urls].filter((url) => url.includes('worker'))).toHaveLength(3);
    for (const url of urls) {
      expect(url.startsWith('/'), url).toBe(true);
      const asset = await fetch(`${server.url}${url}`);
      expect(asset.status, url).toBe(200);
      expect((await asset.arrayBuffer()).byteLength, url).toBeGreaterThan(1000);
    }
  });

  it("serves only the package's page assets under /graphql/assets/", async () => {
    for (const path of ['/graphql/assets/package.json', '/graphql/assets/../package.json', '/graphql/assets/yoga-graphiql.es.js']) {
      expect((await fetch(`${server.url}${path}`)).status, path).toBe(404);
    }
  });

  it('anonymous introspection is allowed outside production', async () => {
    const result = await clientFor(server).gql(INTROSPECTION);
    expect(result.data).toEqual({ __schema: { queryType: { name: 'Query' } } });
  });
});

describe('in production GraphiQL and anonymous introspection are off by default', () => {
  let server: TestApp;
  beforeAll(async () => {
    server = await startTestApp({ NODE_ENV: 'production' });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('serves no GraphiQL page or assets', async () => {
    const page = await graphiqlPage(server);
    expect(page.headers.get('content-type') ?? '').not.toContain('text/html');
    expect(await page.text()).not.toMatch(/graphiql/i);
    expect((await fetch(`${server.url}/graphql/assets/yoga-graphiql.umd.js`)).status).toBe(404);
  });

  it('refuses anonymous introspection (UNAUTHENTICATED) but lets a signed-in user introspect', async () => {
    const client = clientFor(server);
    const anonymous = await client.gql(INTROSPECTION);
    expect(anonymous.data).toBeUndefined();
    expect(anonymous.errors?.[0]).toMatchObject({ message: 'Introspection requires signing in', extensions: { code: 'UNAUTHENTICATED' } });
    const byType = await client.gql('{ __type(name: "Query") { name } }');
    expect(byType.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    // __typename is not introspection.
    expect((await client.gql('{ __typename }')).data).toEqual({ __typename: 'Query' });

    const user = await client.signUp('Developer');
    expect((await client.gql(INTROSPECTION, { as: user })).data).toEqual({ __schema: { queryType: { name: 'Query' } } });
  });
});

describe('GRAPHIQL and GRAPHQL_INTROSPECTION switch them on in production', () => {
  let server: TestApp;
  beforeAll(async () => {
    server = await startTestApp({ NODE_ENV: 'production', GRAPHIQL: 'true', GRAPHQL_INTROSPECTION: 'true' });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('serves GraphiQL and answers anonymous introspection', async () => {
    const page = await graphiqlPage(server);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Perimeter GraphQL');
    expect((await clientFor(server).gql(INTROSPECTION)).data).toEqual({ __schema: { queryType: { name: 'Query' } } });
  });
});

describe('GRAPHIQL=false and GRAPHQL_INTROSPECTION=false switch them off outside production', () => {
  let server: TestApp;
  beforeAll(async () => {
    server = await startTestApp({ GRAPHIQL: 'false', GRAPHQL_INTROSPECTION: 'false' });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('serves no GraphiQL and refuses anonymous introspection', async () => {
    expect(await (await graphiqlPage(server)).text()).not.toMatch(/graphiql/i);
    expect((await clientFor(server).gql(INTROSPECTION)).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });
});
