import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';

let server: TestApp;
let client: ReturnType<typeof clientFor>;
let user: TestUser;

beforeAll(async () => {
  server = await startTestApp({ GRAPHQL_MAX_ALIASES: '5' });
  client = clientFor(server);
  user = await client.signUp('Bounded');
});
afterAll(async () => {
  await server?.stop();
});

describe('GraphQL bounds that used to have holes', () => {
  it('counts `__typename` aliases against the alias limit', async () => {
    const aliases = Array.from({ length: 6 }, (_, i) => `t${i}: __typename`).join(' ');
    const result = await client.gql(`{ ${aliases} }`, { as: user });
    expect(result.status).toBe(400);
    expect(result.errors?.[0]?.message).toMatch(/Aliases limit of 5 exceeded, found 6/);
    expect(result.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    // Within the limit, and plain __typename, still work.
    const fine = await client.gql('{ a: __typename __typename }', { as: user });
    expect(fine.data).toEqual({ a: 'Query', __typename: 'Query' });
  });

  it('refuses nodes(ids:) with more than 100 ids (BAD_USER_INPUT), literal or as a variable, before looking any up', async () => {
    const { id } = await client.createWorkspace(user);
    const listed = await client.gql('{ workspaces { edges { node { id databaseId } } } }', { as: user });
    const globalId = listed.data.workspaces.edges.find((edge: { node: { databaseId: string } }) => edge.node.databaseId === id).node.id as string;

    const many = Array.from({ length: 101 }, () => globalId);
    const literal = await client.gql(`{ nodes(ids: ${JSON.stringify(many)}) { id } }`, { as: user });
    expect(literal.data).toBeUndefined();
    expect(literal.errors).toEqual([
      expect.objectContaining({ message: 'nodes(ids:) takes at most 100 ids, got 101', extensions: { code: 'BAD_USER_INPUT' } }),
    ]);

    const fiveThousand = Array.from({ length: 5000 }, () => globalId);
    const viaVariable = await client.gql('query($ids: [ID!]!) { nodes(ids: $ids) { id } }', { as: user, variables: { ids: fiveThousand } });
    expect(viaVariable.errors).toEqual([
      expect.objectContaining({ message: 'nodes(ids:) takes at most 100 ids, got 5000', extensions: { code: 'BAD_USER_INPUT' } }),
    ]);

    const hundred = await client.gql('query($ids: [ID!]!) { nodes(ids: $ids) { id } }', { as: user, variables: { ids: many.slice(0, 100) } });
    expect(hundred.errors).toBeUndefined();
    expect(hundred.data.nodes).toHaveLength(100);
    expect(hundred.data.nodes[0]).toEqual({ id: globalId });

    // The same text again (the parsed document is cached, the ids fields found in it too): counted per request.
    const again = await client.gql('query($ids: [ID!]!) { nodes(ids: $ids) { id } }', { as: user, variables: { ids: fiveThousand } });
    expect(again.errors).toEqual([expect.objectContaining({ message: 'nodes(ids:) takes at most 100 ids, got 5000' })]);
    // Through a fragment on Query as well.
    const viaFragment = await client.gql('query($ids: [ID!]!) { ...Lookup } fragment Lookup on Query { nodes(ids: $ids) { id } }', {
      as: user,
      variables: { ids: many },
    });
    expect(viaFragment.errors).toEqual([expect.objectContaining({ message: 'nodes(ids:) takes at most 100 ids, got 101' })]);
  });
});
