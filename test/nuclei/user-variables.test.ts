import { describe, expect, it } from 'vitest';
import { parseTemplate } from '../../src/scanner/nuclei/index.js';
import { separateUserVariables, userVariablesOf, withUserVariables } from '../../src/scanner/nuclei/user-variables.js';

/** Which variables a template asks the user for, and what it becomes with or without them. */

function parse(text: string) {
  const { template, errors } = parseTemplate(text);
  expect(errors).toEqual([]);
  return template!;
}

const head = (id: string) => `id: ${id}\ninfo:\n  name: ${id}\n  author: tests\n  severity: info\n`;

describe('userVariablesOf', () => {
  it('lists names used in what is sent that nothing in the template defines', () => {
    const template = parse(`${head('t1')}
variables:
  auth: "{{base64(username + ':' + password)}}"
  fixed: "{{to_lower('ABC')}}"
constants:
  realm: acme
http:
  - raw:
      - |
        POST /login?r={{realm}}&f={{fixed}}&n={{randstr}} HTTP/1.1
        Host: {{Hostname}}
        Authorization: Basic {{auth}}
        X-Token: {{token}}

        csrf={{csrf}}
    extractors:
      - type: regex
        name: csrf
        internal: true
        regex: ['csrf=([a-z]+)']
    matchers:
      - type: status
        status: [200]
`);
    expect(userVariablesOf(template)).toEqual(['password', 'token', 'username']);
  });

  it("never asks for a payload: a block's payload names are its own (default-login templates run with their lists)", () => {
    const template = parse(`${head('t-payloads')}
http:
  - raw:
      - |
        POST /login HTTP/1.1
        Host: {{Hostname}}

        user={{user}}&pass={{pass}}&t={{token}}
    attack: pitchfork
    payloads:
      user: [admin, root]
      pass: [admin, toor]
    matchers:
      - type: status
        status: [302]
dns:
  - name: "{{selector}}._domainkey.{{FQDN}}"
    type: TXT
    payloads:
      selector: [s1, s2]
    matchers:
      - type: word
        words: ["v=DKIM1"]
`);
    expect(userVariablesOf(template)).toEqual(['token']);
  });

  it('counts a variable declared as itself (nuclei-templates’ way of declaring an input), not one with a default', () => {
    const template = parse(`${head('t2')}
variables:
  username: "{{username}}"
  password: admin
http:
  - method: POST
    path: ["{{BaseURL}}/login"]
    body: "u={{username}}&p={{password}}"
    matchers:
      - type: status
        status: [200]
`);
    expect(userVariablesOf(template)).toEqual(['username']);
  });

  it('looks at network inputs, dns names and ssl addresses too', () => {
    const network = parse(`${head('t3')}
tcp:
  - host: ["{{Hostname}}"]
    inputs:
      - data: "AUTH {{token}}\\r\\n"
    matchers:
      - type: word
        words: ["OK"]
`);
    expect(userVariablesOf(network)).toEqual(['token']);
    const dns = parse(`${head('t4')}
dns:
  - name: "{{prefix}}.{{FQDN}}"
    type: TXT
    matchers:
      - type: word
        words: ["x"]
`);
    expect(userVariablesOf(dns)).toEqual(['prefix']);
  });
});

describe('withUserVariables', () => {
  const template = parse(`${head('t5')}
variables:
  username: dummy
http:
  - method: GET
    path: ["{{BaseURL}}/?u={{username}}&t={{token}}&s={{secret}}"]
    matchers:
      - type: status
        status: [200]
`);

  it('skips a template whose variables are not all given, naming the missing ones', () => {
    expect(withUserVariables(template, {}).skip).toBe('missing variables {{secret}}, {{token}}');
    expect(withUserVariables(template, { token: 'x' }).skip).toBe('missing variable {{secret}}');
  });

  it('gives the values as constants, replacing template variables of the same name (nuclei -var), never its constants', () => {
    const given = withUserVariables(template, { token: 't', secret: '{{not-evaluated}}', username: 'alice', unrelated: 'x' });
    expect(given.skip).toBeUndefined();
    expect(given.constants).toEqual({ token: 't', secret: '{{not-evaluated}}', username: 'alice' });
    expect(template.constants).toEqual({});
  });

  it('leaves a template that needs nothing, or is skipped anyway, as it is', () => {
    const plain = parse(`${head('t6')}
http:
  - method: GET
    path: ["{{BaseURL}}/"]
    matchers:
      - type: status
        status: [200]
`);
    expect(withUserVariables(plain, { token: 'x' })).toBe(plain);
    const flow = { ...template, skip: 'flow (JavaScript orchestration) is not supported' };
    expect(withUserVariables(flow, {})).toBe(flow);
  });
});

describe('separateUserVariables', () => {
  it("turns the parser's unknown-variable warnings about user variables into the template's needs, and keeps every other warning", () => {
    const parsed = parseTemplate(`${head('t-sep')}
http:
  - method: GET
    path: ["{{BaseURL}}/a?u={{username}}&s={{probe_session}}"]
    matchers:
      - type: status
        status: [200]
  - id: probe
    method: GET
    path: ["{{BaseURL}}/b"]
    extractors:
      - type: regex
        name: session
        regex: ['s=([a-z]+)']
  - method: GET
    path: ["{{BaseURL}}/c?t={{token}}"]
    matchers:
      - type: xpath
        xpath: ["/html["]
`);
    expect(parsed.errors).toEqual([]);
    const before = parsed.warnings.map((w) => w.message);
    expect(before.some((m) => m.startsWith('unknown variables {{username}}, {{probe_session}} in http requests'))).toBe(true);
    expect(before.some((m) => m.startsWith('unknown variable {{token}} in http requests'))).toBe(true);
    const { warnings, userVariables } = separateUserVariables(parsed.template!, parsed.warnings);
    expect(userVariables).toEqual(['token', 'username']);
    const after = warnings.map((w) => w.message);
    // {{probe_session}} is the value block \`probe\` makes, not the user's: that warning stays (with the user variable beside it)
    expect(after.some((m) => m.startsWith('unknown variables {{username}}, {{probe_session}}'))).toBe(true);
    expect(after.some((m) => m.includes('{{token}}'))).toBe(false);
    expect(after.some((m) => /xpath/.test(m))).toBe(true);
  });
});
