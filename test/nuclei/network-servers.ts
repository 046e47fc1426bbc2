/**
 * Loopback TCP / TLS services for the network-protocol tests: each server speaks a tiny protocol and records
 * the bytes it received per connection.
 */
import net from 'node:net';
import tls from 'node:tls';
import { createNodeNetworkConnector, parseTemplate, runNetworkTemplates } from '../../src/scanner/nuclei/index.js';
import type { NetworkRunDeps, NetworkTarget, NucleiTemplate } from '../../src/scanner/nuclei/index.js';

export interface TcpService {
  port: number;
  /** Bytes received, one entry per connection (filled as data arrives). */
  received: Buffer[];
  connections: number;
  close(): Promise<void>;
}

type Handler = (socket: net.Socket, state: { received: () => Buffer }) => void;

async function serve(server: net.Server, received: Buffer[], counter: { n: number }): Promise<TcpService> {
  const sockets = new Set<net.Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    received,
    get connections() {
      return counter.n;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

function wrap(handler: Handler, received: Buffer[], counter: { n: number }) {
  return (socket: net.Socket) => {
    counter.n++;
    const index = received.push(Buffer.alloc(0)) - 1;
    socket.on('data', (chunk: Buffer) => {
      received[index] = Buffer.concat([received[index]!, chunk]);
    });
    socket.on('error', () => {});
    handler(socket, { received: () => received[index]! });
  };
}

/** A TCP server on 127.0.0.1 running `handler` for each connection. */
export function startTcpService(handler: Handler): Promise<TcpService> {
  const received: Buffer[] = [];
  const counter = { n: 0 };
  return serve(net.createServer(wrap(handler, received, counter)), received, counter);
}

/** A TLS server on 127.0.0.1 (certificate from makeCertificates) running `handler` for each connection. */
export function startTlsService(cert: { key: string; cert: string }, handler: Handler): Promise<TcpService> {
  const received: Buffer[] = [];
  const counter = { n: 0 };
  const server = tls.createServer({ key: cert.key, cert: cert.cert }, wrap(handler, received, counter));
  return serve(server, received, counter);
}

/** Sends a banner on connect, then answers nothing. */
export const bannerHandler =
  (banner: string): Handler =>
  (socket) => {
    socket.write(banner);
  };

/** Line protocol: answers each command from `answers` (unknown: "-ERR unknown\r\n"); `QUIT` closes. */
export const lineHandler =
  (greeting: string | undefined, answers: Record<string, string>): Handler =>
  (socket) => {
    if (greeting) socket.write(greeting);
    let pending = '';
    socket.on('data', (chunk: Buffer) => {
      pending += chunk.toString('latin1');
      for (let nl = pending.indexOf('\n'); nl !== -1; nl = pending.indexOf('\n')) {
        const line = pending.slice(0, nl).replace(/\r$/, '');
        pending = pending.slice(nl + 1);
        if (line === 'QUIT') {
          socket.end('+BYE\r\n');
          return;
        }
        socket.write(answers[line] ?? '-ERR unknown\r\n');
      }
    });
  };

/** Binary protocol: when the bytes received start with `request`, answers `reply`; otherwise `other`. */
export const binaryHandler =
  (request: Buffer, reply: Buffer, other: Buffer): Handler =>
  (socket, state) => {
    socket.on('data', () => {
      const got = state.received();
      if (got.length < request.length) return;
      socket.write(got.subarray(0, request.length).equals(request) ? reply : other);
    });
  };

export const connector = createNodeNetworkConnector();

export function load(yaml: string): NucleiTemplate {
  const parsed = parseTemplate(yaml);
  if (!parsed.template) throw new Error(`template did not parse: ${JSON.stringify(parsed.errors)}`);
  return parsed.template;
}

/** A network template with the given `tcp:` block body (indented by the caller as a list item). */
export function tcpTemplate(block: string, id = 'net-test'): string {
  return `id: ${id}\ninfo:\n  name: Network test\n  author: perimeter\n  severity: info\ntcp:\n${block}`;
}

export async function run(yaml: string | NucleiTemplate[], target: NetworkTarget, deps: Partial<NetworkRunDeps> = {}) {
  const templates = typeof yaml === 'string' ? [load(yaml)] : yaml;
  return runNetworkTemplates(templates, target, { connect: connector, readTimeoutMs: 300, timeoutMs: 2000, ...deps });
}

/** Waits (up to 2 s) until `check` holds: a server sees the bytes a little after the client has moved on. */
export async function until(check: () => boolean): Promise<void> {
  for (const started = Date.now(); !check() && Date.now() - started < 2000; ) await new Promise((r) => setTimeout(r, 10));
}
