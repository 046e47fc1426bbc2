import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodeHttpSender, parseTemplate, runTemplateTask, type NucleiTemplate } from '../../src/scanner/nuclei/index.js';
import { startServer, type TestServer } from './server.js';

/**
 * The template worker pool: each template runs against an endpoint in a worker thread within its budget. A
 * template that overruns it is cut off (a slow server as much as a slow regex); one stuck in a long synchronous
 * match does not take the templates sharing its thread down with it.
 */

const sender = createNodeHttpSender();
let server: TestServer;

beforeAll(async () => {
  const big = `${'a'.repeat(300_000)}!`;
  server = await startServer({
    '/big': (_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(big),
    '/slow': (_req, res) => setTimeout(() => res.writeHead(200, { 'content-type': 'text/plain' }).end('victim-ok'), 300),
    '/never': () => {},
  });
});

afterAll(async () => {
  sender.destroy();
  await server?.close();
});

function template(id: string, path: string, operators: string): NucleiTemplate {
  const { template, errors } = parseTemplate(`id: ${id}
info:
  name: ${id}
  author: tests
  severity: info
http:
  - method: GET
    path: ["{{BaseURL}}${path}"]
${operators}`);
  expect(errors).toEqual([]);
  return template!;
}

const word = (text: string) => `    matchers:\n      - type: word\n        words: ["${text}"]\n`;

describe('template worker pool', { timeout: 60_000 }, () => {
  it('runs a template in a worker and returns its results', async () => {
    const outcome = await runTemplateTask({ template: template('victim', '/slow', word('victim-ok')), baseUrl: server.baseUrl, send: sender, budgetMs: 5_000 });
    expect(outcome).toMatchObject({ status: 'done', results: [{ templateId: 'victim', matchedUrl: `${server.baseUrl}/slow` }] });
  });

  it('cuts a template off at its budget while it waits on the network, and cancels the request', async () => {
    const started = Date.now();
    const outcome = await runTemplateTask({
      template: template('waits', '/never', word('x')),
      baseUrl: server.baseUrl,
      send: sender,
      budgetMs: 300,
      timeoutMs: 30_000,
    });
    expect(outcome).toEqual({ status: 'over-budget' });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('a template stuck in a long match is cut off; templates sharing its worker still finish', async () => {
    // Linear in RE2, but a 3 000-instruction program needs seconds per 100 KB to find submatches.
    const stuck = template('stuck', '/big', "    extractors:\n      - type: regex\n        regex: ['((?:(?:a|b){100}){10})!']\n");
    const culprit = runTemplateTask({ template: stuck, baseUrl: server.baseUrl, send: sender, budgetMs: 1_500 });
    // More templates than the pool has threads: some share the stuck one's worker.
    const victims = Array.from({ length: 6 }, (_, i) =>
      runTemplateTask({ template: template(`victim-${i}`, '/slow', word('victim-ok')), baseUrl: server.baseUrl, send: sender, budgetMs: 1_500 }),
    );
    expect(await culprit).toEqual({ status: 'over-budget' });
    for (const outcome of await Promise.all(victims))
      expect(outcome).toMatchObject({ status: 'done', results: [expect.objectContaining({ matchedUrl: `${server.baseUrl}/slow` })] });
  });
});
