/**
 * A planted attack surface on loopback for the discovery tests: an authoritative DNS server for `acme.test`,
 * a certificate-transparency server, and web servers (HTTP and HTTPS) whose pages and certificate name hosts.
 * Every name resolves to 127.0.0.1, so the scans probe only these servers.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDnsServer, type TestDnsServer, type ZoneRecord } from './dns-server.js';

export const ZONE = 'acme.test';
/** A second zone whose name server hands the zone to anyone (AXFR allowed): acme.test's refuses, so each source is seen on its own there. */
export const OPEN_ZONE = 'open.test';
export const AXFR_ONLY = 'hidden-4d4d.open.test';
/** The name 127.0.0.1's PTR record gives (a reverse zone on the same server). */
export const PTR_NAME = 'loopback-ptr.acme.test';

/** Each planted name of acme.test and the one source that can find it. */
export const PLANTED = {
  /** From the built-in wordlist (brute force). */
  wordlist: ['www.acme.test', 'api.acme.test', 'mail.acme.test', 'vpn.acme.test', 'portal.acme.test'],
  /** A wildcard sub-zone: the zone's own name is real, nothing under it is. */
  wildcardZone: 'cdn.acme.test',
  ct: 'ct-only-7f3a.acme.test',
  /** Found through CT, then brute force under it finds `vpn.` (recursion). */
  ctParent: 'eu-west-9q.acme.test',
  recursion: 'vpn.eu-west-9q.acme.test',
  certificate: 'san-only-91bc.acme.test',
  link: 'link-only-55d2.acme.test',
  script: 'script-only-c0de.acme.test',
  /** shop → edge-19af → origin-4411 (A). */
  cnameChain: ['shop.acme.test', 'edge-19af.acme.test', 'origin-4411.acme.test'],
  /** blog → gone-5e1e.acme.test, which does not exist. */
  dangling: 'blog.acme.test',
  danglingTarget: 'gone-5e1e.acme.test',
  nameServer: 'ns1.acme.test',
  mailExchange: 'mx-8e2d.acme.test',
  spfInclude: 'spf-71b0.acme.test',
  permutation: 'staging-api.acme.test',
  excluded: 'admin.acme.test',
  outOfScopeLink: 'partner.example',
  outOfScopeSpf: '_spf.partner.example',
} as const;

