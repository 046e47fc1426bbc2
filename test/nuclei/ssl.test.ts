/** The ssl protocol against node:tls servers on loopback with chosen certificates, versions and ciphers. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type net from 'node:net';
import { join } from 'node:path';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodeTlsConnector, type NucleiTemplate, parseTemplate, runSslTemplatesDetailed, type TlsConnector } from '../../src/scanner/nuclei/index.js';
import { makeCertificates, type TestCertificates } from '../scanner/helpers.js';

let certs: TestCertificates;
let fortinet: { key: string; cert: string };
const servers: tls.Server[] = [];

/** Every name resolves to 127.0.0.1 (the servers listen there only); records the names asked. */
const asked: string[] = [];
const loopbackLookup: net.LookupFunction = (hostname, options, callback) => {
  asked.push(hostname);
  const cb = callback as (err: Error | null, address: string | Array<{ address: string; family: number }>, family?: number) => void;
  if (options.all) cb(null, [{ address: '127.0.0.1', family: 4 }]);
  else cb(null, '127.0.0.1', 4);
};
const connect = createNodeTlsConnector({ lookup: loopbackLookup });

async function serve(options: tls.TlsOptions): Promise<number> {
  const server = tls.createServer(options, (socket) => socket.end());
  server.on('tlsClientError', () => {});
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as net.AddressInfo).port;
}

let selfSignedPort: number;
let expiredPort: number;
let caSignedPort: number;
let chainPort: number;
let tls10Port: number;
let tls13Port: number;
let fortinetPort: number;

beforeAll(async () => {
  certs = makeCertificates();
  // a FortiGate-like factory certificate: emailAddress first, as Fortinet issues them
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: certs.dir, stdio: ['ignore', 'pipe', 'pipe'] });
  openssl(
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    'forti.key',
    '-out',
    'forti.crt',
    '-days',
    '30',
    '-subj',
    '/emailAddress=support@fortinet.com/C=US/ST=California/L=Sunnyvale/O=Fortinet/OU=FortiGate/CN=FGT60F0000000001',
  );
  fortinet = { key: readFileSync(join(certs.dir, 'forti.key'), 'utf8'), cert: readFileSync(join(certs.dir, 'forti.crt'), 'utf8') };
  selfSignedPort = await serve({ ...certs.selfSigned });
  expiredPort = await serve({ ...certs.expired });
  caSignedPort = await serve({ ...certs.caSigned });
  chainPort = await serve({ key: certs.caSigned.key, cert: certs.caSigned.cert + certs.ca.cert });
  tls10Port = await serve({ ...certs.caSigned, minVersion: 'TLSv1', maxVersion: 'TLSv1', ciphers: 'ECDHE-ECDSA-AES128-SHA:@SECLEVEL=0' });
  tls13Port = await serve({ ...certs.caSigned, minVersion: 'TLSv1.3' });
  fortinetPort = await serve(fortinet);
});

afterAll(async () => {
  for (const s of servers) await new Promise<void>((resolve) => s.close(() => resolve()));
  certs.cleanup();
});

function template(text: string): NucleiTemplate {
  const { template: t, errors } = parseTemplate(text);
  expect(errors).toEqual([]);
  return t!;
}

const header = (id: string) => `id: ${id}\ninfo:\n  name: ${id}\n  author: test\n  severity: info\n`;
const run = (templates: NucleiTemplate[], port: number, host = 'localhost', connector: TlsConnector = connect) =>
  runSslTemplatesDetailed(templates, { host, port }, { connect: connector, timeoutMs: 2_000 });

// expired-ssl.yaml
const expiredSsl = template(`${header('expired-ssl')}
ssl:
  - address: "{{Host}}:{{Port}}"
    matchers:
      - type: dsl
        dsl:
          - "expired == true"
    extractors:
      - type: kval
        kval:
          - "not_after"
`);

