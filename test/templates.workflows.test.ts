import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { tarGz } from './support/archives.js';
import { loadScanTemplates } from '../src/modules/templates/loader.js';
import { workflowCatalog } from '../src/scanner/nuclei/engine/workflow.js';

/**
 * Workflow templates in a workspace's library: imported like any template, loaded for scans, and their
 * `template:` paths resolved among the workspace's own imports (by file name: the import keeps no folder).
 */

let server: TestApp;
let owner: TestUser;
let workspaceId: string;

beforeAll(async () => {
  server = await startTestApp();
  const client = clientFor(server);
  owner = await client.signUp('Owner');
  workspaceId = (await client.createWorkspace(owner)).id;
});
afterAll(() => server?.stop());

const detect = `id: acme-detect
info:
  name: Acme detect
  author: tests
  severity: info
  tags: tech
http:
  - method: GET
    path: ["{{BaseURL}}/"]
    matchers:
      - type: word
        name: acme
        words: ["Powered by Acme"]
`;
const workflow = `id: acme-workflow
info:
  name: Acme checks
  author: tests
workflows:
  - template: http/technologies/acme-detect.yaml
    subtemplates:
      - template: http/exposures/not-imported.yaml
`;

describe('workflow templates in a workspace', () => {
  it('imports a workflow, loads it for scans and resolves the templates it names among the workspace imports', async () => {
    const body = tarGz([
      { path: 'nuclei-templates/http/technologies/acme-detect.yaml', content: detect },
      { path: 'nuclei-templates/workflows/acme-workflow.yaml', content: workflow },
    ]);
    const response = await fetch(`${server.url}/api/v1/api/templates/import`, {
      method: 'POST',
      headers: { 'content-type': 'application/gzip', authorization: `Bearer ${owner.token}`, 'x-workspace-id': workspaceId },
      body: new Uint8Array(body),
    });
    const answer = (await response.json()) as { totals: Record<string, number>; files: Array<{ status: string }> };
    expect(response.status, JSON.stringify(answer)).toBe(200);
    expect(answer.totals).toMatchObject({ loaded: 2, created: 2, rejected: 0 });

    const loaded = (await loadScanTemplates(server.app.deps, workspaceId)).map((entry) => entry.template);
    const wf = loaded.find((t) => t.id === 'acme-workflow')!;
    expect(wf.workflow?.[0].template).toBe('http/technologies/acme-detect.yaml');
    const catalog = workflowCatalog(loaded);
    expect(catalog.byPath(wf.workflow![0].template!).map((t) => t.id)).toEqual(['acme-detect']);
    expect(catalog.byPath(wf.workflow![0].subtemplates[0].template!)).toEqual([]);
    // tags select among every template the scan has (the built-in pack's too)
    expect(catalog.byTags(['tech']).map((t) => t.id)).toContain('acme-detect');
  });
});
