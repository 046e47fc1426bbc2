import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodeHttpSender, mmh3Signed, parseTemplate, runTemplatesDetailed } from '../../src/scanner/nuclei/index.js';
import type { NucleiTemplate, RunDeps, TemplateResult } from '../../src/scanner/nuclei/index.js';
import { FAVICON, HOME_BODY, setOtherOrigin, startServer, type TestServer } from './server.js';

let server: TestServer;
let other: TestServer;
const sender = createNodeHttpSender({ maxBodyBytes: 1024 * 1024 });

beforeAll(async () => {
  server = await startServer();
  other = await startServer();
  setOtherOrigin(other.baseUrl);
});

afterAll(async () => {
  sender.destroy();
  await server.close();
  await other.close();
});

function load(yaml: string): NucleiTemplate {
  const parsed = parseTemplate(yaml);
  expect(parsed.errors).toEqual([]);
  expect(parsed.template).toBeDefined();
  return parsed.template!;
}

async function run(yaml: string | string[], deps: Partial<RunDeps> = {}, baseUrl?: string) {
  const templates = (Array.isArray(yaml) ? yaml : [yaml]).map(load);
  return runTemplatesDetailed(templates, { baseUrl: baseUrl ?? server.baseUrl }, { send: sender, timeoutMs: 5000, ...deps });
}

function header(id: string, severity = 'info') {
  return `id: ${id}
info:
  name: ${id} test
  author: perimeter
  severity: ${severity}
`;
}

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

describe('multi-request templates', () => {
  it('chains an internal extractor into a raw POST and follows the session', async () => {
    const before = server.log.length;
    const out = await run(`${header('login-flow', 'critical')}
http:
  - raw:
      - |
        GET /login HTTP/1.1
        Host: {{Hostname}}

      - |
        POST /login HTTP/1.1
        Host: {{Hostname}}
        Content-Type: application/x-www-form-urlencoded
        Content-Length: 1

        user=admin&pass=admin&csrf={{csrf}}
      - |
        GET /dashboard HTTP/1.1
        Host: {{Hostname}}

    extractors:
      - type: regex
        name: csrf
        internal: true
        group: 1
        regex:
          - 'name="csrf" value="([^"]+)"'
    matchers-condition: and
    matchers:
      - type: word
        words: ["Welcome back, administrator"]
      - type: status
        status: [200]
`);
    const mine = server.log.slice(before);
    expect(mine.map((r) => `${r.method} ${r.url}`)).toEqual(['GET /login', 'POST /login', 'GET /dashboard']);
    expect(mine[1].body).toBe('user=admin&pass=admin&csrf=tok-7f3a9c');
    expect(mine[1].headers['content-length']).toBe(String(mine[1].body.length));
    expect(mine[1].headers.host).toBe(`127.0.0.1:${server.port}`);
    // the auth cookie from the POST response is sent with the third request
    expect(mine[2].headers.cookie).toContain('auth=ok-admin');
    expect(out.results).toHaveLength(1);
    expect(out.results[0].severity).toBe('critical');
    expect(out.results[0].matchedUrl).toBe(`${server.baseUrl}/dashboard`);
  });

  it('feeds an internal extractor of one block into the headers of the next block', async () => {
    const out = await run(`${header('token-chain')}
http:
  - method: GET
    path: ["{{BaseURL}}/api/token"]
    extractors:
      - type: json
        name: token
        internal: true
        json: [".token"]
  - method: GET
    path: ["{{BaseURL}}/api/secret"]
    headers:
      Authorization: "Bearer {{token}}"
    matchers:
      - type: word
        words: ["secret-data-ok"]
`);
    expect(out.results).toHaveLength(1);
    expect(out.results[0].matchedUrl).toBe(`${server.baseUrl}/api/secret`);
  });

  it('does not send a request whose variables cannot be resolved', async () => {
    const before = server.hits('/api/secret');
    const out = await run(`${header('token-missing')}
http:
  - method: GET
    path: ["{{BaseURL}}/api/token"]
    extractors:
      - type: json
        name: token
        internal: true
        json: [".does_not_exist"]
  - method: GET
    path: ["{{BaseURL}}/api/secret"]
    headers:
      Authorization: "Bearer {{token}}"
    matchers:
      - type: status
        status: [401]
`);
    expect(server.hits('/api/secret')).toBe(before);
    expect(out.results).toEqual([]);
    expect(out.warnings.some((w) => w.message.includes('unresolved variable {{token}}'))).toBe(true);
  });

  it('supports indexed variables across requests (req-condition)', async () => {
    const out = await run(`${header('req-condition')}
http:
  - method: GET
    path:
      - "{{BaseURL}}/admin"
      - "{{BaseURL}}/"
    req-condition: true
    matchers:
      - type: dsl
        dsl:
          - "status_code_1 == 403 && status_code_2 == 200 && contains(body_2, 'Acme')"
`);
    expect(out.results).toHaveLength(1);
    expect(out.results[0].matchedUrl).toBe(`${server.baseUrl}/`);
    const none = await run(`${header('req-condition-miss')}
http:
  - method: GET
    path: ["{{BaseURL}}/admin", "{{BaseURL}}/"]
    matchers:
      - type: dsl
        dsl: ["status_code_1 == 200 && status_code_2 == 200"]
`);
    expect(none.results).toEqual([]);
  });

  it('evaluates each path separately and stops at the first match when asked', async () => {
    const all = await run(`${header('many-paths')}
http:
  - path:
      - "{{BaseURL}}/admin"
      - "{{BaseURL}}/version.txt"
      - "{{BaseURL}}/"
    matchers:
      - type: word
        words: ["2.4.49"]
`);
    expect(all.results.map((r) => r.matchedUrl)).toEqual([`${server.baseUrl}/version.txt`, `${server.baseUrl}/`]);

    const before = server.hits('/');
    const first = await run(`${header('stop-first')}
http:
  - path:
      - "{{BaseURL}}/admin"
      - "{{BaseURL}}/version.txt"
      - "{{BaseURL}}/"
    stop-at-first-match: true
    matchers:
      - type: word
        words: ["2.4.49"]
`);
    expect(first.results.map((r) => r.matchedUrl)).toEqual([`${server.baseUrl}/version.txt`]);
    expect(server.hits('/')).toBe(before); // the third request was never sent
  });

  it('reuses cookies set by earlier responses unless disable-cookie is set', async () => {
    const yes = await run(`${header('cookie-reuse')}
http:
  - path: ["{{BaseURL}}/set-cookie", "{{BaseURL}}/need-cookie"]
    matchers:
      - type: word
        words: ["cookie ok"]
`);
    expect(yes.results).toHaveLength(1);
    const no = await run(`${header('cookie-disabled')}
http:
  - path: ["{{BaseURL}}/set-cookie", "{{BaseURL}}/need-cookie"]
    disable-cookie: true
    matchers:
      - type: word
        words: ["cookie ok"]
`);
    expect(no.results).toEqual([]);
  });
});

