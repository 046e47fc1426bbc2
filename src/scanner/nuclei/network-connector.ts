/**
 * Default NetworkConnector over node:net / node:tls.
 *
 * Scope: the caller injects a `lookup` (e.g. a scope guard's guardedLookup); it runs at connect time. Node skips
 * `lookup` for IP-literal hosts, so for those the connector calls the same `lookup` itself before connecting: a
 * guard that refuses the address refuses the connection. TLS certificates are not verified (nuclei dials TLS
 * with InsecureSkipVerify); SNI is sent for names, not for IP literals.
 */
import net from 'node:net';
import type { Duplex } from 'node:stream';
import tls from 'node:tls';
import type { NetworkConnector, NetworkConnectRequest } from './network-types.js';
import { lookupOnce } from './lookup-once.js';

export interface NodeNetworkConnectorOptions {
  /** DNS lookup used for every connection (inject the scope guard here). Also called for IP literals. */
  lookup?: net.LookupFunction;
}

function connectOnce(req: NetworkConnectRequest, lookup: net.LookupFunction | undefined): Promise<Duplex> {
  return new Promise((resolve, reject) => {
    const base = { host: req.host, port: req.port, lookup };
    const socket = req.tls ? tls.connect({ ...base, rejectUnauthorized: false, servername: net.isIP(req.host) ? undefined : req.host }) : net.connect(base);
    const readyEvent = req.tls ? 'secureConnect' : 'connect';
    const fail = (err: Error) => {
      cleanup();
      socket.destroy();
      reject(err);
    };
    const onError = (err: Error) => fail(err);
    const onAbort = () => fail(new Error('aborted'));
    const timer = setTimeout(() => fail(new Error(`connect timed out after ${req.timeoutMs} ms`)), req.timeoutMs);
    const onReady = () => {
      cleanup();
      resolve(socket);
    };
    const cleanup = () => {
      clearTimeout(timer);
      socket.off('error', onError);
      socket.off(readyEvent, onReady);
      req.signal?.removeEventListener('abort', onAbort);
    };
    socket.once('error', onError);
    socket.once(readyEvent, onReady);
    if (req.signal?.aborted) onAbort();
    else req.signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export function createNodeNetworkConnector(options: NodeNetworkConnectorOptions = {}): NetworkConnector {
  return async (req) => {
    if (options.lookup && net.isIP(req.host)) await lookupOnce(options.lookup, req.host);
    const socket = await connectOnce(req, options.lookup);
    // a peer reset after we are done must not become an unhandled 'error' event
    socket.on('error', () => {});
    return socket;
  };
}
