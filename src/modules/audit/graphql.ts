import { builder } from '../../graphql/builder.js';
import { validate } from '../../validate.js';
import type { ServiceContext } from '../../context.js';
import { ACTOR_KINDS, AUDIT_SURFACES } from './record.js';
import { listAuditLogsInput } from './schemas.js';
import { AUDIT_ORDER, auditLogWhere, auditScopeWhere } from './service.js';

const AuditActorKind = builder.enumType('AuditActorKind', { values: ACTOR_KINDS.map((kind) => kind.replace('-', '_').toUpperCase()) });
const AuditSurface = builder.enumType('AuditSurface', { values: AUDIT_SURFACES.map((surface) => surface.toUpperCase()) });

builder.prismaObject('AuditLog', {
  description: 'One write through a front door: who, what, when, from where, and how it ended. Never a body or a secret.',
  fields: (t) => ({
    id: t.exposeID('id'),
    at: t.expose('at', { type: 'DateTime' }),
    workspaceId: t.exposeString('workspaceId', { nullable: true, description: 'Null for instance-level writes.' }),
    actorKind: t.field({ type: AuditActorKind, resolve: (entry) => entry.actorKind.replace('-', '_').toUpperCase() }),
    actorId: t.exposeString('actorId', { nullable: true, description: "The user's id, or the token's or key's id." }),
    actorDisplay: t.exposeString('actorDisplay', { nullable: true, description: "The user's e-mail, or the key's prefix; never a secret." }),
    surface: t.field({ type: AuditSurface, resolve: (entry) => entry.surface.toUpperCase() }),
    operation: t.exposeString('operation', { description: '`PATCH /api/assets/{id}`, `mutation createTarget`, `mcp start_scan`.' }),
    entityIds: t.exposeStringList('entityIds'),
    outcome: t.exposeString('outcome', { description: '`success`, or the error code the write ended with.' }),
    clientAddress: t.exposeString('clientAddress'),
    requestId: t.exposeString('requestId', { nullable: true }),
  }),
});

/** The filter arguments both connections take, checked by the same schema as REST's query string. */
const filterArgs = builder.args((t) => ({
  since: t.field({ type: 'DateTime', description: 'Entries at or after this instant.' }),
  until: t.field({ type: 'DateTime', description: 'Entries before this instant.' }),
  actor: t.string({ description: "The actor's id, e-mail or key prefix." }),
  actorKind: t.field({ type: AuditActorKind }),
  operation: t.string({ description: 'Text the operation contains.' }),
  outcome: t.string({ description: '`success` or an error code.' }),
}));

type FilterArgs = object;

function filterOf(args: FilterArgs) {
  const present: Record<string, unknown> = Object.fromEntries(
    Object.entries(args).filter(([key, value]) => value != null && key !== 'first' && key !== 'after' && key !== 'last' && key !== 'before'),
  );
  if (typeof present.actorKind === 'string') present.actorKind = present.actorKind.toLowerCase().replace('_', '-');
  const { page: _page, limit: _limit, scope: _scope, ...filter } = validate(listAuditLogsInput, present);
  return auditLogWhere(filter);
}

async function whereFor(ctx: ServiceContext, scope: 'workspace' | 'instance', workspaceId: string | undefined, args: FilterArgs) {
  return { AND: [await auditScopeWhere(ctx, scope, workspaceId), filterOf(args)] };
}

builder.prismaObjectField('Workspace', 'auditLogs', (t) =>
  t.prismaConnection(
    {
      type: 'AuditLog',
      cursor: 'id',
      nullable: true,
      description: "The workspace's audit log, newest first (owners; members get FORBIDDEN).",
      args: filterArgs,
      totalCount: async (workspace, args, ctx) => ctx.deps.prisma.auditLog.count({ where: await whereFor(ctx, 'workspace', workspace.id, args) }),
      resolve: async (query, workspace, args, ctx) =>
        ctx.deps.prisma.auditLog.findMany({ ...query, where: await whereFor(ctx, 'workspace', workspace.id, args), orderBy: AUDIT_ORDER }),
    },
    { name: 'WorkspaceAuditLogConnection' },
    { name: 'WorkspaceAuditLogEdge' },
  ),
);

builder.queryFields((t) => ({
  auditLogs: t.prismaConnection(
    {
      type: 'AuditLog',
      cursor: 'id',
      authScopes: { signedIn: true },
      description: "The instance's audit log, every workspace and instance-level writes, newest first (instance administrators).",
      args: filterArgs,
      totalCount: async (_parent, args, ctx) => ctx.deps.prisma.auditLog.count({ where: await whereFor(ctx, 'instance', undefined, args) }),
      resolve: async (query, _parent, args, ctx) =>
        ctx.deps.prisma.auditLog.findMany({ ...query, where: await whereFor(ctx, 'instance', undefined, args), orderBy: AUDIT_ORDER }),
    },
    { name: 'AuditLogConnection' },
    { name: 'AuditLogEdge' },
  ),
}));