describe('raw requests', () => {
  it('sends a raw POST with headers and body as written', async () => {
    const before = server.log.length;
    const out = await run(`${header('raw-post')}
http:
  - raw:
      - |
        POST /echo?from=raw HTTP/1.1
        Host: {{Hostname}}
        Content-Type: application/json
        X-Scan: {{to_upper("perimeter")}}

        {"probe":"{{base64('hi')}}","host":"{{Host}}"}
    matchers-condition: and
    matchers:
      - type: word
        words:
          - '"method":"POST"'
          - '"x-scan":"PERIMETER"'
        condition: and
      - type: status
        status: [200]
`);
    const req = server.log.slice(before)[0];
    expect(req.method).toBe('POST');
    expect(req.url).toBe('/echo?from=raw');
    expect(req.body).toBe('{"probe":"aGk=","host":"127.0.0.1"}');
    expect(req.headers['content-type']).toBe('application/json');
    expect(out.results).toHaveLength(1);
  });

  it('sends traversal paths verbatim (no dot-segment normalisation)', async () => {
    const before = server.log.length;
    await run(`${header('traversal')}
http:
  - raw:
      - |
        GET /raw-path/../../etc/passwd HTTP/1.1
        Host: {{Hostname}}
    matchers:
      - type: word
        words: ["root:x:0:0"]
  - method: GET
    path: ["{{BaseURL}}/raw-path/..%2f..%2fetc/passwd"]
    matchers:
      - type: word
        words: ["root:x:0:0"]
`);
    expect(server.log.slice(before).map((r) => r.url)).toEqual(['/raw-path/../../etc/passwd', '/raw-path/..%2f..%2fetc/passwd']);
  });

  it('merges raw paths with the target path like nuclei', async () => {
    const before = server.log.length;
    await run(
      `${header('raw-merge')}
http:
  - raw:
      - |
        GET /echo HTTP/1.1
        Host: {{Hostname}}
    matchers:
      - type: status
        status: [200]
`,
      {},
      `${server.baseUrl}/raw-path/`,
    );
    expect(server.log.slice(before).map((r) => r.url)).toEqual(['/raw-path/echo']);
  });
});

