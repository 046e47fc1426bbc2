import net from 'node:net';
import type { TargetType } from './normalize.js';

/**
 * Which of a workspace's targets cover a place a tool reported: the rule that ties pushed results to
 * targets, so they show in every per-target view their scope covers. Pure: no database, no HTTP.
 *
 * - domain: the host is the domain or a name under it (`a.example.com` is under `example.com`);
 * - ip: the host, or the address the tool resolved it to, is that address;
 * - cidr: the host or its address lies in the network;
 * - url: a reported URL has the same scheme, host and port and its path is the target's path or below it
 *   (`/x` covers `/x` and `/x/y`, not `/xy`); a bare host and port is covered by a URL target with no path
 *   on that host and port.
 */

/** A target as stored: `value` is normalised (see normalize.ts). */
export interface ScopeTarget {
  id: string;
  type: TargetType;
  value: string;
}

/** Where something was seen, as a tool says it. */
export interface ReportedPlace {
  url?: string;
  host?: string;
  port?: number;
  ip?: string;
}

interface Place {
  host: string;
  addresses: string[];
  port?: number;
  url?: { protocol: string; port: number; path: string };
}

const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443 };

function bareHost(host: string): string {
  return host
    .trim()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '')
    .toLowerCase();
}

function effectivePort(url: URL): number {
  return url.port ? Number(url.port) : (DEFAULT_PORTS[url.protocol] ?? 0);
}

/** The path without trailing slashes, so `/x/` and `/x` are the same prefix. */
function trimmedPath(url: URL): string {
  return url.pathname.replace(/\/+$/, '');
}

function placeOf(reported: ReportedPlace): Place | null {
  let host = reported.host ? bareHost(reported.host) : '';
  let port = reported.port;
  let url: Place['url'];
  if (reported.url && URL.canParse(reported.url)) {
    const parsed = new URL(reported.url);
    host = bareHost(parsed.hostname);
    port = effectivePort(parsed);
    url = { protocol: parsed.protocol, port, path: trimmedPath(parsed) };
  }
  if (!host) return null;
  const addresses = [host, reported.ip?.trim() ?? ''].filter((address) => net.isIP(address) !== 0);
  return { host, addresses, port, url };
}

function ipFamily(address: string): 'ipv4' | 'ipv6' {
  return net.isIPv4(address) ? 'ipv4' : 'ipv6';
}

/** One target's rule, prepared once per submission. */
function coverageOf(target: ScopeTarget): (place: Place) => boolean {
  switch (target.type) {
    case 'domain': {
      const suffix = `.${target.value}`;
      return (place) => place.host === target.value || place.host.endsWith(suffix);
    }
    case 'ip':
    case 'cidr': {
      const list = new net.BlockList();
      if (target.type === 'ip') list.addAddress(target.value, ipFamily(target.value));
      else {
        const [network, prefix] = target.value.split('/');
        list.addSubnet(network!, Number(prefix), ipFamily(network!));
      }
      return (place) => place.addresses.some((address) => list.check(address, ipFamily(address)));
    }
    case 'url': {
      if (!URL.canParse(target.value)) return () => false;
      const scope = new URL(target.value);
      const host = bareHost(scope.hostname);
      const port = effectivePort(scope);
      const path = trimmedPath(scope);
      return (place) => {
        if (place.host !== host) return false;
        if (!place.url) return !path && place.port === port;
        return place.url.protocol === scope.protocol && place.url.port === port && (!path || place.url.path === path || place.url.path.startsWith(`${path}/`));
      };
    }
  }
}

/** A function answering the ids of the targets (of those given) that cover a reported place. */
export function createScopeMatcher(targets: readonly ScopeTarget[]): (reported: ReportedPlace) => string[] {
  const rules = targets.map((target) => ({ id: target.id, covers: coverageOf(target) }));
  return (reported) => {
    const place = placeOf(reported);
    return place ? rules.filter((rule) => rule.covers(place)).map((rule) => rule.id) : [];
  };
}
