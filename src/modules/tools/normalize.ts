import net from 'node:net';
import type { Prisma } from '../../db.js';
import {
  hostAssetKey,
  hostForKey,
  serviceAssetKey,
  webAssetKey,
  type AssetRef,
  type FindingClassification,
  type FindingEvidence,
  type FindingObservation,
  type Severity,
} from '../../scanner/index.js';
import type { AssetInput } from '../assets/ingest.js';
import { SEVERITIES, type ToolAssetItem, type ToolFindingItem } from './schemas.js';

/**
 * Turns what external tools report (nuclei's -jsonl lines, or our JSON items) into the inventory rows and
 * finding observations native scans produce, with the same natural keys, so both dedupe into one row.
 * Pure: no database, no HTTP.
 */

/** Where something was seen, as a tool says it. */
export interface ToolLocation {
  url?: string;
  host?: string;
  port?: number;
  ip?: string;
}

export interface Located {
  /** In any order: upsertAssets links parents by key. */
  assets: AssetInput[];
  /** The most specific asset: the finding's. */
  asset: AssetRef;
}

const EVIDENCE_TEXT_LIMIT = 8192;
const EXTRACTED_LIMIT = 50;

function bounded(text: string, limit = EVIDENCE_TEXT_LIMIT): string {
  return text.length > limit ? `${text.slice(0, limit)}… [${text.length - limit} more characters]` : text;
}

function bareHost(host: string): string {
  return host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
}

/** A host name or IP literal, nothing else (no spaces, slashes, user info). */
function isHostLike(host: string): boolean {
  return net.isIP(host) !== 0 || /^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*\.?$/i.test(host);
}

/** The assets a location names: always the host; the service when the port and an address are known; the web endpoint for a URL. */
export function locate(location: ToolLocation, reportedBy: string): Located {
  let scheme: 'http' | 'https' | undefined;
  let host: string;
  let port: number | undefined = location.port;
  if (location.url) {
    const url = new URL(location.url);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`unsupported URL scheme ${url.protocol}`);
    scheme = url.protocol === 'https:' ? 'https' : 'http';
    host = bareHost(url.hostname);
    port = url.port ? Number(url.port) : scheme === 'https' ? 443 : 80;
  } else if (location.host) {
    host = bareHost(location.host.trim());
  } else {
    throw new Error('no location: give a URL, or a host (and port)');
  }
  if (!host || !isHostLike(host)) throw new Error(`not a host name or IP address: ${JSON.stringify(host.slice(0, 100))}`);
  const address = location.ip ?? (net.isIP(host) ? host : undefined);

  const hostKey = hostAssetKey({ host });
  const assets: AssetInput[] = [
    { kind: 'host', key: hostKey, value: host, data: { host, addresses: address ? [address] : [], reportedBy }, preserveExisting: true },
  ];
  let serviceKey: string | undefined;
  // Native services are keyed by address. A web endpoint without a known address hangs under its host (its
  // service is the one a scan finds); a bare host:port without one is keyed by the name the tool gave.
  if (port !== undefined && (address || !scheme)) {
    const serviceAddress = address ?? host;
    serviceKey = serviceAssetKey({ address: serviceAddress, port, transport: 'tcp' });
    assets.push({
      kind: 'service',
      key: serviceKey,
      value: `${hostForKey(serviceAddress)}:${port}`,
      data: { address: serviceAddress, host, port, transport: 'tcp', open: true, reportedBy } as Prisma.InputJsonValue,
      parentKey: hostKey,
      preserveExisting: true,
    });
  }
  if (scheme && port !== undefined) {
    const key = webAssetKey({ scheme, host, port });
    const url = new URL(`${scheme}://${hostForKey(host)}:${port}/`).href;
    assets.push({
      kind: 'web',
      key,
      value: url,
      data: { url, host, port, scheme, ...(address ? { address } : {}), reportedBy } as Prisma.InputJsonValue,
      parentKey: serviceKey ?? hostKey,
      preserveExisting: true,
    });
    return { assets, asset: { type: 'web', key, host, address, port } };
  }
  if (serviceKey) return { assets, asset: { type: 'service', key: serviceKey, host, address: address ?? host, port } };
  return { assets, asset: { type: 'host', key: hostKey, host, address } };
}