describe('variables', () => {
  it('evaluates template variables (with helpers) once and uses them everywhere', async () => {
    const before = server.log.length;
    const out = await run(`${header('variables')}
variables:
  marker: "pm-{{to_lower(rand_text_alpha(8))}}"
  target: "/echo"
  greeting: "hello {{marker}}"
http:
  - method: POST
    path:
      - "{{BaseURL}}{{target}}?m={{marker}}"
      - "{{BaseURL}}{{target}}?again={{marker}}"
    headers:
      X-Marker: "{{marker}}"
    body: "greeting={{url_encode(greeting)}}"
    matchers:
      - type: word
        words: ["{{marker}}"]
      - type: dsl
        condition: and
        dsl:
          - "contains(body, marker) && starts_with(marker, 'pm-')"
          - 'contains(body, "{{marker}}") && contains(body, "{{to_upper(''zz-not-there'')}}") == false'
`);
    const reqs = server.log.slice(before);
    expect(reqs).toHaveLength(2);
    const marker = String(reqs[0].headers['x-marker']);
    expect(marker).toMatch(/^pm-[a-z]{8}$/);
    expect(reqs[0].url).toBe(`/echo?m=${marker}`);
    expect(reqs[1].url).toBe(`/echo?again=${marker}`);
    expect(reqs[0].body).toBe(`greeting=hello+${marker}`);
    expect(out.results).toHaveLength(2);
  });

  it('provides target variables', async () => {
    const before = server.log.length;
    await run(
      `${header('target-vars')}
http:
  - method: GET
    path: ["{{RootURL}}/echo?b={{BaseURL}}&h={{Hostname}}&host={{Host}}&p={{Port}}&path={{Path}}&f={{File}}&s={{Scheme}}"]
    matchers:
      - type: status
        status: [200]
`,
      {},
      `${server.baseUrl}/app/index.php`,
    );
    const url = server.log.slice(before)[0].url;
    expect(url).toBe(`/echo?b=${server.baseUrl}/app/index.php&h=127.0.0.1:${server.port}&host=127.0.0.1&p=${server.port}&path=/app&f=index.php&s=http`);
  });

  it('uses {{randstr}} consistently within a template', async () => {
    const before = server.log.length;
    await run(`${header('randstr')}
http:
  - path: ["{{BaseURL}}/echo?a={{randstr}}", "{{BaseURL}}/echo?b={{randstr}}"]
    matchers:
      - type: word
        words: ["{{randstr}}"]
`);
    const [a, b] = server.log.slice(before).map((r) => r.url.split('=')[1]);
    expect(a).toMatch(/^[A-Za-z0-9]{27}$/);
    expect(a).toBe(b);
  });
});

describe('redirects', () => {
  it('does not follow redirects by default', async () => {
    const out = await run(`${header('no-follow')}
http:
  - path: ["{{BaseURL}}/redirect/3"]
    matchers:
      - type: status
        status: [302]
`);
    expect(out.results).toHaveLength(1);
  });

  it('follows redirects up to max-redirects', async () => {
    const out = await run(`${header('follow')}
http:
  - path: ["{{BaseURL}}/redirect/3"]
    redirects: true
    max-redirects: 5
    matchers:
      - type: word
        words: ["final destination reached"]
`);
    expect(out.results).toHaveLength(1);
    expect(out.results[0].matchedUrl).toBe(`${server.baseUrl}/redirect/0`);
    const limited = await run(`${header('follow-limited')}
http:
  - path: ["{{BaseURL}}/redirect/3"]
    redirects: true
    max-redirects: 2
    matchers:
      - type: word
        words: ["final destination reached"]
`);
    expect(limited.results).toEqual([]);
  });

  it('carries cookies set by a redirect response to the next hop', async () => {
    const out = await run(`${header('login-redirect')}
http:
  - raw:
      - |
        GET /login HTTP/1.1
        Host: {{Hostname}}

      - |
        POST /login HTTP/1.1
        Host: {{Hostname}}
        Content-Type: application/x-www-form-urlencoded

        user=admin&csrf={{csrf}}
    redirects: true
    disable-cookie: true
    extractors:
      - type: regex
        name: csrf
        internal: true
        group: 1
        regex: ['value="(tok-[^"]+)"']
    matchers:
      - type: word
        words: ["Welcome back, administrator"]
`);
    expect(out.results).toHaveLength(1);
    expect(out.results[0].matchedUrl).toBe(`${server.baseUrl}/dashboard`);
  });

  it('host-redirects only follows redirects on the same host', async () => {
    const before = other.log.length;
    const out = await run(`${header('host-redirects')}
http:
  - path: ["{{BaseURL}}/offsite"]
    host-redirects: true
    matchers:
      - type: status
        status: [302]
`);
    expect(out.results).toHaveLength(1);
    expect(other.log.length).toBe(before);
    const followed = await run(`${header('any-redirects')}
http:
  - path: ["{{BaseURL}}/offsite"]
    redirects: true
    matchers:
      - type: status
        status: [404]
`);
    expect(other.log.length).toBe(before + 1);
    expect(followed.results).toHaveLength(1);
  });
});

