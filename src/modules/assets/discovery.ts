/**
 * What the discovery pipeline writes and reads: host candidates with their provenance, the out-of-scope names
 * an asset pointed at, and what earlier scans saw under a domain. Every writer takes the caller's transaction
 * client and opens none of its own, so a step's results commit (or roll back) together.
 */
import type { Prisma, PrismaClient } from '../../db.js';
import { escapeLike } from '../../pagination.js';
import { hostAssetKey, normalizeHostName, type CertificateObservation, type HostObservation, type WebObservation } from '../../scanner/index.js';
import { DISCOVERY_SOURCES, type NameOrigin } from '../../scanner/discovery/types.js';
import { isSubdomainOrSelf } from '../../scanner/discovery/scope.js';
import { assetFromObservation, upsertAssets, type IngestScope } from './ingest.js';

type Tx = Prisma.TransactionClient;
/** Readers work on the client or inside a transaction alike. */
type Reader = PrismaClient | Tx;

/** Asset.references keeps the newest this many names. */
export const MAX_ASSET_REFERENCES = 200;
/** `from` is a name, key, URL or address: longer text is cut (the column is for people to read, not a log). */
const MAX_FROM_LENGTH = 2048;
/** Names per `IN (...)` list: far below PostgreSQL's bind-parameter limit. */
const IN_CHUNK = 5000;

export interface DiscoveredHostInput {
  observation: HostObservation;
  /** Every reason the name was found (one provenance row per source). */
  origins: NameOrigin[];
  /** The asset that pointed at it, when the pipeline knows its key (a certificate, a web page). */
  fromAssetKey?: string;
}

export interface RecordedHosts {
  /** Ids of the assets created by this call (a dismissed candidate keeps its row, so it is never created again). */
  created: string[];
  /** Lower-case host name → asset id, for every host recorded. */
  idByName: Map<string, string>;
  /** Lower-case names whose asset is enabled and not dismissed: the ones later steps may scan. */
  scannable: Set<string>;
}

interface ProvenanceEntry {
  assetId: string;
  origin: NameOrigin;
  fromAssetKey?: string;
}

/**
 * Upserts discovered hosts (linked to scope.targetId like every ingested asset). A new host is enabled when
 * the workspace auto-enables discoveries, else it waits as a candidate; an existing one keeps its enabled and
 * dismissed state. Each origin upserts its source's provenance row.
 */
export async function recordDiscoveredHosts(tx: Tx, scope: IngestScope, hosts: DiscoveredHostInput[]): Promise<RecordedHosts> {
  // One entry per name: a name reported twice keeps its last observation and every origin.
  const byName = new Map<string, { observation: HostObservation; origins: Omit<ProvenanceEntry, 'assetId'>[] }>();
  for (const host of hosts) {
    const name = host.observation.host.toLowerCase();
    const entry = byName.get(name) ?? { observation: host.observation, origins: [] };
    entry.observation = host.observation;
    for (const origin of host.origins) entry.origins.push({ origin, fromAssetKey: host.fromAssetKey });
    byName.set(name, entry);
  }
  if (byName.size === 0) return { created: [], idByName: new Map(), scannable: new Set() };
  for (const { origins } of byName.values()) for (const { origin } of origins) assertKnownSource(origin);

  const { created, idByKey } = await upsertAssets(
    tx,
    scope,
    [...byName.values()].map(({ observation }) => assetFromObservation(observation)),
  );
  const idByName = new Map([...byName.keys()].map((name) => [name, idByKey.get(hostAssetKey({ host: name }))!]));
  await upsertProvenance(
    tx,
    scope,
    [...byName].flatMap(([name, { origins }]) => origins.map((entry) => ({ ...entry, assetId: idByName.get(name)! }))),
  );
  const states = await tx.asset.findMany({ where: { id: { in: [...idByName.values()] } }, select: { id: true, enabled: true, dismissedAt: true } });
  const scannableIds = new Set(states.filter((row) => row.enabled && !row.dismissedAt).map((row) => row.id));
  return {
    created: created.map((asset) => asset.id),
    idByName,
    scannable: new Set([...idByName].filter(([, id]) => scannableIds.has(id)).map(([name]) => name)),
  };
}

