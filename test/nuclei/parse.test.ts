import { describe, expect, it } from 'vitest';
import { parseTemplate } from '../../src/scanner/nuclei/index.js';

const VALID = `id: sample-template
info:
  name: Sample
  author: perimeter
  severity: low
http:
  - method: GET
    path:
      - "{{BaseURL}}/"
    matchers:
      - type: word
        words: ["ok"]
`;

function messages(list: Array<{ message: string }>): string {
  return list.map((i) => i.message).join('\n');
}

describe('parseTemplate: valid templates', () => {
  it('parses a minimal template', () => {
    const r = parseTemplate(VALID);
    expect(r.errors).toEqual([]);
    expect(r.warnings).toEqual([]);
    expect(r.template?.id).toBe('sample-template');
    expect(r.template?.info).toMatchObject({ name: 'Sample', severity: 'low', author: ['perimeter'] });
    const block = r.template!.requests[0];
    expect(block).toMatchObject({ path: 'http[0]', method: 'GET', paths: ['{{BaseURL}}/'], matchersCondition: 'or', redirects: false, maxRedirects: 10 });
    expect(block.matchers[0]).toMatchObject({ type: 'word', part: 'body', condition: 'or', negative: false, words: ['ok'] });
  });

  it('accepts the legacy requests key with a deprecation warning', () => {
    const r = parseTemplate(VALID.replace('http:', 'requests:'));
    expect(r.errors).toEqual([]);
    expect(r.template?.protocolKey).toBe('requests');
    expect(r.template?.requests[0].path).toBe('requests[0]');
    expect(messages(r.warnings)).toContain("'requests' is deprecated");
  });

  it('keeps info fields and classification', () => {
    const r = parseTemplate(`id: CVE-2023-1234
info:
  name: Example CVE
  author: a, b
  severity: CRITICAL
  description: |
    Something bad.
  remediation: Patch it.
  reference: https://example.test/advisory
  tags: [cve, rce]
  classification:
    cve-id: cve-2023-1234
    cwe-id: [CWE-78, CWE-77]
    cvss-metrics: CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H
    cvss-score: 9.8
  metadata:
    max-request: 1
http:
  - path: ["{{BaseURL}}"]
    matchers: [{ type: status, status: [200] }]
`);
    expect(r.errors).toEqual([]);
    expect(r.template?.info).toEqual({
      name: 'Example CVE',
      author: ['a', 'b'],
      severity: 'critical',
      description: 'Something bad.',
      remediation: 'Patch it.',
      reference: ['https://example.test/advisory'],
      tags: ['cve', 'rce'],
      classification: {
        cveId: ['CVE-2023-1234'],
        cweId: ['CWE-78', 'CWE-77'],
        cvssMetrics: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H',
        cvssScore: 9.8,
      },
      metadata: { 'max-request': 1 },
    });
  });

  it('detects req-condition from indexed DSL variables', () => {
    const r = parseTemplate(VALID.replace('      - type: word\n        words: ["ok"]', '      - type: dsl\n        dsl: ["status_code_1 == 200"]'));
    expect(r.errors).toEqual([]);
    expect(r.template?.requests[0].reqCondition).toBe(true);
  });
});

