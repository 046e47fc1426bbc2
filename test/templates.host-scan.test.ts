import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import tls from 'node:tls';
import type { AddressInfo } from 'node:net';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor } from './support/client.js';
import { addTarget, startScan, waitForScan, type Client, uploadTemplate } from './support/scans.js';
import { startDnsServer, type TestDnsServer } from './support/dns-server.js';
import { makeCertificates, type TestCertificates } from './scanner/helpers.js';

/**
 * dns and ssl templates in real scans: a loopback authoritative server answers for the target's names (the scan
 * asks it through SCAN_DNS_SERVERS), a loopback TLS service presents a self-signed certificate. Uploaded dns
 * templates ask about every name the scan resolved (findings on host assets), ssl templates handshake with every
 * TLS service it inspected (findings on service assets); names and services that do not match raise nothing.
 */

const SPF = `id: acme-spf-detect
info:
  name: SPF record
  author: tests
  severity: info

dns:
  - name: "{{FQDN}}"
    type: TXT
    matchers:
      - type: word
        words: ["v=spf1"]
    extractors:
      - type: regex
        regex: ['v=spf1[^"]*']
`;

const SELF_SIGNED = `id: acme-self-signed
info:
  name: Self-signed certificate
  author: tests
  severity: low

ssl:
  - address: "{{Host}}:{{Port}}"
    matchers:
      - type: dsl
        dsl: ["self_signed == true"]
    extractors:
      - type: dsl
        dsl: ["subject_cn"]
`;

// dkim-record-detect style: one question per selector
const DKIM = `id: acme-dkim
info:
  name: DKIM record
  author: tests
  severity: info

dns:
  - name: "{{selector}}._domainkey.{{FQDN}}"
    type: TXT
    payloads:
      selector: [s1, s2, s3]
    matchers:
      - type: word
        words: ["v=DKIM1"]
`;

let server: TestApp;
let client: Client;
let dns: TestDnsServer;
let certs: TestCertificates;
let tlsService: tls.Server;
let tlsPort: number;

