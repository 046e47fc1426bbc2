import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { encodeGlobalID } from '@pothos/plugin-relay';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { createServiceContext } from '../src/context.js';
import { getTargetForScan } from '../src/modules/targets/service.js';

let server: TestApp;
let client: ReturnType<typeof clientFor>;

beforeAll(async () => {
  server = await startTestApp();
  client = clientFor(server);
});
afterAll(() => server?.stop());

const BASE = '/api/v1/api/targets';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

type Target = { id: string; value: string; type: string; createdAt: string; lastScannedAt: string | null; [key: string]: unknown };

/** A signed-up owner with a fresh workspace. */
async function ownerWithWorkspace(name = 'Owner') {
  const owner = await client.signUp(name);
  const workspace = await client.createWorkspace(owner);
  return { owner, workspaceId: workspace.id };
}

function add(as: TestUser, workspaceId: string, value: unknown) {
  return client.api('POST', BASE, { as, workspaceId, body: { value } });
}

async function addOk(as: TestUser, workspaceId: string, value: string): Promise<Target> {
  const response = await add(as, workspaceId, value);
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body;
}

function list(as: TestUser, workspaceId: string, query: Record<string, string | number> = {}) {
  const qs = new URLSearchParams(Object.entries(query).map(([key, value]) => [key, String(value)])).toString();
  return client.api('GET', `${BASE}${qs ? `?${qs}` : ''}`, { as, workspaceId });
}

function fields(response: { body: any }): string[] {
  return (response.body.details ?? []).map((detail: { field: string }) => detail.field);
}

/** Inputs and what they become. Every row normalises to a distinct value, so they can share a workspace. */
const NORMALISED: [input: string, value: string, type: string][] = [
  ['Example.COM', 'example.com', 'domain'],
  ['  www.example.org.  ', 'www.example.org', 'domain'],
  ['bücher.de', 'xn--bcher-kva.de', 'domain'],
  ['MÜNCHEN.example', 'xn--mnchen-3ya.example', 'domain'],
  ['a-b.c-d.example.net', 'a-b.c-d.example.net', 'domain'],
  ['localhost', 'localhost', 'domain'],
  ['10.0.0.1', '10.0.0.1', 'ip'],
  ['::ffff:192.168.1.1', '192.168.1.1', 'ip'],
  ['2001:0DB8:0000:0000:0000:0000:0000:0001', '2001:db8::1', 'ip'],
  ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1', 'ip'],
  ['[2001:db8::2]', '2001:db8::2', 'ip'],
  ['0:0:0:0:0:0:0:1', '::1', 'ip'],
  ['10.1.2.3/32', '10.1.2.3', 'ip'],
  ['192.168.0.77/24', '192.168.0.0/24', 'cidr'],
  ['172.16.0.0/22', '172.16.0.0/22', 'cidr'],
  ['2001:DB8:1::/118', '2001:db8:1::/118', 'cidr'],
  ['::ffff:10.9.0.0/120', '10.9.0.0/24', 'cidr'],
  ['HTTPS://Example.COM:443/', 'https://example.com', 'url'],
  ['http://example.com:80/a/b/?x=1#section', 'http://example.com/a/b?x=1', 'url'],
  ['https://example.com:8443/app/', 'https://example.com:8443/app', 'url'],
  ['http://[2001:DB8::1]:8080/', 'http://[2001:db8::1]:8080', 'url'],
  ['http://[::ffff:1.2.3.4]/x', 'http://1.2.3.4/x', 'url'],
  ['https://bücher.de/', 'https://xn--bcher-kva.de', 'url'],
];

