/**
 * The default DnsResolver of the dns protocol: the discovery DNS client (src/scanner/discovery/dns-client.ts),
 * so questions go to SCAN_DNS_SERVERS (or the system's resolvers) with its per-server limits, timeouts and
 * UDP→TCP fallback on truncation.
 */
import type { RecordType } from 'dns-packet';
import { createDnsClient, type DiscoveryDnsClient, type DiscoveryDnsClientOptions } from '../discovery/dns-client.js';
import type { DnsMessage, DnsResolver } from './types.js';

/** EDNS0 UDP size nuclei's requests advertise (req.SetEdns0(4096, false)). */
const EDNS_UDP_SIZE = 4096;

/** A resolver over an existing discovery DNS client (shared limits with the rest of the scan). */
export function dnsResolverFromClient(client: Pick<DiscoveryDnsClient, 'exchange'>): DnsResolver {
  return {
    async exchange(question) {
      const { request, response } = await client.exchange(question.name, question.type as RecordType, {
        dnsClass: question.class,
        recursionDesired: question.recursionDesired,
        authenticatedData: question.authenticatedData,
        ednsUdpSize: EDNS_UDP_SIZE,
        tries: question.retries,
        timeoutMs: question.timeoutMs,
      });
      return { request: request as DnsMessage, response: response as DnsMessage };
    },
  };
}

/** A resolver with its own DNS client; `servers` is SCAN_DNS_SERVERS (the system's resolvers when empty). Call close() when done. */
export function createDnsResolver(options: DiscoveryDnsClientOptions = {}): DnsResolver & { close(): void } {
  const client = createDnsClient(options);
  return { ...dnsResolverFromClient(client), close: () => client.close() };
}
