/**
 * Parsing `network` / `tcp` blocks. The REAL_* templates are copies of templates of the public nuclei-templates
 * library (projectdiscovery/nuclei-templates, MIT licence; signatures dropped), so the suite does not depend on
 * the archive.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTemplate } from '../../src/scanner/nuclei/index.js';
import { bannerHandler, lineHandler, run, startTcpService, type TcpService, until } from './network-servers.js';

/** network/detection/ftp/vsftpd-detect.yaml: a banner detection whose hex input is an unquoted YAML number. */
const REAL_VSFTPD = `id: vsftpd-detect
info:
  name: vsFTPd Service - Detect
  author: pussycat0x
  severity: info
  description: vsFTPd FTP service was detected.
  metadata:
    verified: true
    shodan-query: product:"vsftpd"
    max-request: 1
  tags: network,ftp,vsftpd,detect,tcp,discovery

tcp:
  - inputs:
      - data: 00000000
        type: hex

    host:
      - "{{Hostname}}"
    port: 21
    read-size: 1024

    matchers:
      - type: word
        words:
          - "vsFTPd"

    extractors:
      - type: regex
        group: 1
        name: version
        regex:
          - "vsFTPd ([0-9.+]+)"
`;

/** network/exposures/exposed-redis.yaml: text input, plain and tls:// hosts, two ports, a negative matcher. */
const REAL_REDIS = `id: exposed-redis
info:
  name: Redis Server - Unauthenticated Access
  author: pdteam
  severity: high
  description: Redis server without any required authentication was detected.
  metadata:
    max-request: 2
  tags: network,redis,unauth,exposure,tcp,misconfig

tcp:
  - inputs:
      - data: "info\\r\\nquit\\r\\n"

    host:
      - "{{Hostname}}"
      - "tls://{{Hostname}}"
    port: 6379,6380
    read-size: 2048

    matchers-condition: and
    matchers:
      - type: word
        words:
          - "redis_version"
      - type: word
        negative: true
        words:
          - "redis_mode:sentinel"
`;

/** network/cves/2011/CVE-2011-2523.yaml (shortened info): two blocks, a variable, a {{Host}}:port entry. */
const REAL_VSFTPD_BACKDOOR = `id: CVE-2011-2523
info:
  name: VSFTPD 2.3.4 - Backdoor Command Execution
  author: pussycat0x
  severity: critical
  classification:
    cve-id: CVE-2011-2523
  tags: cve,network,vsftpd,ftp,backdoor

variables:
  cmd: "cat /etc/passwd"

tcp:
  - host:
      - "{{Hostname}}"
    port: 21
    inputs:
      - data: "USER letmein:)\\r\\nPASS please\\r\\n"
        read: 100

  - host:
      - "{{Host}}:6200"
    port: 6200

    inputs:
      - data: "{{cmd}}\\n"
        read: 100
    matchers:
      - type: regex
        part: raw
        regex:
          - "root:.*:0:0:"
`;

const head = 'id: t\ninfo:\n  name: T\n  author: a\n  severity: info\n';
const messages = (list: Array<{ message: string; path: string }>) => list.map((i) => `${i.path}: ${i.message}`).join('\n');

