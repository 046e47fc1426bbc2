import type net from 'node:net';

/**
 * Runs the injected lookup (the scan's scope guard) for a host before a connection is opened by hand — raw
 * sockets, TLS probes, unsafe requests — so IP literals, which node:net never looks up, are judged too.
 */
export function lookupOnce(lookup: net.LookupFunction, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    try {
      lookup(host, { all: true }, (err) => (err ? reject(err) : resolve()));
    } catch (err) {
      reject(err as Error);
    }
  });
}
