import type { RestContext, RestMeta } from './trpc.js';
import { toErrorBody } from './error-body.js';
import { actorOf, entityIdsOf, recordRequestWrite, workspaceOf, type AuditActor } from '../modules/audit/record.js';

/** What the tRPC middleware hands over once a mutation's outcome is decided. */
export interface RestWriteOutcome {
  ctx: RestContext;
  meta: RestMeta | undefined;
  path: string;
  rawInput: unknown;
  result: { ok: true; data: unknown } | { ok: false; error: unknown };
}

/** The route template an operation is known by: `PATCH /api/assets/{id}`, as the OpenAPI document names it. */
export function restOperationName(meta: RestMeta | undefined, path: string): string {
  const openapi = meta?.openapi;
  return openapi?.method && openapi.path ? `${openapi.method} ${openapi.path}` : `rest ${path}`;
}

/**
 * Sign-up and sign-in have no caller until they succeed: the entry names the account they answered with
 * (the result's `user`), never what was sent.
 */
function actorFor(ctx: RestContext, data: unknown): AuditActor {
  const actor = actorOf(ctx.svc);
  if (actor.kind !== 'anonymous' || !data || typeof data !== 'object') return actor;
  const user = (data as { user?: { id?: unknown; email?: unknown } }).user;
  if (typeof user?.id !== 'string') return actor;
  return { kind: 'user', id: user.id, display: typeof user.email === 'string' ? user.email : null };
}

/**
 * One audit entry per REST mutation (every POST, PUT, PATCH and DELETE procedure, the auth routes and tool
 * result submissions included), written after the outcome is decided and before the response leaves: one
 * INSERT, whose failure is logged and never changes the answer. The input is read only for entity ids.
 */
export async function auditRestWrite({ ctx, meta, path, rawInput, result }: RestWriteOutcome): Promise<void> {
  const input = rawInput && typeof rawInput === 'object' ? (rawInput as Record<string, unknown>) : undefined;
  const named = typeof input?.workspaceId === 'string' ? input.workspaceId : undefined;
  await recordRequestWrite(ctx.svc, {
    surface: 'rest',
    operation: restOperationName(meta, path),
    workspaceId: workspaceOf(ctx.svc, [named]),
    actor: actorFor(ctx, result.ok ? result.data : undefined),
    entityIds: entityIdsOf(input, result.ok ? result.data : undefined),
    outcome: result.ok ? 'success' : toErrorBody(result.error).code,
  });
}