describe('parseTemplate: network blocks', () => {
  it('loads a real banner detection with its hex input kept as written', () => {
    const r = parseTemplate(REAL_VSFTPD);
    expect(r.errors).toEqual([]);
    expect(r.warnings).toEqual([]);
    expect(r.template!.requests).toEqual([]);
    expect(r.template!.network).toHaveLength(1);
    expect(r.template!.network![0]).toMatchObject({
      path: 'tcp[0]',
      addresses: [{ address: '{{Hostname}}', tls: false }],
      ports: [21],
      readSize: 1024,
      readAll: false,
      inputs: [{ data: '00000000', type: 'hex', read: 0 }],
    });
  });

  it('loads tls:// hosts, port lists and negative matchers', () => {
    const r = parseTemplate(REAL_REDIS);
    expect(r.errors).toEqual([]);
    expect(r.warnings).toEqual([]);
    const block = r.template!.network![0]!;
    expect(block.addresses).toEqual([
      { address: '{{Hostname}}', tls: false },
      { address: '{{Hostname}}', tls: true },
    ]);
    expect(block.ports).toEqual([6379, 6380]);
    expect(block.matchersCondition).toBe('and');
    expect(block.inputs[0]).toEqual({ data: 'info\r\nquit\r\n', type: 'text', read: 0, name: undefined });
  });

  it('loads multi-block templates; a block without operators is no warning when another has some', () => {
    const r = parseTemplate(REAL_VSFTPD_BACKDOOR);
    expect(r.errors).toEqual([]);
    expect(r.warnings).toEqual([]);
    expect(r.template!.network!.map((b) => b.addresses[0]!.address)).toEqual(['{{Hostname}}', '{{Host}}:6200']);
    const none = parseTemplate(`${head}tcp:\n  - host: ["{{Hostname}}"]\n    port: 21\n`);
    expect(messages(none.warnings)).toContain('tcp: no request has matchers or extractors');
  });

  it('accepts `network:` as well as `tcp:`, not both', () => {
    const block = '  - host: ["{{Hostname}}"]\n    port: 21\n    matchers:\n      - type: word\n        words: [x]\n';
    expect(parseTemplate(`${head}network:\n${block}`).template!.network![0]!.path).toBe('network[0]');
    const both = parseTemplate(`${head}network:\n${block}tcp:\n${block}`);
    expect(both.template).toBeUndefined();
    expect(messages(both.errors)).toContain("use 'tcp' or 'network', not both");
  });

  it('reads port service names, exclude-ports, read-all and input names', () => {
    const r = parseTemplate(
      `${head}tcp:\n  - host: ["{{Hostname}}"]\n    port: "ftp, 2121,21"\n    exclude-ports: 80,8080\n    read-all: true\n    inputs:\n      - data: "HELP\\r\\n"\n        read: 512\n        name: help\n    matchers:\n      - type: word\n        part: help\n        words: [x]\n`,
    );
    expect(r.errors).toEqual([]);
    expect(r.template!.network![0]).toMatchObject({ ports: [21, 2121], excludePorts: [80, 8080], readAll: true, inputs: [{ read: 512, name: 'help' }] });
  });

  it('rejects broken blocks with paths', () => {
    const r = parseTemplate(
      `${head}tcp:\n  - port: 99999\n    inputs:\n      - data: "zz"\n        type: hex\n      - data: x\n        type: base64\n    read-size: -1\n    matchers:\n      - type: word\n        words: [x]\n`,
    );
    expect(r.template).toBeUndefined();
    const text = messages(r.errors);
    expect(text).toContain("tcp[0]: a network request needs at least one 'host' entry");
    expect(text).toContain('tcp[0].port: invalid port "99999"');
    expect(text).toContain('tcp[0].inputs[0].data: invalid hex data "zz"');
    expect(text).toContain('tcp[0].inputs[1].type: invalid input type "base64"');
    expect(text).toContain("tcp[0].read-size: 'read-size' must be an integer >= 0");
    expect(r.errors.find((e) => e.path === 'tcp[0].inputs[0].data')?.line).toBe(9);
  });

  it('warns about and skips what it cannot run: fuzzing payloads, unknown helpers', () => {
    const payloads = parseTemplate(
      `${head}tcp:\n  - host: ["{{Hostname}}"]\n    port: 25\n    attack: clusterbomb\n    payloads:\n      user:\n        low: [root, admin]\n    inputs:\n      - data: "VRFY {{user}}\\r\\n"\n    matchers:\n      - type: word\n        words: ["252"]\n`,
    );
    expect(payloads.template!.network![0]!.skip).toContain('payloads');
    expect(messages(payloads.warnings)).toContain('tcp[0].payloads.user: payloads with aggression levels (low/medium/high) are not supported');
    const unknownHelper = parseTemplate(
      `${head}tcp:\n  - host: ["{{Hostname}}"]\n    matchers:\n      - type: dsl\n        dsl: ["resolve(Hostname) == 'abc'"]\n`,
    );
    expect(unknownHelper.template!.network![0]!.matchers[0]!.unsupported).toContain('resolve');
    const oast = parseTemplate(
      `${head}tcp:\n  - host: ["{{Hostname}}"]\n    inputs:\n      - data: "{{interactsh-url}}"\n    matchers:\n      - type: word\n        words: [x]\n`,
    );
    // OAST is given at run time (engine/oast.ts): the block loads without a skip or a warning about it
    expect(oast.template!.network![0]!.skip).toBeUndefined();
    expect(messages(oast.warnings)).not.toContain('interactsh');
    const unknownVar = parseTemplate(
      `${head}tcp:\n  - host: ["{{Hostname}}"]\n    inputs:\n      - data: "{{who}}"\n    matchers:\n      - type: word\n        words: [x]\n`,
    );
    expect(messages(unknownVar.warnings)).toContain('unknown variable {{who}}');
  });

  it('keeps a hex word that is not hex as text, as nuclei does', () => {
    const r = parseTemplate(
      `${head}tcp:\n  - host: ["{{Hostname}}"]\n    matchers:\n      - type: word\n        encoding: hex\n        words: ["SQLDB2RA", "4f4b"]\n`,
    );
    expect(r.errors).toEqual([]);
    expect(r.template!.network![0]!.matchers[0]!.binary.map((b) => Buffer.from(b).toString('latin1'))).toEqual(['SQLDB2RA', 'OK']);
  });

  it('a template with http and network blocks keeps both', () => {
    const r = parseTemplate(
      `${head}http:\n  - path: ["{{BaseURL}}/"]\n    matchers:\n      - type: status\n        status: [200]\ntcp:\n  - host: ["{{Hostname}}"]\n    matchers:\n      - type: word\n        words: [x]\n`,
    );
    expect(r.errors).toEqual([]);
    expect(r.template!.requests).toHaveLength(1);
    expect(r.template!.network).toHaveLength(1);
  });
});

