import { describe, expect, it } from 'vitest';
import type { TemplateResult } from '../../src/scanner/nuclei/index.js';
import { header, other, run, server, useEngineServers } from './engine-fixtures.js';

useEngineServers();

describe('safety: unsupported features and scope', () => {
  it('an unsupported matcher makes the block not match, with a warning', async () => {
    const out = await run(`${header('xpath-or')}
http:
  - path: ["{{BaseURL}}/"]
    matchers-condition: or
    matchers:
      - type: word
        words: ["Acme Portal"]
      - type: dsl
        dsl: ["llm_prompt('title?') == 'Acme'"]
`);
    expect(out.results).toEqual([]);
    expect(out.warnings.some((w) => w.message.includes('llm_prompt'))).toBe(true);
  });

  it('does not send blocks that need fuzzing payloads, nor templates using interactsh without an OAST client', async () => {
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
      user:
        low: [admin]
      pass: [admin, password]
    matchers:
      - type: status
        status: [302]
  - path: ["{{BaseURL}}/echo?cb={{interactsh-url}}"]
    matchers:
      - type: word
        part: interactsh_protocol
        words: [dns]
`);
    expect(server.log.length).toBe(before);
    expect(out.results).toEqual([]);
    // the whole template: it uses OAST and none was given (engine/oast.ts)
    expect(out.warnings.map((w) => w.message)).toEqual(['template skipped: interactsh (OAST) needs OAST_DOMAIN']);
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

  it('skips requests to other hosts than the target (another port of its host is the target)', async () => {
    const before = other.log.length;
    const out = await run(`${header('off-target')}
http:
  - path: ["http://localhost:${other.port}/"]
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