describe('parseTemplate: errors with positions', () => {
  it('reports YAML syntax errors with line and column', () => {
    const r = parseTemplate(`id: broken
info:
  name: Broken
  severity: info
http:
  - path: ["{{BaseURL}}"
    matchers: []
`);
    expect(r.template).toBeUndefined();
    expect(r.errors.length).toBeGreaterThan(0);
    expect(r.errors[0].message).toMatch(/^YAML syntax error/);
    expect(r.errors[0].line).toBeGreaterThanOrEqual(6);
    expect(r.errors[0].column).toBeGreaterThan(0);
  });

  it('reports bad indentation', () => {
    const r = parseTemplate(`id: bad-indent
info:
  name: x
   severity: info
`);
    expect(r.template).toBeUndefined();
    // the yaml parser flags the mapping that the mis-indented key breaks
    expect(r.errors[0]).toMatchObject({ line: 3, column: 9 });
  });

  it('requires an id', () => {
    const r = parseTemplate(VALID.replace('id: sample-template\n', ''));
    expect(r.template).toBeUndefined();
    expect(r.errors).toContainEqual(expect.objectContaining({ message: "missing required field 'id'", path: '' }));
  });

  it('rejects ids that do not follow the nuclei pattern', () => {
    const r = parseTemplate(VALID.replace('id: sample-template', 'id: "bad id!"'));
    expect(r.errors[0]).toMatchObject({ path: 'id', line: 1 });
    expect(r.errors[0].message).toContain('invalid id');
    expect(parseTemplate(VALID.replace('id: sample-template', 'id: double--dash')).errors).toHaveLength(1);
  });

  it('rejects a bad severity with its line', () => {
    const r = parseTemplate(VALID.replace('severity: low', 'severity: urgent'));
    expect(r.template).toBeUndefined();
    expect(r.errors).toEqual([
      expect.objectContaining({ path: 'info.severity', line: 5, column: 13, message: expect.stringContaining('invalid severity "urgent"') }),
    ]);
  });

  it('requires info.name and info.severity', () => {
    const r = parseTemplate(`id: no-name
info:
  author: x
http:
  - path: ["{{BaseURL}}"]
    matchers: [{ type: status, status: [200] }]
`);
    expect(messages(r.errors)).toContain("missing required field 'info.name'");
    expect(messages(r.errors)).toContain("missing required field 'info.severity'");
  });

  it('rejects unknown matcher types with the exact path and line', () => {
    const r = parseTemplate(`id: bad-matcher
info:
  name: Bad matcher
  author: x
  severity: info
http:
  - path: ["{{BaseURL}}"]
    matchers:
      - type: status
        status: [200]
      - type: wordz
        words: ["x"]
`);
    expect(r.template).toBeUndefined();
    expect(r.errors).toEqual([
      expect.objectContaining({ path: 'http[0].matchers[1].type', line: 11, column: 15, message: expect.stringContaining('unknown matcher type "wordz"') }),
    ]);
  });

  it('validates required fields and field types of matchers and extractors', () => {
    const r = parseTemplate(`id: bad-fields
info:
  name: Bad fields
  author: x
  severity: info
http:
  - path: ["{{BaseURL}}"]
    matchers-condition: maybe
    matchers:
      - type: word
        part: body
      - type: regex
        regex: ["a"]
        condition: xor
      - type: status
        status: ["abc"]
      - type: word
        words: [a]
        negative: "yes please"
      - type: dsl
        dsl: ["status_code == "]
      - type: binary
        binary: ["zz"]
      - type: regex
        regex: ["x"]
        case-insensitive: true
    extractors:
      - type: regex
        group: -1
        regex: ["(a)"]
      - type: kval
      - type: jsonpath
        json: [".a"]
`);
    expect(r.template).toBeUndefined();
    const byPath = Object.fromEntries(r.errors.map((e) => [e.path, e.message]));
    expect(byPath['http[0].matchers-condition']).toContain("must be 'and' or 'or'");
    expect(byPath['http[0].matchers[0]']).toContain("word matcher requires 'words'");
    expect(byPath['http[0].matchers[1].condition']).toContain("must be 'and' or 'or'");
    expect(byPath['http[0].matchers[2].status[0]']).toContain('integers');
    expect(byPath['http[0].matchers[3].negative']).toContain('boolean');
    expect(byPath['http[0].matchers[4].dsl[0]']).toContain('invalid DSL expression');
    expect(byPath['http[0].matchers[5].binary[0]']).toContain('invalid hex');
    expect(byPath['http[0].matchers[6].case-insensitive']).toContain('only supported for word');
    expect(byPath['http[0].extractors[0].group']).toContain('integer >= 0');
    expect(byPath['http[0].extractors[1]']).toContain("kval extractor requires 'kval'");
    expect(byPath['http[0].extractors[2].type']).toContain('unknown extractor type "jsonpath"');
    for (const e of r.errors) expect(e.line).toBeGreaterThan(0);
  });

  it('rejects templates without a supported protocol', () => {
    const r = parseTemplate(`id: headless-only
info:
  name: Headless
  author: x
  severity: info
headless:
  - steps:
      - action: navigate
`);
    expect(r.template).toBeUndefined();
    expect(r.errors).toEqual([expect.objectContaining({ message: 'protocol headless is not supported', path: 'headless', line: 6 })]);
  });

  it('requires path or raw and a valid method', () => {
    const r = parseTemplate(`id: no-path
info:
  name: x
  author: x
  severity: info
http:
  - method: FETCH
    matchers: [{ type: status, status: [200] }]
`);
    expect(messages(r.errors)).toContain("a request needs 'path' or 'raw'");
    expect(messages(r.errors)).toContain('unsupported HTTP method "FETCH"');
  });
});

