import type { AppDeps, ServiceContext } from '../../context.js';
import { isUuid } from '../../auth/authz.js';

/**
 * Writing audit entries. The front doors (rest/audit-edge.ts, graphql/audit-mutations.ts, the MCP server)
 * call `recordWrite` once per write, after the outcome is decided. Only what is listed here is ever stored:
 * the operation's name, ids, the actor's e-mail or key prefix and the client address. Never a body.
 */

export const ACTOR_KINDS = ['user', 'api-token', 'workspace-key', 'tool-key', 'system', 'anonymous'] as const;
export type ActorKind = (typeof ACTOR_KINDS)[number];
export const AUDIT_SURFACES = ['rest', 'graphql', 'mcp'] as const;
export type AuditSurface = (typeof AUDIT_SURFACES)[number];

export interface AuditActor {
  kind: ActorKind;
  /** The user's id, or the token's / key's id. */
  id: string | null;
  /** The user's e-mail, or the key's shown prefix: never a secret. */
  display: string | null;
}

export interface AuditEntry {
  workspaceId: string | null;
  actor: AuditActor;
  surface: AuditSurface;
  operation: string;
  entityIds: string[];
  /** `success` or an error code. */
  outcome: string;
  clientAddress: string;
  requestId: string | null;
  /** Defaults to now. */
  at?: Date;
}

/** An entry is small and bounded whatever the request: ids are capped, text is cut. */
const MAX_ENTITY_IDS = 50;
const MAX_TEXT = 200;

/** Who made the request, as the audit log names them: the key or token when one was presented, else the user. */
export function actorOf(ctx: ServiceContext): AuditActor {
  if (ctx.toolKey) return { kind: 'tool-key', id: ctx.toolKey.id, display: ctx.toolKey.prefix };
  const viewer = ctx.viewer;
  if (!viewer) return { kind: 'anonymous', id: null, display: null };
  if (viewer.via === 'workspace-api-key') return { kind: 'workspace-key', id: viewer.credential?.id ?? null, display: viewer.credential?.prefix ?? null };
  if (viewer.via === 'api-token') return { kind: 'api-token', id: viewer.credential?.id ?? null, display: viewer.credential?.prefix ?? null };
  return { kind: 'user', id: viewer.id, display: viewer.email };
}

/**
 * The workspace an entry belongs to: one the caller was found to belong to while the request ran (the
 * role memo assertCan fills), preferring the one the request named. A workspace the caller is a stranger to
 * never gets the entry (anyone could otherwise write into another workspace's log by naming it); such
 * attempts are instance-level entries, which administrators read.
 */
export function workspaceOf(ctx: ServiceContext, named: (string | undefined)[] = []): string | null {
  if (ctx.toolKey) return ctx.toolKey.workspaceId;
  if (ctx.actsFor) return ctx.actsFor.workspaceId;
  const member = (id: string | undefined): id is string => Boolean(id && ctx.roleMemo.get(id));
  for (const id of [...named, ctx.workspaceId]) if (member(id)) return id;
  const known = [...ctx.roleMemo.entries()].filter(([, role]) => role).map(([id]) => id);
  return known.length === 1 ? known[0]! : null;
}

/** A server-made id (a UUID, or the auth library's user ids): never free text a client could have put there. */
const SERVER_ID = /^[A-Za-z0-9_-]{8,64}$/;

/**
 * The ids of the entities a write touched, found cheaply: UUIDs among the input's `id`, `ids` and `*Id`
 * fields (top level only; input is the client's, so anything not a UUID is ignored), and the `id` of the
 * result and of the objects directly inside it (what a creation made, e.g. `{ apiKey, key: { id } }`).
 */
export function entityIdsOf(input: unknown, result?: unknown): string[] {
  const ids = new Set<string>();
  if (input && typeof input === 'object' && !Array.isArray(input)) {
    for (const [key, value] of Object.entries(input)) {
      if (key !== 'id' && key !== 'ids' && !key.endsWith('Id') && !key.endsWith('Ids')) continue;
      for (const item of Array.isArray(value) ? value : [value]) if (typeof item === 'string' && isUuid(item)) ids.add(item.toLowerCase());
    }
  }
  const idOf = (value: unknown) => {
    const id = value && typeof value === 'object' ? (value as { id?: unknown }).id : undefined;
    if (typeof id === 'string' && SERVER_ID.test(id)) ids.add(id);
  };
  if (result && typeof result === 'object' && !(result instanceof Error)) {
    idOf(result);
    for (const value of Object.values(result)) if (!(value instanceof Date)) idOf(value);
  }
  return [...ids].slice(0, MAX_ENTITY_IDS);
}

/**
 * Appends one entry. An audit failure must never fail or change the request it describes: it is logged
 * (with the operation, never the input) and the request goes on.
 */
export async function recordWrite(deps: Pick<AppDeps, 'prisma' | 'log'>, entry: AuditEntry): Promise<void> {
  try {
    await deps.prisma.auditLog.create({
      data: {
        at: entry.at ?? new Date(),
        workspaceId: entry.workspaceId && isUuid(entry.workspaceId) ? entry.workspaceId : null,
        actorKind: entry.actor.kind,
        actorId: entry.actor.id?.slice(0, MAX_TEXT) ?? null,
        actorDisplay: entry.actor.display?.slice(0, MAX_TEXT) ?? null,
        surface: entry.surface,
        operation: entry.operation.slice(0, MAX_TEXT),
        entityIds: entry.entityIds.slice(0, MAX_ENTITY_IDS),
        outcome: entry.outcome.slice(0, MAX_TEXT),
        clientAddress: entry.clientAddress.slice(0, MAX_TEXT),
        requestId: entry.requestId?.slice(0, MAX_TEXT) ?? null,
      },
    });
  } catch (error) {
    deps.log.error({ err: error, operation: entry.operation, surface: entry.surface }, 'audit entry could not be written');
  }
}

/** Shorthand for the front doors: the actor, address and request id come from the request's context. */
export function recordRequestWrite(
  ctx: ServiceContext,
  fields: Pick<AuditEntry, 'surface' | 'operation' | 'entityIds' | 'outcome'> & { workspaceId?: string | null; actor?: AuditActor },
): Promise<void> {
  return recordWrite(ctx.deps, {
    workspaceId: fields.workspaceId === undefined ? workspaceOf(ctx) : fields.workspaceId,
    actor: fields.actor ?? actorOf(ctx),
    surface: fields.surface,
    operation: fields.operation,
    entityIds: fields.entityIds,
    outcome: fields.outcome,
    clientAddress: ctx.clientIp,
    requestId: ctx.requestId,
  });
}
