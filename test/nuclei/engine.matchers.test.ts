import { describe, expect, it } from 'vitest';
import { header, run, server, useEngineServers } from './engine-fixtures.js';

useEngineServers();

describe('word / status / regex / size matchers', () => {
  it('matches word + status with matchers-condition and', async () => {
    const out = await run(`${header('acme-portal')}
http:
  - method: GET
    path:
      - "{{BaseURL}}/"
    matchers-condition: and
    matchers:
      - type: word
        words:
          - "Welcome to Acme Portal"
          - "version 2.4.49"
        condition: and
      - type: status
        status:
          - 200
`);
    expect(out.results).toHaveLength(1);
    const r = out.results[0];
    expect(r.templateId).toBe('acme-portal');
    expect(r.templateName).toBe('acme-portal test');
    expect(r.matchedUrl).toBe(`${server.baseUrl}/`);
    expect(r.matcherName).toBeUndefined();
    expect(r.request).toContain('GET / HTTP/1.1');
    expect(r.response).toContain('HTTP/1.1 200 OK');
    expect(r.response).toContain('Welcome to Acme Portal');
  });

  it('does not match when one word of an and-condition is missing (no false positive)', async () => {
    const out = await run(`${header('acme-and-miss')}
http:
  - path: ["{{BaseURL}}/"]
    matchers:
      - type: word
        condition: and
        words: ["Welcome to Acme Portal", "this text is not on the page"]
`);
    expect(out.results).toEqual([]);
  });

  it('honours case-insensitive words', async () => {
    const yes = await run(`${header('ci-yes')}
http:
  - path: ["{{BaseURL}}/"]
    matchers:
      - type: word
        case-insensitive: true
        words: ["WELCOME TO ACME PORTAL"]
`);
    expect(yes.results).toHaveLength(1);
    const no = await run(`${header('ci-no')}
http:
  - path: ["{{BaseURL}}/"]
    matchers:
      - type: word
        words: ["WELCOME TO ACME PORTAL"]
`);
    expect(no.results).toEqual([]);
  });

  it('negative matchers invert the result', async () => {
    const out = await run(`${header('negative-ok')}
http:
  - path: ["{{BaseURL}}/headers"]
    matchers-condition: and
    matchers:
      - type: word
        part: header
        negative: true
        words: ["Strict-Transport-Security"]
      - type: status
        status: [200]
`);
    expect(out.results).toHaveLength(1);
    const none = await run(`${header('negative-none')}
http:
  - path: ["{{BaseURL}}/headers"]
    matchers:
      - type: word
        part: header
        negative: true
        words: ["X-Frame-Options"]
`);
    expect(none.results).toEqual([]);
  });

  it('matches regexes on header and body parts, with Go inline flags', async () => {
    const out = await run(`${header('regex-parts')}
http:
  - path: ["{{BaseURL}}/"]
    matchers-condition: and
    matchers:
      - type: regex
        part: header
        regex:
          - '(?mi)^server: apache/2\\.4\\.\\d+'
      - type: regex
        regex:
          - '[a-z]+@acme\\.test'
      - type: regex
        part: header
        regex:
          - 'X-Powered-By: PHP/7'
`);
    expect(out.results).toHaveLength(1);
    const wrongPart = await run(`${header('regex-wrong-part')}
http:
  - path: ["{{BaseURL}}/"]
    matchers:
      - type: regex
        part: body
        regex: ['(?i)server: apache']
`);
    expect(wrongPart.results).toEqual([]);
  });

  it('supports part: all, response and raw', async () => {
    const out = await run(`${header('parts-all')}
http:
  - path: ["{{BaseURL}}/"]
    matchers-condition: and
    matchers:
      - type: word
        part: all
        words: ["Apache/2.4.49", "Acme Portal"]
        condition: and
      - type: word
        part: response
        words: ["HTTP/1.1 200 OK"]
      - type: word
        part: raw
        words: ["Set-Cookie: session=abc123"]
`);
    expect(out.results).toHaveLength(1);
  });

  it('matches status and size', async () => {
    const out = await run(`${header('status-size')}
http:
  - path: ["{{BaseURL}}/admin"]
    matchers-condition: and
    matchers:
      - type: status
        status: [401, 403]
      - type: size
        size: [9]
`);
    expect(out.results).toHaveLength(1);
    const wrongSize = await run(`${header('size-miss')}
http:
  - path: ["{{BaseURL}}/admin"]
    matchers:
      - type: size
        size: [10]
`);
    expect(wrongSize.results).toEqual([]);
  });

  it('matches named headers as parts (nuclei normalises - to _)', async () => {
    const out = await run(`${header('named-header-part')}
http:
  - path: ["{{BaseURL}}/headers"]
    matchers:
      - type: word
        part: x_custom_header
        words: ["Value-123"]
`);
    expect(out.results).toHaveLength(1);
  });

  it('word matchers on a missing part never match, even negative ones', async () => {
    const out = await run(`${header('missing-part')}
http:
  - path: ["{{BaseURL}}/"]
    matchers:
      - type: word
        part: x_does_not_exist
        negative: true
        words: ["anything"]
`);
    expect(out.results).toEqual([]);
  });
});

describe('matchers-condition and named matchers', () => {
  it('reports each named matcher separately with matchers-condition: or', async () => {
    const out = await run(`${header('tech-detect')}
http:
  - path: ["{{BaseURL}}/"]
    matchers-condition: or
    matchers:
      - type: word
        name: apache
        part: header
        words: ["Apache"]
      - type: word
        name: php
        part: header
        words: ["PHP/"]
      - type: word
        name: nginx
        part: header
        words: ["nginx"]
`);
    expect(out.results.map((r) => r.matcherName).sort()).toEqual(['apache', 'php']);
  });

  it('reports a single finding with matchers-condition: and even when matchers are named', async () => {
    const out = await run(`${header('named-and')}
http:
  - path: ["{{BaseURL}}/"]
    matchers-condition: and
    matchers:
      - type: word
        name: apache
        part: header
        words: ["Apache"]
      - type: status
        name: ok
        status: [200]
`);
    expect(out.results).toHaveLength(1);
    expect(out.results[0].matcherName).toBeUndefined();
  });

  it('matchers-condition and fails as soon as one matcher fails', async () => {
    const out = await run(`${header('and-fails')}
http:
  - path: ["{{BaseURL}}/"]
    matchers-condition: and
    matchers:
      - type: word
        words: ["Acme Portal"]
      - type: status
        status: [500]
`);
    expect(out.results).toEqual([]);
  });
});
