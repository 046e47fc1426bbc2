import type { Prisma } from '../../db.js';
import {
  certificateAssetKey,
  hostAssetKey,
  serviceAssetKey,
  webAssetKey,
  type CertificateObservation,
  type HostObservation,
  type ServiceObservation,
  type WebObservation,
} from '../../scanner/index.js';
import { assetFieldChanges, recordChanges } from '../changes/record.js';
import type { ChangeInput } from '../changes/types.js';

type Tx = Prisma.TransactionClient;
type AssetKindName = 'host' | 'service' | 'web' | 'certificate';

/** Who is writing: the scan (or tool) that saw these things, and when. */
export interface IngestScope {
  workspaceId: string;
  /** The scanned target: every asset written is linked to it (and it becomes the asset's targetId). */
  targetId: string | null;
  scanId: string | null;
  /** The workspace setting isAutoEnableAssetAfterDiscovered, for assets seen for the first time. */
  autoEnable: boolean;
  now: Date;
}

export interface AssetInput {
  kind: AssetKindName;
  key: string;
  value: string;
  data: Prisma.InputJsonValue;
  parentKey?: string;
  /**
   * The writer knows less than a scan may already have stored (e.g. a tool's report): an existing row only
   * gets a new lastSeenAt and keeps its value, data, parent and last scan.
   */
  preserveExisting?: boolean;
  /** More targets this asset was seen through (e.g. those whose scope covers a tool's report). */
  targetIds?: string[];
}

export interface IngestedAssets {
  created: { id: string; kind: AssetKindName; key: string }[];
  idByKey: Map<string, string>;
}

/** Assets that had gone (an asset.gone event newer than their last sighting) among these: they reappear now. */
async function goneAssetIds(tx: Tx, rows: { id: string; lastSeenAt: Date }[]): Promise<Set<string>> {
  if (!rows.length) return new Set();
  const gone = await tx.changeEvent.groupBy({
    by: ['assetId'],
    where: { assetId: { in: rows.map((row) => row.id) }, type: 'asset.gone' },
    _max: { at: true },
  });
  const goneAt = new Map(gone.map((group) => [group.assetId, group._max.at]));
  return new Set(rows.filter((row) => (goneAt.get(row.id) ?? 0) > row.lastSeenAt).map((row) => row.id));
}

/** Observations from the scan engine as inventory rows (natural keys from the engine's asset-keys). */
export function assetFromObservation(observation: HostObservation | ServiceObservation | WebObservation | CertificateObservation): AssetInput {
  switch (observation.kind) {
    case 'host': {
      const { kind: _kind, ...data } = observation;
      return { kind: 'host', key: hostAssetKey(observation), value: observation.host, data: data as unknown as Prisma.InputJsonValue };
    }
    case 'service': {
      const { kind: _kind, ...data } = observation;
      return {
        kind: 'service',
        key: serviceAssetKey(observation),
        value: `${observation.address.includes(':') ? `[${observation.address}]` : observation.address}:${observation.port}`,
        data: data as unknown as Prisma.InputJsonValue,
        parentKey: hostAssetKey({ host: observation.host ?? observation.address }),
      };
    }
    case 'web': {
      const { kind: _kind, ...data } = observation;
      return {
        kind: 'web',
        key: webAssetKey(observation),
        value: observation.url,
        data: data as unknown as Prisma.InputJsonValue,
        parentKey: serviceAssetKey({ address: observation.address, port: observation.port, transport: 'tcp' }),
      };
    }
    case 'certificate': {
      const { kind: _kind, ...data } = observation;
      return {
        kind: 'certificate',
        key: certificateAssetKey(observation),
        value: observation.subjectCN ?? observation.subject,
        data: data as unknown as Prisma.InputJsonValue,
        parentKey: serviceAssetKey({ address: observation.address, port: observation.port, transport: 'tcp' }),
      };
    }
  }
}

/**
 * Upserts assets by natural key inside the caller's transaction: a thing seen again is the same row with
 * a new lastSeenAt; parents are linked by key (within this batch or already stored).
 */
