import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { printSchemaSDL } from '../src/graphql/schema.js';
import { buildOpenApiDocument } from '../src/rest/openapi.js';
import { graphql } from './gql/index.js';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor } from './support/client.js';

/** Generated artefacts are committed; these fail when someone changes the API without regenerating them. */
describe('generated artefacts', () => {
  it('schema/schema.graphql matches the Pothos schema (npm run print:schema)', () => {
    expect(readFileSync('schema/schema.graphql', 'utf8')).toBe(printSchemaSDL());
  });

  it('schema/openapi.json matches the REST procedures (npm run print:openapi)', () => {
    expect(JSON.parse(readFileSync('schema/openapi.json', 'utf8'))).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument())));
  });

  it("test/gql was generated from the committed schema and the tests' documents (npm run codegen)", async () => {
    const { generate } = await import('@graphql-codegen/cli');
    const { default: config } = await import('../codegen.js');
    const outputs = (await generate({ ...config, silent: true }, false)) as { filename: string; content: string }[];
    expect(outputs.length).toBeGreaterThan(0);
    for (const output of outputs) expect(readFileSync(output.filename, 'utf8'), output.filename).toBe(output.content);
  }, 60_000);
});

const ViewerWorkspaces = graphql(`
  query ViewerWorkspaces($first: Int) {
    viewer { id email role }
    workspaces(first: $first) { totalCount edges { node { id databaseId name role } } }
  }
`);

describe('typed documents', () => {
  let server: TestApp;
  beforeAll(async () => {
    server = await startTestApp();
  });
  afterAll(() => server?.stop());

  it('run against the live schema with typed results', async () => {
    const client = clientFor(server);
    const owner = await client.signUp('Typed');
    const workspace = await client.createWorkspace(owner, { name: 'Typed docs' });
    const result = await client.gql(ViewerWorkspaces, { as: owner, variables: { first: 5 } });
    expect(result.errors).toBeUndefined();
    expect(result.data?.viewer?.id).toBe(owner.id);
    expect(result.data?.workspaces.totalCount).toBe(1);
    expect(result.data?.workspaces.edges[0]?.node.databaseId).toBe(workspace.id);
    expect(result.data?.workspaces.edges[0]?.node.role).toBe('owner');
  });
});