/** Provenance for assets already stored (e.g. the target's own host, source `target`). They must be of scope's workspace. */
export async function recordProvenance(tx: Tx, scope: IngestScope, entries: Array<{ assetId: string; origin: NameOrigin }>): Promise<void> {
  if (entries.length === 0) return;
  for (const { origin } of entries) assertKnownSource(origin);
  const ids = [...new Set(entries.map((entry) => entry.assetId))];
  const present = await tx.asset.count({ where: { id: { in: ids }, workspaceId: scope.workspaceId } });
  // A programming error in the pipeline, never user input: provenance must not cross workspaces.
  if (present !== ids.length) throw new Error(`recordProvenance: ${ids.length - present} asset(s) are not assets of workspace ${scope.workspaceId}`);
  await upsertProvenance(tx, scope, entries);
}

/**
 * One row per (asset, source): a new one starts at scope.now; a known one moves to this sighting (from,
 * fromAssetId, scanId, lastSeenAt) and keeps its firstSeenAt. `from` names a stored asset when it is an asset
 * key of the workspace, or a host name with a host asset; else the entry's fromAssetKey may.
 */
async function upsertProvenance(tx: Tx, scope: IngestScope, entries: ProvenanceEntry[]): Promise<void> {
  const latest = new Map<string, ProvenanceEntry>();
  for (const entry of entries) latest.set(`${entry.assetId} ${entry.origin.source}`, entry);
  const pointerKeys = new Set([...latest.values()].flatMap(pointerKeysOf));
  const idByKey = new Map<string, string>();
  for (const keys of chunks([...pointerKeys])) {
    const rows = await tx.asset.findMany({ where: { workspaceId: scope.workspaceId, key: { in: keys } }, select: { id: true, key: true } });
    for (const row of rows) idByKey.set(row.key, row.id);
  }
  for (const entry of latest.values()) {
    // An asset pointing at itself (the target's host named as its own origin) says nothing.
    const fromAssetId =
      pointerKeysOf(entry)
        .map((key) => idByKey.get(key))
        .find((id) => id !== undefined && id !== entry.assetId) ?? null;
    const from = entry.origin.from?.trim().slice(0, MAX_FROM_LENGTH) || null;
    const sighting = { from, fromAssetId, scanId: scope.scanId, lastSeenAt: scope.now };
    await tx.assetDiscovery.upsert({
      where: { assetId_source: { assetId: entry.assetId, source: entry.origin.source } },
      create: { ...sighting, assetId: entry.assetId, workspaceId: scope.workspaceId, source: entry.origin.source, firstSeenAt: scope.now },
      update: sighting,
    });
  }
}

function pointerKeysOf(entry: Omit<ProvenanceEntry, 'assetId'>): string[] {
  const keys: string[] = [];
  const from = entry.origin.from?.trim();
  if (from) {
    keys.push(from);
    const host = hostNameOrNull(from);
    if (host) keys.push(hostAssetKey({ host }));
  }
  if (entry.fromAssetKey) keys.push(entry.fromAssetKey);
  return keys;
}

function assertKnownSource(origin: NameOrigin): void {
  if (!(DISCOVERY_SOURCES as readonly string[]).includes(origin.source)) {
    throw new TypeError(`Unknown discovery source "${String(origin.source)}" (known: ${DISCOVERY_SOURCES.join(', ')})`);
  }
}

/**
 * Unions out-of-scope names into assets' references (assets named by key in this workspace; unknown keys are
 * skipped). Newest last: a name seen again moves to the end; only the newest MAX_ASSET_REFERENCES stay.
 * Entries that are not host names or addresses are dropped. Answers how many assets changed.
 */
export async function recordReferences(tx: Tx, workspaceId: string, entries: Array<{ assetKey: string; names: string[] }>): Promise<number> {
  const namesByKey = new Map<string, string[]>();
  for (const { assetKey, names } of entries) {
    const valid = names.map(hostNameOrNull).filter((name): name is string => name !== null);
    if (valid.length) namesByKey.set(assetKey, [...(namesByKey.get(assetKey) ?? []), ...valid]);
  }
  let changed = 0;
  for (const keys of chunks([...namesByKey.keys()])) {
    const rows = await tx.asset.findMany({ where: { workspaceId, key: { in: keys } }, select: { id: true, key: true, references: true } });
    for (const row of rows) {
      const next = mergeReferences(row.references, namesByKey.get(row.key)!);
      if (next.length === row.references.length && next.every((name, index) => name === row.references[index])) continue;
      await tx.asset.update({ where: { id: row.id }, data: { references: next } });
      changed += 1;
    }
  }
  return changed;
}

