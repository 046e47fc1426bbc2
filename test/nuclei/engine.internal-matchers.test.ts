import { describe, expect, it } from 'vitest';
import { header, run, server, useEngineServers } from './engine-fixtures.js';

useEngineServers();

/** nuclei writes no result for an event whose matchers are all `internal: true` (they only steer flows). */
describe('internal matchers', () => {
  it('a block whose only matchers are internal produces no result, and its internal extractor still feeds the next block', async () => {
    const before = server.log.length;
    const out = await run(`${header('internal-only')}
http:
  - path: ["{{BaseURL}}/"]
    extractors:
      - type: regex
        name: version
        internal: true
        group: 1
        regex: ["version ([0-9.]+)"]
    matchers:
      - type: word
        internal: true
        words: ["Acme Portal"]
  - path: ["{{BaseURL}}/echo?v={{version}}"]
    matchers:
      - type: status
        status: [599]
`);
    expect(out.results).toEqual([]);
    expect(server.log.slice(before).map((r) => r.url)).toEqual(['/', '/echo?v=2.4.49']);
  });

  it('a block mixing an internal and a visible matcher still reports', async () => {
    const out = await run(`${header('internal-mixed')}
http:
  - path: ["{{BaseURL}}/"]
    matchers-condition: and
    matchers:
      - type: word
        internal: true
        words: ["Acme Portal"]
      - type: status
        status: [200]
`);
    expect(out.results.map((r) => r.templateId)).toEqual(['internal-mixed']);
  });
});
