/**
 * asset.gone and certificate changes: what a scan step covered and no longer saw. "Covered" is kept narrow on
 * purpose, because a false "gone" is worse than a late one:
 *
 * - ports step: a stored service at address A, port P is gone when this step scanned A (an in-scope address of a
 *   host the dns step resolved) with a port list containing P, and P was not open. Other addresses, other ports
 *   and the pivot step's probes cover nothing.
 * - http step: a stored web endpoint `web:<scheme>://<host>:<port>` is gone when this step probed (host, port) —
 *   an open service the ports step reported — without an error, and saw neither scheme there. A probe that failed
 *   (timeout, reset) covers nothing, and the web endpoints of a service that is gone are not probed at all, so they
 *   are not reported gone with it (the service's own asset.gone says it).
 * - tls step: for each service it inspected without an error, the certificate last stored for that very
 *   (host, address, port) — a child of the service whose data names them — is compared with the one presented now:
 *   a different one is an asset.changed of the service (field `certificate`, fingerprints before/after), and the old
 *   certificate, when no service in this step presents it, is gone.
 *
 * Never reported gone: hosts (a name that stops resolving is an asset.changed of its addresses), dismissed assets,
 * assets this scan saw in another step, and assets already gone (an asset.gone newer than their last sighting).
 */
import type { Prisma } from '../../db.js';
import { certificateAssetKey, normalizeHostName, serviceAssetKey, webAssetKey, type CertificateObservation } from '../../scanner/index.js';
import type { StepError } from '../../scanner/index.js';
import type { ChangeInput } from './types.js';

type Tx = Prisma.TransactionClient;

export interface GoneScope {
  workspaceId: string;
  targetId: string | null;
  scanId: string;
  now: Date;
}

interface StoredAsset {
  id: string;
  kind: 'host' | 'service' | 'web' | 'certificate';
  key: string;
  value: string;
  data: Prisma.JsonValue;
  lastSeenAt: Date;
  lastScanId: string | null;
  dismissedAt: Date | null;
  parentId: string | null;
}

const STORED_SELECT = {
  id: true,
  kind: true,
  key: true,
  value: true,
  data: true,
  lastSeenAt: true,
  lastScanId: true,
  dismissedAt: true,
  parentId: true,
} as const;

/** Those of `rows` that could be gone now: not dismissed, not seen by this scan, not gone already. */
async function stillPresent(tx: Tx, scope: GoneScope, rows: StoredAsset[]): Promise<StoredAsset[]> {
  const candidates = rows.filter((row) => !row.dismissedAt && row.lastScanId !== scope.scanId && row.lastSeenAt < scope.now);
  if (!candidates.length) return [];
  const gone = await tx.changeEvent.groupBy({
    by: ['assetId'],
    where: { assetId: { in: candidates.map((row) => row.id) }, type: 'asset.gone' },
    _max: { at: true },
  });
  const goneAt = new Map(gone.map((group) => [group.assetId, group._max.at]));
  return candidates.filter((row) => !((goneAt.get(row.id) ?? 0) > row.lastSeenAt));
}

function goneEvent(scope: GoneScope, row: StoredAsset, reason: string): ChangeInput {
  return {
    type: 'asset.gone',
    workspaceId: scope.workspaceId,
    at: scope.now,
    scanId: scope.scanId,
    targetId: scope.targetId,
    assetId: row.id,
    data: { kind: row.kind, key: row.key, value: row.value, lastSeenAt: row.lastSeenAt.toISOString(), reason },
  };
}

/** Ports step: services at scanned addresses whose port was in the list and is not open now. */
export async function goneServices(
  tx: Tx,
  scope: GoneScope,
  covered: { addresses: readonly string[]; ports: readonly number[] },
  openKeys: ReadonlySet<string>,
): Promise<ChangeInput[]> {
  if (!covered.addresses.length || !covered.ports.length) return [];
  const ports = new Set(covered.ports);
  const prefixes = [...new Set(covered.addresses.map((address) => serviceAssetKey({ address, port: 0, transport: 'tcp' }).replace(/0\/tcp$/, '')))];
  const rows = (await tx.asset.findMany({
    where: { workspaceId: scope.workspaceId, kind: 'service', OR: prefixes.map((prefix) => ({ key: { startsWith: prefix } })) },
    select: STORED_SELECT,
  })) as StoredAsset[];
  const missing = rows.filter((row) => {
    if (openKeys.has(row.key)) return false;
    const port = Number(/:(\d+)\/tcp$/.exec(row.key)?.[1]);
    return ports.has(port) && prefixes.some((prefix) => row.key === `${prefix}${port}/tcp`);
  });
  return (await stillPresent(tx, scope, missing)).map((row) => goneEvent(scope, row, 'port no longer open'));
}