/** Existing names first, then the incoming ones in order (each once, at its newest place), bounded. */
export function mergeReferences(existing: readonly string[], incoming: readonly string[]): string[] {
  const order = new Map<string, number>();
  [...existing, ...incoming].forEach((name, index) => {
    order.delete(name);
    order.set(name, index);
  });
  return [...order.keys()].slice(-MAX_ASSET_REFERENCES);
}

/** The names (as given) that are enabled, non-dismissed host assets of the workspace; names without an asset are not. */
export async function scannableHostNames(db: Reader, workspaceId: string, names: readonly string[]): Promise<Set<string>> {
  const namesByKey = new Map<string, string[]>();
  for (const name of names) {
    const key = hostAssetKey({ host: name });
    namesByKey.set(key, [...(namesByKey.get(key) ?? []), name]);
  }
  const scannable = new Set<string>();
  for (const keys of chunks([...namesByKey.keys()])) {
    const rows = await db.asset.findMany({
      where: { workspaceId, kind: 'host', key: { in: keys }, enabled: true, dismissedAt: null },
      select: { key: true },
    });
    for (const row of rows) for (const name of namesByKey.get(row.key)!) scannable.add(name);
  }
  return scannable;
}

/**
 * Which discovered names a scan may probe now: hosts in the inventory that are enabled and not dismissed, and —
 * when the workspace auto-enables what discovery finds — names the inventory does not know yet.
 */
export async function scannableDiscoveredNames(db: Reader, workspaceId: string, names: readonly string[], autoEnable: boolean): Promise<Set<string>> {
  const scannable = await scannableHostNames(db, workspaceId, names);
  if (!autoEnable) return scannable;
  const keys = [...new Set(names.map((name) => hostAssetKey({ host: name })))];
  const known = new Set<string>();
  for (const batch of chunks(keys)) {
    const rows = await db.asset.findMany({ where: { workspaceId, kind: 'host', key: { in: batch } }, select: { key: true } });
    for (const row of rows) known.add(row.key);
  }
  for (const name of names) if (!known.has(hostAssetKey({ host: name }))) scannable.add(name);
  return scannable;
}

export interface InventoryObservations {
  hosts: HostObservation[];
  web: WebObservation[];
  certificates: CertificateObservation[];
}

/**
 * What earlier scans saw at or under `domain` (hosts by name, web applications and certificates by the host
 * they were probed on), most recently seen first, at most `limit` of each kind, so discovery can pivot from it
 * (certificate SANs, links, CNAMEs). Dismissed assets are left out: someone said they are not ours.
 */
export async function inventoryObservations(
  prisma: Reader,
  workspaceId: string,
  domain: string,
  options: { limit?: number } = {},
): Promise<InventoryObservations> {
  const limit = options.limit ?? 500;
  const root = normalizeHostName(domain);
  const under = `.${root}`;
  const base = { workspaceId, dismissedAt: null } satisfies Prisma.AssetWhereInput;
  const byHostField = (kind: 'web' | 'certificate'): Prisma.AssetWhereInput => ({
    ...base,
    kind,
    OR: [{ data: { path: ['host'], equals: root } }, { data: { path: ['host'], string_ends_with: under } }],
  });
  const window = { orderBy: [{ lastSeenAt: 'desc' as const }, { id: 'desc' as const }], take: limit, select: { data: true } };
  const [hosts, web, certificates] = await Promise.all([
    prisma.asset.findMany({ ...window, where: { ...base, kind: 'host', OR: [{ value: root }, { value: { endsWith: escapeLike(under) } }] } }),
    prisma.asset.findMany({ ...window, where: byHostField('web') }),
    prisma.asset.findMany({ ...window, where: byHostField('certificate') }),
  ]);
  // The database's LIKE treats `_` as a wildcard: keep exactly the names at or under the domain.
  const observed = <K extends string>(kind: K, rows: { data: Prisma.JsonValue }[]) =>
    rows
      .map((row) => ({ ...(row.data as { host?: unknown }), kind }))
      .filter((observation) => typeof observation.host === 'string' && isSubdomainOrSelf(observation.host.toLowerCase(), root));
  return {
    hosts: observed('host', hosts) as unknown as HostObservation[],
    web: observed('web', web) as unknown as WebObservation[],
    certificates: observed('certificate', certificates) as unknown as CertificateObservation[],
  };
}

function hostNameOrNull(text: string): string | null {
  try {
    return normalizeHostName(text);
  } catch {
    return null;
  }
}

function chunks<T>(items: T[]): T[][] {
  const out: T[][] = [];
  for (let start = 0; start < items.length; start += IN_CHUNK) out.push(items.slice(start, start + IN_CHUNK));
  return out;
}
