import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { encodeGlobalID } from '@pothos/plugin-relay';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { discoverySettingsOf } from '../src/modules/workspaces/discovery-settings.js';

let server: TestApp;
let client: ReturnType<typeof clientFor>;
/** SQL statements sent while `recording` (the N+1 check). */
const statements: string[] = [];
let recording = false;

beforeAll(async () => {
  server = await startTestApp({}, { logQueries: true });
  client = clientFor(server);
  server.db.prisma.$on('query' as never, (event: { query: string }) => {
    if (recording) statements.push(event.query);
  });
});
afterAll(() => server?.stop());

const path = (workspaceId: string) => `/api/v1/api/workspaces/${workspaceId}/discovery-settings`;

function fields(response: { body: any }): string[] {
  return (response.body.details ?? []).map((detail: { field: string }) => detail.field);
}

async function workspace() {
  const owner = await client.signUp('Owner');
  const member = await client.signUp('Member');
  const { id } = await client.createWorkspace(owner);
  await client.addMember(owner, id, member);
  return { owner, member, workspaceId: id };
}

function patch(as: TestUser, workspaceId: string, body: unknown) {
  return client.api('PATCH', path(workspaceId), { as, body });
}

describe('GET and PATCH /api/workspaces/{id}/discovery-settings', () => {
  it('answers empty settings until saved, then what was saved, normalised and deduplicated', async () => {
    const { owner, member, workspaceId } = await workspace();
    const empty = await client.api('GET', path(workspaceId), { as: member });
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({ workspaceId, rootDomains: [], exclusions: [], wordlist: [], wordlistSize: 0, updatedAt: null });

    const saved = await patch(owner, workspaceId, {
      rootDomains: ['Example.COM.', 'example.com', ' corp.example.net ', 'bücher.example'],
      exclusions: ['*.Internal.Example.com', 'vpn.example.com', '', 'VPN.example.com'],
      wordlist: ['www', ' API ', 'www.dev', '', 'www', '_dmarc', 'a-b'],
    });
    expect(saved.status).toBe(200);
    expect(saved.body).toMatchObject({
      workspaceId,
      rootDomains: ['example.com', 'corp.example.net', 'xn--bcher-kva.example'],
      exclusions: ['*.internal.example.com', 'vpn.example.com'],
      wordlist: ['www', 'api', 'www.dev', '_dmarc', 'a-b'],
      wordlistSize: 5,
    });
    expect(Date.parse(saved.body.updatedAt)).not.toBeNaN();
    expect((await client.api('GET', path(workspaceId), { as: member })).body).toEqual(saved.body);

    // Fields sent replace their list; fields not sent stay as they are.
    const replaced = await patch(owner, workspaceId, { wordlist: ['mail'] });
    expect(replaced.body).toMatchObject({ rootDomains: saved.body.rootDomains, exclusions: saved.body.exclusions, wordlist: ['mail'], wordlistSize: 1 });
    const cleared = await patch(owner, workspaceId, { rootDomains: [] });
    expect(cleared.body.rootDomains).toEqual([]);
    expect(await discoverySettingsOf(server.db.prisma, workspaceId)).toEqual({
      rootDomains: [],
      exclusions: ['*.internal.example.com', 'vpn.example.com'],
      wordlist: ['mail'],
    });
  });

  it('refuses bad entries with 400 naming the first one and its index, and writes nothing', async () => {
    const { owner, workspaceId } = await workspace();
    await patch(owner, workspaceId, { rootDomains: ['example.com'], exclusions: ['vpn.example.com'], wordlist: ['www'] });
    const before = await client.api('GET', path(workspaceId), { as: owner });
    for (const [body, field, message] of [
      [{ exclusions: ['ok.example.com', '*.'] }, 'exclusions.1', '"*." is not a valid exclusion'],
      [{ exclusions: ['a*b.com'] }, 'exclusions.0', '"a*b.com" is not a valid exclusion: use an exact host name or *.suffix'],
      [{ exclusions: ['1.2.3.4'] }, 'exclusions.0', 'IP addresses are not host names'],
      [{ exclusions: ['localhost'] }, 'exclusions.0', 'at least two labels'],
      [{ rootDomains: ['example.com', 'not a domain'] }, 'rootDomains.1', '"not a domain" is not a valid domain name'],
      [{ rootDomains: ['10.0.0.1'] }, 'rootDomains.0', '"10.0.0.1" is an IP address'],
      [{ rootDomains: ['com'] }, 'rootDomains.0', 'at least two labels'],
      [{ wordlist: ['www', 'bad label'] }, 'wordlist.1', '"bad label" is not a valid label'],
      [{ wordlist: ['a..b'] }, 'wordlist.0', 'not a valid label'],
      [{ wordlist: [`${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(20)}`] }, 'wordlist.0', 'longer than 200 characters'],
      [{ wordlist: ['x'.repeat(64)] }, 'wordlist.0', 'not a valid label'],
      [{ wordlist: 'www' }, 'wordlist', 'must be a list of wordlist entries'],
      [{ wordlist: ['www', 3] }, 'wordlist.1', 'must be a string'],
      [{ rootDomains: ['example.com'], colour: 'red' }, 'colour', 'is not a known field'],
      [{}, '(body)', 'send rootDomains, exclusions and/or wordlist'],
    ] as const) {
      const response = await patch(owner, workspaceId, body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(fields(response), JSON.stringify(body)).toEqual([field]);
      expect(response.body.message, JSON.stringify(body)).toContain(message);
    }
    // A good list beside a bad one is not saved either.
    expect((await patch(owner, workspaceId, { wordlist: ['new'], exclusions: ['*.'] })).status).toBe(400);
    expect((await client.api('GET', path(workspaceId), { as: owner })).body).toEqual(before.body);
  });

  it('takes a wordlist of 10,000 labels and refuses a bigger one with the limit', async () => {
    const { owner, workspaceId } = await workspace();
    // Long labels: the body is close to the default 1 MiB body limit and must still get through.
    const labels = Array.from({ length: 10_000 }, (_, index) => `${String(index).padStart(5, '0')}-${'x'.repeat(57)}`);
    const full = await patch(owner, workspaceId, { wordlist: labels });
    expect(full.status).toBe(200);
    expect(full.body.wordlistSize).toBe(10_000);
    expect((await discoverySettingsOf(server.db.prisma, workspaceId)).wordlist).toEqual(labels);

    // Blank and duplicate entries do not count.
    const padded = await patch(owner, workspaceId, { wordlist: [...labels.slice(0, 9_999), '', labels[0]!, 'last'] });
    expect(padded.status).toBe(200);
    expect(padded.body.wordlistSize).toBe(10_000);

    const oversized = await patch(owner, workspaceId, { wordlist: Array.from({ length: 10_001 }, (_, index) => `w${index}`) });
    expect(oversized.status).toBe(400);
    expect(fields(oversized)).toEqual(['wordlist']);
    expect(oversized.body.message).toContain('must hold at most 10,000 wordlist entries');
    expect((await discoverySettingsOf(server.db.prisma, workspaceId)).wordlist.at(-1)).toBe('last');

    // Past the body limit: a clean 413, never a 5xx.
    const huge = await patch(owner, workspaceId, { wordlist: Array.from({ length: 10_000 }, () => 'y'.repeat(150)) });
    expect(huge.status).toBe(413);
    expect(huge.body.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('caps root domains and exclusions', async () => {
    const { owner, workspaceId } = await workspace();
    const roots = await patch(owner, workspaceId, { rootDomains: Array.from({ length: 101 }, (_, index) => `d${index}.example`) });
    expect(roots.status).toBe(400);
    expect(roots.body.message).toContain('at most 100 root domains');
    const exclusions = await patch(owner, workspaceId, { exclusions: Array.from({ length: 1001 }, (_, index) => `h${index}.example.com`) });
    expect(exclusions.status).toBe(400);
    expect(exclusions.body.message).toContain('at most 1,000 exclusions');
    expect((await patch(owner, workspaceId, { exclusions: Array.from({ length: 1000 }, (_, index) => `h${index}.example.com`) })).status).toBe(200);
  });

  it('members read, only those who may update the workspace write; strangers get 404', async () => {
    const { owner, member, workspaceId } = await workspace();
    const stranger = await client.signUp('Stranger');
    const denied = await patch(member, workspaceId, { rootDomains: ['example.com'] });
    expect(denied.status).toBe(403);
    expect(denied.body.code).toBe('FORBIDDEN');
    expect((await client.api('GET', path(workspaceId), { as: member })).status).toBe(200);
    for (const response of [
      await client.api('GET', path(workspaceId), { as: stranger }),
      await patch(stranger, workspaceId, { rootDomains: ['example.com'] }),
      await client.api('GET', path(randomUUID()), { as: owner }),
    ]) {
      expect(response.status).toBe(404);
      expect(response.body.message).toBe('Workspace not found');
    }
    expect((await client.api('GET', path(workspaceId))).status).toBe(401);
    expect((await client.api('GET', path('nope'), { as: owner })).status).toBe(400);
    expect((await discoverySettingsOf(server.db.prisma, workspaceId)).rootDomains).toEqual([]);
  });

  it('is not part of the workspace responses', async () => {
    const { owner, workspaceId } = await workspace();
    await patch(owner, workspaceId, { wordlist: ['www'], rootDomains: ['example.com'] });
    const one = await client.api('GET', `/api/v1/api/workspaces/${workspaceId}`, { as: owner });
    const list = await client.api('GET', '/api/v1/api/workspaces', { as: owner });
    for (const body of [one.body, list.body.data[0]]) {
      expect(body).not.toHaveProperty('wordlist');
      expect(body).not.toHaveProperty('discoverySettings');
    }
  });
});

describe('GraphQL', () => {
  const SETTINGS = `query($id: ID!) { workspace(id: $id) { discoverySettings { rootDomains exclusions wordlist wordlistSize updatedAt } } }`;
  const UPDATE = `mutation($workspaceId: ID!, $input: DiscoverySettingsInput!) {
    updateDiscoverySettings(workspaceId: $workspaceId, input: $input) {
      __typename
      ... on MutationUpdateDiscoverySettingsSuccess { data { rootDomains exclusions wordlist wordlistSize } }
      ... on ValidationError { message details { field message } }
      ... on Error { message code }
    }
  }`;

  it('reads and updates the settings, with global or raw workspace ids', async () => {
    const { owner, member, workspaceId } = await workspace();
    const globalId = encodeGlobalID('Workspace', workspaceId);
    const empty = await client.gql(SETTINGS, { as: member, variables: { id: globalId } });
    expect(empty.data?.workspace.discoverySettings).toEqual({ rootDomains: [], exclusions: [], wordlist: [], wordlistSize: 0, updatedAt: null });

    const updated = await client.gql(UPDATE, {
      as: owner,
      variables: { workspaceId: globalId, input: { rootDomains: ['Example.com'], exclusions: ['*.dev.example.com'], wordlist: ['WWW', 'www'] } },
    });
    expect(updated.data?.updateDiscoverySettings).toEqual({
      __typename: 'MutationUpdateDiscoverySettingsSuccess',
      data: { rootDomains: ['example.com'], exclusions: ['*.dev.example.com'], wordlist: ['www'], wordlistSize: 1 },
    });
    const byRawId = await client.gql(UPDATE, { as: owner, variables: { workspaceId, input: { wordlist: ['api'] } } });
    expect(byRawId.data?.updateDiscoverySettings.data.wordlist).toEqual(['api']);
    const read = await client.gql(SETTINGS, { as: member, variables: { id: globalId } });
    expect(read.data?.workspace.discoverySettings).toMatchObject({ rootDomains: ['example.com'], wordlist: ['api'], wordlistSize: 1 });
  });

  it('answers typed errors: bad entries, members, strangers', async () => {
    const { owner, member, workspaceId } = await workspace();
    const stranger = await client.signUp('Stranger');
    const bad = await client.gql(UPDATE, { as: owner, variables: { workspaceId, input: { exclusions: ['a*b.com'] } } });
    expect(bad.data?.updateDiscoverySettings).toMatchObject({
      __typename: 'ValidationError',
      details: [{ field: 'exclusions.0', message: '"a*b.com" is not a valid exclusion: use an exact host name or *.suffix' }],
    });
    const nothing = await client.gql(UPDATE, { as: owner, variables: { workspaceId, input: {} } });
    expect(nothing.data?.updateDiscoverySettings.__typename).toBe('ValidationError');
    const forbidden = await client.gql(UPDATE, { as: member, variables: { workspaceId, input: { wordlist: ['x'] } } });
    expect(forbidden.data?.updateDiscoverySettings.__typename).toBe('ForbiddenError');
    const notFound = await client.gql(UPDATE, { as: stranger, variables: { workspaceId, input: { wordlist: ['x'] } } });
    expect(notFound.data?.updateDiscoverySettings).toMatchObject({ __typename: 'NotFoundError', code: 'NOT_FOUND' });
    expect(await discoverySettingsOf(server.db.prisma, workspaceId)).toEqual({ rootDomains: [], exclusions: [], wordlist: [] });
  });

  it('loads the settings of a whole workspace list in one query', async () => {
    const owner = await client.signUp('Many');
    const ids = [];
    for (let index = 0; index < 5; index++) ids.push((await client.createWorkspace(owner)).id);
    await patch(owner, ids[1]!, { wordlist: ['only-here'] });
    recording = true;
    const result = await client.gql(`{ workspaces(first: 10) { edges { node { databaseId discoverySettings { wordlist } } } } }`, { as: owner });
    recording = false;
    expect(statements.filter((sql) => sql.includes('workspace_discovery_settings'))).toHaveLength(1);
    const byId = new Map(result.data?.workspaces.edges.map((edge: any) => [edge.node.databaseId, edge.node.discoverySettings.wordlist]));
    expect(ids.map((id) => byId.get(id))).toEqual([[], ['only-here'], [], [], []]);
  });
});
