import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodeHttpSender, createRunStats, parseTemplate, runTemplates } from '../../src/scanner/nuclei/index.js';
import type { NucleiTemplate } from '../../src/scanner/nuclei/index.js';
import { startServer, type TestServer } from './server.js';

let server: TestServer;
const sender = createNodeHttpSender();

beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  sender.destroy();
  await server.close();
});

function tpl(id: string, matcher: string): NucleiTemplate {
  const r = parseTemplate(`id: ${id}
info:
  name: ${id}
  author: perimeter
  severity: info
http:
  - method: GET
    path:
      - "{{BaseURL}}/"
    matchers:
${matcher}
`);
  expect(r.errors).toEqual([]);
  return r.template!;
}

const apache = () => tpl('detect-apache', '      - type: word\n        part: header\n        words: ["Apache"]');
const php = () => tpl('detect-php', '      - type: regex\n        part: header\n        regex: ["PHP/[0-9.]+"]');
const nginx = () => tpl('detect-nginx', '      - type: word\n        part: header\n        words: ["nginx"]');

describe('request clustering', () => {
  it('sends identical requests from different templates once when clustering is on', async () => {
    const before = server.hits('/');
    const stats = createRunStats();
    const results = await runTemplates([apache(), php(), nginx()], { baseUrl: server.baseUrl }, { send: sender, cluster: true, stats });
    expect(server.hits('/') - before).toBe(1);
    expect(stats.requestsSent).toBe(1);
    expect(stats.requestsSaved).toBe(2);
    // every template still evaluates its own matchers on the shared response
    expect(results.map((r) => r.templateId)).toEqual(['detect-apache', 'detect-php']);
  });

  it('sends one request per template when clustering is off', async () => {
    const before = server.hits('/');
    const stats = createRunStats();
    const results = await runTemplates([apache(), php()], { baseUrl: server.baseUrl }, { send: sender, cluster: false, stats });
    expect(server.hits('/') - before).toBe(2);
    expect(stats).toMatchObject({ requestsSent: 2, requestsSaved: 0 });
    expect(results).toHaveLength(2);
  });

  it('does not cluster requests that differ (headers, redirects)', async () => {
    const withHeader = parseTemplate(`id: with-header
info: { name: h, author: x, severity: info }
http:
  - path: ["{{BaseURL}}/"]
    headers:
      X-Probe: "1"
    matchers: [{ type: status, status: [200] }]
`).template!;
    const withRedirects = parseTemplate(`id: with-redirects
info: { name: r, author: x, severity: info }
http:
  - path: ["{{BaseURL}}/"]
    redirects: true
    matchers: [{ type: status, status: [200] }]
`).template!;
    const before = server.hits('/');
    const stats = createRunStats();
    await runTemplates([apache(), withHeader, withRedirects], { baseUrl: server.baseUrl }, { send: sender, cluster: true, stats });
    expect(server.hits('/') - before).toBe(3);
    expect(stats.requestsSaved).toBe(0);
  });

  it('shares in-flight requests between concurrently running templates', async () => {
    const before = server.hits('/');
    const stats = createRunStats();
    const many = Array.from({ length: 8 }, (_, i) => tpl(`same-${i}`, '      - type: status\n        status: [200]'));
    const results = await runTemplates(many, { baseUrl: server.baseUrl }, { send: sender, cluster: true, concurrency: 8, stats });
    expect(server.hits('/') - before).toBe(1);
    expect(stats).toMatchObject({ requestsSent: 1, requestsSaved: 7 });
    expect(results).toHaveLength(8);
  });
});