export async function upsertAssets(tx: Tx, scope: IngestScope, inputs: AssetInput[]): Promise<IngestedAssets> {
  const unique = new Map<string, AssetInput>();
  // One asset reported several times (e.g. the host of many URLs) is linked to every target any report named.
  const linkedTargets = new Map<string, Set<string>>();
  for (const input of inputs) {
    unique.set(input.key, input);
    const targets = linkedTargets.get(input.key) ?? new Set(scope.targetId ? [scope.targetId] : []);
    for (const targetId of input.targetIds ?? []) targets.add(targetId);
    linkedTargets.set(input.key, targets);
  }
  const keys = [...unique.keys()];
  const parentKeys = [...new Set([...unique.values()].map((input) => input.parentKey).filter((key): key is string => !!key))];
  const existing = await tx.asset.findMany({
    where: { workspaceId: scope.workspaceId, key: { in: [...new Set([...keys, ...parentKeys])] } },
    select: { id: true, key: true, kind: true, data: true, lastSeenAt: true },
  });
  const idByKey = new Map(existing.map((row) => [row.key, row.id]));
  // What was stored before this write: the change feed compares it with the new observation.
  const storedByKey = new Map(existing.filter((row) => unique.has(row.key)).map((row) => [row.key, row]));
  const reappearing = await goneAssetIds(tx, [...storedByKey.values()]);
  const changes: ChangeInput[] = [];
  const feed = { workspaceId: scope.workspaceId, at: scope.now, scanId: scope.scanId, targetId: scope.targetId };
  const created: IngestedAssets['created'] = [];
  // Parents first (host before service before web/certificate), so their ids are known.
  const order: AssetKindName[] = ['host', 'service', 'web', 'certificate'];
  const sorted = [...unique.values()].sort((a, b) => order.indexOf(a.kind) - order.indexOf(b.kind));
  for (const input of sorted) {
    const parentId = input.parentKey ? (idByKey.get(input.parentKey) ?? null) : null;
    const seen = {
      value: input.value,
      data: input.data,
      lastSeenAt: scope.now,
      lastScanId: scope.scanId,
      ...(scope.targetId ? { targetId: scope.targetId } : {}),
    };
    const id = idByKey.get(input.key);
    const identity = { kind: input.kind, key: input.key, value: input.value };
    if (id && reappearing.has(id)) changes.push({ ...feed, type: 'asset.discovered', assetId: id, data: { ...identity, reappeared: true } });
    const stored = storedByKey.get(input.key);
    if (id && stored && !input.preserveExisting) {
      const fieldChanges = assetFieldChanges(input.kind, stored.data, input.data);
      if (fieldChanges.length) changes.push({ ...feed, type: 'asset.changed', assetId: id, data: { ...identity, changes: fieldChanges } });
    }
    if (id && input.preserveExisting) {
      await tx.asset.update({ where: { id }, data: { lastSeenAt: scope.now, ...(scope.scanId ? { lastScanId: scope.scanId } : {}) } });
    } else if (id) {
      await tx.asset.update({ where: { id }, data: { ...seen, ...(parentId ? { parentId } : {}) } });
    } else {
      const row = await tx.asset.create({
        data: { ...seen, workspaceId: scope.workspaceId, kind: input.kind, key: input.key, parentId, enabled: scope.autoEnable, firstSeenAt: scope.now },
        select: { id: true },
      });
      idByKey.set(input.key, row.id);
      created.push({ id: row.id, kind: input.kind, key: input.key });
      changes.push({ ...feed, type: 'asset.discovered', assetId: row.id, data: identity });
    }
  }
  await recordChanges(tx, changes);
  await linkAssetsToTargets(
    tx,
    [...linkedTargets].flatMap(([key, targetIds]) => [...targetIds].map((targetId) => ({ assetId: idByKey.get(key)!, targetId }))),
    scope.now,
  );
  return { created, idByKey };
}

/**
 * Records that assets were seen through targets: a new pair is linked (first seen now), a known one only
 * moves its lastSeenAt. One insert and one update per target, inside the caller's transaction.
 */
async function linkAssetsToTargets(tx: Tx, links: { assetId: string; targetId: string }[], now: Date): Promise<void> {
  const byTarget = new Map<string, string[]>();
  for (const { assetId, targetId } of links) {
    const assetIds = byTarget.get(targetId) ?? [];
    assetIds.push(assetId);
    byTarget.set(targetId, assetIds);
  }
  for (const [targetId, assetIds] of byTarget) {
    await tx.assetTarget.createMany({ data: assetIds.map((assetId) => ({ assetId, targetId, firstSeenAt: now, lastSeenAt: now })), skipDuplicates: true });
    await tx.assetTarget.updateMany({ where: { targetId, assetId: { in: assetIds } }, data: { lastSeenAt: now } });
  }
}
