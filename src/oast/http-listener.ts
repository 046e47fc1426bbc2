/**
 * The OAST HTTP listener: any request whose Host is `<id><nonce>.<OAST_DOMAIN>` (any depth, any case) of a
 * registered id is recorded with its raw text and answered 200 with the id reversed in an HTML body, as
 * interactsh does (a template can check that its callback reached us). Other names under the domain get the same
 * page without a recording; names elsewhere get 404. Bodies are read up to MAX_BODY_BYTES; the rest is discarded.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OastInteraction } from '../scanner/nuclei/oast.js';
import type { OastMatch, OastRegistry } from './registry.js';

/** What one interaction keeps of a request body. */
const MAX_BODY_BYTES = 16 * 1024;

export interface OastListener {
  port: number;
  close(): Promise<void>;
}

export type RecordInteraction = (match: OastMatch, interaction: Omit<OastInteraction, 'uniqueId' | 'fullId' | 'timestamp'>) => void;

export function peerAddress(address: string | undefined): string {
  return (address ?? '').replace(/^::ffff:/, '');
}

function rawRequestText(req: http.IncomingMessage, body: Buffer): string {
  const lines = [`${req.method} ${req.url} HTTP/${req.httpVersion}`];
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
  return `${lines.join('\r\n')}\r\n\r\n${body.toString('latin1')}`;
}

export async function startOastHttpListener(options: { registry: OastRegistry; record: RecordInteraction; host: string; port: number }): Promise<OastListener> {
  const { registry, record } = options;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    let kept = 0;
    req.on('data', (chunk: Buffer) => {
      if (kept >= MAX_BODY_BYTES) return;
      chunks.push(chunk.subarray(0, MAX_BODY_BYTES - kept));
      kept += Math.min(chunk.length, MAX_BODY_BYTES - kept);
    });
    req.on('error', () => res.destroy());
    req.on('end', () => {
      const host = req.headers.host ?? '';
      if (!registry.covers(host)) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
        return;
      }
      const match = registry.match(host);
      const body = `<html><head></head><body>${match ? [...match.uniqueId].reverse().join('') : ''}</body></html>`;
      const headers = { 'content-type': 'text/html; charset=utf-8', server: registry.domain, 'content-length': String(Buffer.byteLength(body)) };
      res.writeHead(200, headers).end(body);
      if (!match) return;
      const rawHeaders = Object.entries(headers).map(([k, v]) => `${k}: ${v}`);
      record(match, {
        protocol: 'http',
        rawRequest: rawRequestText(req, Buffer.concat(chunks)),
        rawResponse: `HTTP/1.1 200 OK\r\n${rawHeaders.join('\r\n')}\r\n\r\n${body}`,
        remoteAddress: peerAddress(req.socket.remoteAddress),
      });
    });
  });
  // Callbacks are single small requests: a slow or idle client is cut off early.
  server.requestTimeout = 10_000;
  server.headersTimeout = 5_000;
  server.keepAliveTimeout = 2_000;
  server.on('clientError', (_err, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
