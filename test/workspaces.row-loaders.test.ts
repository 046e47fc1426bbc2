import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { contextOf } from './support/service-context.js';
import { membersOfWorkspaces } from '../src/modules/workspaces/members.js';
import { countTargetsOfWorkspaces } from '../src/modules/targets/service.js';

/**
 * A workspace row GraphQL did not get from the list's statement (workspace(id), node(id), a mutation's answer)
 * has its members, role, member count and target count loaded for all such rows of the request at once
 * (workspaces/graphql-support.ts). The loads answer only for workspaces the caller belongs to.
 */
let server: TestApp;
let client: ReturnType<typeof clientFor>;
let owner: TestUser;
let colleague: TestUser;
let shared: string;
let ownersOnly: string;

beforeAll(async () => {
  server = await startTestApp();
  client = clientFor(server);
  owner = await client.signUp('Loader owner');
  colleague = await client.signUp('Loader colleague');
  shared = (await client.createWorkspace(owner, { name: 'Shared' })).id;
  ownersOnly = (await client.createWorkspace(owner, { name: 'Owner only' })).id;
  await client.addMember(owner, shared, colleague);
  for (const [workspaceId, values] of [
    [shared, ['a.example.com', 'b.example.com', '10.0.0.1']],
    [ownersOnly, ['c.example.com']],
  ] as const) {
    for (const value of values) {
      const response = await client.api('POST', '/api/v1/api/targets', { as: owner, workspaceId, body: { value } });
      expect(response.status, JSON.stringify(response.body)).toBe(201);
    }
  }
});
afterAll(() => server?.stop());

describe('the loads behind rows read elsewhere', () => {
  it("answer the caller's workspaces, in the order asked, and nothing for others", async () => {
    const members = await membersOfWorkspaces(contextOf(server, colleague), [ownersOnly, shared, randomUUID(), 'not-a-uuid']);
    expect(members.map((list) => list.length)).toEqual([0, 2, 0, 0]);
    expect(members[1]!.map((member) => [member.user.id, member.role])).toEqual([
      [owner.id, 'owner'],
      [colleague.id, 'member'],
    ]);
    expect(members[1]![0]!.user).toEqual({ id: owner.id, name: owner.name, image: null });
    expect(await countTargetsOfWorkspaces(contextOf(server, colleague), [ownersOnly, shared, randomUUID(), 'not-a-uuid'])).toEqual([0, 3, 0, 0]);
    expect(await countTargetsOfWorkspaces(contextOf(server, owner), [ownersOnly, shared])).toEqual([1, 3]);
  });

  it('give workspace(id) and node(id) the same members, role and counts as the list', async () => {
    const fields = 'databaseId role memberCount targetCount members { role user { id name } }';
    const listed = await client.gql(`{ workspaces(first: 10) { edges { node { ${fields} } } } }`, { as: colleague });
    expect(listed.errors).toBeUndefined();
    const fromList = listed.data.workspaces.edges.map((edge: { node: unknown }) => edge.node);
    expect(fromList).toEqual([
      {
        databaseId: shared,
        role: 'member',
        memberCount: 2,
        targetCount: 3,
        members: [
          { role: 'owner', user: { id: owner.id, name: owner.name } },
          { role: 'member', user: { id: colleague.id, name: colleague.name } },
        ],
      },
    ]);
    const single = await client.gql(`query($id: ID!) { workspace(id: $id) { ${fields} } node(id: $id) { ... on Workspace { ${fields} } } }`, {
      as: colleague,
      variables: { id: shared },
    });
    expect(single.errors).toBeUndefined();
    expect(single.data).toEqual({ workspace: fromList[0], node: fromList[0] });
    const ownerView = await client.gql(`query($id: ID!) { workspace(id: $id) { role memberCount targetCount } }`, { as: owner, variables: { id: ownersOnly } });
    expect(ownerView.data).toEqual({ workspace: { role: 'owner', memberCount: 1, targetCount: 1 } });
  });
});
