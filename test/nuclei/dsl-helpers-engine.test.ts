import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createNodeHttpSender, runTemplateTask } from '../../src/scanner/nuclei/index.js';
import { header, load, run, server, useEngineServers } from './engine-fixtures.js';

useEngineServers();

describe('the new DSL helpers inside a template run', () => {
  it('renders them into the request and evaluates them in matchers', async () => {
    const before = server.log.length;
    const out = await run(`${header('dsl-helpers-run')}
variables:
  token: '{{generate_jwt("{\\"sub\\":\\"admin\\"}", "HS256", "k")}}'
http:
  - raw:
      - |
        POST /echo/{{date_time("%Y", 1700000000)}}/{{ip_format("127.0.0.1", 5)}} HTTP/1.1
        Host: {{Hostname}}
        Authorization: Bearer {{token}}
        Content-Type: application/octet-stream

        {{base64(zip("a.txt", "hi"))}}
    matchers:
      - type: dsl
        dsl:
          - "to_title('acme portal') == 'Acme Portal' && unpack('>h', hex_decode('0102')) == 258 && to_unix_time('2023-11-14') == 1699920000"
`);
    expect(out.warnings).toEqual([]);
    const sent = server.log.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0].url).toBe('/echo/2023/2130706433');
    const jwt = String(sent[0].headers.authorization).replace('Bearer ', '');
    const [h, p, s] = jwt.split('.');
    expect(Buffer.from(p, 'base64url').toString()).toBe('{"sub":"admin"}');
    expect(s).toBe(createHmac('sha256', 'k').update(`${h}.${p}`).digest('base64url'));
    const archive = Buffer.from(sent[0].body.trim(), 'base64');
    expect(archive.subarray(0, 4).toString('latin1')).toBe('PK\x03\x04');
    expect(archive.includes('a.txt')).toBe(true);
    expect(out.results.map((r) => r.templateId)).toEqual(['dsl-helpers-run']);
  });

  it('does not send a request whose wait_for cannot run on this thread, and says why', async () => {
    const before = server.log.length;
    const out = await run(`${header('dsl-wait-main')}
http:
  - method: GET
    path: ["{{BaseURL}}/?{{wait_for(2)}}"]
    matchers:
      - type: status
        status: [200]
`);
    expect(server.log.length).toBe(before);
    expect(out.results).toEqual([]);
    expect(JSON.stringify(out.warnings)).toContain('only runs in template worker threads');
  });
});

describe('wait_for in the template worker pool (where scans evaluate HTTP templates)', () => {
  const waiting = (seconds: number) =>
    load(`${header(`waits-${seconds}`)}
http:
  - method: GET
    path: ["{{BaseURL}}/?{{wait_for(${seconds})}}"]
    matchers:
      - type: word
        words: ["Acme Portal"]
`);

  it('sleeps, then sends the request', async () => {
    const send = createNodeHttpSender();
    const outcome = await runTemplateTask({ template: waiting(1), baseUrl: server.baseUrl, send, budgetMs: 20_000 });
    send.destroy();
    expect(outcome).toMatchObject({ status: 'done', results: [{ templateId: 'waits-1', matchedUrl: `${server.baseUrl}/?true` }] });
  });

  it('counts the sleep against the template budget', async () => {
    const send = createNodeHttpSender();
    const outcome = await runTemplateTask({ template: waiting(3), baseUrl: server.baseUrl, send, budgetMs: 500 });
    send.destroy();
    expect(outcome).toEqual({ status: 'over-budget' });
  });
});