describe('safety: unsupported features and scope', () => {
  it('an unsupported matcher makes the block not match, with a warning', async () => {
    const out = await run(`${header('xpath-or')}
http:
  - path: ["{{BaseURL}}/"]
    matchers-condition: or
    matchers:
      - type: word
        words: ["Acme Portal"]
      - type: xpath
        xpath: ["/html/head/title"]
`);
    expect(out.results).toEqual([]);
    expect(out.warnings.some((w) => w.message.includes('xpath'))).toBe(true);
  });

  it('does not send blocks that need payloads, race, unsafe or interactsh', async () => {
    const before = server.log.length;
    const out = await run(`${header('skipped-blocks')}
http:
  - raw:
      - |
        POST /login HTTP/1.1
        Host: {{Hostname}}

        user={{user}}&pass={{pass}}
    attack: clusterbomb
    payloads:
      user: [admin]
      pass: [admin, password]
    matchers:
      - type: status
        status: [302]
  - path: ["{{BaseURL}}/echo?cb={{interactsh-url}}"]
    matchers:
      - type: word
        part: interactsh_protocol
        words: [dns]
  - raw:
      - |
        GET / HTTP/1.1
        Host: {{Hostname}}
    unsafe: true
    matchers:
      - type: status
        status: [200]
`);
    expect(server.log.length).toBe(before);
    expect(out.results).toEqual([]);
    expect(out.warnings.filter((w) => w.message.startsWith('request block skipped')).length).toBe(3);
  });

  it('never resolves JavaScript object properties as variables', async () => {
    const before = server.log.length;
    const out = await run(`${header('proto-vars')}
http:
  - path: ["{{BaseURL}}/echo?x={{constructor}}", "{{BaseURL}}/echo?y={{__proto__}}"]
    matchers:
      - type: status
        status: [200]
`);
    expect(server.log.length).toBe(before);
    expect(out.results).toEqual([]);
    expect(out.warnings.some((w) => w.message.includes('unresolved variable {{constructor}}'))).toBe(true);
  });

  it('skips requests to other hosts than the target', async () => {
    const before = other.log.length;
    const out = await run(`${header('off-target')}
http:
  - path: ["${other.baseUrl}/"]
    matchers:
      - type: status
        status: [200]
`);
    expect(other.log.length).toBe(before);
    expect(out.results).toEqual([]);
    expect(out.warnings.some((w) => w.message.includes('does not go to the target'))).toBe(true);
  });

  it('network errors produce no finding, even for negative matchers', async () => {
    const out = await run(`${header('conn-reset')}
http:
  - path: ["{{BaseURL}}/reset"]
    matchers:
      - type: word
        negative: true
        words: ["anything"]
`);
    expect(out.results).toEqual([]);
    expect(out.stats.requestsFailed).toBe(1);
  });

  it('caps requests per template', async () => {
    const out = await run(
      `${header('capped')}
http:
  - path: ["{{BaseURL}}/a", "{{BaseURL}}/b", "{{BaseURL}}/c", "{{BaseURL}}/d"]
    matchers:
      - type: status
        status: [404]
`,
      { maxRequestsPerTemplate: 2 },
    );
    expect(out.results).toHaveLength(2);
    expect(out.warnings.some((w) => w.message.includes('request limit'))).toBe(true);
  });
});

describe('result metadata', () => {
  it('carries info and classification fields', async () => {
    const out = await run(`id: CVE-2021-41773
info:
  name: Apache 2.4.49 - Path Traversal
  author: [alice, bob]
  severity: High
  description: Path traversal in Apache HTTP Server 2.4.49.
  remediation: Upgrade to 2.4.51 or later.
  reference:
    - https://httpd.apache.org/security/vulnerabilities_24.html
  tags: cve,cve2021,apache,lfi
  classification:
    cvss-metrics: CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:N/A:N
    cvss-score: 7.5
    cve-id: CVE-2021-41773
    cwe-id: CWE-22
http:
  - path: ["{{BaseURL}}/"]
    matchers:
      - type: word
        part: header
        words: ["Apache/2.4.49"]
`);
    expect(out.results).toHaveLength(1);
    const r: TemplateResult = out.results[0];
    expect(r).toMatchObject({
      templateId: 'CVE-2021-41773',
      templateName: 'Apache 2.4.49 - Path Traversal',
      severity: 'high',
      description: 'Path traversal in Apache HTTP Server 2.4.49.',
      remediation: 'Upgrade to 2.4.51 or later.',
      reference: ['https://httpd.apache.org/security/vulnerabilities_24.html'],
      tags: ['cve', 'cve2021', 'apache', 'lfi'],
      author: ['alice', 'bob'],
      classification: {
        cveId: ['CVE-2021-41773'],
        cweId: ['CWE-22'],
        cvssMetrics: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:N/A:N',
        cvssScore: 7.5,
      },
    });
  });
});