/** Inputs refused with 400, and a piece of the message that says why. */
const REJECTED: [input: string, message: string][] = [
  ['', 'must not be empty'],
  ['   ', 'must not be empty'],
  ['10.0.0.0/16', 'at most 1,024 are allowed (IPv4 /22 or longer)'],
  ['10.0.0.0/21', '2,048 addresses'],
  ['2001:db8::/64', 'IPv6 /118 or longer'],
  ['1.2.3.4/33', 'prefix length must be between 0 and 32'],
  ['ftp://example.com/file', 'scheme "ftp" is not supported'],
  ['http://user:secret@example.com/', 'must not carry credentials'],
  ['not a target', 'must not contain spaces'],
  ['!!!garbage!!!', 'may hold only letters, digits and inner hyphens'],
  ['intranet', 'at least two labels'],
  ['*.example.com', 'wildcards are not supported'],
  ['-bad.example.com', 'inner hyphens'],
  ['a..b.com', 'no empty labels'],
  ['1.2.3', 'not a valid IP address'],
  ['010.0.0.1', 'not a valid IP address'],
  ['1::2::3', 'not a valid IP address'],
  ['example.com:8080', 'a port needs a scheme'],
  ['example.com/path', 'a path needs a scheme'],
  [`${'a'.repeat(64)}.com`, 'at most 63 characters'],
];

describe('normalisation, through POST /api/targets', () => {
  let owner: TestUser;
  let workspaceId: string;
  beforeAll(async () => ({ owner, workspaceId } = await ownerWithWorkspace()));

  it.each(NORMALISED)('%j becomes %j (%s)', async (input, value, type) => {
    const target = await addOk(owner, workspaceId, input);
    expect(target).toMatchObject({ value, type });
  });

  it.each(REJECTED)('%j is refused: %s', async (input, message) => {
    const response = await add(owner, workspaceId, input);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ statusCode: 400, code: 'VALIDATION_FAILED' });
    expect(fields(response)).toEqual(['value']);
    expect(response.body.message).toContain(message);
  });
});

describe('POST /api/targets', () => {
  it('answers 201 with the target, its counts and timestamps', async () => {
    const { owner, workspaceId } = await ownerWithWorkspace();
    const response = await add(owner, workspaceId, 'Scanme.Example.com');
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      id: expect.any(String),
      nodeId: encodeGlobalID('Target', response.body.id),
      workspaceId,
      value: 'scanme.example.com',
      type: 'domain',
      lastScannedAt: null,
      createdById: owner.id,
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
      assetCount: 0,
      findingCount: 0,
    });
    const workspace = await client.api('GET', `/api/v1/api/workspaces/${workspaceId}`, { as: owner });
    expect(workspace.body.targetCount).toBe(1);
  });

  it('refuses the same target spelled differently with 409', async () => {
    const { owner, workspaceId } = await ownerWithWorkspace();
    await addOk(owner, workspaceId, 'example.com');
    for (const spelling of ['EXAMPLE.com', 'example.com.', ' example.com ']) {
      const again = await add(owner, workspaceId, spelling);
      expect(again.status).toBe(409);
      expect(again.body).toMatchObject({ code: 'CONFLICT', message: 'Target example.com already exists in this workspace' });
    }
    // Another workspace may hold the same value.
    const other = await client.createWorkspace(owner);
    expect((await add(owner, other.id, 'example.com')).status).toBe(201);
  });

  it('refuses bad bodies with 400 naming the field', async () => {
    const { owner, workspaceId } = await ownerWithWorkspace();
    const missing = await client.api('POST', BASE, { as: owner, workspaceId, body: {} });
    expect(missing.status).toBe(400);
    expect(fields(missing)).toEqual(['value']);
    const wrongType = await add(owner, workspaceId, 42);
    expect(fields(wrongType)).toEqual(['value']);
    const extra = await client.api('POST', BASE, { as: owner, workspaceId, body: { value: 'a.com', type: 'domain' } });
    expect(extra.status).toBe(400);
    expect(fields(extra)).toEqual(['type']);
  });

  it('needs a signed-in caller and a workspace', async () => {
    const { owner, workspaceId } = await ownerWithWorkspace();
    expect((await client.api('POST', BASE, { workspaceId, body: { value: 'a.com' } })).status).toBe(401);
    const noWorkspace = await client.api('POST', BASE, { as: owner, body: { value: 'a.com' } });
    expect(noWorkspace.status).toBe(400);
    expect(noWorkspace.body.code).toBe('WORKSPACE_REQUIRED');
  });
});

