import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../scripts/templates-coverage.js';
import type { CoverageReport } from '../scripts/templates-coverage/report.js';

const info = `info:
  name: Acme panel
  author: tests
  severity: info
`;

const httpBlock = (matcher: string) => `http:
  - method: GET
    path:
      - "{{BaseURL}}/acme"
    matchers:
${matcher}
`;

const FILES: Record<string, string> = {
  // loads with no warning
  'http/exposed-panels/acme-panel.yaml': `id: acme-panel\n${info}${httpBlock('      - type: word\n        words: ["Acme"]')}`,
  // loads with a warning: a DSL helper the engine does not implement
  'http/cves/2024/acme-date.yaml': `id: acme-date\n${info}${httpBlock('      - type: dsl\n        dsl:\n          - llm_prompt("year?") == "2024"')}`,
  // loads with a warning: its flow calls a protocol the engine does not run (a flow of http calls loads cleanly)
  'http/osint/acme-flow.yml': `id: acme-flow\n${info}flow: javascript() && http(1)\n${httpBlock('      - type: word\n        words: ["Acme"]')}`,
  // loads: a dns template
  'dns/acme-txt.yaml': `id: acme-txt\n${info}dns:\n  - name: "{{FQDN}}"\n    type: TXT\n    matchers:\n      - type: word\n        words: ["acme"]\n`,
  // rejected: broken YAML in a file that still has top-level id and info
  'http/acme-broken.yaml': `id: acme-broken\n${info}http:\n  - method: GET\n    path: [unclosed\n`,
  // loads: a workflow (no severity of its own, as the library's)
  'workflows/acme-workflow.yaml':
    'id: acme-workflow\ninfo:\n  name: Acme workflow\n  author: tests\nworkflows:\n  - template: http/exposed-panels/acme-panel.yaml\n',
  // not templates
  'helpers/payloads/users.yaml': '- admin\n- root\n',
  'helpers/config.yml': 'name: not a template\n',
  'http/README.md': '# not YAML',
};

let folder: string;

function run(args: string[]): { code: number; output: string; errors: string } {
  let output = '';
  let errors = '';
  const code = main(
    args,
    (text) => {
      output += text;
    },
    (text) => {
      errors += text;
    },
  );
  return { code, output, errors };
}

beforeAll(() => {
  folder = mkdtempSync(join(tmpdir(), 'templates-coverage-'));
  for (const [path, text] of Object.entries(FILES)) {
    mkdirSync(dirname(join(folder, path)), { recursive: true });
    writeFileSync(join(folder, path), text);
  }
});
afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe('templates:coverage', () => {
  it('counts loaded, warned and rejected templates per protocol and folder, skipping YAML files that are not templates', () => {
    const { code, output } = run([folder, '--json']);
    expect(code).toBe(0);
    const report = JSON.parse(output) as CoverageReport;
    expect(report.yamlFiles).toBe(8);
    expect(report.nonTemplates).toBe(2);
    expect(report.totals).toEqual({ total: 6, loaded: 3, warnings: 2, rejected: 1 });
    expect(report.byProtocol).toEqual({
      http: { total: 4, loaded: 1, warnings: 2, rejected: 1 },
      dns: { total: 1, loaded: 1, warnings: 0, rejected: 0 },
      workflow: { total: 1, loaded: 1, warnings: 0, rejected: 0 },
    });
    expect(report.byFolder).toEqual({
      http: { total: 4, loaded: 1, warnings: 2, rejected: 1 },
      dns: { total: 1, loaded: 1, warnings: 0, rejected: 0 },
      workflows: { total: 1, loaded: 1, warnings: 0, rejected: 0 },
    });
    // http/acme-broken.yaml has no second-level folder; nested folders count under their http/ folder
    expect(report.byHttpFolder).toEqual({
      'http/cves': { total: 1, loaded: 0, warnings: 1, rejected: 0 },
      'http/exposed-panels': { total: 1, loaded: 1, warnings: 0, rejected: 0 },
      'http/osint': { total: 1, loaded: 0, warnings: 1, rejected: 0 },
    });
  });

  it('names warning and rejection causes without the template-specific parts', () => {
    const report = JSON.parse(run([folder, '--json']).output) as CoverageReport;
    expect(report.topWarningCauses).toEqual([
      { cause: 'flow calls: javascript()', templates: 1 },
      { cause: 'unsupported helper: llm_prompt', templates: 1 },
    ]);
    expect(report.topRejectionCauses).toEqual(expect.arrayContaining([{ cause: 'YAML syntax error', templates: 1 }]));
  });

  it('reports the goal shares: http/ without osint/, token-spray/, credential-stuffing/, and dns/, ssl/, network/', () => {
    const report = JSON.parse(run([folder, '--json']).output) as CoverageReport;
    expect(report.goals.map(({ label, loaded, total }) => ({ label, loaded, total }))).toEqual([
      { label: 'http/ excluding osint/, token-spray/, credential-stuffing/', loaded: 1, total: 3 },
      { label: 'dns/', loaded: 1, total: 1 },
      { label: 'ssl/', loaded: 0, total: 0 },
      { label: 'network/', loaded: 0, total: 0 },
    ]);
    const text = run([folder]).output;
    expect(text).toContain('http/ excluding osint/, token-spray/, credential-stuffing/: 1 of 3 load with no warning (33.3%)');
    expect(text).toContain('| http | 4 | 1 (25%) | 2 (50%) | 1 (25%) |');
    expect(text).toContain('| 1 | flow calls: javascript() | 1 |');
  });

  it('refuses to run without exactly one folder', () => {
    expect(run([]).code).toBe(2);
    const missing = run([join(folder, 'no-such-folder')]);
    expect(missing.code).toBe(1);
    expect(missing.errors).toContain('no such file or directory');
  });
});

describe('templates:coverage with payload files', () => {
  it('finds a payload file as nuclei does, in a folder above the template (even above the measured folder)', () => {
    const library = mkdtempSync(join(tmpdir(), 'templates-coverage-payloads-'));
    try {
      const login = (file: string) =>
        `id: acme-login\n${info}http:\n  - method: GET\n    path:\n      - "{{BaseURL}}/login?user={{user}}"\n    payloads:\n      user: ${file}\n    matchers:\n      - type: status\n        status: [302]\n`;
      mkdirSync(join(library, 'http/default-logins'), { recursive: true });
      mkdirSync(join(library, 'helpers/wordlists'), { recursive: true });
      writeFileSync(join(library, 'helpers/wordlists/users.txt'), 'admin\nroot\n');
      writeFileSync(join(library, 'http/default-logins/found.yaml'), login('helpers/wordlists/users.txt'));
      writeFileSync(join(library, 'http/default-logins/missing.yaml'), login('helpers/wordlists/nobody.txt').replace('acme-login', 'acme-missing'));
      const { code, output } = run([join(library, 'http'), '--json']);
      expect(code).toBe(0);
      const report = JSON.parse(output) as CoverageReport;
      expect(report.totals).toEqual({ total: 2, loaded: 1, warnings: 0, rejected: 1 });
    } finally {
      rmSync(library, { recursive: true, force: true });
    }
  });
});
