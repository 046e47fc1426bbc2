import type { Prisma } from '../../db.js';
import type { AppDeps, ServiceContext } from '../../context.js';
import { assertCan, requireAdmin, requireViewer, requireWorkspaceId } from '../../auth/authz.js';
import { NotFoundError } from '../../errors.js';
import { isUuid } from '../../auth/authz.js';
import { escapeLike, pageEnvelope, pageWindow, type Page } from '../../pagination.js';
import { validate } from '../../validate.js';
import type { ActorKind, AuditSurface } from './record.js';
import { listAuditLogsInput, type AuditLogFilter, type ListAuditLogsInput } from './schemas.js';

export interface AuditLogRow {
  id: string;
  at: Date;
  workspaceId: string | null;
  actorKind: ActorKind;
  actorId: string | null;
  actorDisplay: string | null;
  surface: AuditSurface;
  operation: string;
  entityIds: string[];
  outcome: string;
  clientAddress: string;
  requestId: string | null;
}

/** Newest first; the id breaks ties between entries of the same millisecond. */
export const AUDIT_ORDER: Prisma.AuditLogOrderByWithRelationInput[] = [{ at: 'desc' }, { id: 'desc' }];

/** The filters as a where clause (the scope's workspace condition is added by the caller). */
export function auditLogWhere(filter: AuditLogFilter): Prisma.AuditLogWhereInput {
  const and: Prisma.AuditLogWhereInput[] = [];
  if (filter.since || filter.until) and.push({ at: { ...(filter.since ? { gte: filter.since } : {}), ...(filter.until ? { lt: filter.until } : {}) } });
  if (filter.actor) and.push({ OR: [{ actorId: filter.actor }, { actorDisplay: { equals: filter.actor, mode: 'insensitive' } }] });
  if (filter.actorKind) and.push({ actorKind: filter.actorKind });
  if (filter.operation) and.push({ operation: { contains: escapeLike(filter.operation), mode: 'insensitive' } });
  if (filter.outcome) and.push({ outcome: filter.outcome });
  return and.length ? { AND: and } : {};
}

/**
 * Who may read which entries: a workspace's owners its entries; instance administrators every entry of the
 * instance (`scope: 'instance'`). Members, and workspace API keys (member level), are refused (403).
 */
export async function auditScopeWhere(ctx: ServiceContext, scope: 'workspace' | 'instance', workspaceId?: string): Promise<Prisma.AuditLogWhereInput> {
  requireViewer(ctx);
  if (scope === 'instance') {
    requireAdmin(ctx);
    return {};
  }
  if (!workspaceId || !isUuid(workspaceId)) throw new NotFoundError('Workspace');
  await assertCan(ctx, 'audit:read', { workspaceId });
  return { workspaceId };
}

/** REST's list: the workspace of X-Workspace-Id (owners), or the whole instance (administrators). */
export async function listAuditLogs(ctx: ServiceContext, input: ListAuditLogsInput = {}): Promise<Page<AuditLogRow>> {
  requireViewer(ctx);
  const { page, limit, scope, ...filter } = validate(listAuditLogsInput, input);
  const scoped = await auditScopeWhere(ctx, scope, scope === 'workspace' ? requireWorkspaceId(ctx) : undefined);
  const where: Prisma.AuditLogWhereInput = { AND: [scoped, auditLogWhere(filter)] };
  const [data, total] = await Promise.all([
    ctx.deps.prisma.auditLog.findMany({ where, orderBy: AUDIT_ORDER, ...pageWindow(page, limit) }),
    ctx.deps.prisma.auditLog.count({ where }),
  ]);
  // The columns hold only what record.ts writes: its kinds and surfaces.
  return pageEnvelope(data as AuditLogRow[], total, page, limit);
}

/**
 * Retention: removes entries older than AUDIT_RETENTION_DAYS (before `now` minus that many days). Run by
 * the workers periodically (retention.ts); every worker process may run it, the DELETE is idempotent.
 */
export async function deleteExpiredAuditLogs(deps: Pick<AppDeps, 'prisma' | 'env'>, now = new Date()): Promise<number> {
  const cutoff = new Date(now.getTime() - deps.env.AUDIT_RETENTION_DAYS * 86_400_000);
  const { count } = await deps.prisma.auditLog.deleteMany({ where: { at: { lt: cutoff } } });
  return count;
}