describe('POST /api/targets/bulk', () => {
  it('reports each item: created, duplicate (stored or earlier in the request) or invalid', async () => {
    const { owner, workspaceId } = await ownerWithWorkspace();
    const existing = await addOk(owner, workspaceId, 'old.example.com');
    const response = await client.api('POST', `${BASE}/bulk`, {
      as: owner,
      workspaceId,
      body: {
        targets: [
          { value: 'new.example.com' },
          { value: 'OLD.example.com' },
          { value: 'ftp://x.example.com' },
          { value: 'NEW.example.com.' },
          { value: '10.0.0.0/24' },
          { value: '' },
        ],
      },
    });
    expect(response.status).toBe(200);
    const { results, summary } = response.body;
    expect(summary).toEqual({ created: 2, duplicate: 2, invalid: 2 });
    expect(results.map((r: { value: string; status: string }) => [r.value, r.status])).toEqual([
      ['new.example.com', 'created'],
      ['OLD.example.com', 'duplicate'],
      ['ftp://x.example.com', 'invalid'],
      ['NEW.example.com.', 'duplicate'],
      ['10.0.0.0/24', 'created'],
      ['', 'invalid'],
    ]);
    expect(results[0].target).toMatchObject({ value: 'new.example.com', type: 'domain', workspaceId });
    expect(results[1].target.id).toBe(existing.id);
    expect(results[3].target.id).toBe(results[0].target.id);
    expect(results[2]).not.toHaveProperty('target');
    expect(results[2].error).toContain('"ftp" is not supported');
    expect(results[5].error).toContain('must not be empty');

    const listed = await list(owner, workspaceId, { sortBy: 'value', sortOrder: 'ASC' });
    expect(listed.body.data.map((t: Target) => t.value)).toEqual(['10.0.0.0/24', 'new.example.com', 'old.example.com']);
  });

  it('takes 500 items, refuses 501 and an empty list with 400 naming targets', async () => {
    const { owner, workspaceId } = await ownerWithWorkspace();
    const many = Array.from({ length: 500 }, (_, i) => ({ value: `h${i}.bulk.example.com` }));
    const ok = await client.api('POST', `${BASE}/bulk`, { as: owner, workspaceId, body: { targets: many } });
    expect(ok.status).toBe(200);
    expect(ok.body.summary).toEqual({ created: 500, duplicate: 0, invalid: 0 });
    expect((await list(owner, workspaceId)).body.total).toBe(500);

    const tooMany = await client.api('POST', `${BASE}/bulk`, { as: owner, workspaceId, body: { targets: [...many, { value: 'one.more.com' }] } });
    expect(tooMany.status).toBe(400);
    expect(fields(tooMany)).toEqual(['targets']);
    expect(tooMany.body.message).toContain('at most 500');
    const empty = await client.api('POST', `${BASE}/bulk`, { as: owner, workspaceId, body: { targets: [] } });
    expect(empty.status).toBe(400);
    expect(fields(empty)).toEqual(['targets']);
    const badItem = await client.api('POST', `${BASE}/bulk`, { as: owner, workspaceId, body: { targets: [{ value: 'a.com' }, { name: 'b.com' }] } });
    expect(badItem.status).toBe(400);
    expect(fields(badItem).sort()).toEqual(['targets.1.name', 'targets.1.value']);
  });
});

