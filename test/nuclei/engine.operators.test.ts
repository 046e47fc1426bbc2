import { describe, expect, it } from 'vitest';
import { mmh3Signed } from '../../src/scanner/nuclei/index.js';
import { header, run, useEngineServers } from './engine-fixtures.js';
import { FAVICON, HOME_BODY } from './server.js';

useEngineServers();

describe('DSL matchers', () => {
  it('evaluates status_code, body, headers and helpers', async () => {
    const out = await run(`${header('dsl-basic')}
http:
  - path: ["{{BaseURL}}/"]
    matchers:
      - type: dsl
        condition: and
        dsl:
          - "status_code == 200"
          - "contains(to_lower(body), 'welcome to acme')"
          - "contains(server, 'Apache') && len(body) > 50"
          - "content_length == ${Buffer.byteLength(HOME_BODY)}"
          - "regex('version [0-9.]+', body)"
          - "duration < 30"
          - "md5('abc') == '900150983cd24fb0d6963f7d28e17f72'"
          - "base64('Acme') == 'QWNtZQ==' && base64_decode('QWNtZQ==') == 'Acme'"
`);
    expect(out.results).toHaveLength(1);
  });

  it('compares versions extracted by a named extractor', async () => {
    const vulnerable = await run(`${header('apache-version', 'high')}
http:
  - path: ["{{BaseURL}}/"]
    extractors:
      - type: regex
        name: version
        part: header
        group: 1
        internal: true
        regex:
          - 'Apache/([0-9.]+)'
    matchers:
      - type: dsl
        dsl:
          - "compare_versions(version, '< 2.4.50', '>= 2.4.0')"
`);
    expect(vulnerable.results).toHaveLength(1);
    expect(vulnerable.results[0].severity).toBe('high');
    expect(vulnerable.results[0].extractedResults).toEqual([]); // internal values are not reported
    const patched = await run(`${header('apache-version-patched')}
http:
  - path: ["{{BaseURL}}/"]
    extractors:
      - type: regex
        name: version
        part: header
        group: 1
        internal: true
        regex: ['Apache/([0-9.]+)']
    matchers:
      - type: dsl
        dsl: ["compare_versions(version, '< 2.4.49')"]
`);
    expect(patched.results).toEqual([]);
  });

  it('computes the favicon mmh3 hash like nuclei / python mmh3 (binary body)', async () => {
    // python: mmh3.hash(base64.encodebytes(favicon))
    const b64 = FAVICON.toString('base64');
    const py = `${b64.match(/.{1,76}/g)!.join('\n')}\n`;
    const expected = mmh3Signed(Buffer.from(py));
    const out = await run(`${header('favicon-hash')}
http:
  - path: ["{{BaseURL}}/favicon.ico"]
    matchers:
      - type: dsl
        dsl:
          - 'status_code == 200 && ("${expected}" == mmh3(base64_py(body)))'
    extractors:
      - type: dsl
        dsl:
          - "mmh3(base64_py(body))"
          - "md5(body)"
`);
    expect(out.results).toHaveLength(1);
    const { createHash } = await import('node:crypto');
    expect(out.results[0].extractedResults).toEqual([String(expected), createHash('md5').update(FAVICON).digest('hex')]);
  });

  it('a DSL expression that errors (missing variable) does not match', async () => {
    const out = await run(`${header('dsl-missing-var')}
http:
  - path: ["{{BaseURL}}/"]
    matchers:
      - type: dsl
        dsl: ["not_a_variable == 'x' || status_code == 999"]
`);
    expect(out.results).toEqual([]);
  });
});

