/**
 * The network protocol engine: which ports and addresses a block goes to (port:, exclude-ports, host entries),
 * the scope rules (injected connector, off-target hosts), limits, and result shapes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { networkTemplatePorts, type NetworkConnector } from '../../src/scanner/nuclei/index.js';
import { closedPort } from '../scanner/helpers.js';
import { bannerHandler, connector, lineHandler, load, run, startTcpService, tcpTemplate, type TcpService } from './network-servers.js';

const HOST = '127.0.0.1';
let ftp: TcpService;
let smtp: TcpService;
let closed: number;

beforeAll(async () => {
  ftp = await startTcpService(bannerHandler('220 (vsFTPd 3.0.5)\r\n'));
  smtp = await startTcpService(lineHandler('220 mail.example.test ESMTP Postfix\r\n', { 'EHLO x': '250-mail.example.test\r\n250 STARTTLS\r\n' }));
  closed = await closedPort();
});

afterAll(async () => {
  await Promise.all([ftp, smtp].map((s) => s?.close()));
});

const ftpTemplate = (port: string, extra = '') =>
  tcpTemplate(`  - host:\n      - "{{Hostname}}"\n    port: ${port}\n${extra}    matchers:\n      - type: word\n        words: ["vsFTPd"]\n`, 'ftp-test');

describe('network: port selection', () => {
  it('a target without port uses the template port', async () => {
    const out = await run(ftpTemplate(String(ftp.port)), { host: HOST });
    expect(out.results).toHaveLength(1);
    expect(out.results[0]!.matchedUrl).toBe(`${HOST}:${ftp.port}`);
  });

  it('a target without port and a template without port has nothing to connect to', async () => {
    const yaml = tcpTemplate('  - host:\n      - "{{Hostname}}"\n    matchers:\n      - type: word\n        words: ["vsFTPd"]\n');
    const out = await run(yaml, { host: HOST });
    expect(out.results).toEqual([]);
    expect(out.stats.connections).toBe(0);
    expect(out.warnings.map((w) => w.message).join('\n')).toContain('no port provided');
  });

  it('several template ports: closed ones are probed and dropped, open ones run', async () => {
    const out = await run(ftpTemplate(`${closed},${ftp.port}`), { host: HOST });
    expect(out.results.map((r) => r.matchedUrl)).toEqual([`${HOST}:${ftp.port}`]);
    expect(out.stats.connections).toBe(1);
  });

  it('none of several ports open: nothing runs', async () => {
    const out = await run(ftpTemplate(`${closed},${smtp.port}`), { host: HOST });
    expect(out.results).toEqual([]);
  });

  it("a target host:port wins over the template's port (nuclei keeps an operator-chosen port)", async () => {
    expect((await run(ftpTemplate(String(closed)), { host: HOST, port: ftp.port })).results).toHaveLength(1);
    expect((await run(ftpTemplate(String(ftp.port)), { host: HOST, port: smtp.port })).results).toEqual([]);
  });

  it('a URL target on a reserved port is moved to the template port; another port is kept', async () => {
    expect((await run(ftpTemplate(String(ftp.port)), { host: HOST, port: 8080, scheme: 'http' })).results).toHaveLength(1);
    expect((await run(ftpTemplate(String(ftp.port)), { host: HOST, port: smtp.port, scheme: 'http' })).results).toEqual([]);
  });

  it('exclude-ports replaces the reserved list for URL targets', async () => {
    const ports: number[] = [];
    const recording: NetworkConnector = (req) => {
      ports.push(req.port);
      return connector(req);
    };
    const yaml = ftpTemplate(String(ftp.port), `    exclude-ports: ${closed}\n`);
    expect((await run(yaml, { host: HOST, port: closed, scheme: 'http' }, { connect: recording })).results).toHaveLength(1);
    // 8080 is reserved but no longer ignored: the URL's port is kept
    const out = await run(yaml, { host: HOST, port: 8080, scheme: 'http' }, { connect: recording });
    expect(ports).toEqual([ftp.port, 8080]);
    expect(out.results).toEqual([]);
  });

  it('networkTemplatePorts lists the ports a template names', () => {
    expect(networkTemplatePorts(load(ftpTemplate('21, ftp,2121')))).toEqual([21, 2121]);
  });
});

describe('network: host entries and scope', () => {
  it('{{Host}}:port entries go to that port, each address once', async () => {
    const yaml = tcpTemplate(
      `  - host:\n      - "{{Host}}:${smtp.port}"\n      - "${HOST}:${smtp.port}"\n    inputs:\n      - data: "EHLO x\\r\\n"\n        read: 1024\n        name: ehlo\n    matchers:\n      - type: word\n        part: raw\n        words: ["STARTTLS"]\n`,
    );
    const out = await run(yaml, { host: HOST, port: ftp.port });
    expect(out.results.map((r) => r.matchedUrl)).toEqual([`${HOST}:${smtp.port}`]);
    expect(out.stats.connections).toBe(1);
  });

  it('a host entry naming another host is skipped unless allowed', async () => {
    const yaml = tcpTemplate(`  - host:\n      - "localhost:${ftp.port}"\n    matchers:\n      - type: word\n        words: ["vsFTPd"]\n`);
    const refused = await run(yaml, { host: HOST });
    expect(refused.results).toEqual([]);
    expect(refused.stats.connections).toBe(0);
    expect(refused.warnings.map((w) => w.message).join('\n')).toContain('does not go to the target');
    expect((await run(yaml, { host: HOST }, { allowOffTargetHosts: true })).results).toHaveLength(1);
  });

  it('connections go through the injected connector (a scope guard refusing them stops the run)', async () => {
    const asked: string[] = [];
    const guarded: NetworkConnector = async (req) => {
      asked.push(`${req.tls ? 'tls' : 'tcp'}:${req.host}:${req.port}`);
      throw new Error('blocked by scope');
    };
    const before = ftp.connections;
    const out = await run(ftpTemplate(String(ftp.port)), { host: HOST }, { connect: guarded });
    expect(asked).toEqual([`tcp:${HOST}:${ftp.port}`]);
    expect(ftp.connections).toBe(before);
    expect(out.results).toEqual([]);
    expect(out.stats.connectionsFailed).toBe(1);
    expect(out.warnings.map((w) => w.message).join('\n')).toContain('blocked by scope');
    expect((await run(ftpTemplate(String(ftp.port)), { host: HOST }, { connect: connector })).results).toHaveLength(1);
  });

  it('a refused connection gives no event', async () => {
    const yaml = tcpTemplate(`  - host:\n      - "{{Hostname}}"\n    matchers:\n      - type: word\n        negative: true\n        words: ["x"]\n`);
    const out = await run(yaml, { host: HOST, port: closed });
    expect(out.results).toEqual([]);
    expect(out.stats).toMatchObject({ connections: 1, connectionsFailed: 1 });
  });

  it('maxConnectionsPerTemplate bounds the connections of a template', async () => {
    const block = `  - host:\n      - "{{Hostname}}"\n    matchers:\n      - type: word\n        words: ["vsFTPd"]\n`;
    const yaml = tcpTemplate(block.repeat(4));
    const before = ftp.connections;
    const out = await run(yaml, { host: HOST, port: ftp.port }, { maxConnectionsPerTemplate: 2 });
    expect(ftp.connections - before).toBe(2);
    expect(out.stats.connections).toBe(2);
    expect(out.warnings.map((w) => w.message).join('\n')).toContain('connection limit of 2 per template reached');
    expect((await run(yaml, { host: HOST, port: ftp.port })).stats.connections).toBe(4);
  });
});

describe('network: results', () => {
  it('named matchers with matchers-condition: or give one result each', async () => {
    const yaml = tcpTemplate(
      `  - host:\n      - "{{Hostname}}"\n    matchers:\n      - type: word\n        name: vsftpd\n        words: ["vsFTPd"]\n      - type: regex\n        name: v3\n        regex: ["vsFTPd 3\\\\."]\n      - type: word\n        name: proftpd\n        words: ["ProFTPD"]\n`,
    );
    const out = await run(yaml, { host: HOST, port: ftp.port });
    expect(out.results.map((r) => r.matcherName)).toEqual(['vsftpd', 'v3']);
  });

  it('stop-at-first-match stops after the first matching block', async () => {
    const block = `  - host:\n      - "{{Hostname}}"\n    matchers:\n      - type: word\n        words: ["vsFTPd"]\n    extractors:\n      - type: dsl\n        dsl: ["'block-'"]\n`;
    const yaml = tcpTemplate(block + block.replace("'block-'", "'second'")).replace('tcp:\n', 'stop-at-first-match: true\ntcp:\n');
    const out = await run(yaml, { host: HOST, port: ftp.port });
    expect(out.results.map((r) => r.extractedResults)).toEqual([['block-']]);
    expect((await run(yaml.replace('stop-at-first-match: true\n', ''), { host: HOST, port: ftp.port })).results).toHaveLength(2);
  });

  it('a block id exposes its values to later blocks as <id>_<name>', async () => {
    const yaml = tcpTemplate(
      `  - id: first\n    host:\n      - "{{Hostname}}"\n  - host:\n      - "{{Hostname}}"\n    matchers:\n      - type: dsl\n        dsl: ["contains(first_data, 'vsFTPd') && len(data) > 0"]\n`,
    );
    expect((await run(yaml, { host: HOST, port: ftp.port })).results).toHaveLength(1);
    expect((await run(yaml.replace('first_data', 'first_raw_x'), { host: HOST, port: ftp.port })).results).toEqual([]);
  });
});