/** A finding as reported, before it is tied to an asset. */
export interface ReportedFinding {
  checkId: string;
  name: string;
  severity: Severity;
  description: string;
  remediation: string;
  /** Absent: the check id (as for native checks without a matcher). */
  matcher?: string;
  location: ToolLocation;
  evidence: FindingEvidence;
  classification?: FindingClassification;
}

/** The observation native ingestion takes; fingerprintParts `[checkId, assetKey, matcher]` as native checks make them. */
export function toObservation(finding: ReportedFinding, located: Located, source: string): FindingObservation {
  const matcher = finding.matcher || finding.checkId;
  return {
    kind: 'finding',
    checkId: finding.checkId,
    name: finding.name,
    severity: finding.severity,
    description: finding.description,
    remediation: finding.remediation,
    asset: located.asset,
    matcher,
    fingerprintParts: [finding.checkId, located.asset.key, matcher],
    evidence: finding.evidence,
    source,
    ...(finding.classification ? { classification: finding.classification } : {}),
  };
}

export function fromJsonItem(item: ToolFindingItem): ReportedFinding {
  return {
    checkId: item.checkId,
    name: item.name,
    severity: item.severity,
    description: item.description ?? '',
    remediation: item.remediation ?? '',
    matcher: item.matcher,
    location: { url: item.url, host: item.host, port: item.port, ip: item.ip },
    evidence: { ...(item.url ? { url: item.url } : {}), ...item.evidence },
    classification: item.classification,
  };
}

export function locationOfAssetItem(item: ToolAssetItem): ToolLocation {
  return { url: item.url, host: item.host, port: item.port, ip: item.ip };
}

// ---- nuclei -jsonl ---------------------------------------------------------------------------------------

export type NucleiLine = { kind: 'finding'; finding: ReportedFinding } | { kind: 'skipped'; reason: string };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

/** nuclei writes string slices as arrays; older versions and hand-written lines use a string. */
function stringList(value: unknown): string[] | undefined {
  const list = (Array.isArray(value) ? value : [value]).filter((entry): entry is string => typeof entry === 'string' && entry.trim() !== '');
  return list.length ? list.slice(0, 50).map((entry) => entry.trim().slice(0, 64)) : undefined;
}

function nucleiSeverity(value: unknown): Severity {
  if (value === undefined || value === null || value === '') return 'info';
  if (typeof value !== 'string') throw new Error('info.severity must be a string');
  const severity = value.trim().toLowerCase();
  // nuclei's `unknown` severity has no counterpart: it is reported as info.
  if (severity === 'unknown') return 'info';
  if (!(SEVERITIES as readonly string[]).includes(severity))
    throw new Error(`info.severity ${JSON.stringify(value.slice(0, 40))} is not one of: ${SEVERITIES.join(', ')}, unknown`);
  return severity as Severity;
}

function nucleiClassification(value: unknown): FindingClassification | undefined {
  if (!isRecord(value)) return undefined;
  const score = typeof value['cvss-score'] === 'number' ? value['cvss-score'] : Number.parseFloat(String(value['cvss-score'] ?? ''));
  const classification: FindingClassification = {
    ...(stringList(value['cve-id']) ? { cveId: stringList(value['cve-id']) } : {}),
    ...(stringList(value['cwe-id']) ? { cweId: stringList(value['cwe-id']) } : {}),
    ...(Number.isFinite(score) && score >= 0 && score <= 10 ? { cvssScore: score } : {}),
    ...(text(value['cvss-metrics']) ? { cvssMetrics: String(value['cvss-metrics']).slice(0, 256) } : {}),
  };
  return Object.keys(classification).length ? classification : undefined;
}

/** `host`, `host:port` or `[v6]:port` as nuclei prints non-HTTP matches (network, ssl, dns templates). */
function splitHostPort(value: string): { host: string; port?: number } {
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(value);
  if (v6) return { host: v6[1]!, port: v6[2] ? Number(v6[2]) : undefined };
  if (net.isIPv6(value)) return { host: value };
  const hostPort = /^([^:/\s]+):(\d+)$/.exec(value);
  if (hostPort) return { host: hostPort[1]!, port: Number(hostPort[2]) };
  return { host: value };
}