// self-signed-ssl.yaml
const selfSignedSsl = template(`${header('self-signed-ssl')}
ssl:
  - address: "{{Host}}:{{Port}}"
    matchers:
      - type: dsl
        dsl:
          - "self_signed == true"
`);

// tls-version.yaml (two of its blocks)
const tlsVersion = template(`${header('tls-version')}
ssl:
  - address: "{{Host}}:{{Port}}"
    min_version: tls10
    max_version: tls10
    extractors:
      - type: json
        json:
          - ".tls_version"
  - address: "{{Host}}:{{Port}}"
    min_version: tls13
    max_version: tls13
    extractors:
      - type: json
        json:
          - ".tls_version"
`);

describe('ssl protocol', () => {
  it('reports an expired certificate with its not_after, and not a valid one', async () => {
    const hit = await run([expiredSsl], expiredPort);
    expect(hit.results).toHaveLength(1);
    expect(hit.results[0]).toMatchObject({
      templateId: 'expired-ssl',
      matchedUrl: `localhost:${expiredPort}`,
      extractedResults: ['2020-02-01 00:00:00 +0000 UTC'],
    });
    expect(JSON.parse(hit.results[0].response)).toMatchObject({
      expired: true,
      not_after: '2020-02-01T00:00:00Z',
      tls_version: expect.stringMatching(/^tls1[23]$/),
    });
    expect((await run([expiredSsl], caSignedPort)).results).toEqual([]);
  });

  it('tells self-signed from CA-issued certificates as tlsx does', async () => {
    expect((await run([selfSignedSsl], selfSignedPort)).results).toHaveLength(1);
    expect((await run([selfSignedSsl], caSignedPort)).results).toEqual([]);
  });

  it('honours min/max version: each block only handshakes with its version', async () => {
    const old = await run([tlsVersion], tls10Port);
    expect(old.results.map((r) => r.extractedResults)).toEqual([['tls10']]);
    expect(old.warnings.some((w) => w.path === 'ssl[1]' && /failed/.test(w.message))).toBe(true);
    const modern = await run([tlsVersion], tls13Port);
    expect(modern.results.map((r) => r.extractedResults)).toEqual([['tls13']]);
  });

  it('extracts "tls_version, cipher" as a list (weak-cipher-suites) and matches the IANA cipher name', async () => {
    const t = template(`${header('weak-cipher-suites')}
ssl:
  - address: "{{Host}}:{{Port}}"
    min_version: tls10
    max_version: tls10
    extractors:
      - type: dsl
        dsl:
          - "tls_version, cipher"
    matchers:
      - type: word
        name: tls-1.0
        part: cipher
        words:
          - "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA"
`);
    const hit = await run([t], tls10Port);
    expect(hit.results).toEqual([expect.objectContaining({ matcherName: 'tls-1.0', extractedResults: ['[tls10 TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA]'] })]);
    expect((await run([t], tls13Port)).results).toEqual([]);
  });

  it('offers only the cipher suites a block asks for', async () => {
    const suite = (name: string) =>
      template(`${header('suite')}
ssl:
  - address: "{{Host}}:{{Port}}"
    max_version: tls12
    cipher_suites:
      - ${name}
    extractors:
      - type: dsl
        dsl:
          - cipher
`);
    const ok = await run([suite('TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA')], tls10Port);
    expect(ok.results[0]?.extractedResults).toEqual(['TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA']);
    const refused = await run([suite('TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384')], tls10Port);
    expect(refused.results).toEqual([]);
    expect(refused.stats.requestsFailed).toBe(1);
  });

  it('matches subject_dn in zcrypto order (fortigate-certificate) and extracts domains', async () => {
    const t = template(`${header('fortigate-certificate')}
ssl:
  - address: "{{Host}}:{{Port}}"
    matchers:
      - type: word
        part: subject_dn
        words:
          - "OU=FortiGate"
      - type: word
        part: subject_dn
        words:
          - "O=Fortinet, L=Sunnyvale, ST=California, C=US, emailAddress=support@fortinet.com"
    matchers-condition: and
    extractors:
      - type: dsl
        dsl:
          - 'domains'
`);
    const hit = await run([t], fortinetPort);
    expect(hit.results).toHaveLength(1);
    expect(hit.results[0].extractedResults).toEqual(['[FGT60F0000000001]']);
    expect(JSON.parse(hit.results[0].response).subject_dn).toBe(
      'CN=FGT60F0000000001, OU=FortiGate, O=Fortinet, L=Sunnyvale, ST=California, C=US, emailAddress=support@fortinet.com',
    );
    expect((await run([t], caSignedPort)).results).toEqual([]);
  });

  it('flags a name the certificate does not cover (mismatched) but not the one it does', async () => {
    const t = template(`${header('mismatched-ssl-certificate')}
ssl:
  - address: "{{Host}}:{{Port}}"
    matchers:
      - type: dsl
        dsl:
          - "mismatched == true"
          - "ip != host"
        condition: and
    extractors:
      - type: dsl
        dsl:
          - '"CN: " + subject_cn'
`);
    const hit = await run([t], caSignedPort, 'other.test');
    expect(hit.results.map((r) => r.extractedResults)).toEqual([['CN: localhost']]);
    expect((await run([t], caSignedPort, 'localhost')).results).toEqual([]);
  });

  it('flags a chain with a self-signed CA that is not a known root (untrusted)', async () => {
    const t = template(`${header('untrusted-root-certificate')}
ssl:
  - address: "{{Host}}:{{Port}}"
    matchers:
      - type: dsl
        dsl:
          - "untrusted == true"
`);
    expect((await run([t], chainPort)).results).toHaveLength(1);
    expect((await run([t], caSignedPort)).results).toEqual([]);
  });

  it('extracts subject_an from the JSON response (ssl-dns-names)', async () => {
    const t = template(`${header('ssl-dns-names')}
ssl:
  - address: "{{Host}}:{{Port}}"
    extractors:
      - type: json
        json:
          - ".subject_an[]"
`);
    expect((await run([t], caSignedPort)).results[0].extractedResults).toEqual(['localhost']);
    expect((await run([t], expiredPort)).results).toEqual([]);
  });

  it('never matches on revoked (not checked), and warns', async () => {
    const { template: t, warnings } = parseTemplate(`${header('revoked-ssl-certificate')}
ssl:
  - address: "{{Host}}:{{Port}}"
    matchers:
      - type: dsl
        dsl:
          - "revoked == true"
          - "revoked == false || true"
        condition: or
`);
    expect(warnings.map((w) => w.path)).toContain('ssl[0].matchers[0]');
    const out = await run([t!], selfSignedPort);
    expect(out.results).toEqual([]);
    expect(out.warnings.some((w) => /cannot match/.test(w.message))).toBe(true);
  });

  it('connects through the injected lookup (scope guard), also for IP literals, and a refusal stops the handshake', async () => {
    asked.length = 0;
    expect((await run([selfSignedSsl], selfSignedPort, '127.0.0.1')).results).toHaveLength(1);
    expect(asked).toContain('127.0.0.1');
    const refusing = createNodeTlsConnector({
      lookup: (_h, _o, callback) => (callback as (err: Error) => void)(Object.assign(new Error('out of scope'), { code: 'ESCOPE' })),
    });
    const out = await run([selfSignedSsl], selfSignedPort, '127.0.0.1', refusing);
    expect(out.results).toEqual([]);
    expect(out.warnings[0].message).toContain('out of scope');
  });

  it('skips an address that is not the target host unless allowed', async () => {
    const t = template(`${header('elsewhere')}
ssl:
  - address: "example.com:443"
    matchers:
      - type: dsl
        dsl:
          - "self_signed == true"
`);
    const out = await run([t], selfSignedPort);
    expect(out.results).toEqual([]);
    expect(out.stats.requestsSent).toBe(0);
    expect(out.warnings[0].message).toContain('does not go to the target');
  });
});