beforeAll(async () => {
  dns = await startDnsServer({
    zones: [
      {
        origin: 'acme.test',
        records: [
          { name: '@', type: 'A', data: '127.0.0.1' },
          { name: '@', type: 'TXT', data: 'v=spf1 include:_spf.acme.test ~all' },
          { name: 'nospf', type: 'A', data: '127.0.0.1' },
          { name: 'nospf', type: 'TXT', data: 'hello' },
          { name: 's3._domainkey', type: 'TXT', data: 'v=DKIM1; k=rsa; p=MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQ' },
        ],
      },
    ],
  });
  certs = makeCertificates();
  tlsService = tls.createServer({ key: certs.selfSigned.key, cert: certs.selfSigned.cert }, (socket) => socket.end());
  tlsService.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => tlsService.listen(0, '127.0.0.1', resolve));
  tlsPort = (tlsService.address() as AddressInfo).port;
  server = await startTestApp({ SCAN_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128', QUEUE_SUPERVISE_SECONDS: '1', SCAN_DNS_SERVERS: dns.server });
  client = clientFor(server);
});

afterAll(async () => {
  await server?.stop();
  await new Promise<void>((resolve) => tlsService?.close(() => resolve()));
  await dns?.stop();
  certs?.cleanup();
});

function findingsOf(workspaceId: string) {
  return server.db.prisma.finding.findMany({
    where: { workspaceId, checkId: { in: ['acme-spf-detect', 'acme-self-signed'] } },
    include: { asset: { select: { key: true } } },
    orderBy: { checkId: 'asc' },
  });
}

describe('dns and ssl templates in a scan', { timeout: 120_000 }, () => {
  it('asks about the resolved names and handshakes with the TLS services: findings on the host and on the service', async () => {
    const owner = await client.signUp('HostTemplater');
    const workspaceId = (await client.createWorkspace(owner)).id;
    await uploadTemplate(client, owner, workspaceId, 'spf.yaml', SPF);
    await uploadTemplate(client, owner, workspaceId, 'self-signed.yaml', SELF_SIGNED);

    const target = await addTarget(client, owner, workspaceId, 'acme.test');
    const scan = await startScan(client, owner, workspaceId, target.id, { ports: String(tlsPort), timeoutMs: 5_000 });
    expect(await waitForScan(client, owner, workspaceId, scan.id)).toMatchObject({ status: 'COMPLETED', error: null });

    const findings = await findingsOf(workspaceId);
    expect(findings.map((f) => [f.checkId, f.asset?.key, f.severity])).toEqual([
      ['acme-self-signed', `service:127.0.0.1:${tlsPort}/tcp`, 'low'],
      ['acme-spf-detect', 'host:acme.test', 'info'],
    ]);
    const extracted = (finding: (typeof findings)[number]) => (finding.evidence as { extracted: Record<string, unknown> }).extracted;
    expect(extracted(findings[0]!)).toMatchObject({ type: 'ssl', 'extracted-results': ['localhost'] });
    expect(extracted(findings[1]!)).toMatchObject({ type: 'dns', 'extracted-results': ['v=spf1 include:_spf.acme.test ~all'] });
    // The question really reached the name server the scan is configured with.
    expect(dns.queryLog()).toContainEqual(expect.objectContaining({ name: 'acme.test', type: 'TXT' }));

    const step = await server.db.prisma.scanStep.findFirstOrThrow({ where: { scanId: scan.id, name: 'checks' } });
    expect(step.output).toMatchObject({ hostCheckIds: ['acme-spf-detect'], serviceCheckIds: ['acme-self-signed'] });
  });

  it('payload questions stop at the scan option maxRequestsPerTemplatePerEndpoint, reported as such, with no finding they did not see', async () => {
    const owner = await client.signUp('HostTemplaterCapped');
    const workspaceId = (await client.createWorkspace(owner)).id;
    await uploadTemplate(client, owner, workspaceId, 'dkim.yaml', DKIM);
    const target = await addTarget(client, owner, workspaceId, 'acme.test');
    const dkimQuestions = () => dns.queryLog().filter((q) => q.name.endsWith('._domainkey.acme.test')).length;

    const before = dkimQuestions();
    const capped = await startScan(client, owner, workspaceId, target.id, { ports: String(tlsPort), timeoutMs: 5_000, maxRequestsPerTemplatePerEndpoint: 2 });
    expect(await waitForScan(client, owner, workspaceId, capped.id)).toMatchObject({ status: 'COMPLETED', error: null });
    expect(dkimQuestions() - before).toBe(2);
    const step = await server.db.prisma.scanStep.findFirstOrThrow({ where: { scanId: capped.id, name: 'checks' } });
    expect((step.output as { errors: { code: string; target?: string }[] }).errors).toContainEqual(
      expect.objectContaining({ code: 'TEMPLATE_REQUEST_CAP_REACHED', target: 'acme-dkim host:acme.test' }),
    );
    expect(await server.db.prisma.finding.count({ where: { workspaceId, checkId: 'acme-dkim' } })).toBe(0);

    const full = await startScan(client, owner, workspaceId, target.id, { ports: String(tlsPort), timeoutMs: 5_000 });
    expect(await waitForScan(client, owner, workspaceId, full.id)).toMatchObject({ status: 'COMPLETED', error: null });
    expect(await server.db.prisma.finding.count({ where: { workspaceId, checkId: 'acme-dkim' } })).toBe(1);
  });

  it('a name without the record and a service with a CA-signed certificate raise nothing', async () => {
    const owner = await client.signUp('HostTemplaterNegative');
    const workspaceId = (await client.createWorkspace(owner)).id;
    await uploadTemplate(client, owner, workspaceId, 'spf.yaml', SPF);
    await uploadTemplate(client, owner, workspaceId, 'self-signed.yaml', SELF_SIGNED);
    const signed = tls.createServer({ key: certs.caSigned.key, cert: certs.caSigned.cert }, (socket) => socket.end());
    signed.on('tlsClientError', () => undefined);
    await new Promise<void>((resolve) => signed.listen(0, '127.0.0.1', resolve));
    try {
      const port = (signed.address() as AddressInfo).port;
      const target = await addTarget(client, owner, workspaceId, 'nospf.acme.test');
      const scan = await startScan(client, owner, workspaceId, target.id, { ports: String(port), timeoutMs: 5_000 });
      expect(await waitForScan(client, owner, workspaceId, scan.id)).toMatchObject({ status: 'COMPLETED', error: null });
      expect(await findingsOf(workspaceId)).toEqual([]);
      expect(dns.queryLog()).toContainEqual(expect.objectContaining({ name: 'nospf.acme.test', type: 'TXT' }));
    } finally {
      await new Promise<void>((resolve) => signed.close(() => resolve()));
    }
  });
});
