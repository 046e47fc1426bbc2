import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodeHttpSender, parseTemplate, runTemplatesDetailed } from '../../src/scanner/nuclei/index.js';
import { extractXPath, matchXPath } from '../../src/scanner/nuclei/xpath.js';
import { startServer, type TestServer } from './server.js';

/**
 * `xpath` matchers and extractors as nuclei runs them (MatchXPath / ExtractXPath): HTML unless the body starts with
 * `<?xml`, `attribute` for an element's attribute, and/or over the queries, a query that fails skipped.
 */

const LOGIN_PAGE = `<!DOCTYPE html><html><head><title>Acme CMS</title><script>if (a < b && c) {}</script></head>
<body><form id="login"><input type="hidden" name="_wpnonce" value="n0nc3-42"><input name=user>
<p class=version>Acme CMS 5.0.1 &copy; Acme</p><br></form></body></html>`;
const FEED = `<?xml version="1.0" encoding="UTF-8"?><rss><channel><generator>Acme CMS 5.0.1</generator><item><title>a</title></item></channel></rss>`;

let server: TestServer;
const sender = createNodeHttpSender({ maxBodyBytes: 1024 * 1024 });

beforeAll(async () => {
  server = await startServer({
    '/login': (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(LOGIN_PAGE),
    '/feed': (_req, res) => res.writeHead(200, { 'content-type': 'application/xml' }).end(FEED),
    '/broken-feed': (_req, res) => res.writeHead(200).end('<?xml version="1.0"?><rss><channel></rss>'),
    '/upload': (req, res, body) => res.writeHead(body.includes('nonce=n0nc3-42') ? 200 : 403).end(body.includes('nonce=n0nc3-42') ? 'uploaded' : 'bad nonce'),
  });
});
afterAll(async () => {
  sender.destroy();
  await server.close();
});

const head = (id: string) => `id: ${id}\ninfo:\n  name: ${id}\n  author: tests\n  severity: high\n`;

async function run(yaml: string) {
  const parsed = parseTemplate(yaml);
  expect(parsed.errors).toEqual([]);
  expect(parsed.warnings).toEqual([]);
  return runTemplatesDetailed([parsed.template!], { baseUrl: server.baseUrl }, { send: sender, timeoutMs: 5000 });
}

describe('xpath operators in a run', () => {
  it('an internal xpath extractor takes an attribute the next request sends (the CVE-2019-8943 shape)', async () => {
    const out = await run(`${head('xpath-nonce')}
http:
  - method: GET
    path: ["{{BaseURL}}/login"]
    extractors:
      - type: xpath
        name: nonce
        internal: true
        attribute: value
        xpath: ["/html/body/form/input[@name='_wpnonce']"]
  - method: POST
    path: ["{{BaseURL}}/upload"]
    body: "nonce={{nonce}}"
    matchers:
      - type: word
        words: ["uploaded"]
`);
    expect(out.results).toHaveLength(1);
    expect(server.log.filter((r) => r.url === '/upload').map((r) => r.body)).toEqual(['nonce=n0nc3-42']);
  });

  it('extracts text from HTML and XML, and matches with and/or; a body that is not XML after <?xml matches nothing', async () => {
    const out = await run(`${head('xpath-version')}
http:
  - method: GET
    path: ["{{BaseURL}}/login", "{{BaseURL}}/feed", "{{BaseURL}}/broken-feed"]
    matchers:
      - type: xpath
        condition: or
        xpath: ["//p[@class='version']", "/rss/channel/generator"]
    extractors:
      - type: xpath
        xpath: ["//p[@class='version']", "/rss/channel/generator/text()"]
`);
    expect(out.results.map((r) => [new URL(r.matchedUrl).pathname, r.extractedResults])).toEqual([
      ['/login', ['Acme CMS 5.0.1 © Acme']],
      ['/feed', ['Acme CMS 5.0.1']],
    ]);
    const none = await run(`${head('xpath-and')}
http:
  - method: GET
    path: ["{{BaseURL}}/login"]
    matchers:
      - type: xpath
        condition: and
        xpath: ["//form[@id='login']", "//form[@id='register']"]
`);
    expect(none.results).toEqual([]);
  });
});

describe('xpath helpers', () => {
  it('follow nuclei: a failing query is skipped, and/or over the rest, attribute of elements only', () => {
    expect(matchXPath(LOGIN_PAGE, ['//form[', '//input'], 'and')).toBe(true);
    expect(matchXPath(LOGIN_PAGE, ['//nope'], 'or')).toBe(false);
    expect(extractXPath(LOGIN_PAGE, ['//input/@value'], undefined)).toEqual(['n0nc3-42']);
    expect(extractXPath(LOGIN_PAGE, ['//input'], 'name')).toEqual(['_wpnonce', 'user']);
    expect(extractXPath(LOGIN_PAGE, ['//title'], 'missing')).toEqual(['']);
  });

  it('never expands DTD entities (no billion laughs) and refuses a bad query at parse time with a warning', () => {
    const lol = `<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]><l>&c;</l>`;
    for (const value of extractXPath(lol, ['/l'], undefined)) expect(value.length).toBeLessThan(100);
    const parsed = parseTemplate(`${head('xpath-bad')}
http:
  - method: GET
    path: ["{{BaseURL}}/"]
    matchers:
      - type: xpath
        xpath: ["//a["]
`);
    expect(parsed.warnings.map((w) => w.message)).toEqual([expect.stringMatching(/^xpath "\/\/a\[" cannot be used: .*; this operator is skipped$/)]);
  });
});
