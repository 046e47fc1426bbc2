/**
 * SCAN_DNS_SERVERS: `ip`, `ip:port` or `[ipv6]:port`, comma-separated. Normalised to what node:dns
 * `setServers` and the discovery client accept (`ip`, `ip:port`, `[ipv6]:port`).
 */
import ipaddr from 'ipaddr.js';

export interface DnsServerAddress {
  address: string;
  port: number;
}

export function parseDnsServer(entry: string): DnsServerAddress {
  const text = entry.trim();
  let host = text;
  let port = 53;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  if (bracketed) {
    host = bracketed[1]!;
    if (bracketed[2] !== undefined) port = Number(bracketed[2]);
  } else if (/^[^:]+:\d+$/.test(text)) {
    const [name, portText] = text.split(':') as [string, string];
    host = name;
    port = Number(portText);
  }
  if (!ipaddr.isValid(host) || (ipaddr.IPv4.isValid(host) && !ipaddr.IPv4.isValidFourPartDecimal(host))) {
    throw new TypeError(`"${entry}" is not a name server: use an IP address, ip:port or [ipv6]:port`);
  }
  if (!Number.isInteger(port) || port < 1 || port > 65_535) throw new TypeError(`"${entry}" has a port outside 1-65535`);
  return { address: ipaddr.parse(host).toString(), port };
}

/** The canonical `ip`, `ip:port` or `[ipv6]:port` of a server. */
export function formatDnsServer({ address, port }: DnsServerAddress): string {
  if (port === 53) return address;
  return address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
}

export function parseDnsServerList(text: string): string[] {
  return text
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => formatDnsServer(parseDnsServer(entry)));
}