/** A probe target of the http and tls steps: an open service, by the name it was probed with. */
export interface ProbedService {
  host: string;
  address: string;
  port: number;
}

/** `host:port` as the scan engine names a probe in its soft errors. */
function probeLabel(probe: ProbedService): string {
  return `${probe.host}:${probe.port}`;
}

export function probedServices(services: ReadonlyArray<{ address: string; host?: string; port: number }>, errors: readonly StepError[]): ProbedService[] {
  const failed = new Set(errors.map((error) => error.target));
  const probes: ProbedService[] = [];
  for (const service of services) {
    let host: string;
    try {
      host = normalizeHostName(service.host ?? service.address);
    } catch {
      continue;
    }
    const probe = { host, address: service.address, port: service.port };
    if (!failed.has(probeLabel(probe))) probes.push(probe);
  }
  return probes;
}

/** Http step: web endpoints of (host, port) pairs probed without an error that answered under neither scheme. */
export async function goneWebEndpoints(tx: Tx, scope: GoneScope, probed: readonly ProbedService[], seenKeys: ReadonlySet<string>): Promise<ChangeInput[]> {
  const keys = new Set(probed.flatMap((probe) => (['http', 'https'] as const).map((scheme) => webAssetKey({ scheme, host: probe.host, port: probe.port }))));
  for (const key of seenKeys) keys.delete(key);
  if (!keys.size) return [];
  const rows = (await tx.asset.findMany({
    where: { workspaceId: scope.workspaceId, kind: 'web', key: { in: [...keys] } },
    select: STORED_SELECT,
  })) as StoredAsset[];
  return (await stillPresent(tx, scope, rows)).map((row) => goneEvent(scope, row, 'endpoint no longer answers'));
}

const sameProbe = (data: Prisma.JsonValue, probe: ProbedService) => {
  const stored = (data ?? {}) as { host?: unknown; address?: unknown; port?: unknown };
  return typeof stored.host === 'string' && stored.host.toLowerCase() === probe.host && stored.address === probe.address && stored.port === probe.port;
};

/**
 * Tls step, read BEFORE its certificates are stored: per inspected service, the certificate it presented last
 * time against the one now. Answers the events to record once the new certificates are stored.
 */
export async function certificateChanges(
  tx: Tx,
  scope: GoneScope,
  probed: readonly ProbedService[],
  certificates: readonly CertificateObservation[],
): Promise<ChangeInput[]> {
  if (!probed.length) return [];
  const serviceKeys = [...new Set(probed.map((probe) => serviceAssetKey({ address: probe.address, port: probe.port, transport: 'tcp' })))];
  const services = await tx.asset.findMany({
    where: { workspaceId: scope.workspaceId, kind: 'service', key: { in: serviceKeys } },
    select: { id: true, key: true, value: true },
  });
  if (!services.length) return [];
  const serviceByKey = new Map(services.map((service) => [service.key, service]));
  const children = (await tx.asset.findMany({
    where: { workspaceId: scope.workspaceId, kind: 'certificate', parentId: { in: services.map((service) => service.id) } },
    select: STORED_SELECT,
    orderBy: [{ lastSeenAt: 'desc' }, { id: 'asc' }],
  })) as StoredAsset[];
  const present = new Set((await stillPresent(tx, scope, children)).map((row) => row.id));
  const presentedNow = new Set(certificates.map((certificate) => certificateAssetKey(certificate)));
  const events: ChangeInput[] = [];
  const goneIds = new Set<string>();
  for (const probe of probed) {
    const service = serviceByKey.get(serviceAssetKey({ address: probe.address, port: probe.port, transport: 'tcp' }));
    if (!service) continue;
    const now = certificates.find((certificate) => sameProbe(certificate as unknown as Prisma.JsonValue, probe));
    const nowKey = now ? certificateAssetKey(now) : null;
    const before = children.filter((row) => row.parentId === service.id && present.has(row.id) && sameProbe(row.data, probe) && row.key !== nowKey);
    if (!before.length) continue;
    const fingerprint = (row: StoredAsset) => ((row.data ?? {}) as { fingerprint256?: string }).fingerprint256 ?? null;
    events.push({
      type: 'asset.changed',
      workspaceId: scope.workspaceId,
      at: scope.now,
      scanId: scope.scanId,
      targetId: scope.targetId,
      assetId: service.id,
      data: {
        kind: 'service',
        key: service.key,
        value: service.value,
        changes: [{ field: 'certificate', before: fingerprint(before[0]!), after: now?.fingerprint256 ?? null }],
      },
    });
    for (const row of before) {
      if (presentedNow.has(row.key) || goneIds.has(row.id)) continue;
      goneIds.add(row.id);
      events.push(goneEvent(scope, row, 'certificate no longer presented'));
    }
  }
  return events;
}
