import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import type { Env } from '../env.js';

/** `::ffff:203.0.113.7` and `203.0.113.7` are one client: limits keyed by address must not count it twice. */
function normalise(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return (mapped?.[1] ?? address).toLowerCase();
}

/**
 * The address of the client, for rate limits, per-client caps and logs. Without trusted proxies
 * (TRUST_PROXY=0, the default) it is the socket's peer: X-Forwarded-For is written by whoever sends the
 * request and would let anyone pick a fresh address per attempt. With N trusted proxies, each of which
 * appends the address it received the request from, the client is the N-th entry from the right; an
 * entry that is not an IP address (or a chain shorter than N) leaves the nearest address we can trust.
 */
export function clientAddress(req: Pick<IncomingMessage, 'headers' | 'socket'>, env: Pick<Env, 'TRUST_PROXY'>): string {
  const peer = req.socket?.remoteAddress ? normalise(req.socket.remoteAddress) : 'unknown';
  if (env.TRUST_PROXY <= 0) return peer;
  const header = req.headers['x-forwarded-for'];
  const chain = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
  let client = peer;
  // Walk from the nearest hop outwards, one trusted proxy at a time.
  for (let hop = 1; hop <= env.TRUST_PROXY && hop <= chain.length; hop++) {
    const entry = chain[chain.length - hop]!;
    if (!isIP(entry)) break;
    client = normalise(entry);
  }
  return client;
}
