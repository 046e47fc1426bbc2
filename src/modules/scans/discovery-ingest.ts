/**
 * Writes what the discovery steps found, inside the step's completing transaction: host assets with their
 * provenance (candidates when the workspace does not auto-enable), out-of-scope references on the asset that
 * pointed at them, and the takeover and zone-transfer findings.
 */
import type { Prisma } from '../../db.js';
import { hostAssetKey, type ScopeGuard } from '../../scanner/index.js';
import type { NameOrigin } from '../../scanner/discovery/index.js';
import { assetFromObservation, upsertAssets, type IngestScope } from '../assets/ingest.js';
import { recordDiscoveredHosts, recordReferences } from '../assets/discovery.js';
import { recordFindings, resolveUnseenFindings } from '../vulnerabilities/ingest.js';
import { hostObservationOf, type DiscoveryStepOutput, type PivotStepOutput } from './discovery-steps.js';
import { TAKEOVER_DANGLING_CHECK, TAKEOVER_UNCLAIMED_CHECK, ZONE_TRANSFER_CHECK, takeoverFinding, zoneTransferFinding } from './discovery-findings.js';

type Tx = Prisma.TransactionClient;

export interface DiscoveryIngested {
  createdAssets: string[];
  opened: string[];
  reopened: string[];
  fixed: string[];
}

/** Out-of-scope names grouped by the stored asset that pointed at them (`from` when it is an asset key, else `fallbackKey`). */
function referencesByAsset(outOfScope: Array<{ name: string; origin: NameOrigin }>, fallbackKey: string | null) {
  const byKey = new Map<string, Set<string>>();
  for (const { name, origin } of outOfScope) {
    const key = origin.from && /^(host|web|certificate|service):/.test(origin.from) ? origin.from : fallbackKey;
    if (!key) continue;
    const names = byKey.get(key) ?? new Set<string>();
    names.add(name);
    byKey.set(key, names);
  }
  return [...byKey].map(([assetKey, names]) => ({ assetKey, names: [...names] }));
}

export async function ingestDiscovery(tx: Tx, scope: IngestScope, output: DiscoveryStepOutput, guard: ScopeGuard): Promise<DiscoveryIngested> {
  const { report } = output;
  const found = report.hosts.filter((host) => host.name !== report.domain);
  const recorded = await recordDiscoveredHosts(
    tx,
    scope,
    found.map((host) => ({ observation: hostObservationOf(host.resolution, guard), origins: host.origins })),
  );
  const idByKey = new Map([...recorded.idByName].map(([name, id]) => [hostAssetKey({ host: name }), id]));
  const domainKey = hostAssetKey({ host: report.domain });
  const transfers = report.zoneTransfers.filter((transfer) => transfer.ok);
  const references = referencesByAsset(report.outOfScope, domainKey);
  // The domain's own host carries the zone-transfer findings and the references met at its records: it must exist.
  if (transfers.length || references.length || report.zoneTransfers.length) {
    const domainHost = report.hosts.find((host) => host.name === report.domain);
    const observation = domainHost
      ? hostObservationOf(domainHost.resolution, guard)
      : { kind: 'host' as const, host: report.domain, addresses: [], a: [], aaaa: [], cname: [], resolvedVia: 'dns' as const, outOfScope: [] };
    const { idByKey: ids, created } = await upsertAssets(tx, { ...scope, autoEnable: true }, [
      { ...assetFromObservation(observation), preserveExisting: true },
    ]);
    for (const [key, id] of ids) idByKey.set(key, id);
    recorded.created.push(...created.map((asset) => asset.id));
  }
  if (references.length) await recordReferences(tx, scope.workspaceId, references);

  const findings = [...report.takeovers.map(takeoverFinding), ...transfers.map(zoneTransferFinding)];
  const { opened, reopened } = await recordFindings(tx, scope, findings, idByKey);
  // A name discovery resolved again without a dangling CNAME, or a server that now refuses transfers, is fixed.
  const resolvedIds = found.map((host) => recorded.idByName.get(host.name)).filter((id): id is string => !!id);
  const fixedTakeovers = await resolveUnseenFindings(tx, scope, { checkIds: [TAKEOVER_DANGLING_CHECK], assetIds: resolvedIds, erroredPairs: new Set() });
  const domainId = idByKey.get(domainKey);
  const askedTransfers = report.zoneTransfers.length > 0 && domainId;
  const fixedTransfers = askedTransfers
    ? await resolveUnseenFindings(tx, scope, { checkIds: [ZONE_TRANSFER_CHECK], assetIds: [domainId], erroredPairs: new Set() })
    : [];
  return { createdAssets: recorded.created, opened, reopened, fixed: [...fixedTakeovers, ...fixedTransfers] };
}

export async function ingestPivot(tx: Tx, scope: IngestScope, output: PivotStepOutput, guard: ScopeGuard): Promise<DiscoveryIngested> {
  const recorded = await recordDiscoveredHosts(
    tx,
    scope,
    output.discovered.map((host) => ({ observation: hostObservationOf(host.resolution, guard), origins: host.origins })),
  );
  // What probing the new hosts saw belongs to enabled hosts: it is inventory like any scan's.
  const probed = [...output.services, ...output.web, ...output.certificates].map(assetFromObservation);
  // Hosts named by a takeover that the dns step saw (not new here) need their ids too.
  const takeoverHosts = output.takeovers
    .filter((candidate) => !recorded.idByName.has(candidate.name))
    .map((candidate) => ({
      ...assetFromObservation({
        kind: 'host',
        host: candidate.name,
        addresses: [],
        a: [],
        aaaa: [],
        cname: candidate.chain,
        resolvedVia: 'dns',
        outOfScope: [],
      }),
      preserveExisting: true,
    }));
  const upserted = await upsertAssets(tx, { ...scope, autoEnable: true }, [...takeoverHosts, ...probed]);
  const idByKey = new Map(upserted.idByKey);
  for (const [name, id] of recorded.idByName) idByKey.set(hostAssetKey({ host: name }), id);
  const references = referencesByAsset(output.outOfScope, null);
  if (references.length) await recordReferences(tx, scope.workspaceId, references);
  const { opened, reopened } = await recordFindings(tx, scope, output.takeovers.map(takeoverFinding), idByKey);
  // Pages of aliased hosts were looked at: an unclaimed-service page that is gone now is fixed.
  const examined = await upsertAssets(
    tx,
    { ...scope, autoEnable: true },
    output.examined.map((host) => ({
      ...assetFromObservation({ kind: 'host', host, addresses: [], a: [], aaaa: [], cname: [], resolvedVia: 'dns', outOfScope: [] }),
      preserveExisting: true,
    })),
  );
  const lookedAt = [...examined.idByKey.values()];
  const fixed = await resolveUnseenFindings(tx, scope, { checkIds: [TAKEOVER_UNCLAIMED_CHECK], assetIds: lookedAt, erroredPairs: new Set() });
  return { createdAssets: [...recorded.created, ...upserted.created.map((asset) => asset.id)], opened, reopened, fixed };
}