export interface DiscoveryLab {
  dns: TestDnsServer;
  ctUrl: string;
  ctRequests: string[];
  httpPort: number;
  httpsPort: number;
  /** Env for startTestApp: loopback scanning, the lab's DNS and CT. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

function zoneRecords(): ZoneRecord[] {
  const a = (name: string): ZoneRecord => ({ name, type: 'A', data: '127.0.0.1' });
  return [
    a(ZONE),
    { name: ZONE, type: 'NS', data: PLANTED.nameServer },
    { name: ZONE, type: 'MX', data: { preference: 10, exchange: PLANTED.mailExchange } },
    { name: ZONE, type: 'TXT', data: `v=spf1 include:${PLANTED.spfInclude} include:${PLANTED.outOfScopeSpf} -all` },
    ...PLANTED.wordlist.map(a),
    a(PLANTED.wildcardZone),
    { name: `*.${PLANTED.wildcardZone}`, type: 'A', data: '127.0.0.1' },
    a(PLANTED.ct),
    a(PLANTED.ctParent),
    a(PLANTED.recursion),
    a(PLANTED.certificate),
    a(PLANTED.link),
    a(PLANTED.script),
    { name: PLANTED.cnameChain[0], type: 'CNAME', data: PLANTED.cnameChain[1] },
    { name: PLANTED.cnameChain[1], type: 'CNAME', data: PLANTED.cnameChain[2] },
    a(PLANTED.cnameChain[2]),
    { name: PLANTED.dangling, type: 'CNAME', data: PLANTED.danglingTarget },
    a(PLANTED.nameServer),
    a(PLANTED.mailExchange),
    a(PLANTED.spfInclude),
    a(PLANTED.permutation),
    a(PLANTED.excluded),
    a(PTR_NAME),
  ];
}

/** The page every web server answers: links and a script naming hosts, one of them out of scope. */
function page(httpPort: number): string {
  return [
    '<html><head><title>ACME</title>',
    `<script src="//${PLANTED.script}/app.js"></script></head><body>`,
    `<a href="http://${PLANTED.link}:${httpPort}/about">About</a>`,
    `<a href="https://${PLANTED.outOfScopeLink}/partners">Partner</a>`,
    '</body></html>',
  ].join('\n');
}

function certificate(): { key: string; cert: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'perimeter-discovery-cert-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      'site.key',
      '-out',
      'site.crt',
      '-days',
      '30',
      '-subj',
      `/CN=www.${ZONE}`,
      '-addext',
      `subjectAltName=DNS:www.${ZONE},DNS:${PLANTED.certificate}`,
    ],
    { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  return {
    key: readFileSync(join(dir, 'site.key'), 'utf8'),
    cert: readFileSync(join(dir, 'site.crt'), 'utf8'),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

async function listen(server: http.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

export async function startDiscoveryLab(): Promise<DiscoveryLab> {
  const open: ZoneRecord[] = [
    { name: OPEN_ZONE, type: 'A', data: '127.0.0.1' },
    { name: OPEN_ZONE, type: 'NS', data: `ns.${OPEN_ZONE}` },
    { name: `ns.${OPEN_ZONE}`, type: 'A', data: '127.0.0.1' },
    { name: AXFR_ONLY, type: 'A', data: '127.0.0.1' },
  ];
  const dns = await startDnsServer({
    zones: [
      { origin: ZONE, records: zoneRecords(), allowTransfer: false },
      { origin: OPEN_ZONE, records: open, allowTransfer: true },
      { origin: '0.0.127.in-addr.arpa', records: [{ name: '1', type: 'PTR', data: PTR_NAME }] },
    ],
  });
  const ctRequests: string[] = [];
  const ct = http.createServer((req, res) => {
    ctRequests.push(req.url ?? '');
    const url = new URL(req.url ?? '/', 'http://ct.test');
    const query = url.searchParams.get('q') ?? '';
    const entries = query === `%.${ZONE}` ? [{ name_value: `${PLANTED.ct}\n*.${PLANTED.ctParent}\n${PLANTED.ctParent}`, common_name: `www.${ZONE}` }] : [];
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(entries));
  });
  const ctPort = await listen(ct);
  let httpPort = 0;
  const web = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(page(httpPort));
  });
  httpPort = await listen(web);
  const cert = certificate();
  const secure = https.createServer({ key: cert.key, cert: cert.cert }, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(page(httpPort));
  });
  const httpsPort = await listen(secure);
  const close = (server: http.Server) => new Promise<void>((resolve) => server.close(() => resolve()));
  return {
    dns,
    ctUrl: `http://127.0.0.1:${ctPort}/`,
    ctRequests,
    httpPort,
    httpsPort,
    env: {
      SCAN_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128',
      QUEUE_SUPERVISE_SECONDS: '1',
      // Every planted host is 127.0.0.1: the per-host ceilings would otherwise pace dozens of endpoints as one.
      SCAN_MAX_REQUESTS_PER_SECOND: '5000',
      SCAN_MAX_CONCURRENCY_PER_HOST: '256',
      SCAN_DNS_QUERIES_PER_SECOND: '10000',
      SCAN_DNS_SERVERS: dns.server,
      SCAN_DNS_AUTHORITATIVE_PORT: String(dns.port),
      DISCOVERY_CT_URL: `http://127.0.0.1:${ctPort}/`,
    },
    async stop() {
      secure.closeAllConnections();
      web.closeAllConnections();
      await Promise.all([close(ct), close(web), close(secure), dns.stop()]);
      cert.cleanup();
    },
  };
}
