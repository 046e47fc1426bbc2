/** Workflow templates (engine/workflow.ts) against a loopback HTTP server, with the ordinary engine as runner. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runWorkflow, workflowCatalog } from '../../src/scanner/nuclei/engine/workflow.js';
import { createNodeHttpSender, type NucleiTemplate, parseTemplate, runTemplatesDetailed } from '../../src/scanner/nuclei/index.js';
import { runTemplatesOnWeb } from '../../src/scanner/nuclei/run-on-web.js';
import { createScopeGuard, LOOPBACK_NETWORKS, type WebObservation } from '../../src/scanner/index.js';
import { startServer, type TestServer } from './server.js';

let acme: TestServer;
let other: TestServer;
const send = createNodeHttpSender();

const routes = (product: string) => ({
  '/': (_req: unknown, res: { end(body: string): void }) => res.end(`<html>Powered by ${product}</html>`),
  '/acme/debug': (_req: unknown, res: { end(body: string): void }) => res.end(product === 'Acme' ? 'ACME DEBUG CONSOLE' : 'not found'),
  '/acme/version': (_req: unknown, res: { end(body: string): void }) => res.end(product === 'Acme' ? 'acme-version: 1.2.3' : 'not found'),
});

beforeAll(async () => {
  acme = await startServer(routes('Acme'));
  other = await startServer(routes('Other'));
});
afterAll(async () => {
  await acme.close();
  await other.close();
});

function template(text: string): NucleiTemplate {
  const { template: t, errors } = parseTemplate(text);
  expect(errors).toEqual([]);
  return t!;
}

const info = (id: string, tags = '') => `id: ${id}\ninfo:\n  name: ${id}\n  author: test\n  severity: medium\n${tags ? `  tags: ${tags}\n` : ''}`;

const techDetect = template(`${info('tech-detect', 'tech')}http:
  - method: GET
    path:
      - "{{BaseURL}}/"
    matchers-condition: or
    matchers:
      - type: word
        name: acme
        words: ["Powered by Acme"]
      - type: word
        name: wordpress
        words: ["wp-content"]
`);
const acmeDebug = template(`${info('acme-debug', 'acme,exposure')}http:
  - method: GET
    path:
      - "{{BaseURL}}/acme/debug"
    matchers:
      - type: word
        words: ["ACME DEBUG CONSOLE"]
`);
const acmeVersion = template(`${info('acme-version', 'acme')}http:
  - method: GET
    path:
      - "{{BaseURL}}/acme/version"
    matchers:
      - type: word
        words: ["acme-version"]
`);
const wordpressOnly = template(`${info('wp-thing', 'wordpress')}http:
  - method: GET
    path:
      - "{{BaseURL}}/wp-thing"
    matchers:
      - type: status
        status: [200]
`);
const catalog = workflowCatalog([techDetect, acmeDebug, acmeVersion, wordpressOnly]);
const runner = (baseUrl: string) => async (t: NucleiTemplate) => (await runTemplatesDetailed([t], { baseUrl }, { send })).results;

const matcherWorkflow = template(`id: acme-workflow
info:
  name: Acme checks
  author: test
workflows:
  - template: http/technologies/tech-detect.yaml
    matchers:
      - name: acme
        subtemplates:
          - template: http/exposures/acme-debug.yaml
      - name: wordpress
        subtemplates:
          - tags: wordpress
`);

describe('workflows: matchers on names', () => {
  it('runs the subtemplates of a matched name and reports only their results', async () => {
    const before = acme.hits('/wp-thing');
    const out = await runWorkflow(matcherWorkflow, catalog, runner(acme.baseUrl));
    expect(out.warnings).toEqual([]);
    expect(out.results.map((r) => [r.templateId, r.matchedUrl])).toEqual([['acme-debug', `${acme.baseUrl}/acme/debug`]]);
    expect(acme.hits('/wp-thing')).toBe(before);
  });

  it('runs nothing more when no name matched', async () => {
    const before = other.hits('/acme/debug');
    const out = await runWorkflow(matcherWorkflow, catalog, runner(other.baseUrl));
    expect(out.results).toEqual([]);
    expect(other.hits('/acme/debug')).toBe(before);
  });
});

describe('workflows: subtemplates and tags', () => {
  const chained = template(`id: acme-chain
info:
  name: Acme chain
  author: test
workflows:
  - template: http/exposures/acme-debug.yaml
    subtemplates:
      - tags: acme
  - template: http/somewhere/not-imported.yaml
`);

  it('runs the templates of a tag after the step matched; the gating template is not reported', async () => {
    const out = await runWorkflow(chained, catalog, runner(acme.baseUrl));
    expect(out.results.map((r) => r.templateId).sort()).toEqual(['acme-debug', 'acme-version']);
    expect(out.warnings.map((w) => w.message)).toEqual([
      "workflow template http/somewhere/not-imported.yaml is not among this workspace's templates; step skipped",
    ]);
  });

  it('does not run the subtemplates when the step did not match', async () => {
    const before = other.hits('/acme/version');
    const out = await runWorkflow(chained, catalog, runner(other.baseUrl));
    expect(out.results).toEqual([]);
    expect(other.hits('/acme/version')).toBe(before);
  });
});

describe('workflows: parse', () => {
  it('accepts a library workflow without severity; rejects a step with neither template nor tags', () => {
    const ok = parseTemplate(`id: wordpress-workflow
info:
  name: Wordpress Security Checks
  author: kiblyn11,zomsop82
workflows:
  - template: http/technologies/wordpress-detect.yaml
    subtemplates:
      - tags: wordpress
`);
    expect(ok.errors).toEqual([]);
    expect(ok.warnings).toEqual([]);
    expect(ok.template!.workflow).toEqual([
      { template: 'http/technologies/wordpress-detect.yaml', tags: [], matchers: [], subtemplates: [{ tags: ['wordpress'], matchers: [], subtemplates: [] }] },
    ]);
    expect(ok.template!.requests).toEqual([]);
    const bad = parseTemplate('id: bad-workflow\ninfo:\n  name: x\n  author: y\nworkflows:\n  - matchers:\n      - name: x\n        condition: xor\n');
    expect(bad.errors.map((e) => e.message)).toEqual(["a workflow step needs 'template' or 'tags'", 'unknown condition "xor" (expected and, or)']);
  });
});

describe('workflows in a scan of web endpoints', () => {
  const webOf = (server: TestServer): WebObservation => ({
    kind: 'web',
    host: '127.0.0.1',
    address: '127.0.0.1',
    port: server.port,
    scheme: 'http',
    url: `${server.baseUrl}/`,
    finalUrl: `${server.baseUrl}/`,
    status: 200,
    headers: {},
    bodyExcerpt: '',
    bodyBytesRead: 0,
    bodyTruncated: false,
    bodySha256: '',
    redirectChain: [],
    technologies: [],
    responseTimeMs: 1,
  });

  it('runs a workflow on each endpoint from the answers its templates already had: no request twice, no finding twice', async () => {
    const guard = createScopeGuard({ allowedNetworks: LOOPBACK_NETWORKS });
    const templates = [techDetect, acmeDebug, matcherWorkflow].map((t) => ({ template: t }));
    const before = { root: acme.hits('/'), debug: acme.hits('/acme/debug') };
    const result = await runTemplatesOnWeb(templates, [webOf(acme)], { guard, timeoutMs: 5_000 });
    expect(result.errors).toEqual([]);
    expect(result.findings.map((f) => [f.checkId, f.matcher])).toEqual([
      ['acme-debug', '/acme/debug'],
      ['tech-detect', 'acme'],
    ]);
    expect({ root: acme.hits('/') - before.root, debug: acme.hits('/acme/debug') - before.debug }).toEqual({ root: 1, debug: 1 });
    // the workflow asked for both again and got the cluster cache's answers
    expect(result.summary.requestsSaved).toBe(2);
  });
});