describe('parseTemplate: warnings for unsupported features', () => {
  it('warns about other protocols next to http', () => {
    const r = parseTemplate(`${VALID}headless:
  - steps:
      - action: navigate
`);
    expect(r.errors).toEqual([]);
    expect(r.warnings).toContainEqual(expect.objectContaining({ path: 'headless', message: expect.stringContaining('protocol headless is not supported') }));
  });

  it('warns and marks blocks / matchers / extractors that cannot run', () => {
    const r = parseTemplate(`id: unsupported-stuff
info:
  name: Unsupported
  author: x
  severity: medium
http:
  - raw:
      - |
        POST /login HTTP/1.1
        Host: {{Hostname}}

        user={{username}}&pass={{password}}
    payloads:
      username:
        low: [admin]
      password: [admin]
    attack: pitchfork
    matchers:
      - type: status
        status: [200]
  - raw:
      - |
        GET / HTTP/1.1
        Host: {{Hostname}}
    race: true
    race_count: 10
    matchers: [{ type: status, status: [200] }]
  - path: ["{{BaseURL}}"]
    pipeline: true
    matchers: [{ type: status, status: [200] }]
  - path: ["{{BaseURL}}/?x={{interactsh-url}}"]
    matchers:
      - type: word
        part: interactsh_protocol
        words: [http]
  - path: ["{{BaseURL}}/{{generate_java_gadget('dns', 'x', 'raw')}}"]
    matchers: [{ type: status, status: [200] }]
  - path: ["{{BaseURL}}"]
    matchers:
      - type: xpath
        xpath: ["/html/head/title["]
      - type: dsl
        dsl: ["llm_prompt('year?') == '2024'"]
      - type: regex
        regex: ["(?=lookahead)x"]
    extractors:
      - type: xpath
        xpath: ["//title[@"]
      - type: json
        json: ['reduce .[] as $x (0; . + $x)']
`);
    expect(r.errors).toEqual([]);
    const t = r.template!;
    expect(t.requests[0].skip).toContain('payloads');
    expect(t.requests[1].skip).toBeUndefined();
    expect(t.requests[1].race).toEqual({ count: 10 });
    expect(t.requests[2].skip).toContain('pipelining');
    // OAST is given at run time (engine/oast.ts): the block loads as it is, without a warning
    expect(t.requests[3].skip).toBeUndefined();
    expect(t.requests[3].matchers[0].unsupported).toBeUndefined();
    expect(r.warnings.filter((w) => w.path?.startsWith('http[3]'))).toEqual([]);
    expect(t.requests[4].skip).toContain('generate_java_gadget');
    const last = t.requests[5];
    expect(last.skip).toBeUndefined();
    expect(last.matchers[0].unsupported).toContain('xpath');
    expect(last.matchers[1].unsupported).toContain('llm_prompt');
    expect(last.matchers[2].unsupported).toContain('look-around');
    expect(last.extractors[0].unsupported).toContain('xpath');
    expect(last.extractors[1].unsupported).toContain('jq');
    const paths = r.warnings.map((w) => w.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'http[0].payloads.username',
        'http[2].pipeline',
        'http[4]',
        'http[5].matchers[0].xpath[0]',
        'http[5].matchers[1].dsl[0]',
        'http[5].matchers[2].regex[0]',
        'http[5].extractors[0].xpath[0]',
        'http[5].extractors[1].json[0]',
      ]),
    );
    for (const w of r.warnings) expect(w.line).toBeGreaterThan(0);
  });

  it('keeps a flow (warning about calls to blocks that do not exist) and warns about unknown fields', () => {
    const r = parseTemplate(`${VALID}flow: http(1) && http(2)
colour: blue
`);
    expect(r.errors).toEqual([]);
    expect(r.template?.skip).toBeUndefined();
    expect(r.template?.flow).toBe('http(1) && http(2)');
    expect(messages(r.warnings)).toContain('flow calls http(2) but no http block has that 1-based index or id; that call returns false');
    expect(messages(r.warnings)).toContain("unknown top-level field 'colour' ignored");
  });

  it('warns about unknown variables in requests', () => {
    const r = parseTemplate(VALID.replace('"{{BaseURL}}/"', '"{{BaseURL}}/{{nope}}"'));
    expect(r.errors).toEqual([]);
    expect(messages(r.warnings)).toContain('unknown variable {{nope}}');
  });

  it('compiles regexes with RE2 (Go) semantics: mid-pattern flags are fine, back-references are reported', () => {
    const withRegex = (pattern: string) =>
      parseTemplate(VALID.replace('      - type: word\n        words: ["ok"]', `      - type: regex\n        regex: ['${pattern}']`));
    const flags = withRegex('server: (?i)NGINX');
    expect(flags.errors).toEqual([]);
    expect(flags.warnings).toEqual([]);
    expect(flags.template!.requests[0].matchers[0].regex[0].test('server: nginx')).toBe(true);
    const backReference = withRegex('(a)\\1');
    expect(backReference.errors).toEqual([]);
    expect(backReference.warnings).toMatchObject([
      { path: 'http[0].matchers[0].regex[0]', message: expect.stringContaining('back-references are not valid RE2 syntax') },
    ]);
    expect(backReference.template!.requests[0].matchers[0].unsupported).toContain('back-references');
  });

  it('translates Go regex syntax', () => {
    const r = parseTemplate(VALID.replace('      - type: word\n        words: ["ok"]', "      - type: regex\n        regex: ['(?i)(?P<v>[[:digit:]]+)\\z']"));
    expect(r.errors).toEqual([]);
    const re = r.template!.requests[0].matchers[0].regex[0];
    expect(re.test('Version 12')).toBe(true);
    expect((re.exec('Version 12') as RegExpExecArray | null)?.groups?.v).toBe('12');
    expect(re.test('12 trailing')).toBe(false);
  });
});

describe('requests without operators', () => {
  const head = 'id: steps\ninfo:\n  name: steps\n  author: tests\n  severity: info\n';
  it('are a normal step when another request matches (an upload the next request checks): no warning', () => {
    const r = parseTemplate(`${head}http:
  - method: PUT
    path: ["{{BaseURL}}/poc.jsp/"]
    body: "x"
  - method: GET
    path: ["{{BaseURL}}/poc.jsp"]
    matchers:
      - type: status
        status: [200]
`);
    expect(r.errors).toEqual([]);
    expect(r.warnings).toEqual([]);
  });
  it('make the template warn when no http request can match or extract', () => {
    const r = parseTemplate(`${head}http:
  - method: GET
    path: ["{{BaseURL}}/a"]
  - method: GET
    path: ["{{BaseURL}}/b"]
`);
    expect(r.errors).toEqual([]);
    expect(r.warnings.map((w) => [w.path, w.message])).toEqual([
      ['http', 'no http request has matchers or extractors; its http requests can never produce a finding'],
    ]);
  });
});
