/**
 * Natural keys for observations and deterministic finding fingerprints.
 *
 * The persistence layer upserts on these, so they must depend only on what identifies the asset
 * (not on when or how it was scanned) and must never change format without a migration.
 */
import { createHash } from 'node:crypto';
import net from 'node:net';
import type { CertificateObservation, FindingObservation, HostObservation, ServiceObservation, WebObservation } from './types.js';

/** `[::1]` for IPv6 so `host:port` stays unambiguous; names are lower-cased (DNS is case-insensitive). */
export function hostForKey(host: string): string {
  return net.isIPv6(host) ? `[${host.toLowerCase()}]` : host.toLowerCase();
}

export function hostAssetKey(obs: Pick<HostObservation, 'host'>): string {
  return `host:${obs.host.toLowerCase()}`;
}

export function serviceAssetKey(obs: Pick<ServiceObservation, 'address' | 'port' | 'transport'>): string {
  return `service:${hostForKey(obs.address)}:${obs.port}/${obs.transport}`;
}

/** The endpoint as probed (scheme, host, port), not the final URL: redirects may vary between scans. */
export function webAssetKey(obs: Pick<WebObservation, 'scheme' | 'host' | 'port'>): string {
  return `web:${obs.scheme}://${hostForKey(obs.host)}:${obs.port}`;
}

/** A certificate is the same asset wherever it is served, so its key is its fingerprint. */
export function certificateAssetKey(obs: Pick<CertificateObservation, 'fingerprint256'>): string {
  return `certificate:sha256:${obs.fingerprint256.replace(/:/g, '').toLowerCase()}`;
}

/** sha256 over the JSON of `[checkId, assetKey, matcher]`; JSON keeps the parts unambiguous. */
export function findingFingerprint(parts: FindingObservation['fingerprintParts']): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}
