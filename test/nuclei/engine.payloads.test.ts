import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  combinationCount,
  createNodeHttpSender,
  parseTemplate,
  payloadCombinations,
  REQUEST_CAP_WARNING,
  runTemplatesDetailed,
  type BlockPayloads,
  type RunDeps,
} from '../../src/scanner/nuclei/index.js';
import { startServer, type TestServer } from './server.js';

/**
 * payloads / attack modes against a loopback "default login" form that accepts one credential pair
 * (admin / s3cret): every request is counted at the server.
 */

let server: TestServer;
const sender = createNodeHttpSender({ maxBodyBytes: 64 * 1024 });

beforeAll(async () => {
  server = await startServer({
    '/login': (_req, res, body) => {
      const form = new URLSearchParams(body);
      const ok = form.get('user') === 'admin' && form.get('pass') === 's3cret';
      res.writeHead(ok ? 302 : 200, ok ? { Location: '/dashboard', 'Set-Cookie': 'session=1' } : { 'Content-Type': 'text/html' });
      res.end(ok ? `welcome ${form.get('user')}` : 'invalid credentials');
    },
    '/probe': (req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.end(`probe ${new URL(req.url ?? '/', 'http://x').searchParams.get('v') ?? ''}`);
    },
  });
});

afterAll(async () => {
  sender.destroy();
  await server.close();
});

function header(id: string) {
  return `id: ${id}
info:
  name: ${id} test
  author: perimeter
  severity: high
`;
}

function loginTemplate(id: string, payloads: string, extra = '') {
  return `${header(id)}
http:
  - raw:
      - |
        POST /login HTTP/1.1
        Host: {{Hostname}}
        Content-Type: application/x-www-form-urlencoded

        user={{user}}&pass={{pass}}
${payloads}
${extra}
    matchers-condition: and
    matchers:
      - type: status
        status: [302]
      - type: dsl
        dsl:
          - contains(body, "welcome " + user)
`;
}

async function run(yaml: string, deps: Partial<RunDeps> = {}) {
  const parsed = parseTemplate(yaml);
  expect(parsed.errors).toEqual([]);
  const before = server.hits('/login') + server.hits('/probe');
  const out = await runTemplatesDetailed([parsed.template!], { baseUrl: server.baseUrl }, { send: sender, timeoutMs: 5000, ...deps });
  return {
    ...out,
    requests: server.hits('/login') + server.hits('/probe') - before,
    sent: server.log.slice(-(server.hits('/login') + server.hits('/probe') - before)),
  };
}

function bodies(sent: { body: string }[]) {
  return sent.map((r) => r.body);
}