describe('GET /api/targets', () => {
  let owner: TestUser;
  let workspaceId: string;
  let all: Target[];

  beforeAll(async () => {
    ({ owner, workspaceId } = await ownerWithWorkspace('Lister'));
    all = [];
    for (const value of [
      'alpha.example.com',
      'beta.example.com',
      'gamma.example.org',
      '10.0.0.1',
      '10.0.1.0/24',
      'https://app.example.com',
      'promo100.example.com',
    ]) {
      all.push(await addOk(owner, workspaceId, value));
    }
    // Two targets have been scanned.
    await server.db.prisma.target.update({ where: { id: all[1].id }, data: { lastScannedAt: new Date('2026-01-02T00:00:00Z') } });
    await server.db.prisma.target.update({ where: { id: all[3].id }, data: { lastScannedAt: new Date('2026-01-01T00:00:00Z') } });
  });

  it('pages newest first by default', async () => {
    const first = await list(owner, workspaceId, { limit: 3 });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ total: 7, page: 1, limit: 3, pageCount: 3, hasNextPage: true });
    const pages = [first.body.data];
    for (const page of [2, 3]) pages.push((await list(owner, workspaceId, { limit: 3, page })).body.data);
    const expected = [...all].sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : a.id < b.id ? 1 : -1)).map((t) => t.id);
    expect(pages.flat().map((t: Target) => t.id)).toEqual(expected);
    expect(pages[2]).toHaveLength(1);
    expect((await list(owner, workspaceId, { limit: 3, page: 4 })).body).toMatchObject({ data: [], total: 7, hasNextPage: false });
  });

  it('filters by type and by search (case-insensitive, LIKE wildcards taken literally)', async () => {
    const ips = await list(owner, workspaceId, { type: 'ip' });
    expect(ips.body.data.map((t: Target) => t.value)).toEqual(['10.0.0.1']);
    const cidrs = await list(owner, workspaceId, { type: 'cidr' });
    expect(cidrs.body.data.map((t: Target) => t.value)).toEqual(['10.0.1.0/24']);
    const search = await list(owner, workspaceId, { search: 'EXAMPLE.COM', sortBy: 'value', sortOrder: 'asc' });
    expect(search.body.data.map((t: Target) => t.value)).toEqual(['alpha.example.com', 'beta.example.com', 'https://app.example.com', 'promo100.example.com']);
    expect((await list(owner, workspaceId, { search: '%' })).body.total).toBe(0);
    expect((await list(owner, workspaceId, { search: '_' })).body.total).toBe(0);
    const both = await list(owner, workspaceId, { search: 'example', type: 'url' });
    expect(both.body.data.map((t: Target) => t.value)).toEqual(['https://app.example.com']);
  });

  it('sorts by value and by lastScannedAt (never-scanned last, either way)', async () => {
    const byValue = await list(owner, workspaceId, { sortBy: 'value', sortOrder: 'DESC', limit: 100 });
    const values = all
      .map((t) => t.value)
      .sort()
      .reverse();
    expect(byValue.body.data.map((t: Target) => t.value)).toEqual(values);

    const desc = await list(owner, workspaceId, { sortBy: 'lastScannedAt', sortOrder: 'DESC' });
    expect(desc.body.data.slice(0, 2).map((t: Target) => t.value)).toEqual(['beta.example.com', '10.0.0.1']);
    expect(desc.body.data[0].lastScannedAt).toBe('2026-01-02T00:00:00.000Z');
    const asc = await list(owner, workspaceId, { sortBy: 'lastScannedAt', sortOrder: 'ASC' });
    expect(asc.body.data.slice(0, 2).map((t: Target) => t.value)).toEqual(['10.0.0.1', 'beta.example.com']);
    expect(asc.body.data.slice(2).every((t: Target) => t.lastScannedAt === null)).toBe(true);
  });

  it('refuses bad query parameters with 400 naming them', async () => {
    for (const [query, field] of [
      [{ sortBy: 'name' }, 'sortBy'],
      [{ type: 'host' }, 'type'],
      [{ limit: 101 }, 'limit'],
      [{ page: 0 }, 'page'],
      [{ sortOrder: 'up' }, 'sortOrder'],
      [{ colour: 'red' }, 'colour'],
    ] as const) {
      const response = await list(owner, workspaceId, query);
      expect(response.status, JSON.stringify(query)).toBe(400);
      expect(fields(response)).toEqual([field]);
    }
  });
});

