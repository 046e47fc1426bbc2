/**
 * The default TlsConnector of the ssl protocol: one node:tls handshake, certificate verification off (the
 * templates judge the certificate), the chain as the server sent it.
 *
 * Scope: the caller injects a `lookup` (e.g. a scope guard's guardedLookup); it runs at connect time. Node skips
 * `lookup` for IP literals, so for those the connector calls it itself first: a guard that refuses the address
 * refuses the handshake.
 */
import type net from 'node:net';
import tls from 'node:tls';
import type { TlsConnector, TlsProbe } from './types.js';
import { lookupOnce } from './lookup-once.js';

export interface NodeTlsConnectorOptions {
  /** DNS lookup used for every connection (inject the scope guard here). Also called for IP literals. */
  lookup?: net.LookupFunction;
}

/** DER certificates leaf first, following issuer links node resolved (stops where a certificate is its own issuer). */
function peerChain(socket: tls.TLSSocket): Uint8Array[] {
  const chain: Uint8Array[] = [];
  const seen = new Set<string>();
  let cert: tls.DetailedPeerCertificate | undefined = socket.getPeerCertificate(true);
  while (cert?.raw && !seen.has(cert.fingerprint256)) {
    seen.add(cert.fingerprint256);
    chain.push(new Uint8Array(cert.raw));
    cert = cert.issuerCertificate;
  }
  return chain;
}

export function createNodeTlsConnector(options: NodeTlsConnectorOptions = {}): TlsConnector {
  return async (req) => {
    if (options.lookup && /^[\d.]+$|:/.test(req.host)) await lookupOnce(options.lookup, req.host);
    return new Promise<TlsProbe>((resolve, reject) => {
      let settled = false;
      const socket = tls.connect({
        host: req.host,
        port: req.port,
        servername: req.servername,
        minVersion: req.minVersion,
        maxVersion: req.maxVersion,
        ciphers: req.ciphers,
        rejectUnauthorized: false,
        lookup: options.lookup,
      });
      const finish = (err?: Error, probe?: TlsProbe) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        req.signal?.removeEventListener('abort', onAbort);
        socket.destroy();
        if (err) reject(err);
        else resolve(probe!);
      };
      const onAbort = () => finish(new Error('aborted'));
      const timer = setTimeout(() => finish(new Error(`TLS handshake with ${req.host}:${req.port} timed out after ${req.timeoutMs} ms`)), req.timeoutMs);
      req.signal?.addEventListener('abort', onAbort, { once: true });
      socket.once('secureConnect', () => {
        const cipher = socket.getCipher();
        finish(undefined, {
          protocol: socket.getProtocol() ?? '',
          cipher: cipher.standardName || cipher.name,
          chain: peerChain(socket),
          remoteAddress: socket.remoteAddress ?? req.host,
          servername: req.servername ?? req.host,
        });
      });
      socket.once('error', (err) => finish(err));
      socket.once('close', () => finish(new Error('connection closed before the handshake completed')));
    });
  };
}