describe('attack modes', () => {
  it('clusterbomb tries every pair, the first payload varying fastest, and finds the one that works', async () => {
    const out = await run(
      loginTemplate(
        'cb-login',
        `    attack: clusterbomb
    payloads:
      user: [root, admin]
      pass: [admin, s3cret, password]`,
      ),
    );
    expect(out.requests).toBe(6);
    expect(bodies(out.sent)).toEqual([
      'user=root&pass=admin',
      'user=admin&pass=admin',
      'user=root&pass=s3cret',
      'user=admin&pass=s3cret',
      'user=root&pass=password',
      'user=admin&pass=password',
    ]);
    expect(out.results).toHaveLength(1);
    expect(out.results[0]!.request).toContain('user=admin&pass=s3cret');
  });

  it('pitchfork pairs the lists value by value', async () => {
    const out = await run(
      loginTemplate(
        'pf-login',
        `    attack: pitchfork
    payloads:
      user: [root, admin, guest]
      pass: [toor, s3cret, guest]`,
      ),
    );
    expect(bodies(out.sent)).toEqual(['user=root&pass=toor', 'user=admin&pass=s3cret', 'user=guest&pass=guest']);
    expect(out.results).toHaveLength(1);
  });

  it('pitchfork that never pairs the right values finds nothing', async () => {
    const out = await run(
      loginTemplate(
        'pf-miss',
        `    attack: pitchfork
    payloads:
      user: [admin, root]
      pass: [toor, s3cret]`,
      ),
    );
    expect(out.requests).toBe(2);
    expect(out.results).toEqual([]);
  });

  it('batteringram (the default) sends each value of its one payload, also in a path, and matchers see the value', async () => {
    const out = await run(`${header('br-probe')}
http:
  - method: GET
    path:
      - "{{BaseURL}}/probe?v={{word}}"
    payloads:
      word:
        - alpha
        - 42
        - "{{Hostname}}"
    matchers:
      - type: dsl
        dsl:
          - 'body == "probe " + word && word == "42"'
`);
    expect(out.sent.map((r) => r.url)).toEqual(['/probe?v=alpha', '/probe?v=42', `/probe?v=127.0.0.1:${server.port}`]);
    expect(out.results).toHaveLength(1);
    expect(out.results[0]!.matchedUrl).toContain('v=42');
  });

  it('a one-value payload works as a constant, and a multi-line string is split into values', async () => {
    const out = await run(
      loginTemplate(
        'one-value',
        `    attack: clusterbomb
    payloads:
      user: [admin]
      pass: |-
        guest
        s3cret`,
      ),
    );
    expect(bodies(out.sent)).toEqual(['user=admin&pass=guest', 'user=admin&pass=s3cret']);
    expect(out.results).toHaveLength(1);
  });

  it('@once requests go with the first combination only', async () => {
    const out = await run(`${header('once')}
http:
  - raw:
      - |
        @once
        GET /probe?v=token HTTP/1.1
        Host: {{Hostname}}
      - |
        POST /login HTTP/1.1
        Host: {{Hostname}}
        Content-Type: application/x-www-form-urlencoded

        user=admin&pass={{pass}}
    payloads:
      pass: [a, b, c]
    matchers:
      - type: status
        status: [302]
`);
    expect(out.sent.map((r) => r.url)).toEqual(['/probe?v=token', '/login', '/login', '/login']);
  });
});

describe('stop-at-first-match and the request cap', () => {
  const many = `    attack: clusterbomb
    payloads:
      user: [admin]
      pass: [p1, p2, s3cret, p4, p5, p6, p7, p8]`;

  it('stop-at-first-match stops the combinations at the first match', async () => {
    const all = await run(loginTemplate('no-stop', many));
    expect(all.requests).toBe(8);
    const stopped = await run(loginTemplate('stop', many, '    stop-at-first-match: true'));
    expect(stopped.requests).toBe(3);
    expect(stopped.results).toHaveLength(1);
  });

  it('the cap stops the combinations, says so, and makes no finding it did not see', async () => {
    const out = await run(loginTemplate('capped', many), { maxRequestsPerTemplate: 2 });
    expect(out.requests).toBe(2);
    expect(out.results).toEqual([]);
    const warning = out.warnings.find((w) => w.message.startsWith(REQUEST_CAP_WARNING));
    expect(warning?.message).toContain('payload combinations');
    expect(warning?.templateId).toBe('capped');
  });

  it('a cap above the combinations changes nothing', async () => {
    const out = await run(loginTemplate('uncapped', many), { maxRequestsPerTemplate: 8 });
    expect(out.requests).toBe(8);
    expect(out.results).toHaveLength(1);
    expect(out.warnings.some((w) => w.message.startsWith(REQUEST_CAP_WARNING))).toBe(false);
  });
});

