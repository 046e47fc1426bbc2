import { describe, expect, it } from 'vitest';
import { header, other, run, server, useEngineServers } from './engine-fixtures.js';

useEngineServers();

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
