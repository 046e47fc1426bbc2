import { describe, expect, it } from 'vitest';
import { header, run, server, useEngineServers } from './engine-fixtures.js';

useEngineServers();

/** nuclei runs matchers and extractors on every response of a redirect chain: the final one, then each redirect. */
describe('redirect chains', () => {
  it('matches each redirect response of the chain, with its own URL', async () => {
    const out = await run(`${header('chain-302')}
http:
  - path: ["{{BaseURL}}/redirect/2"]
    redirects: true
    matchers:
      - type: status
        status: [302]
`);
    expect(out.results.map((r) => r.matchedUrl).sort()).toEqual([`${server.baseUrl}/redirect/1`, `${server.baseUrl}/redirect/2`]);
    expect(out.results[0].response).toMatch(/^HTTP\/1\.1 302 Found\r\n/);
  });

  it('extracts from a redirect header and matches the final body in one block', async () => {
    const out = await run(`${header('chain-extract')}
http:
  - path: ["{{BaseURL}}/redirect/1"]
    redirects: true
    extractors:
      - type: regex
        name: hop
        part: header
        regex: ["Location: (/redirect/[0-9])"]
        group: 1
`);
    expect(out.results.map((r) => [r.matchedUrl, r.extractedResults])).toEqual([[`${server.baseUrl}/redirect/1`, ['/redirect/0']]]);
  });

  it("does not read redirect bodies (as Go's client): a word of a redirect body never matches", async () => {
    const out = await run(`${header('chain-body')}
http:
  - path: ["{{BaseURL}}/redirect/2"]
    redirects: true
    matchers:
      - type: word
        words: ["hop 2"]
`);
    expect(out.results).toEqual([]);
  });

  it('stops at max-redirects: the unfollowed redirect is the final response (its body read)', async () => {
    const before = server.log.length;
    const out = await run(`${header('chain-limit')}
http:
  - path: ["{{BaseURL}}/redirect/3"]
    redirects: true
    max-redirects: 1
    matchers:
      - type: status
        status: [302]
`);
    expect(server.log.slice(before).map((r) => r.url)).toEqual(['/redirect/3', '/redirect/2']);
    expect(out.results.map((r) => r.matchedUrl).sort()).toEqual([`${server.baseUrl}/redirect/2`, `${server.baseUrl}/redirect/3`]);
    expect(out.results.find((r) => r.matchedUrl.endsWith('/redirect/2'))?.response).toContain('hop 2');
  });

  it('without redirects only the first response is seen', async () => {
    const out = await run(`${header('chain-off')}
http:
  - path: ["{{BaseURL}}/redirect/2"]
    matchers:
      - type: status
        status: [302]
`);
    expect(out.results.map((r) => r.matchedUrl)).toEqual([`${server.baseUrl}/redirect/2`]);
  });

  it('stop-at-first-match ends the chain at the first matching response (the final one first)', async () => {
    const out = await run(`${header('chain-stop')}
http:
  - path: ["{{BaseURL}}/redirect/2"]
    redirects: true
    stop-at-first-match: true
    matchers:
      - type: status
        status: [200, 302]
`);
    expect(out.results.map((r) => r.matchedUrl)).toEqual([`${server.baseUrl}/redirect/0`]);
  });
});
