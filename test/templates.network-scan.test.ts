import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor } from './support/client.js';
import { addTarget, startScan, waitForScan, type Client, uploadTemplate } from './support/scans.js';

/**
 * Network (tcp) templates in real scans: a template uploaded to the registry runs against the services the port
 * scan found (not against web endpoints), its finding lands on the service asset, and a rescan fixes it once the
 * service stops saying what matched. A service whose connection fails fixes nothing.
 */

const LOOPBACK_ONLY = { SCAN_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128', QUEUE_SUPERVISE_SECONDS: '1' };

/** A banner check with a version extractor, in nuclei's syntax (network protocol, `{{Hostname}}` input). */
const ACME_FTP = `id: acme-ftp-detect
info:
  name: Acme FTP server detected
  author: tests
  severity: info
  tags: network,ftp

tcp:
  - host:
      - "{{Hostname}}"
    inputs:
      - data: "HELP\\r\\n"
    read-size: 1024
    matchers:
      - type: word
        words: ["AcmeFTP"]
    extractors:
      - type: regex
        name: version
        group: 1
        regex: ['AcmeFTP ([0-9.]+)']
`;

/** A service that greets with a banner, then answers one line. */
function bannerService(state: { banner: string; lines: string[] }) {
  return net.createServer((socket) => {
    socket.on('error', () => undefined);
    socket.write(`${state.banner}\r\n`);
    socket.on('data', (chunk) => {
      state.lines.push(chunk.toString('utf8'));
      socket.end('214 Help OK\r\n');
    });
  });
}

let server: TestApp;
let client: Client;
let service: net.Server;
let port: number;
const state = { banner: '220 AcmeFTP 2.4.1 ready', lines: [] as string[] };

beforeAll(async () => {
  service = bannerService(state);
  await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
  port = (service.address() as AddressInfo).port;
  server = await startTestApp(LOOPBACK_ONLY);
  client = clientFor(server);
});

afterAll(async () => {
  await server?.stop();
  await new Promise<void>((resolve) => service?.close(() => resolve()));
});

function networkFindings(workspaceId: string) {
  return server.db.prisma.finding.findMany({ where: { workspaceId, checkId: 'acme-ftp-detect' }, include: { asset: { select: { key: true } } } });
}

describe('network templates in a scan', { timeout: 120_000 }, () => {
  it('runs against the port scan’s services, finds the banner, and a rescan fixes it once the banner changes', async () => {
    const owner = await client.signUp('NetTemplater');
    const workspaceId = (await client.createWorkspace(owner)).id;
    const targetId = (await addTarget(client, owner, workspaceId, '127.0.0.1')).id;
    await uploadTemplate(client, owner, workspaceId, 'acme-ftp.yaml', ACME_FTP);

    const first = await startScan(client, owner, workspaceId, targetId, { ports: String(port), timeoutMs: 5_000 });
    expect(await waitForScan(client, owner, workspaceId, first.id)).toMatchObject({ status: 'COMPLETED', error: null });
    const found = await networkFindings(workspaceId);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ status: 'open', severity: 'info', source: 'nuclei', asset: { key: `service:127.0.0.1:${port}/tcp` } });
    expect((found[0]!.evidence as { extracted: Record<string, unknown> }).extracted).toMatchObject({
      type: 'network',
      'extractor-name': 'version',
      'extracted-results': ['2.4.1'],
    });
    // The input really went over the wire, once per scan (the http and tls probes also knock: their lines differ).
    expect(state.lines.filter((line) => line === 'HELP\r\n')).toHaveLength(1);
    const step = await server.db.prisma.scanStep.findFirstOrThrow({ where: { scanId: first.id, name: 'checks' } });
    expect((step.output as { serviceCheckIds: string[] }).serviceCheckIds).toEqual(['acme-ftp-detect']);

    state.banner = '220 OtherFTP ready';
    const second = await startScan(client, owner, workspaceId, targetId, { ports: String(port), timeoutMs: 5_000 });
    expect(await waitForScan(client, owner, workspaceId, second.id)).toMatchObject({ status: 'COMPLETED' });
    expect(await networkFindings(workspaceId)).toMatchObject([{ status: 'fixed' }]);
  });

  it('a service that resets the connection before answering leaves the finding open (the template did not run clean)', async () => {
    const owner = await client.signUp('NetTemplaterReset');
    const workspaceId = (await client.createWorkspace(owner)).id;
    const targetId = (await addTarget(client, owner, workspaceId, '127.0.0.1')).id;
    await uploadTemplate(client, owner, workspaceId, 'acme-ftp.yaml', ACME_FTP);
    state.banner = '220 AcmeFTP 2.4.1 ready';
    const first = await startScan(client, owner, workspaceId, targetId, { ports: String(port), timeoutMs: 5_000 });
    await waitForScan(client, owner, workspaceId, first.id);
    expect(await networkFindings(workspaceId)).toMatchObject([{ status: 'open' }]);

    // Still open for the port scan (it connects and leaves), but every connection that sends data is reset.
    const reset = net.createServer((socket) => {
      socket.on('error', () => undefined);
      socket.on('data', () => socket.resetAndDestroy());
    });
    await new Promise<void>((resolve) => service.close(() => resolve()));
    await new Promise<void>((resolve) => reset.listen(port, '127.0.0.1', resolve));
    try {
      const second = await startScan(client, owner, workspaceId, targetId, { ports: String(port), timeoutMs: 5_000 });
      await waitForScan(client, owner, workspaceId, second.id);
      const step = await server.db.prisma.scanStep.findFirstOrThrow({ where: { scanId: second.id, name: 'checks' } });
      const errors = (step.output as { errors: { target?: string; code: string }[] }).errors;
      expect(errors).toContainEqual(expect.objectContaining({ code: 'TEMPLATE_REQUEST_FAILED', target: `acme-ftp-detect service:127.0.0.1:${port}/tcp` }));
      expect(await networkFindings(workspaceId)).toMatchObject([{ status: 'open' }]);
    } finally {
      await new Promise<void>((resolve) => reset.close(() => resolve()));
      service = bannerService(state);
      await new Promise<void>((resolve) => service.listen(port, '127.0.0.1', resolve));
    }
  });
});
