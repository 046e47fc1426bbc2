/**
 * The one writer of the change feed. Callers pass their transaction client: an event commits (or rolls back)
 * with the change it describes. Whoever opens the transaction may `trackChanges(tx)` to learn what was
 * written, and publishes it after the commit (`publishChanges`), so live subscribers never see an event that
 * did not happen. Sinks registered with `addChangeSink` run inside the same transaction: that is where a
 * webhook delivery is enqueued, so it exists exactly when its event does.
 */
import type { AppDeps } from '../../context.js';
import type { Prisma } from '../../db.js';
import type { ChangeEventRecord, ChangeInput, ChangeType, FieldChange } from './types.js';

type Tx = Prisma.TransactionClient;

/** Runs inside the writing transaction with the rows just stored (e.g. to enqueue webhook deliveries). */
export type ChangeSink = (tx: Tx, events: readonly ChangeEventRecord[]) => Promise<void>;

const sinks: ChangeSink[] = [];
const tracked = new WeakMap<Tx, ChangeEventRecord[]>();

export function addChangeSink(sink: ChangeSink): () => void {
  sinks.push(sink);
  return () => {
    const index = sinks.indexOf(sink);
    if (index >= 0) sinks.splice(index, 1);
  };
}

/** The list every recordChanges on this transaction appends to; read it after the commit. */
export function trackChanges(tx: Tx): ChangeEventRecord[] {
  const list = tracked.get(tx) ?? [];
  tracked.set(tx, list);
  return list;
}

export async function recordChanges(tx: Tx, events: readonly ChangeInput[]): Promise<ChangeEventRecord[]> {
  if (!events.length) return [];
  const now = new Date();
  const rows = await tx.changeEvent.createManyAndReturn({
    data: events.map((event) => ({
      workspaceId: event.workspaceId,
      type: event.type,
      at: event.at ?? now,
      assetId: event.assetId ?? null,
      findingId: event.findingId ?? null,
      scanId: event.scanId ?? null,
      targetId: event.targetId ?? null,
      data: event.data as unknown as Prisma.InputJsonValue,
    })),
  });
  const records = rows.map((row) => ({ ...row, type: row.type as ChangeType, data: row.data as unknown as ChangeEventRecord['data'] }));
  tracked.get(tx)?.push(...records);
  for (const sink of sinks) await sink(tx, records);
  return records;
}

/** The payload of a change on the workspaceEvents topic: JSON-safe (it crosses Redis). */
export interface ChangePayload {
  id: string;
  type: ChangeType;
  at: string;
  assetId: string | null;
  findingId: string | null;
  scanId: string | null;
  targetId: string | null;
  data: unknown;
}

export function changePayloadOf(event: ChangeEventRecord): ChangePayload {
  return {
    id: event.id,
    type: event.type,
    at: event.at.toISOString(),
    assetId: event.assetId,
    findingId: event.findingId,
    scanId: event.scanId,
    targetId: event.targetId,
    data: event.data,
  };
}

/** After the commit: one workspace event per change; entityId is the asset, finding or scan it is about. */
export function publishChanges(deps: Pick<AppDeps, 'pubsub'>, events: readonly ChangeEventRecord[]): void {
  for (const event of events) {
    const about = event.type.split('.')[0];
    const entityId = (about === 'finding' ? event.findingId : about === 'asset' ? event.assetId : event.scanId) ?? event.id;
    deps.pubsub.publish('workspace:event', event.workspaceId, {
      type: event.type,
      workspaceId: event.workspaceId,
      entityId,
      at: event.at.toISOString(),
      change: changePayloadOf(event),
    });
  }
}

// ------------------------------------------------------------------------------------------------
// What counts as a change of an asset: the fields people act on, compared in a canonical form (sorted lists),
// so the order a resolver or server answered in is never a change. Everything else (timings, body hashes,
// headers, certificate day counts) moves on every scan and is left out.

type Data = Record<string, unknown>;

const sortedStrings = (value: unknown): string[] => (Array.isArray(value) ? value.map(String).sort() : []);
const firstHop = (value: unknown): string | null => (Array.isArray(value) && value.length ? String(value[0]).toLowerCase().replace(/\.$/, '') : null);
const optional = (value: unknown): unknown => (value === undefined || value === '' ? null : value);
const technologies = (value: unknown): string[] =>
  Array.isArray(value)
    ? [...new Set(value.map((tech: { name?: unknown; version?: unknown }) => (tech.version ? `${tech.name} ${tech.version}` : String(tech.name))))].sort()
    : [];

const TRACKED_FIELDS: Record<string, Record<string, (data: Data) => unknown>> = {
  // The first CNAME hop only: the dns step reports one hop, discovery the whole chain; the first is what both agree on.
  host: { addresses: (data) => sortedStrings(data.addresses), cname: (data) => firstHop(data.cname) },
  service: {
    banner: (data) => optional(data.banner),
    service: (data) => optional(data.service),
    product: (data) => optional(data.product),
    version: (data) => optional(data.version),
  },
  web: {
    status: (data) => optional(data.status),
    title: (data) => optional(data.title),
    server: (data) => optional(data.server),
    technologies: (data) => technologies(data.technologies),
    finalUrl: (data) => optional(data.finalUrl),
  },
  certificate: {},
};

/** The tracked fields whose value differs between the stored observation and the new one, in a fixed order. */
export function assetFieldChanges(kind: string, before: unknown, after: unknown): FieldChange[] {
  const fields = TRACKED_FIELDS[kind] ?? {};
  const old = (before ?? {}) as Data;
  const next = (after ?? {}) as Data;
  const changes: FieldChange[] = [];
  for (const [field, read] of Object.entries(fields)) {
    const was = read(old);
    const now = read(next);
    if (JSON.stringify(was) !== JSON.stringify(now)) changes.push({ field, before: was, after: now });
  }
  return changes;
}
