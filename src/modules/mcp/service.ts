import type { ServiceContext } from '../../context.js';
import { ConflictError, NotFoundError, ValidationError } from '../../errors.js';
import { assertCan, requireViewer } from '../../auth/authz.js';
import type { Prisma } from '../../db.js';
import { validate } from '../../validate.js';
import { createScopeGuard, isScopeError } from '../../scanner/scope.js';
import { publishWorkspaceEvent } from '../workspaces/events.js';
import { asSealed, maskHeaders, openHeaders, sealHeaders } from './headers.js';
import { MAX_PING_SECONDS, probeMcpServer, type McpPingResult } from './ping.js';
import {
  MAX_SERVERS_PER_WORKSPACE,
  mcpServerName,
  putMcpServerInput,
  toggleMcpServerInput,
  type McpTransport,
  type PutMcpServerInput,
  type ToggleMcpServerInput,
} from './schemas.js';

type McpServerConfig = Prisma.McpServerConfigGetPayload<object>;

/** One configuration as readers see it (2.5), secret header values masked; id and dates for GraphQL. */
export interface McpServerView {
  id: string;
  name: string;
  url: string;
  transport: McpTransport;
  headers: Record<string, string>;
  disabled: boolean;
  allowed_tools: string[];
  timeout: number;
  sse_read_timeout: number;
  createdAt: Date;
  updatedAt: Date;
}