describe('GET and DELETE /api/targets/{id}', () => {
  it('gets one target with its asset and open-finding counts', async () => {
    const { owner, workspaceId } = await ownerWithWorkspace();
    const target = await addOk(owner, workspaceId, 'counted.example.com');
    // As a scan of the target records them: each row is linked to the target it was seen through.
    const link = { targetLinks: { create: { targetId: target.id } } };
    const asset = await server.db.prisma.asset.create({
      data: { workspaceId, targetId: target.id, kind: 'host', key: 'host:counted.example.com', value: 'counted.example.com', data: {}, ...link },
    });
    const finding = {
      workspaceId,
      targetId: target.id,
      assetId: asset.id,
      checkId: 'x',
      source: 'test',
      name: 'X',
      severity: 'low' as const,
      description: '',
      remediation: '',
      matcher: '',
      evidence: {},
      ...link,
    };
    for (const extra of [{ fingerprint: 'f1' }, { fingerprint: 'f2' }, { fingerprint: 'f3', status: 'fixed' as const }]) {
      await server.db.prisma.finding.create({ data: { ...finding, ...extra } });
    }
    const response = await client.api('GET', `${BASE}/${target.id}`, { as: owner, workspaceId });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ id: target.id, value: 'counted.example.com', assetCount: 1, findingCount: 2 });
  });

  it('deletes a target: 200 with its id, then 404', async () => {
    const { owner, workspaceId } = await ownerWithWorkspace();
    const target = await addOk(owner, workspaceId, 'doomed.example.com');
    const deleted = await client.api('DELETE', `${BASE}/${target.id}`, { as: owner, workspaceId });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ id: target.id });
    expect((await client.api('GET', `${BASE}/${target.id}`, { as: owner, workspaceId })).status).toBe(404);
    expect((await client.api('DELETE', `${BASE}/${target.id}`, { as: owner, workspaceId })).status).toBe(404);
    // The value may be added again.
    expect((await add(owner, workspaceId, 'doomed.example.com')).status).toBe(201);
  });

  it('refuses a malformed id with 400 naming id', async () => {
    const { owner, workspaceId } = await ownerWithWorkspace();
    const response = await client.api('GET', `${BASE}/not-a-uuid`, { as: owner, workspaceId });
    expect(response.status).toBe(400);
    expect(fields(response)).toEqual(['id']);
  });
});

describe('workspace isolation and roles', () => {
  it("another workspace's target reads exactly like one that does not exist", async () => {
    const alice = await ownerWithWorkspace('Alice');
    const bob = await ownerWithWorkspace('Bob');
    const bobs = await addOk(bob.owner, bob.workspaceId, 'bob.example.com');

    const stranger = await client.api('GET', `${BASE}/${bobs.id}`, { as: alice.owner, workspaceId: alice.workspaceId });
    const random = await client.api('GET', `${BASE}/${randomUUID()}`, { as: alice.owner, workspaceId: alice.workspaceId });
    expect(stranger.status).toBe(404);
    expect(stranger.body).toEqual(random.body);
    expect(stranger.body).toMatchObject({ code: 'NOT_FOUND', message: 'Target not found' });

    const deleteStranger = await client.api('DELETE', `${BASE}/${bobs.id}`, { as: alice.owner, workspaceId: alice.workspaceId });
    expect(deleteStranger.status).toBe(404);
    expect(deleteStranger.body).toEqual(random.body);
    expect((await client.api('GET', `${BASE}/${bobs.id}`, { as: bob.owner, workspaceId: bob.workspaceId })).status).toBe(200);

    // Naming Bob's workspace does not help: it reads like a workspace that does not exist.
    const viaHeader = await list(alice.owner, bob.workspaceId);
    const noSuchWorkspace = await list(alice.owner, randomUUID());
    expect(viaHeader.status).toBe(404);
    expect(viaHeader.body).toEqual(noSuchWorkspace.body);
    expect((await add(alice.owner, bob.workspaceId, 'sneaky.example.com')).status).toBe(404);
    expect((await client.api('POST', `${BASE}/bulk`, { as: alice.owner, workspaceId: bob.workspaceId, body: { targets: [{ value: 'x.com' }] } })).status).toBe(
      404,
    );
    expect((await list(bob.owner, bob.workspaceId)).body.total).toBe(1);
  });

  it("a target of one of the caller's workspaces is not found through another of them", async () => {
    const { owner, workspaceId } = await ownerWithWorkspace();
    const second = await client.createWorkspace(owner);
    const target = await addOk(owner, workspaceId, 'here.example.com');
    expect((await client.api('GET', `${BASE}/${target.id}`, { as: owner, workspaceId: second.id })).status).toBe(404);
  });

  it('members add, list and delete targets like owners', async () => {
    const { owner, workspaceId } = await ownerWithWorkspace();
    const member = await client.signUp('Member');
    await client.addMember(owner, workspaceId, member);
    const mine = await addOk(member, workspaceId, 'member.example.com');
    const owners = await addOk(owner, workspaceId, 'owner.example.com');
    expect((await list(member, workspaceId)).body.total).toBe(2);
    expect((await client.api('DELETE', `${BASE}/${owners.id}`, { as: member, workspaceId })).status).toBe(200);
    expect((await client.api('GET', `${BASE}/${mine.id}`, { as: owner, workspaceId })).status).toBe(200);
  });

  it('getTargetForScan returns this workspace’s target and 404s for another’s', async () => {
    const alice = await ownerWithWorkspace('Scanner');
    const bob = await ownerWithWorkspace('Other');
    const mine = await addOk(alice.owner, alice.workspaceId, 'scan.example.com');
    const theirs = await addOk(bob.owner, bob.workspaceId, 'theirs.example.com');
    const ctx = createServiceContext(server.app.deps, {
      viewer: { id: alice.owner.id, name: alice.owner.name, email: alice.owner.email, image: null, role: 'user', via: 'session' },
      requestId: 'test',
      clientIp: '127.0.0.1',
    });
    expect(await getTargetForScan(ctx, alice.workspaceId, mine.id)).toMatchObject({ id: mine.id, value: 'scan.example.com', type: 'domain' });
    await expect(getTargetForScan(ctx, alice.workspaceId, theirs.id)).rejects.toMatchObject({ code: 'NOT_FOUND', message: 'Target not found' });
    await expect(getTargetForScan(ctx, bob.workspaceId, theirs.id)).rejects.toMatchObject({ code: 'NOT_FOUND', message: 'Workspace not found' });
  });
});

