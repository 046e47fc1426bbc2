import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schema } from '../src/graphql/schema.js';
import { buildOpenApiDocument } from '../src/rest/openapi.js';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { Random } from './support/fuzz/random.js';
import { restCases, restOperations, type RestCase } from './support/fuzz/rest-cases.js';
import { graphqlCases, type GraphQLCase } from './support/fuzz/graphql-cases.js';

/**
 * Generated malformed and hostile input against every REST operation (from the OpenAPI document) and every
 * GraphQL query and mutation field (from the schema). The server may refuse anything; it may never answer
 * 5xx or mask an unexpected error as INTERNAL. Workers are off, so nothing generated ever leaves the machine.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 20261124);
const REST_CASES_PER_OPERATION = Number(process.env.FUZZ_REST_CASES ?? 45);
const GRAPHQL_CASES_PER_FIELD = Number(process.env.FUZZ_GRAPHQL_CASES ?? 25);
const ID_LIKE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$|^[A-Za-z0-9+/]{12,}={0,2}$/i;

interface Failure {
  operation: string;
  status: number;
  detail: string;
}

function collectIds(value: unknown, into: Set<string>, depth = 0): void {
  if (depth > 8 || value === null || typeof value !== 'object') return;
  for (const [key, item] of Object.entries(value)) {
    if ((key === 'id' || key === 'nodeId' || key.endsWith('Id')) && typeof item === 'string' && ID_LIKE.test(item)) into.add(item);
    else collectIds(item, into, depth + 1);
  }
}

describe('fuzzing every REST operation and GraphQL field', () => {
  let server: TestApp;
  let owner: TestUser;
  let spare: TestUser;
  let workspaceId: string;
  const knownIds = new Set<string>();
  const failures: Failure[] = [];
  const counts = { rest: 0, graphql: 0, fiveHundreds: 0, maskedInternal: 0 };

  beforeAll(async () => {
    server = await startTestApp({ WORKERS: 'false', BODY_LIMIT_BYTES: '262144' });
    const { api, signUp, createWorkspace } = clientFor(server);
    owner = await signUp('Fuzz Owner');
    spare = await signUp('Fuzz Spare');
    const workspace = await createWorkspace(owner);
    workspaceId = workspace.id;
    // A few real resources, so generated paths reach deeper than "not found".
    for (const body of [{ value: '127.0.0.1' }, { value: 'fuzz.example.test' }, { value: 'http://127.0.0.1:1/app' }]) {
      collectIds((await api('POST', '/api/v1/api/targets', { as: owner, workspaceId, body })).body, knownIds);
    }
    collectIds((await api('POST', '/api/v1/api/templates', { as: owner, workspaceId, body: { fileName: 'fuzz.yaml' } })).body, knownIds);
    collectIds((await api('POST', '/api/v1/api/agents/conversations', { as: owner, workspaceId, body: {} })).body, knownIds);
    collectIds((await api('GET', '/api/v1/api/tools', { as: owner, workspaceId })).body, knownIds);
    collectIds((await api('POST', '/api/v1/api/users/me/api-tokens', { as: owner, body: { name: 'fuzz' } })).body, knownIds);
    collectIds(
      (await api('POST', `/api/v1/api/workspaces/${workspaceId}/members`, { as: owner, body: { email: spare.email, role: 'member' } })).body,
      knownIds,
    );
    knownIds.add(workspaceId);
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
  });

  function record(operation: string, status: number, detail: string, internal = false): void {
    if (status >= 500) counts.fiveHundreds += 1;
    if (internal) counts.maskedInternal += 1;
    if ((status >= 500 || internal) && failures.length < 200) failures.push({ operation, status, detail: detail.slice(0, 300) });
  }

  async function sendRest(testCase: RestCase): Promise<void> {
    const headers = { ...testCase.headers };
    if (testCase.as === 'owner') headers.authorization = `Bearer ${owner.token}`;
    if (testCase.as === 'garbage') headers.authorization = 'Bearer not-a-real-token';
    // Signing out with the run's own token would end the run: sign out the spare user instead.
    if (testCase.as === 'owner' && testCase.path.includes('/sign-out')) headers.authorization = `Bearer ${spare.token}`;
    const response = await fetch(`${server.url}${testCase.path}`, { method: testCase.method, headers, body: testCase.body });
    const text = await response.text();
    counts.rest += 1;
    record(testCase.operation, response.status, `${testCase.method} ${testCase.path} ${testCase.body?.slice(0, 120) ?? ''} -> ${text}`);
    if (response.status < 300 && text.startsWith('{')) collectIds(JSON.parse(text), knownIds);
  }

  async function sendGraphQL(testCase: GraphQLCase): Promise<void> {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/graphql-response+json' };
    if (testCase.as === 'owner') headers.authorization = `Bearer ${owner.token}`;
    const response = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ query: testCase.query, variables: testCase.variables }),
    });
    const text = await response.text();
    counts.graphql += 1;
    let internal = false;
    try {
      const body = JSON.parse(text) as { errors?: { extensions?: { code?: string } }[]; data?: unknown };
      internal = Boolean(body.errors?.some((error) => error.extensions?.code === 'INTERNAL' || error.extensions?.code === 'INTERNAL_SERVER_ERROR'));
      if (body.data) collectIds(body.data, knownIds);
    } catch {
      internal = true;
    }
    record(testCase.operation, response.status, `${JSON.stringify(testCase.variables).slice(0, 200)} -> ${text}`, internal);
  }

  async function runAll<T>(cases: T[], send: (testCase: T) => Promise<void>): Promise<void> {
    // A few at once: enough to interleave requests the way clients do, few enough for a 2-core machine.
    let next = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < cases.length) await send(cases[next++] as T);
      }),
    );
  }

  it('answers thousands of generated REST and GraphQL requests without a single 5xx or masked internal error', async () => {
    const random = new Random(SEED);
    const document = buildOpenApiDocument(server.url) as unknown as Parameters<typeof restOperations>[0];
    const operations = restOperations(document);
    expect(operations.length).toBeGreaterThan(50);
    const identity = { workspaceId, knownIds: [...knownIds] };
    const rest = operations.flatMap((operation) => restCases(random, operation, identity, document.components, REST_CASES_PER_OPERATION));
    await runAll(rest, sendRest);

    const workspaceGlobalId = Buffer.from(`Workspace:${workspaceId}`).toString('base64');
    const graphql = graphqlCases(
      random,
      schema,
      { workspaceIds: [workspaceId, workspaceGlobalId], knownIds: [...knownIds].filter((id) => id !== workspaceId) },
      GRAPHQL_CASES_PER_FIELD,
    );
    await runAll(graphql, sendGraphQL);

    const total = counts.rest + counts.graphql;
    console.log(
      `fuzz (seed ${SEED}): ${counts.rest} REST cases over ${operations.length} operations, ${counts.graphql} GraphQL cases; ${counts.fiveHundreds} answered 5xx, ${counts.maskedInternal} masked internal errors`,
    );
    expect(total).toBeGreaterThanOrEqual(5_000);
    // One line per failing operation (with its first case) keeps a failing run readable.
    const firstPerOperation = new Map<string, Failure>();
    for (const failure of failures) if (!firstPerOperation.has(failure.operation)) firstPerOperation.set(failure.operation, failure);
    expect([...firstPerOperation.values()]).toEqual([]);
    // The server is still healthy and the run's workspace still answers.
    const { api } = clientFor(server);
    expect((await api('GET', `/api/v1/api/workspaces/${workspaceId}`, { as: owner })).status).toBe(200);
  }, 600_000);
});
