import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodeHttpSender, parseTemplate, runTemplatesDetailed } from '../../src/scanner/nuclei/index.js';
import { startServer, type TestServer } from './server.js';

/** `iterate-all: true`: a request using an internal extractor's values is sent once per value (nuclei's MakeDynamicValuesCallback). */

let server: TestServer;
const sender = createNodeHttpSender({ maxBodyBytes: 1024 * 1024 });

beforeAll(async () => {
  server = await startServer({
    '/apps.json': (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(['/node/a', '/node/b', '/node/c'])),
    '/node/a': (_req, res) => res.writeHead(404).end('no'),
    '/node/b': (_req, res) => res.writeHead(404).end('no'),
    '/node/c': (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"jcr:primaryType":"nt:unstructured"}'),
  });
});
afterAll(async () => {
  sender.destroy();
  await server.close();
});

const template = (iterateAll: boolean) => `id: iterate-${iterateAll}
info:
  name: iterate
  author: tests
  severity: low
http:
  - method: GET
    path:
      - "{{BaseURL}}/apps.json"
      - "{{BaseURL}}{{path}}?from={{first}}"
${iterateAll ? '    iterate-all: true\n' : ''}    extractors:
      - type: json
        name: path
        internal: true
        json: ['.[]']
      - type: regex
        name: first
        internal: true
        regex: ['"(/node/a)"']
        group: 1
    stop-at-first-match: true
    matchers:
      - type: word
        words: ['"jcr:primaryType":']
`;

async function run(yaml: string) {
  const parsed = parseTemplate(yaml);
  expect(parsed.errors).toEqual([]);
  expect(parsed.warnings).toEqual([]);
  server.log.length = 0;
  return runTemplatesDetailed([parsed.template!], { baseUrl: server.baseUrl }, { send: sender, timeoutMs: 5000 });
}

describe('iterate-all', () => {
  it('sends the request once per extracted value (a single value stays) and stops at the first match', async () => {
    const out = await run(template(true));
    expect(server.log.map((r) => r.url)).toEqual(['/apps.json', '/node/a?from=/node/a', '/node/b?from=/node/a', '/node/c?from=/node/a']);
    expect(out.results.map((r) => new URL(r.matchedUrl).pathname)).toEqual(['/node/c']);
  });

  it('without it only the first value is used, as nuclei does', async () => {
    const out = await run(template(false));
    expect(server.log.map((r) => r.url)).toEqual(['/apps.json', '/node/a?from=/node/a']);
    expect(out.results).toEqual([]);
  });
});
