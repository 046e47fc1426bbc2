import type { ServiceContext } from '../../context.js';
import { NotFoundError, ValidationError } from '../../errors.js';
import { assertCan, requireAdmin, requireViewer } from '../../auth/authz.js';
import type { Prisma } from '../../db.js';
import { validate } from '../../validate.js';
import { createScopeGuard, isScopeError } from '../../scanner/scope.js';
import { putModelConfigInput, type PutModelConfigInput } from './schemas.js';

/**
 * The language model behind the assistant: an OpenAI-compatible endpoint configured for the whole instance
 * (instance administrators) or for one workspace (its owners); a workspace's own wins. The API key is sealed
 * with the instance's SecretBox and only ever leaves decrypted in the Authorization header of a model request.
 */
type ModelConfigRow = Prisma.ModelConfigGetPayload<object>;

export interface ModelConfigResponse {
  scope: 'workspace' | 'instance';
  workspaceId: string | null;
  baseUrl: string;
  model: string;
  hasApiKey: boolean;
  /** The key's first three and last four characters (keys of 16 characters or more), for recognising it. */
  apiKeyHint: string | null;
  updatedById: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** What the assistant needs to call the model; `apiKey` is decrypted here and nowhere else. */
export interface ModelEndpoint {
  scope: 'workspace' | 'instance';
  baseUrl: string;
  model: string;
  apiKey: string | null;
  /** Set when the stored key cannot be decrypted (the instance secret changed): the model is not called. */
  keyUnreadable?: boolean;
}

function openKey(ctx: ServiceContext, row: ModelConfigRow): { key: string | null; unreadable: boolean } {
  if (!row.apiKeyEncrypted) return { key: null, unreadable: false };
  try {
    return { key: ctx.deps.secrets.decrypt(row.apiKeyEncrypted), unreadable: false };
  } catch {
    return { key: null, unreadable: true };
  }
}

function hintOf(key: string | null): string | null {
  return key && key.length >= 16 ? `${key.slice(0, 3)}…${key.slice(-4)}` : null;
}

function toResponse(ctx: ServiceContext, row: ModelConfigRow): ModelConfigResponse {
  return {
    scope: row.workspaceId ? 'workspace' : 'instance',
    workspaceId: row.workspaceId,
    baseUrl: row.baseUrl,
    model: row.model,
    hasApiKey: row.apiKeyEncrypted !== null,
    apiKeyHint: hintOf(openKey(ctx, row).key),
    updatedById: row.updatedById,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

/** One row per scope (null = instance); should two ever exist, the latest wins. */
function findRow(ctx: ServiceContext | Prisma.TransactionClient, workspaceId: string | null) {
  const prisma = 'deps' in ctx ? ctx.deps.prisma : ctx;
  return prisma.modelConfig.findFirst({ where: { workspaceId }, orderBy: [{ updatedAt: 'desc' }, { id: 'desc' }] });
}

/**
 * The base URL is an outbound target: its host must not resolve into loopback, private or metadata ranges
 * unless SCAN_ALLOWED_NETWORKS admits them. Checked here for early feedback, and again at connect time.
 * A name that does not resolve now is accepted (the connect-time check still applies).
 */
async function assertBaseUrlInScope(ctx: ServiceContext, baseUrl: string): Promise<void> {
  const guard = createScopeGuard({ allowedNetworks: ctx.deps.env.SCAN_ALLOWED_NETWORKS });
  try {
    await guard.resolveHost(new URL(baseUrl).hostname);
  } catch (error) {
    if (isScopeError(error)) throw new ValidationError(`Invalid input: baseUrl: ${error.message}`, [{ field: 'baseUrl', message: error.message }]);
  }
}

async function put(ctx: ServiceContext, workspaceId: string | null, input: PutModelConfigInput): Promise<ModelConfigResponse> {
  const viewer = requireViewer(ctx);
  const { baseUrl, model, apiKey } = validate(putModelConfigInput, input);
  await assertBaseUrlInScope(ctx, baseUrl);
  const row = await ctx.deps.prisma.$transaction(async (tx) => {
    // One row per scope: concurrent PUTs of the same scope take turns.
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`model_config:${workspaceId ?? 'instance'}`}))`;
    const existing = await findRow(tx, workspaceId);
    // A kept key never follows the endpoint to another origin: whoever moves it must send the key (or null) again.
    if (existing?.apiKeyEncrypted && apiKey === undefined && new URL(existing.baseUrl).origin !== new URL(baseUrl).origin) {
      const message = 'must be sent again (or null) when baseUrl moves to another origin';
      throw new ValidationError(`Invalid input: apiKey: ${message}`, [{ field: 'apiKey', message }]);
    }
    const apiKeyEncrypted = apiKey === undefined ? (existing?.apiKeyEncrypted ?? null) : apiKey === null ? null : ctx.deps.secrets.encrypt(apiKey);
    const data = { baseUrl, model, apiKeyEncrypted, updatedById: viewer.id };
    return existing ? tx.modelConfig.update({ where: { id: existing.id }, data }) : tx.modelConfig.create({ data: { ...data, workspaceId } });
  });
  return toResponse(ctx, row);
}

async function remove(ctx: ServiceContext, workspaceId: string | null): Promise<{ id: string }> {
  const row = await findRow(ctx, workspaceId);
  if (!row) throw new NotFoundError('Model configuration');
  await ctx.deps.prisma.modelConfig.deleteMany({ where: { workspaceId } });
  return { id: row.id };
}

/** Members may see which model their workspace uses (never the key); owners change it. */
export async function getWorkspaceModelConfig(ctx: ServiceContext, workspaceId: string): Promise<ModelConfigResponse> {
  await assertCan(ctx, 'agent:use', { workspaceId });
  const row = await findRow(ctx, workspaceId);
  if (!row) throw new NotFoundError('Model configuration');
  return toResponse(ctx, row);
}

export async function putWorkspaceModelConfig(ctx: ServiceContext, workspaceId: string, input: PutModelConfigInput): Promise<ModelConfigResponse> {
  await assertCan(ctx, 'workspace:update', { workspaceId });
  return put(ctx, workspaceId, input);
}

export async function deleteWorkspaceModelConfig(ctx: ServiceContext, workspaceId: string): Promise<{ id: string }> {
  await assertCan(ctx, 'workspace:update', { workspaceId });
  return remove(ctx, workspaceId);
}

export async function getInstanceModelConfig(ctx: ServiceContext): Promise<ModelConfigResponse> {
  requireAdmin(ctx);
  const row = await findRow(ctx, null);
  if (!row) throw new NotFoundError('Model configuration');
  return toResponse(ctx, row);
}

export async function putInstanceModelConfig(ctx: ServiceContext, input: PutModelConfigInput): Promise<ModelConfigResponse> {
  requireAdmin(ctx);
  return put(ctx, null, input);
}

export async function deleteInstanceModelConfig(ctx: ServiceContext): Promise<{ id: string }> {
  requireAdmin(ctx);
  return remove(ctx, null);
}

/** For GraphQL: the workspace's own configuration, or the instance's when no workspace is named; null when none. */
export async function findModelConfig(ctx: ServiceContext, workspaceId: string | null): Promise<ModelConfigResponse | null> {
  if (workspaceId) await assertCan(ctx, 'agent:use', { workspaceId });
  else requireAdmin(ctx);
  const row = await findRow(ctx, workspaceId);
  return row ? toResponse(ctx, row) : null;
}

/** The endpoint the workspace's assistant uses: its own, else the instance's, else none (deterministic answers). */
export async function resolveModelEndpoint(ctx: ServiceContext, workspaceId: string): Promise<ModelEndpoint | null> {
  await assertCan(ctx, 'agent:use', { workspaceId });
  const row = (await findRow(ctx, workspaceId)) ?? (await findRow(ctx, null));
  if (!row) return null;
  const { key, unreadable } = openKey(ctx, row);
  return {
    scope: row.workspaceId ? 'workspace' : 'instance',
    baseUrl: row.baseUrl,
    model: row.model,
    apiKey: key,
    ...(unreadable ? { keyUnreadable: true } : {}),
  };
}