describe('real templates run against loopback services', () => {
  let ftp: TcpService;
  let redis: TcpService;
  let sentinel: TcpService;
  const info = '# Server\r\nredis_version:7.2.4\r\nredis_mode:';
  beforeAll(async () => {
    ftp = await startTcpService(bannerHandler('220 (vsFTPd 3.0.5)\r\n'));
    redis = await startTcpService(lineHandler(undefined, { info: `${info}standalone\r\n` }));
    sentinel = await startTcpService(lineHandler(undefined, { info: `${info}sentinel\r\n` }));
  });
  afterAll(async () => {
    await Promise.all([ftp, redis, sentinel].map((s) => s?.close()));
  });

  it('vsftpd-detect finds and versions vsFTPd, and only vsFTPd', async () => {
    const out = await run(REAL_VSFTPD, { host: '127.0.0.1', port: ftp.port });
    expect(out.results).toMatchObject([{ templateId: 'vsftpd-detect', extractorName: 'version', extractedResults: ['3.0.5'] }]);
    await until(() => ftp.received.at(-1)!.length > 0);
    expect(ftp.received.at(-1)!.toString('hex')).toBe('00000000');
    expect((await run(REAL_VSFTPD, { host: '127.0.0.1', port: redis.port })).results).toEqual([]);
  });

  it('exposed-redis flags an open redis, not a sentinel', async () => {
    const out = await run(REAL_REDIS, { host: '127.0.0.1', port: redis.port });
    expect(out.results.map((r) => r.matchedUrl)).toEqual([`127.0.0.1:${redis.port}`]);
    expect((await run(REAL_REDIS, { host: '127.0.0.1', port: sentinel.port })).results).toEqual([]);
  });
});