describe('combinations', () => {
  const sets = (attack: BlockPayloads['attack'], ...lists: string[][]): BlockPayloads => ({
    attack,
    sets: lists.map((values, i) => ({ name: `p${i}`, values })),
  });

  it('counts and generates as nuclei', () => {
    const cb = sets('clusterbomb', ['a', 'b'], ['1', '2', '3'], ['x']);
    expect(combinationCount(cb)).toBe(6);
    expect([...payloadCombinations(cb)].map((c) => `${c.p0}${c.p1}${c.p2}`)).toEqual(['a1x', 'b1x', 'a2x', 'b2x', 'a3x', 'b3x']);
    expect(combinationCount(sets('pitchfork', ['a', 'b'], ['1', '2']))).toBe(2);
    expect(combinationCount(sets('batteringram', ['a', 'b', 'c']))).toBe(3);
  });

  it('is lazy: a huge clusterbomb yields its first values without building the rest', () => {
    const big = Array.from({ length: 10_000 }, (_, i) => String(i));
    const it = payloadCombinations(sets('clusterbomb', big, big, big));
    expect(it.next().value).toEqual({ p0: '0', p1: '0', p2: '0' });
    expect(it.next().value).toEqual({ p0: '1', p1: '0', p2: '0' });
  });
});

describe('parsing payloads', () => {
  const block = (payloads: string, request = 'user={{user}}&pass={{pass}}') => `${header('parse-payloads')}
http:
  - raw:
      - |
        POST /login HTTP/1.1
        Host: {{Hostname}}

        ${request}
${payloads}
    matchers:
      - type: status
        status: [302]
`;

  it('refuses unequal pitchfork lists', () => {
    const out = parseTemplate(block(`    attack: pitchfork\n    payloads:\n      user: [a, b]\n      pass: [c]`));
    expect(out.template).toBeUndefined();
    expect(out.errors[0]!.message).toMatch(/pitchfork .* user has 2, pass has 1/);
  });

  it('refuses two payloads without an attack (batteringram takes one), and an unknown attack', () => {
    const two = parseTemplate(block(`    payloads:\n      user: [a]\n      pass: [c]`));
    expect(two.errors[0]!.message).toContain('default attack (batteringram) takes exactly one payload');
    const bad = parseTemplate(block(`    attack: sniper\n    payloads:\n      user: [a]`, 'user={{user}}'));
    expect(bad.errors[0]!.message).toContain('invalid attack type "sniper"');
  });

  it('ignores a payload the request does not use', () => {
    const out = parseTemplate(block(`    payloads:\n      user: [a, b]\n      unused: [x]`, 'user={{user}}'));
    expect(out.errors).toEqual([]);
    expect(out.template!.requests[0]!.payloads!.sets.map((s) => s.name)).toEqual(['user']);
    expect(out.warnings.some((w) => w.message.includes("payload 'unused' is not used"))).toBe(true);
  });

  it('reads payload files only through the reader, and refuses absolute paths and ..', () => {
    const yaml = (file: string) => block(`    payloads:\n      user: ${file}`, 'user={{user}}');
    expect(parseTemplate(yaml('helpers/wordlists/users.txt')).errors[0]!.message).toContain('can only be read from the template library');
    const files: Record<string, string> = { 'helpers/wordlists/users.txt': 'admin\r\n\nroot\n' };
    const read = parseTemplate(yaml('helpers/wordlists/users.txt'), { readPayloadFile: (ref) => files[ref] });
    expect(read.errors).toEqual([]);
    expect(read.template!.requests[0]!.payloads!.sets[0]).toEqual({ name: 'user', values: ['admin', 'root'], file: 'helpers/wordlists/users.txt' });
    expect(read.template!.payloadFiles).toEqual(['helpers/wordlists/users.txt']);
    const reader = { readPayloadFile: () => 'x' };
    expect(parseTemplate(yaml('/etc/passwd'), reader).errors[0]!.message).toContain('absolute paths are refused');
    expect(parseTemplate(yaml('helpers/../../secret.txt'), reader).errors[0]!.message).toContain("'..'");
    expect(parseTemplate(yaml('missing.txt'), { readPayloadFile: () => undefined }).errors[0]!.message).toContain('is not in the template library');
  });

  it('skips a block whose payloads use aggression levels (fuzzing)', () => {
    const out = parseTemplate(block(`    payloads:\n      user:\n        low: [a]\n        high: [b]`, 'user={{user}}'));
    expect(out.errors).toEqual([]);
    expect(out.template!.requests[0]!.skip).toContain('aggression levels');
  });
});