function nucleiLocation(event: Record<string, unknown>): { location: ToolLocation; matchedAt: string } {
  const matchedAt = text(event['matched-at']) ?? text(event.url) ?? text(event.host);
  if (!matchedAt) throw new Error('matched-at (or host) is required');
  const ip = text(event.ip) && net.isIP(String(event.ip).trim()) ? String(event.ip).trim() : undefined;
  if (/^https?:\/\//i.test(matchedAt)) {
    if (!URL.canParse(matchedAt)) throw new Error(`matched-at is not a valid URL: ${JSON.stringify(matchedAt.slice(0, 200))}`);
    return { location: { url: matchedAt, ip }, matchedAt };
  }
  // Other schemes (tls://, tcp://…) name a host and port.
  const withoutScheme = matchedAt.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').replace(/\/.*$/, '');
  const { host, port } = splitHostPort(withoutScheme);
  const fallbackPort = Number.parseInt(String(event.port ?? ''), 10);
  const resolvedPort = port ?? (Number.isInteger(fallbackPort) ? fallbackPort : undefined);
  if (resolvedPort !== undefined && !(resolvedPort >= 1 && resolvedPort <= 65535)) throw new Error(`port ${resolvedPort} is out of range`);
  return { location: { host, port: resolvedPort, ip }, matchedAt };
}

/**
 * One line of `nuclei -jsonl` output. Failure events (`matcher-status: false`, written with
 * -matcher-status) are skipped, not findings. The matcher is the matcher name, else the extractor name,
 * else the matched path (two paths of one template are two findings), else the template id.
 */
export function parseNucleiLine(line: string): NucleiLine {
  let event: unknown;
  try {
    event = JSON.parse(line);
  } catch {
    throw new Error('not valid JSON');
  }
  if (!isRecord(event)) throw new Error('must be a JSON object');
  if (event['matcher-status'] === false) return { kind: 'skipped', reason: 'not a match (matcher-status false)' };
  const templateId = text(event['template-id']);
  if (!templateId) throw new Error('template-id is required');
  if (templateId.length > 200) throw new Error('template-id is longer than 200 characters');
  const info = isRecord(event.info) ? event.info : {};
  const { location, matchedAt } = nucleiLocation(event);
  const path = location.url ? new URL(location.url).pathname : undefined;
  const matcher = text(event['matcher-name']) ?? text(event['extractor-name']) ?? (path && path !== '/' ? path : undefined);
  const extracted: NonNullable<FindingEvidence['extracted']> = {};
  const results = Array.isArray(event['extracted-results'])
    ? event['extracted-results']
        .filter((entry): entry is string => typeof entry === 'string')
        .slice(0, EXTRACTED_LIMIT)
        .map((entry) => bounded(entry, 1024))
    : [];
  if (results.length) extracted['extracted-results'] = results;
  if (text(event.type)) extracted.type = String(event.type).slice(0, 40);
  if (text(event['matcher-name'])) extracted['matcher-name'] = String(event['matcher-name']).slice(0, 200);
  if (location.ip) extracted.ip = location.ip;
  return {
    kind: 'finding',
    finding: {
      checkId: templateId,
      name: (text(info.name) ?? templateId).slice(0, 500),
      severity: nucleiSeverity(info.severity),
      description: (text(info.description) ?? '').slice(0, 10_000),
      remediation: (text(info.remediation) ?? '').slice(0, 10_000),
      matcher: matcher?.slice(0, 500),
      location,
      evidence: {
        url: matchedAt.slice(0, 2048),
        ...(text(event.request) ? { request: bounded(String(event.request)) } : {}),
        ...(text(event.response) ? { response: bounded(String(event.response)) } : {}),
        ...(Object.keys(extracted).length ? { extracted } : {}),
      },
      classification: nucleiClassification(info.classification),
    },
  };
}
