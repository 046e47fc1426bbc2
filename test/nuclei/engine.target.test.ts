import { describe, expect, it } from 'vitest';
import { header, run, server, useEngineServers } from './engine-fixtures.js';

useEngineServers();

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
