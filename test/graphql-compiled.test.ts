import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSchema, parse, type GraphQLResolveInfo } from 'graphql';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { discoveryFixtures } from './support/asset-discovery.js';
import { createExecute } from '../src/graphql/execute-engine.js';
import { ranCompiled, runningCompiled, stableLink } from '../src/graphql/compiled-paths.js';

/**
 * GraphQL documents run compiled by graphql-jit (graphql/execute-engine.ts) once they come back. Compiled or not,
 * a request must answer the same bytes: data, nulls, errors with their codes and paths, typed mutation errors.
 * Two apps on one database: `compiled` compiles every document at its first execution (as the whole suite does),
 * `interpreted` never compiles.
 */
let compiled: TestApp;
let interpreted: TestApp;
let owner: TestUser;
let member: TestUser;
let outsider: TestUser;
let workspaceId: string;
let assetId: string;

const { candidates } = discoveryFixtures(() => compiled);

beforeAll(async () => {
  compiled = await startTestApp();
  interpreted = await startTestApp({ GRAPHQL_COMPILE_AFTER: 'off' }, { database: { db: compiled.db, dispose: async () => {} } });
  const client = clientFor(compiled);
  const fx = await candidates();
  owner = fx.owner;
  workspaceId = fx.workspaceId;
  assetId = fx.id('both.example.test');
  member = await client.signUp('Member');
  outsider = await client.signUp('Outsider');
  await client.addMember(owner, workspaceId, member);
  for (const value of ['a.example.test', '10.0.0.1', 'https://b.example.test/x']) {
    await client.api('POST', '/api/v1/api/targets', { as: owner, workspaceId, body: { value } });
  }
});
afterAll(async () => {
  await interpreted?.stop();
  await compiled?.stop();
});

const WORKSPACES = `query Page($first: Int!) { workspaces(first: $first) { totalCount pageInfo { hasNextPage endCursor }
  edges { cursor node { id databaseId name role memberCount targetCount owner { name } members { role user { name } } } } } }`;
const TARGETS = `query Targets($id: ID!) { workspace(id: $id) { name targets(first: 10) { totalCount
  edges { node { id value type assetCount findingCount lastScannedAt workspace { databaseId } } } } } }`;
const ASSETS = `query Assets($id: ID!, $withFrom: Boolean!) { node(id: $id) { __typename ... on Workspace { assets(kind: host) { totalCount
  edges { node { ...A discovery { source from fromAsset @include(if: $withFrom) { value } } } } } } } }
  fragment A on Asset { key value dismissed references target { value } parent { key } }`;
const VIEWER = `{ viewer { id } a: __typename }`;

/** Each request as [document, variables, caller]: pages, fragments, directives, and every kind of refusal. */
function requests(): Array<[string, Record<string, unknown> | undefined, TestUser | undefined]> {
  return [
    [WORKSPACES, { first: 5 }, owner],
    [WORKSPACES, { first: 5 }, member],
    [WORKSPACES, { first: 5 }, undefined],
    [WORKSPACES, { first: -1 }, owner],
    [WORKSPACES, { first: 'five' }, owner],
    [WORKSPACES, {}, owner],
    [TARGETS, { id: workspaceId }, owner],
    [TARGETS, { id: workspaceId }, outsider],
    [TARGETS, { id: 'not-an-id' }, owner],
    [ASSETS, { id: workspaceId, withFrom: true }, owner],
    [ASSETS, { id: workspaceId, withFrom: false }, member],
    [ASSETS, { id: workspaceId, withFrom: true }, outsider],
    [VIEWER, undefined, owner],
    // graphql-jit would read these as the objects' prototypes: such documents stay on graphql-js.
    [`{ __proto__: viewer { id } }`, undefined, owner],
    [`{ viewer { __proto__: id name } }`, undefined, owner],
    [`query($id: ID!) { workspace(id: $id) { auditLogs(first: 2) { totalCount } } }`, { id: workspaceId }, member],
    [`query($id: ID!) { asset(id: $id) { key discovery { source } } }`, { id: assetId }, owner],
    [
      `mutation($ws: ID!) { addTarget(workspaceId: $ws, value: "not a target!") { __typename ... on ValidationError { message details { field } } } }`,
      { ws: workspaceId },
      owner,
    ],
    [`mutation { createWorkspace(input: { name: "x" }) { __typename } }`, undefined, undefined],
  ];
}

describe('compiled GraphQL execution', () => {
  it('answers what graphql-js answers, request for request, also the second time a document comes', async () => {
    const fromCompiled = clientFor(compiled);
    const fromInterpreted = clientFor(interpreted);
    for (const [query, variables, as] of requests()) {
      const label = `${query.slice(0, 60)} ${JSON.stringify(variables)} as ${as?.name ?? 'nobody'}`;
      const expected = await fromInterpreted.gql(query, { variables, as });
      expect(await fromCompiled.gql(query, { variables, as }), label).toEqual(expected);
      expect(await fromCompiled.gql(query, { variables, as }), label).toEqual(expected);
    }
  });

  it('compiles a document once it has run the configured number of times, and never when off', async () => {
    const schema = buildSchema('type Query { hello: String }');
    const document = parse('{ hello }');
    const rootValue = { hello: 'world' };
    for (const [after, compiledRuns] of [
      [0, [true, true, true]],
      [2, [false, false, true]],
      ['off', [false, false, false]],
    ] as const) {
      const execute = createExecute(after);
      const runs: boolean[] = [];
      for (let i = 0; i < 3; i++) {
        const contextValue = {};
        expect(await execute({ schema, document, rootValue, contextValue })).toEqual({ data: { hello: 'world' } });
        runs.push(ranCompiled(contextValue));
      }
      expect(runs, String(after)).toEqual(compiledRuns);
    }
    // A name the document does not define is graphql-js's to refuse, and leaves nothing behind to compile.
    const execute = createExecute(0);
    const contextValue = {};
    const refused = await execute({ schema, document, rootValue, contextValue, operationName: 'Nowhere' });
    expect(refused.errors?.[0]?.message).toBe('Unknown operation named "Nowhere".');
    expect(ranCompiled(contextValue)).toBe(false);
  });

  it('hands resolvers one path link per position of the response, the same for the whole request', () => {
    const context = {};
    const path = (keys: Array<string | number>) =>
      keys.reduce<GraphQLResolveInfo['path'] | undefined>((prev, key) => ({ prev, key, typename: undefined }), undefined)!;
    const row3 = stableLink(context, path(['workspace', 'assets', 'edges', 3, 'node']))!;
    expect(stableLink(context, path(['workspace', 'assets', 'edges', 3, 'node']))).toBe(row3);
    expect(stableLink(context, path(['workspace', 'assets', 'edges', 3, 'node', 'discovery']))!.prev).toBe(row3);
    expect(stableLink(context, path(['workspace', 'assets', 'edges', 4, 'node']))).not.toBe(row3);
    expect(row3.prev!.prev).toBe(stableLink(context, path(['workspace', 'assets', 'edges'])));
    // Another request gets links of its own, and so does another operation on the same context.
    expect(stableLink({}, path(['workspace', 'assets', 'edges', 3, 'node']))).not.toBe(row3);
    runningCompiled(context);
    expect(stableLink(context, path(['workspace', 'assets', 'edges', 3, 'node']))).not.toBe(row3);
  });
});