describe('GraphQL', () => {
  const ADD = `mutation($workspaceId: ID!, $value: String!) {
    addTarget(workspaceId: $workspaceId, value: $value) {
      __typename
      ... on MutationAddTargetSuccess { data { id databaseId value type assetCount findingCount workspace { databaseId } } }
      ... on Error { message code }
      ... on ValidationError { details { field message } }
    }
  }`;

  it('adds targets, lists them as a connection with filters and totalCount, and deletes them', async () => {
    const { owner, workspaceId } = await ownerWithWorkspace();
    const wsId = encodeGlobalID('Workspace', workspaceId);

    const added = await client.gql(ADD, { as: owner, variables: { workspaceId: wsId, value: 'GraphQL.Example.com' } });
    expect(added.data?.addTarget).toMatchObject({
      __typename: 'MutationAddTargetSuccess',
      data: { value: 'graphql.example.com', type: 'domain', assetCount: 0, findingCount: 0, workspace: { databaseId: workspaceId } },
    });
    const target = added.data!.addTarget.data;
    expect(target.id).toBe(encodeGlobalID('Target', target.databaseId));

    const duplicate = await client.gql(ADD, { as: owner, variables: { workspaceId: wsId, value: 'graphql.example.com.' } });
    expect(duplicate.data?.addTarget).toMatchObject({ __typename: 'ConflictError', code: 'CONFLICT' });
    const invalid = await client.gql(ADD, { as: owner, variables: { workspaceId: wsId, value: '10.0.0.0/8' } });
    expect(invalid.data?.addTarget).toMatchObject({ __typename: 'ValidationError', details: [{ field: 'value' }] });
    expect(invalid.data?.addTarget.message).toContain('at most 1,024');

    const bulk = await client.gql(
      `mutation($workspaceId: ID!, $values: [String!]!) {
        addTargets(workspaceId: $workspaceId, values: $values) {
          ... on MutationAddTargetsSuccess { data { created duplicate invalid results { value status error target { value } } } }
        }
      }`,
      { as: owner, variables: { workspaceId: wsId, values: ['10.0.0.1', 'graphql.example.com', 'bad value', 'https://gql.example.com/'] } },
    );
    expect(bulk.data?.addTargets.data).toMatchObject({
      created: 2,
      duplicate: 1,
      invalid: 1,
      results: [
        { value: '10.0.0.1', status: 'created', error: null, target: { value: '10.0.0.1' } },
        { value: 'graphql.example.com', status: 'duplicate', target: { value: 'graphql.example.com' } },
        { value: 'bad value', status: 'invalid', target: null },
        { value: 'https://gql.example.com/', status: 'created', target: { value: 'https://gql.example.com' } },
      ],
    });

    const CONNECTION = `query($id: ID!, $search: String, $type: TargetType, $first: Int, $after: String) {
      node(id: $id) { ... on Workspace { targets(search: $search, type: $type, first: $first, after: $after) {
        totalCount pageInfo { hasNextPage endCursor } edges { node { value type } }
      } } }
    }`;
    const page1 = await client.gql(CONNECTION, { as: owner, variables: { id: wsId, first: 2 } });
    const targets = page1.data?.node.targets;
    expect(targets.totalCount).toBe(3);
    // The two from addTargets share one insert (and createdAt): their order is the id tie-break.
    expect(targets.edges.map((e: { node: { value: string } }) => e.node.value).sort()).toEqual(['10.0.0.1', 'https://gql.example.com']);
    const page2 = await client.gql(CONNECTION, { as: owner, variables: { id: wsId, first: 2, after: targets.pageInfo.endCursor } });
    expect(page2.data?.node.targets.edges.map((e: { node: { value: string } }) => e.node.value)).toEqual(['graphql.example.com']);
    const filtered = await client.gql(CONNECTION, { as: owner, variables: { id: wsId, type: 'url' } });
    expect(filtered.data?.node.targets).toMatchObject({ totalCount: 1, edges: [{ node: { value: 'https://gql.example.com', type: 'url' } }] });
    const searched = await client.gql(CONNECTION, { as: owner, variables: { id: wsId, search: 'GRAPHQL' } });
    expect(searched.data?.node.targets.totalCount).toBe(1);

    const one = await client.gql('query($id: ID!) { target(id: $id) { value } node(id: $id) { ... on Target { databaseId } } }', {
      as: owner,
      variables: { id: target.id },
    });
    expect(one.data).toEqual({ target: { value: 'graphql.example.com' }, node: { databaseId: target.databaseId } });

    const DELETE = `mutation($id: ID!) { deleteTarget(id: $id) { __typename ... on MutationDeleteTargetSuccess { data } ... on Error { code } } }`;
    const deleted = await client.gql(DELETE, { as: owner, variables: { id: target.id } });
    expect(deleted.data?.deleteTarget).toEqual({ __typename: 'MutationDeleteTargetSuccess', data: target.databaseId });
    const again = await client.gql(DELETE, { as: owner, variables: { id: target.id } });
    expect(again.data?.deleteTarget).toMatchObject({ __typename: 'NotFoundError', code: 'NOT_FOUND' });
  });

  it("hides another workspace's targets: null on lookups, NotFoundError on mutations", async () => {
    const alice = await ownerWithWorkspace('GqlAlice');
    const bob = await ownerWithWorkspace('GqlBob');
    const bobs = await addOk(bob.owner, bob.workspaceId, 'hidden.example.com');
    const id = encodeGlobalID('Target', bobs.id);

    const lookup = await client.gql('query($id: ID!) { target(id: $id) { value } node(id: $id) { id } }', { as: alice.owner, variables: { id } });
    expect(lookup.data).toEqual({ target: null, node: null });
    const deleted = await client.gql(`mutation($id: ID!) { deleteTarget(id: $id) { __typename ... on Error { message } } }`, {
      as: alice.owner,
      variables: { id },
    });
    expect(deleted.data?.deleteTarget).toEqual({ __typename: 'NotFoundError', message: 'Target not found' });
    const added = await client.gql(ADD, { as: alice.owner, variables: { workspaceId: encodeGlobalID('Workspace', bob.workspaceId), value: 'x.example.com' } });
    expect(added.data?.addTarget).toMatchObject({ __typename: 'NotFoundError', message: 'Workspace not found' });
    expect((await list(bob.owner, bob.workspaceId)).body.total).toBe(1);
  });
});