function toView(_ctx: ServiceContext, row: McpServerConfig): McpServerView {
  return {
    id: row.id,
    name: row.name,
    url: row.url,
    transport: row.transport as McpTransport,
    headers: maskHeaders(asSealed(row.headersEncrypted)),
    disabled: row.disabled,
    allowed_tools: row.allowedTools,
    timeout: row.timeout,
    sse_read_timeout: row.sseReadTimeout,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

function scopeGuard(ctx: ServiceContext) {
  return createScopeGuard({ allowedNetworks: ctx.deps.env.SCAN_ALLOWED_NETWORKS });
}

function checkName(name: string): string {
  return validate(mcpServerName, name);
}

/**
 * The scans' scope policy, at save time: every address the host resolves to must be allowed (private,
 * loopback, link-local and metadata ranges are refused unless SCAN_ALLOWED_NETWORKS opens them). Checked
 * again when connecting, against what DNS answers then.
 */
async function assertUrlInScope(ctx: ServiceContext, url: string): Promise<void> {
  const fail = (message: string) => {
    throw new ValidationError(`Invalid input: url: ${message}`, [{ field: 'url', message }]);
  };
  try {
    await scopeGuard(ctx).resolveHost(new URL(url).hostname);
  } catch (error) {
    if (isScopeError(error)) fail((error as Error).message);
    fail(`its host ${new URL(url).hostname} does not resolve (${(error as NodeJS.ErrnoException).code ?? 'lookup failed'})`);
  }
}

async function findOrThrow(ctx: ServiceContext, workspaceId: string, name: string): Promise<McpServerConfig> {
  const row = await ctx.deps.prisma.mcpServerConfig.findUnique({ where: { workspaceId_name: { workspaceId, name } } });
  if (!row) throw new NotFoundError('MCP server configuration');
  return row;
}

export async function listMcpServers(ctx: ServiceContext, workspaceId: string): Promise<McpServerView[]> {
  await assertCan(ctx, 'mcp:read', { workspaceId });
  const rows = await ctx.deps.prisma.mcpServerConfig.findMany({ where: { workspaceId }, orderBy: [{ name: 'asc' }] });
  return rows.map((row) => toView(ctx, row));
}

/** Batch for `Workspace.mcpServers`: every requested workspace the caller belongs to, in two queries. */
export async function mcpServersOfWorkspaces(ctx: ServiceContext, workspaceIds: readonly string[]): Promise<McpServerView[][]> {
  const viewer = requireViewer(ctx);
  const ids = [...workspaceIds];
  const [rows, memberships] = await Promise.all([
    ctx.deps.prisma.mcpServerConfig.findMany({ where: { workspaceId: { in: ids } }, orderBy: [{ name: 'asc' }] }),
    ctx.deps.prisma.workspaceMember.findMany({ where: { userId: viewer.id, workspaceId: { in: ids } }, select: { workspaceId: true } }),
  ]);
  const member = new Set(memberships.map((row) => row.workspaceId));
  return ids.map((id) =>
    member.has(id) && (!ctx.actsFor || ctx.actsFor.workspaceId === id) ? rows.filter((row) => row.workspaceId === id).map((row) => toView(ctx, row)) : [],
  );
}

export async function getMcpServer(ctx: ServiceContext, workspaceId: string, name: string): Promise<McpServerView> {
  await assertCan(ctx, 'mcp:read', { workspaceId });
  return toView(ctx, await findOrThrow(ctx, workspaceId, checkName(name)));
}

/**
 * Creates or replaces the configuration called `name` (owners). Absent fields take their defaults; a header
 * sent as the mask keeps its stored value. Names are unique per workspace regardless of case.
 */
export async function putMcpServer(ctx: ServiceContext, workspaceId: string, name: string, input: PutMcpServerInput): Promise<McpServerView> {
  const data = validate(putMcpServerInput, input);
  checkName(name);
  await assertCan(ctx, 'mcp:manage', { workspaceId });
  await assertUrlInScope(ctx, data.url);
  const { row, created } = await ctx.deps.prisma.$transaction(async (tx) => {
    // One writer per workspace at a time: the name check and the cap hold under concurrent PUTs.
    const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM "workspace" WHERE id = ${workspaceId}::uuid FOR UPDATE`;
    if (!locked.length) throw new NotFoundError('Workspace');
    const existing = await tx.mcpServerConfig.findMany({ where: { workspaceId }, select: { id: true, name: true, headersEncrypted: true } });
    const same = existing.find((row) => row.name === name);
    const clash = existing.find((row) => row.name !== name && row.name.toLowerCase() === name.toLowerCase());
    if (clash) throw new ConflictError(`An MCP server named ${clash.name} already exists in this workspace (names are case-insensitive)`);
    if (!same && existing.length >= MAX_SERVERS_PER_WORKSPACE) throw new ConflictError(`A workspace may have at most ${MAX_SERVERS_PER_WORKSPACE} MCP servers`);
    const fields = {
      url: data.url,
      transport: data.transport,
      headersEncrypted: sealHeaders(ctx.deps.secrets, data.headers, asSealed(same?.headersEncrypted)),
      disabled: data.disabled,
      allowedTools: data.allowed_tools,
      timeout: data.timeout,
      sseReadTimeout: data.sse_read_timeout,
    };
    return same
      ? { row: await tx.mcpServerConfig.update({ where: { id: same.id }, data: fields }), created: false }
      : { row: await tx.mcpServerConfig.create({ data: { workspaceId, name, ...fields } }), created: true };
  });
  await publishWorkspaceEvent(ctx, workspaceId, created ? 'mcp_server.created' : 'mcp_server.updated', row.id);
  return toView(ctx, row);
}

export async function deleteMcpServer(ctx: ServiceContext, workspaceId: string, name: string): Promise<{ name: string }> {
  checkName(name);
  await assertCan(ctx, 'mcp:manage', { workspaceId });
  const row = await findOrThrow(ctx, workspaceId, name);
  await ctx.deps.prisma.mcpServerConfig.deleteMany({ where: { id: row.id } });
  await publishWorkspaceEvent(ctx, workspaceId, 'mcp_server.deleted', row.id);
  return { name };
}

export async function setMcpServerDisabled(ctx: ServiceContext, workspaceId: string, name: string, input: ToggleMcpServerInput): Promise<McpServerView> {
  const { disabled } = validate(toggleMcpServerInput, input);
  checkName(name);
  await assertCan(ctx, 'mcp:manage', { workspaceId });
  const { count } = await ctx.deps.prisma.mcpServerConfig.updateMany({ where: { workspaceId, name }, data: { disabled } });
  if (!count) throw new NotFoundError('MCP server configuration');
  const row = await findOrThrow(ctx, workspaceId, name);
  await publishWorkspaceEvent(ctx, workspaceId, 'mcp_server.updated', row.id);
  return toView(ctx, row);
}

/**
 * Connectivity check (members too: it reads): connects with the stored transport and headers, lists the
 * server's tools, and reports. Bounded by the configured timeout, at most MAX_PING_SECONDS. The scope policy
 * applies at connect time. Any failure is `{ok: false, error}`, never an error response.
 */
export async function pingMcpServer(ctx: ServiceContext, workspaceId: string, name: string): Promise<McpPingResult> {
  checkName(name);
  await assertCan(ctx, 'mcp:read', { workspaceId });
  const row = await findOrThrow(ctx, workspaceId, name);
  let headers: Record<string, string>;
  try {
    headers = openHeaders(ctx.deps.secrets, asSealed(row.headersEncrypted));
  } catch {
    return { ok: false, latencyMs: 0, error: 'The stored header values cannot be decrypted (was the instance secret changed?): save the configuration again' };
  }
  return probeMcpServer({
    url: row.url,
    transport: row.transport as McpTransport,
    headers,
    allowedTools: row.allowedTools,
    timeoutMs: Math.min(row.timeout, MAX_PING_SECONDS) * 1000,
    guard: scopeGuard(ctx),
  });
}