describe('binary matchers and decompression', () => {
  it('matches binary needles in binary bodies', async () => {
    const out = await run(`${header('binary-magic')}
http:
  - path: ["{{BaseURL}}/favicon.ico"]
    matchers:
      - type: binary
        binary: ["00000100", "deadbeef"]
        condition: and
`);
    expect(out.results).toHaveLength(1);
    const none = await run(`${header('binary-miss')}
http:
  - path: ["{{BaseURL}}/favicon.ico"]
    matchers:
      - type: binary
        binary: ["cafebabe"]
`);
    expect(none.results).toEqual([]);
  });

  it('matches hex-encoded words', async () => {
    const out = await run(`${header('hex-words')}
http:
  - path: ["{{BaseURL}}/favicon.ico"]
    matchers:
      - type: word
        encoding: hex
        words: ["414243"]
`);
    expect(out.results).toHaveLength(1);
  });

  it('decompresses gzip bodies', async () => {
    const out = await run(`${header('gzip-body')}
http:
  - path: ["{{BaseURL}}/gzip"]
    matchers:
      - type: word
        words: ["GZIP-OK"]
`);
    expect(out.results).toHaveLength(1);
  });
});

describe('extractors', () => {
  it('runs regex (group), kval, json and dsl extractors', async () => {
    const out = await run(`${header('extract-all')}
http:
  - path: ["{{BaseURL}}/api/info"]
    extractors:
      - type: json
        name: app-version
        json:
          - '.app.version'
      - type: json
        name: user-names
        json:
          - '.users[].name'
          - '.users[0].id'
      - type: kval
        name: ctype
        kval:
          - content_type
          - Content-Length
      - type: regex
        name: build
        group: 1
        regex:
          - '"build":\\s*(\\d+)'
      - type: dsl
        name: summary
        dsl:
          - "to_upper(app_version_missing ?? 'none')"
          - "concat('status=', status_code)"
`);
    // no matchers: one result per named extractor, like nuclei
    const byName = Object.fromEntries(out.results.map((r) => [r.extractorName, r.extractedResults]));
    expect(byName['app-version']).toEqual(['1.2.3']);
    expect(byName['user-names']).toEqual(['alice', 'bob', '1']);
    expect(byName.ctype[0]).toBe('application/json');
    expect(byName.ctype[1]).toMatch(/^\d+$/);
    expect(byName.build).toEqual(['42']);
    expect(byName.summary).toEqual(['NONE', 'status=200']);
  });

  it('runs jq with operators, select, // and regex builtins in json extractors (as nuclei on gojq)', async () => {
    const out = await run(`${header('extract-jq')}
http:
  - path: ["{{BaseURL}}/api/info"]
    extractors:
      - type: json
        name: banner
        json:
          - '"Version: " + .app.version + " (build " + (.app.build | tostring) + ")"'
          - '.users[] | select(.id == 2) | "user: " + .name'
      - type: json
        name: flags
        json:
          - '.app.missing // "none"'
          - 'if .enabled == true and (.users | length) > 1 then "multi-user" else empty end'
          - '.app.version | capture("^(?<major>\\\\d+)\\\\.") | .major'
          - '"broken: " + .app.build'
`);
    const byName = Object.fromEntries(out.results.map((r) => [r.extractorName, r.extractedResults]));
    expect(byName.banner).toEqual(['Version: 1.2.3 (build 42)', 'user: bob']);
    // string + number is a runtime error: that expression yields nothing, the others keep their values
    expect(byName.flags).toEqual(['none', 'multi-user', '1']);
  });

  it('attaches extracted values to a matched finding', async () => {
    const out = await run(`${header('match-and-extract')}
http:
  - path: ["{{BaseURL}}/"]
    matchers:
      - type: word
        words: ["Acme Portal"]
    extractors:
      - type: regex
        regex: ['[a-z]+@acme\\.test']
      - type: kval
        kval: [server]
`);
    expect(out.results).toHaveLength(1);
    expect(out.results[0].extractedResults).toEqual(['admin@acme.test', 'Apache/2.4.49 (Unix)']);
  });

  it('reports nothing when matchers do not match even if extractors found values', async () => {
    const out = await run(`${header('extract-no-match')}
http:
  - path: ["{{BaseURL}}/"]
    matchers:
      - type: word
        words: ["not present anywhere"]
    extractors:
      - type: kval
        kval: [server]
`);
    expect(out.results).toEqual([]);
  });
});
