import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { startS3Server, type TestS3Server } from './support/s3.js';

/** A real 1×1 PNG, and the shortest prefixes the other raster types are recognised by. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]), Buffer.from('JFIF\0'), Buffer.alloc(32), Buffer.from([0xff, 0xd9])]);
const GIF = Buffer.concat([Buffer.from('GIF89a'), Buffer.from([1, 0, 1, 0, 0x80, 0, 0]), Buffer.alloc(16), Buffer.from(';')]);
const WEBP = Buffer.concat([Buffer.from('RIFF'), Buffer.from([26, 0, 0, 0]), Buffer.from('WEBPVP8L'), Buffer.alloc(14)]);
const SVG_WITH_SCRIPT = '<svg xmlns="http://www.w3.org/2000/svg"><script>fetch("/api/v1/api/users/me")</script></svg>';

const b64 = (bytes: Buffer | string) => Buffer.from(bytes).toString('base64');

const CONFIG = '/api/v1/api/system-configs';
const PUBLIC = '/api/v1/api/system-configs/public';
const LOGO = '/api/v1/api/system-configs/logo';

let server: TestApp;
let client: ReturnType<typeof clientFor>;
let admin: TestUser;
let user: TestUser;

beforeAll(async () => {
  server = await startTestApp();
  client = clientFor(server);
  admin = await client.signUp('Admin'); // the first account administers the instance
  user = await client.signUp('User');
});
afterAll(() => server?.stop());

const put = (body: unknown, as: TestUser | undefined = admin) => client.api('PUT', CONFIG, { as, body });
const upload = (contentType: string, data: Buffer | string, as: TestUser | undefined = admin) =>
  client.api('POST', LOGO, { as, body: { contentType, dataBase64: b64(data) } });
const config = async () => (await client.api('GET', CONFIG, { as: admin })).body;

describe('permissions', () => {
  it.each([
    ['GET', CONFIG, undefined],
    ['PUT', CONFIG, { name: 'Mine now' }],
    ['POST', LOGO, { contentType: 'image/png', dataBase64: b64(PNG) }],
  ])('%s %s: 401 anonymous, 403 for a user, allowed for an administrator', async (method, path, body) => {
    const anonymous = await client.api(method, path, { body });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toMatchObject({ statusCode: 401, code: 'UNAUTHENTICATED' });
    const forbidden = await client.api(method, path, { as: user, body });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body).toMatchObject({ statusCode: 403, code: 'FORBIDDEN', message: 'Only an instance administrator may do this' });
    // Even with bad input: who you are is checked first.
    const bad = method === 'GET' ? client.api(method, `${path}?nonsense=true`, { as: user }) : client.api(method, path, { as: user, body: { nonsense: true } });
    expect((await bad).status).toBe(403);
    expect((await client.api(method, path, { as: admin, body })).status).toBe(200);
  });

  it('serves the public metadata and the logo without authentication', async () => {
    expect((await client.api('GET', PUBLIC)).status).toBe(200);
    expect((await client.api('GET', PUBLIC, { as: user })).status).toBe(200);
    expect((await client.api('GET', LOGO)).status).toBe(200);
  });

  it('never lets a user change anything', async () => {
    const before = await config();
    await put({ name: 'Hijacked', logoPath: null }, user);
    await upload('image/gif', GIF, user);
    expect(await config()).toEqual(before);
  });
});

describe('PUT /api/system-configs', () => {
  it('starts from the defaults, answers {message}, and leaves absent fields as they were', async () => {
    const fresh = await startTestApp();
    const freshClient = clientFor(fresh);
    try {
      const first = await freshClient.signUp('Root');
      expect((await freshClient.api('GET', PUBLIC)).body).toEqual({ name: 'Perimeter', logoUrl: null });
      expect((await freshClient.api('GET', CONFIG, { as: first })).body).toEqual({
        name: 'Perimeter',
        logoPath: null,
        logoUrl: null,
        updatedAt: expect.any(String),
        updatedBy: null,
      });

      const named = await freshClient.api('PUT', CONFIG, { as: first, body: { name: '  Acme ASM  ' } });
      expect(named.status).toBe(200);
      expect(named.body).toEqual({ message: 'System configuration updated' });
      let current = (await freshClient.api('GET', CONFIG, { as: first })).body;
      expect(current).toMatchObject({ name: 'Acme ASM', logoPath: null, updatedBy: first.id });

      await freshClient.api('PUT', CONFIG, { as: first, body: { logoPath: '/branding/acme.png' } });
      current = (await freshClient.api('GET', CONFIG, { as: first })).body;
      expect(current).toMatchObject({ name: 'Acme ASM', logoPath: '/branding/acme.png', logoUrl: '/branding/acme.png' });

      await freshClient.api('PUT', CONFIG, { as: first, body: { name: 'Acme' } });
      expect((await freshClient.api('GET', CONFIG, { as: first })).body).toMatchObject({ name: 'Acme', logoPath: '/branding/acme.png' });

      // Nothing at all: nothing changes.
      expect((await freshClient.api('PUT', CONFIG, { as: first, body: {} })).status).toBe(200);
      expect((await freshClient.api('GET', PUBLIC)).body).toEqual({ name: 'Acme', logoUrl: '/branding/acme.png' });
    } finally {
      await fresh.stop();
    }
  });

  it('clears the logo with {} (the shape the interface shows) or null, keeping the name', async () => {
    await put({ name: 'Clearing', logoPath: 'https://cdn.example.test/logo.png' });
    expect((await client.api('GET', PUBLIC)).body).toEqual({ name: 'Clearing', logoUrl: 'https://cdn.example.test/logo.png' });

    expect((await put({ logoPath: {} })).status).toBe(200);
    expect(await config()).toMatchObject({ name: 'Clearing', logoPath: null, logoUrl: null });

    await put({ logoPath: '/x.png' });
    expect((await put({ logoPath: null })).status).toBe(200);
    expect(await config()).toMatchObject({ name: 'Clearing', logoPath: null });
  });

  it.each([
    [{ name: '' }, 'name', /must not be empty/],
    [{ name: '   ' }, 'name', /must not be empty/],
    [{ name: 'x'.repeat(101) }, 'name', /at most 100/],
    [{ name: 42 }, 'name', /string/],
    [{ name: null }, 'name', /string/],
    [{ logoPath: { path: 'x' } }, 'logoPath', /.+/],
    [{ logoPath: '' }, 'logoPath', /must not be empty/],
    [{ logoPath: 'javascript:alert(1)' }, 'logoPath', /http\(s\) URL/],
    [{ logoPath: 'data:image/png;base64,AAAA' }, 'logoPath', /http\(s\) URL/],
    [{ logoPath: '//evil.example/logo.png' }, 'logoPath', /protocol-relative/],
    [{ logoPath: '/a/../../etc/passwd' }, 'logoPath', /\.\. segments/],
    [{ logoPath: 'logos/../nuclei-templates/t.yaml' }, 'logoPath', /\.\. segments/],
    [{ logoPath: 'nuclei-templates/secret.yaml' }, 'logoPath', /private storage area \(nuclei-templates\/\)/],
    [{ logoPath: 'scan-artefacts/0d9f/dns.json' }, 'logoPath', /private storage area/],
    [{ logoPath: 'system/<script>alert(1)</script>.png' }, 'logoPath', /markup/],
    [{ logoPath: 'system/logo.png" onerror="alert(1)' }, 'logoPath', /markup/],
    [{ logoPath: '/branding/"><img src=x onerror=alert(1)>' }, 'logoPath', /markup/],
    [{ logoPath: 'https://cdn.example.test/"><svg onload=alert(1)>' }, 'logoPath', /markup/],
    [{ logoPath: 'JavaScript:alert(1)//system/logo.png' }, 'logoPath', /http\(s\) URL/],
    [{ logoPath: 'logo.png' }, 'logoPath', /bucket\/name/],
    [{ logoPath: 'System/logo.png' }, 'logoPath', /bucket\/name/],
    [{ logoPath: 'logos/never-uploaded.png' }, 'logoPath', /no uploaded logo/],
    [{ logoPath: 'logos/a\u0000b.png' }, 'logoPath', /must not contain NUL characters/],
    [{ logoPath: 'logos/a\u0001b.png' }, 'logoPath', /control characters/],
    [{ logoPath: 'x'.repeat(1025) }, 'logoPath', /at most 1024/],
    [{ name: 'Fine', colour: 'red' }, 'colour', /not a known field/],
  ])('refuses %j with 400 naming the field', async (body, field, message) => {
    const before = await config();
    const response = await put(body);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ statusCode: 400, code: 'VALIDATION_FAILED' });
    const detail = response.body.details.find((d: { field: string }) => d.field === field);
    expect(detail, JSON.stringify(response.body)).toBeDefined();
    expect(detail.message).toMatch(message);
    expect(await config()).toEqual(before);
  });

  it("accepts OASM's storage paths (bucket/key), which its clients send back as they got them", async () => {
    for (const logoPath of [`system/logo-${'3f1c2d4e-5a6b-4c7d-8e9f-0a1b2c3d4e5f'}.png`, 'system/branding/logo_v2.webp', 'oasm-bucket.1/logo.JPG']) {
      const response = await put({ logoPath });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect(await config()).toMatchObject({ logoPath, logoUrl: logoPath });
      expect((await client.api('GET', PUBLIC)).body.logoUrl).toBe(logoPath);
    }
    await put({ logoPath: null });
  });

  it.each([['[]'], ['[{"name":"Array"}]'], ['"Name"'], ['42'], ['null'], ['true']])(
    'refuses the body %s: only the declared object is accepted',
    async (rawBody) => {
      const before = await config();
      const response = await client.api('PUT', CONFIG, { as: admin, rawBody, headers: { 'content-type': 'application/json' } });
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ statusCode: 400, code: 'BAD_REQUEST', message: expect.stringMatching(/must be a JSON object/) });
      expect(await config()).toEqual(before);
    },
  );

  it('refuses a body that is not JSON', async () => {
    expect((await client.api('PUT', CONFIG, { as: admin, rawBody: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } })).status).toBe(
      415,
    );
    expect((await client.api('PUT', CONFIG, { as: admin, rawBody: '{"name":', headers: { 'content-type': 'application/json' } })).status).toBe(400);
  });
});

describe('logo upload and serving', () => {
  it('stores a PNG under logos/, publishes its URL, and serves it back byte for byte', async () => {
    await put({ name: 'Logo Co' });
    const response = await upload('image/png', PNG);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ logoPath: expect.stringMatching(/^logos\/[0-9a-f-]{36}\.png$/) });
    const { logoPath } = response.body;
    expect(await server.app.deps.storage.exists(logoPath)).toBe(true);

    const meta = await client.api('GET', PUBLIC);
    expect(meta.body).toEqual({ name: 'Logo Co', logoUrl: expect.stringMatching(/^\/api\/v1\/api\/system-configs\/logo\?v=[0-9a-f]{16}$/) });
    expect(await config()).toMatchObject({ logoPath, logoUrl: meta.body.logoUrl });

    const served = await fetch(`${server.url}${meta.body.logoUrl}`);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe('image/png');
    expect(served.headers.get('x-content-type-options')).toBe('nosniff');
    expect(served.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(Buffer.from(await served.arrayBuffer()).equals(PNG)).toBe(true);

    // Without the version the response revalidates, by ETag.
    const plain = await fetch(`${server.url}${LOGO}`);
    expect(plain.headers.get('cache-control')).toBe('public, no-cache');
    const etag = plain.headers.get('etag')!;
    expect(etag).toMatch(/^"[0-9a-f]{16}"$/);
    const revalidated = await fetch(`${server.url}${LOGO}`, { headers: { 'if-none-match': etag } });
    expect(revalidated.status).toBe(304);

    const head = await fetch(`${server.url}${LOGO}`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(PNG.length));
  });

  it.each([
    ['image/jpeg', JPEG, 'jpg'],
    ['image/jpg', JPEG, 'jpg'],
    ['image/gif', GIF, 'gif'],
    ['IMAGE/WEBP; charset=binary', WEBP, 'webp'],
  ])('accepts %s', async (contentType, bytes, extension) => {
    const response = await upload(contentType, bytes);
    expect(response.status).toBe(200);
    expect(response.body.logoPath).toMatch(new RegExp(`^logos/.+\\.${extension}$`));
    const served = await fetch(`${server.url}${LOGO}`);
    expect(served.headers.get('content-type')).toBe(contentType === 'image/jpg' ? 'image/jpeg' : contentType.split(';')[0]!.toLowerCase());
    expect(Buffer.from(await served.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it('removes the previous logo file when a new one replaces it, or when the logo is cleared', async () => {
    const first = (await upload('image/png', PNG)).body.logoPath;
    const second = (await upload('image/gif', GIF)).body.logoPath;
    expect(await server.app.deps.storage.exists(first)).toBe(false);
    expect(await server.app.deps.storage.exists(second)).toBe(true);
    // The old versioned URL now revalidates instead of being cached for good.
    expect((await fetch(`${server.url}${LOGO}?v=stale`)).headers.get('cache-control')).toBe('public, no-cache');

    expect((await put({ logoPath: {} })).status).toBe(200);
    expect(await server.app.deps.storage.exists(second)).toBe(false);
    const gone = await client.api('GET', LOGO);
    expect(gone.status).toBe(404);
    expect(gone.body).toMatchObject({ statusCode: 404, code: 'NOT_FOUND' });
  });

  it('lets an administrator point back at a stored logo, and answers 404 for an external one', async () => {
    const { logoPath } = (await upload('image/png', PNG)).body;
    await put({ logoPath: 'https://cdn.example.test/logo.png' });
    // Replacing a stored logo removed its file: pointing back at it is refused.
    expect((await put({ logoPath })).status).toBe(400);

    const again = (await upload('image/png', PNG)).body.logoPath;
    expect((await put({ logoPath: again })).status).toBe(200);
    expect((await client.api('GET', LOGO)).status).toBe(200);

    await put({ logoPath: '/static/logo.png' });
    expect((await client.api('GET', LOGO)).status).toBe(404);
  });

  it.each([
    ['a JPEG declared as PNG', 'image/png', JPEG, 400, 'VALIDATION_FAILED', /is a image\/jpeg image, not image\/png/],
    ['text declared as PNG', 'image/png', 'hello, world', 400, 'VALIDATION_FAILED', /not a PNG, JPEG, GIF or WebP image/],
    ['HTML declared as GIF', 'image/gif', '<html><script>alert(1)</script></html>', 400, 'VALIDATION_FAILED', /not a PNG, JPEG, GIF or WebP/],
    ['an SVG with a script', 'image/svg+xml', SVG_WITH_SCRIPT, 415, 'UNSUPPORTED_MEDIA_TYPE', /SVG logos are not accepted/],
    ['an SVG with an event handler', 'image/svg+xml', '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>', 415, 'UNSUPPORTED_MEDIA_TYPE', /SVG/],
    ['an SVG with a script declared as PNG', 'image/png', SVG_WITH_SCRIPT, 400, 'VALIDATION_FAILED', /not a PNG/],
    ['HTML', 'text/html', '<html></html>', 415, 'UNSUPPORTED_MEDIA_TYPE', /must be one of: image\/png/],
    ['a PDF', 'application/pdf', '%PDF-1.7', 415, 'UNSUPPORTED_MEDIA_TYPE', /must be one of/],
    ['a truncated PNG signature', 'image/png', PNG.subarray(0, 8), 400, 'VALIDATION_FAILED', /not a PNG/],
    ['contentType "__proto__"', '__proto__', PNG, 400, 'VALIDATION_FAILED', /contentType: must be a media type/],
    ['contentType "constructor"', 'constructor', PNG, 400, 'VALIDATION_FAILED', /contentType: must be a media type/],
    ['contentType "image/__proto__"', 'image/__proto__', PNG, 415, 'UNSUPPORTED_MEDIA_TYPE', /must be one of/],
    ['one byte over 512 KiB', 'image/png', Buffer.concat([PNG, Buffer.alloc(512 * 1024 + 1 - PNG.length)]), 413, 'PAYLOAD_TOO_LARGE', /at most 524288 bytes/],
  ])('refuses %s', async (_label, contentType, bytes, status, code, message) => {
    const before = await config();
    const response = await upload(contentType, bytes);
    expect(response.status).toBe(status);
    expect(response.body).toMatchObject({ statusCode: status, code });
    expect(response.body.message).toMatch(message);
    expect(await config()).toEqual(before);
  });

  it('accepts exactly 512 KiB', async () => {
    const response = await upload('image/png', Buffer.concat([PNG, Buffer.alloc(512 * 1024 - PNG.length)]));
    expect(response.status).toBe(200);
    expect(Number((await fetch(`${server.url}${LOGO}`, { method: 'HEAD' })).headers.get('content-length'))).toBe(512 * 1024);
  });

  it('refuses a body larger than the request limit with 413, and malformed input with 400', async () => {
    const huge = await client.api('POST', LOGO, { as: admin, body: { contentType: 'image/png', dataBase64: 'A'.repeat(2_000_000) } });
    expect(huge.status).toBe(413);
    const notBase64 = await client.api('POST', LOGO, { as: admin, body: { contentType: 'image/png', dataBase64: 'not base64!' } });
    expect(notBase64.status).toBe(400);
    expect(notBase64.body.details).toEqual([{ field: 'dataBase64', message: 'must be base64' }]);
    const missing = await client.api('POST', LOGO, { as: admin, body: { contentType: 'image/png' } });
    expect(missing.status).toBe(400);
    expect(missing.body.details.map((d: { field: string }) => d.field)).toEqual(['dataBase64']);
    const extra = await client.api('POST', LOGO, { as: admin, body: { contentType: 'image/png', dataBase64: b64(PNG), name: 'x' } });
    expect(extra.status).toBe(400);
    expect(extra.body.details).toEqual([{ field: 'name', message: 'is not a known field' }]);
  });

  it('serves nothing but the logo route: other blobs stay private', async () => {
    await server.app.deps.storage.put('nuclei-templates/private.yaml', 'id: private');
    expect((await put({ logoPath: 'nuclei-templates/private.yaml' })).status).toBe(400);
    expect((await client.api('GET', `${LOGO}/../../nuclei-templates/private.yaml`)).status).not.toBe(200);
  });
});

describe('GraphQL', () => {
  const SYSTEM_CONFIG = 'query { systemConfig { name logoPath logoUrl updatedAt updatedBy } }';
  const PUBLIC_CONFIG = 'query { publicSystemConfig { name logoUrl } }';
  const UPDATE = `mutation ($name: String, $logoPath: String) {
    updateSystemConfig(name: $name, logoPath: $logoPath) {
      __typename
      ... on MutationUpdateSystemConfigSuccess { data { name logoPath logoUrl } }
      ... on Error { code message }
      ... on ValidationError { details { field message } }
    }
  }`;
  const UPLOAD = `mutation ($contentType: String!, $dataBase64: String!) {
    uploadSystemLogo(contentType: $contentType, dataBase64: $dataBase64) {
      __typename
      ... on MutationUploadSystemLogoSuccess { data { logoPath logoUrl } }
      ... on Error { code message }
    }
  }`;

  it('publicSystemConfig needs no account; systemConfig only for administrators', async () => {
    await put({ name: 'Graph Co', logoPath: null });
    expect((await client.gql(PUBLIC_CONFIG)).data).toEqual({ publicSystemConfig: { name: 'Graph Co', logoUrl: null } });

    const anonymous = await client.gql(SYSTEM_CONFIG);
    expect(anonymous.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const forbidden = await client.gql(SYSTEM_CONFIG, { as: user });
    expect(forbidden.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const allowed = await client.gql(SYSTEM_CONFIG, { as: admin });
    expect(allowed.data?.systemConfig).toMatchObject({ name: 'Graph Co', logoPath: null, updatedBy: admin.id });
  });

  it('updateSystemConfig: typed errors, absent arguments untouched, null clears the logo', async () => {
    const forbidden = await client.gql(UPDATE, { as: user, variables: { name: 'Nope' } });
    expect(forbidden.data?.updateSystemConfig).toMatchObject({ __typename: 'ForbiddenError', code: 'FORBIDDEN' });
    const anonymous = await client.gql(UPDATE, { variables: { name: 'Nope' } });
    expect(anonymous.data?.updateSystemConfig).toMatchObject({ __typename: 'UnauthenticatedError' });

    const named = await client.gql(UPDATE, { as: admin, variables: { name: 'Via GraphQL', logoPath: '/g.png' } });
    expect(named.data?.updateSystemConfig).toEqual({
      __typename: 'MutationUpdateSystemConfigSuccess',
      data: { name: 'Via GraphQL', logoPath: '/g.png', logoUrl: '/g.png' },
    });

    const renamed = await client.gql(UPDATE, { as: admin, variables: { name: 'Renamed' } });
    expect(renamed.data?.updateSystemConfig.data).toEqual({ name: 'Renamed', logoPath: '/g.png', logoUrl: '/g.png' });

    const cleared = await client.gql(UPDATE, { as: admin, variables: { logoPath: null } });
    expect(cleared.data?.updateSystemConfig.data).toEqual({ name: 'Renamed', logoPath: null, logoUrl: null });

    const invalid = await client.gql(UPDATE, { as: admin, variables: { name: '', logoPath: 'javascript:alert(1)' } });
    expect(invalid.data?.updateSystemConfig.__typename).toBe('ValidationError');
    expect(invalid.data?.updateSystemConfig.details.map((d: { field: string }) => d.field).sort()).toEqual(['logoPath', 'name']);
  });

  it('uploadSystemLogo stores the logo like the REST route, with the same refusals', async () => {
    const uploaded = await client.gql(UPLOAD, { as: admin, variables: { contentType: 'image/png', dataBase64: b64(PNG) } });
    expect(uploaded.data?.uploadSystemLogo).toMatchObject({
      __typename: 'MutationUploadSystemLogoSuccess',
      data: { logoPath: expect.stringMatching(/^logos\/.+\.png$/) },
    });
    const served = await fetch(`${server.url}${uploaded.data?.uploadSystemLogo.data.logoUrl}`);
    expect(Buffer.from(await served.arrayBuffer()).equals(PNG)).toBe(true);

    const largest = Buffer.concat([PNG, Buffer.alloc(512 * 1024 - PNG.length, 7)]);
    const big = await client.gql(UPLOAD, { as: admin, variables: { contentType: 'image/png', dataBase64: b64(largest) } });
    expect(big.data?.uploadSystemLogo.__typename).toBe('MutationUploadSystemLogoSuccess');
    const tooBig = await client.gql(UPLOAD, { as: admin, variables: { contentType: 'image/png', dataBase64: b64(Buffer.concat([largest, Buffer.alloc(1)])) } });
    expect(tooBig.data?.uploadSystemLogo).toMatchObject({ __typename: 'AppError', code: 'PAYLOAD_TOO_LARGE' });

    const svg = await client.gql(UPLOAD, { as: admin, variables: { contentType: 'image/svg+xml', dataBase64: b64(SVG_WITH_SCRIPT) } });
    expect(svg.data?.uploadSystemLogo).toMatchObject({ __typename: 'AppError', code: 'UNSUPPORTED_MEDIA_TYPE' });
    const forbidden = await client.gql(UPLOAD, { as: user, variables: { contentType: 'image/png', dataBase64: b64(PNG) } });
    expect(forbidden.data?.uploadSystemLogo).toMatchObject({ __typename: 'ForbiddenError' });
  });
});

describe('with STORAGE_DRIVER=s3', () => {
  let s3: TestS3Server;
  let s3App: TestApp;

  beforeAll(async () => {
    s3 = await startS3Server('perimeter-logos');
    s3App = await startTestApp(s3.env());
  });
  afterAll(async () => {
    await s3App?.stop();
    await s3?.stop();
  });

  it('uploads the logo into the bucket, serves it from there, and removes it when replaced', async () => {
    const s3Client = clientFor(s3App);
    const root = await s3Client.signUp('Root');
    expect(s3App.app.deps.storage.kind).toBe('s3');

    const response = await s3Client.api('POST', LOGO, { as: root, body: { contentType: 'image/png', dataBase64: b64(PNG) } });
    expect(response.status).toBe(200);
    const { logoPath } = response.body;

    // Read straight from the S3 server, not through the app.
    const object = await s3.readObject(logoPath);
    expect(object).not.toBeNull();
    expect(object!.body.equals(PNG)).toBe(true);
    expect(object!.contentType).toBe('image/png');

    const served = await fetch(`${s3App.url}${LOGO}`);
    expect(served.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await served.arrayBuffer()).equals(PNG)).toBe(true);

    await s3Client.api('POST', LOGO, { as: root, body: { contentType: 'image/gif', dataBase64: b64(GIF) } });
    expect(await s3.readObject(logoPath)).toBeNull();
  });
});
