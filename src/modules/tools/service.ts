import type { ServiceContext } from '../../context.js';
import { groupBuiltinAndOwn } from '../builtin-or-own.js';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../../errors.js';
import { assertCan, isUuid, requireViewer } from '../../auth/authz.js';
import type { Prisma } from '../../db.js';
import { validate } from '../../validate.js';
import { pageEnvelope, pageWindow, type Page } from '../../pagination.js';
import { publishWorkspaceEvent } from '../workspaces/events.js';
import { BUILTIN_TOOL_NAMES } from './catalogue.js';
import {
  listToolsInput,
  registerToolInput,
  setToolEnabledInput,
  updateToolInput,
  type ListToolsInput,
  type RegisterToolInput,
  type ToolCategory,
  type UpdateToolInput,
} from './schemas.js';

type ToolRow = Prisma.ToolGetPayload<object>;

/** A tool as one workspace sees it: `enabled` is that workspace's effective choice. */
export interface ToolResponse {
  id: string;
  name: string;
  category: ToolCategory;
  description: string;
  version: string;
  builtin: boolean;
  enabled: boolean;
  /** Null for built-in tools. */
  workspaceId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** Built-in tools first (in catalogue order of creation), then the workspace's own by name. */
const toolOrder: Prisma.ToolOrderByWithRelationInput[] = [{ builtin: 'desc' }, { createdAt: 'asc' }, { name: 'asc' }, { id: 'asc' }];

/** The tools a workspace sees: every built-in tool and its own custom ones. */
export function toolsOfWorkspaceWhere(workspaceId: string): Prisma.ToolWhereInput {
  return { OR: [{ builtin: true, workspaceId: null }, { workspaceId }] };
}

/** Built-in: instance switch AND the workspace's choice (absent means enabled). Custom: its own flag. */
export function effectiveEnabled(tool: Pick<ToolRow, 'builtin' | 'enabled'>, setting: { enabled: boolean } | undefined): boolean {
  return tool.enabled && (!tool.builtin || (setting?.enabled ?? true));
}

function toToolResponse(tool: ToolRow, setting: { enabled: boolean } | undefined): ToolResponse {
  return {
    id: tool.id,
    name: tool.name,
    // Written only through registerToolInput (or the catalogue), so always one of the categories.
    category: tool.category as ToolCategory,
    description: tool.description,
    version: tool.version,
    builtin: tool.builtin,
    enabled: effectiveEnabled(tool, setting),
    workspaceId: tool.workspaceId,
    createdAt: tool.createdAt,
    updatedAt: tool.updatedAt,
  };
}

const settingsOf = (workspaceId: string) => ({ settings: { where: { workspaceId }, select: { enabled: true } } }) as const;

/** One tool as the workspace sees it, or 404 (a tool of another workspace answers as one that does not exist). */
async function findToolOrThrow(ctx: ServiceContext, workspaceId: string, id: string) {
  const tool = isUuid(id)
    ? await ctx.deps.prisma.tool.findFirst({ where: { AND: [{ id }, toolsOfWorkspaceWhere(workspaceId)] }, include: settingsOf(workspaceId) })
    : null;
  if (!tool) throw new NotFoundError('Tool');
  return tool;
}

export async function listTools(ctx: ServiceContext, workspaceId: string, input: ListToolsInput = {}): Promise<Page<ToolResponse>> {
  const { page, limit, category } = validate(listToolsInput, input);
  await assertCan(ctx, 'tool:read', { workspaceId });
  const where: Prisma.ToolWhereInput = { AND: [toolsOfWorkspaceWhere(workspaceId), ...(category ? [{ category }] : [])] };
  const [rows, total] = await Promise.all([
    ctx.deps.prisma.tool.findMany({ where, orderBy: toolOrder, ...pageWindow(page, limit), include: settingsOf(workspaceId) }),
    ctx.deps.prisma.tool.count({ where }),
  ]);
  return pageEnvelope(
    rows.map((row) => toToolResponse(row, row.settings[0])),
    total,
    page,
    limit,
  );
}

/** Batch for `Workspace.tools`: every visible workspace's tools in two queries (the workspace itself was checked). */
export async function toolsOfWorkspaces(ctx: ServiceContext, workspaceIds: readonly string[]): Promise<ToolResponse[][]> {
  const viewer = requireViewer(ctx);
  const ids = [...workspaceIds];
  const [rows, memberships] = await Promise.all([
    ctx.deps.prisma.tool.findMany({
      where: { OR: [{ builtin: true, workspaceId: null }, { workspaceId: { in: ids } }] },
      orderBy: toolOrder,
      include: { settings: { where: { workspaceId: { in: ids } }, select: { workspaceId: true, enabled: true } } },
    }),
    ctx.deps.prisma.workspaceMember.findMany({ where: { userId: viewer.id, workspaceId: { in: ids } }, select: { workspaceId: true } }),
  ]);
  return groupBuiltinAndOwn(ids, rows, new Set(memberships.map((row) => row.workspaceId)), toToolResponse);
}

export async function getTool(ctx: ServiceContext, workspaceId: string, id: string): Promise<ToolResponse> {
  await assertCan(ctx, 'tool:read', { workspaceId });
  const tool = await findToolOrThrow(ctx, workspaceId, id);
  return toToolResponse(tool, tool.settings[0]);
}

function nameTaken(name: string): ConflictError {
  return new ConflictError(`A tool named ${name} already exists in this workspace or among the built-in tools`);
}

/** Registers a custom tool of the workspace (enabled); its API key is made with rotateToolApiKey. */
export async function registerTool(ctx: ServiceContext, workspaceId: string, input: RegisterToolInput): Promise<ToolResponse> {
  const data = validate(registerToolInput, input);
  await assertCan(ctx, 'tool:manage', { workspaceId });
  if (BUILTIN_TOOL_NAMES.has(data.name.toLowerCase())) throw nameTaken(data.name);
  const tool = await ctx.deps.prisma.tool
    .create({ data: { workspaceId, name: data.name, category: data.category, description: data.description ?? '', version: data.version ?? 'unknown' } })
    .catch((error: unknown) => {
      throw (error as { code?: unknown } | null)?.code === 'P2002' ? nameTaken(data.name) : error;
    });
  await publishWorkspaceEvent(ctx, workspaceId, 'tool.registered', tool.id);
  return toToolResponse(tool, undefined);
}

/**
 * Changes a custom tool's fields and/or `enabled`. A built-in tool belongs to the instance: a workspace may
 * only switch it on or off for itself.
 */
export async function updateTool(ctx: ServiceContext, workspaceId: string, id: string, input: UpdateToolInput): Promise<ToolResponse> {
  const { enabled, ...fields } = validate(updateToolInput, input);
  await assertCan(ctx, 'tool:manage', { workspaceId });
  const tool = await findToolOrThrow(ctx, workspaceId, id);
  const changed = Object.keys(fields).filter((key) => fields[key as keyof typeof fields] !== undefined);
  if (tool.builtin) {
    if (changed.length) {
      throw new ValidationError(
        'A built-in tool cannot be edited; only enabled can be set for this workspace',
        changed.map((field) => ({ field, message: 'cannot be changed on a built-in tool' })),
      );
    }
    return enabled === undefined ? toToolResponse(tool, tool.settings[0]) : setBuiltinEnabled(ctx, workspaceId, tool, enabled);
  }
  if (fields.name && fields.name !== tool.name && BUILTIN_TOOL_NAMES.has(fields.name.toLowerCase())) throw nameTaken(fields.name);
  const row = await ctx.deps.prisma.tool
    .update({ where: { id: tool.id }, data: { ...fields, ...(enabled === undefined ? {} : { enabled }) } })
    .catch((error: unknown) => {
      throw (error as { code?: unknown } | null)?.code === 'P2002' ? nameTaken(fields.name ?? tool.name) : error;
    });
  await publishWorkspaceEvent(ctx, workspaceId, 'tool.updated', tool.id);
  return toToolResponse(row, undefined);
}

async function setBuiltinEnabled(ctx: ServiceContext, workspaceId: string, tool: ToolRow, enabled: boolean): Promise<ToolResponse> {
  await ctx.deps.prisma.workspaceToolSetting.upsert({
    where: { workspaceId_toolId: { workspaceId, toolId: tool.id } },
    create: { workspaceId, toolId: tool.id, enabled },
    update: { enabled },
  });
  await publishWorkspaceEvent(ctx, workspaceId, 'tool.updated', tool.id);
  return toToolResponse(tool, { enabled });
}

/** Switches a tool on or off for the workspace (owners). Disabled tools' keys are refused on submission. */
export async function setToolEnabled(ctx: ServiceContext, workspaceId: string, id: string, input: { enabled: boolean }): Promise<ToolResponse> {
  const { enabled } = validate(setToolEnabledInput, input);
  return updateTool(ctx, workspaceId, id, { enabled });
}

/** Deletes a custom tool and its keys (owners). Findings it submitted stay: they belong to the workspace. */
export async function deleteTool(ctx: ServiceContext, workspaceId: string, id: string): Promise<{ id: string }> {
  await assertCan(ctx, 'tool:manage', { workspaceId });
  const tool = await findToolOrThrow(ctx, workspaceId, id);
  if (tool.builtin) throw new ForbiddenError('A built-in tool cannot be deleted; disable it for this workspace instead');
  await ctx.deps.prisma.tool.delete({ where: { id: tool.id } });
  await publishWorkspaceEvent(ctx, workspaceId, 'tool.deleted', tool.id);
  return { id: tool.id };
}

/**
 * Names of the built-in tools switched off for a workspace (instance-wide or by the workspace): scans skip
 * those steps. Read by the scans module; no caller check here, the scan was authorised when it started.
 */
export async function disabledBuiltinTools(prisma: Pick<Prisma.TransactionClient, 'tool'>, workspaceId: string): Promise<Set<string>> {
  const tools = await prisma.tool.findMany({
    where: { builtin: true, workspaceId: null },
    select: { name: true, enabled: true, builtin: true, settings: { where: { workspaceId }, select: { enabled: true } } },
  });
  return new Set(tools.filter((tool) => !effectiveEnabled(tool, tool.settings[0])).map((tool) => tool.name));
}
