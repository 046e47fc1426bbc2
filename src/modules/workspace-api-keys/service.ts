import { hashBearerSecret } from '../../crypto/bearer-hash.js';
import { randomBytes } from 'node:crypto';
import type { AppDeps, ServiceContext, Viewer } from '../../context.js';
import { createServiceContext } from '../../context.js';
import { ConflictError, NotFoundError, UnauthenticatedError } from '../../errors.js';
import { assertCan, isUuid, requireViewer } from '../../auth/authz.js';
import { validate } from '../../validate.js';
import { publishWorkspaceEvent } from '../workspaces/events.js';
import {
  createWorkspaceApiKeyInput,
  listWorkspaceApiKeysInput,
  MAX_ACTIVE_KEYS,
  type CreateWorkspaceApiKeyInput,
  type ListWorkspaceApiKeysInput,
} from './schemas.js';

/** Workspace keys look like `pwk_<43 base64url chars>`: recognisable in logs and secret scanners, never stored. */
export const WORKSPACE_KEY_PREFIX = 'pwk_';
/** The header a client sends its key in (the name the seed's MCP configuration shows). `Bearer pwk_…` works too. */
export const WORKSPACE_KEY_HEADER = 'x-service-api-key';
/** The name a rotation gives the key it makes when the workspace had none. */
export const DEFAULT_KEY_NAME = 'default';
const SHOWN_PREFIX_LENGTH = 12;
/** Writing lastUsedAt on every MCP request would add a write per call; once a minute is enough to audit. */
const LAST_USED_RESOLUTION_MS = 60_000;

const keyFields = { id: true, workspaceId: true, name: true, prefix: true, createdById: true, createdAt: true, lastUsedAt: true, revokedAt: true } as const;

export interface WorkspaceApiKeyMetadata {
  id: string;
  workspaceId: string;
  name: string;
  prefix: string;
  createdById: string | null;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

/** A new key: the secret, shown this once, and its metadata. */
export interface WorkspaceApiKeySecret {
  apiKey: string;
  key: WorkspaceApiKeyMetadata;
}

function newKey(): { apiKey: string; prefix: string; keyHash: string } {
  const apiKey = WORKSPACE_KEY_PREFIX + randomBytes(32).toString('base64url');
  return { apiKey, prefix: apiKey.slice(0, SHOWN_PREFIX_LENGTH), keyHash: hashBearerSecret(apiKey) };
}

type Tx = Parameters<Parameters<AppDeps['prisma']['$transaction']>[0]>[0];

/** Serialises key changes of one workspace (create, rotate), so the active-key cap and "replace the current key" hold. */
async function lockWorkspace(tx: Tx, workspaceId: string): Promise<void> {
  const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM "workspace" WHERE id = ${workspaceId}::uuid FOR UPDATE`;
  if (!locked.length) throw new NotFoundError('Workspace');
}

/** Makes a named key (owners) and shows its secret this once; only its SHA-256 is stored. */
export async function createWorkspaceApiKey(ctx: ServiceContext, workspaceId: string, input: CreateWorkspaceApiKeyInput): Promise<WorkspaceApiKeySecret> {
  const viewer = requireViewer(ctx);
  const { name } = validate(createWorkspaceApiKeyInput, input);
  await assertCan(ctx, 'apikey:manage', { workspaceId });
  const { apiKey, prefix, keyHash } = newKey();
  const key = await ctx.deps.prisma.$transaction(async (tx) => {
    await lockWorkspace(tx, workspaceId);
    const active = await tx.workspaceApiKey.count({ where: { workspaceId, revokedAt: null } });
    if (active >= MAX_ACTIVE_KEYS) throw new ConflictError(`A workspace may have at most ${MAX_ACTIVE_KEYS} valid API keys: revoke one first`);
    return tx.workspaceApiKey.create({ data: { workspaceId, name, prefix, keyHash, createdById: viewer.id }, select: keyFields });
  });
  await publishWorkspaceEvent(ctx, workspaceId, 'apikey.created', key.id);
  ctx.deps.log.info({ workspaceId, keyPrefix: key.prefix, by: viewer.id }, 'workspace API key created');
  return { apiKey, key };
}

export async function listWorkspaceApiKeys(
  ctx: ServiceContext,
  workspaceId: string,
  input: ListWorkspaceApiKeysInput = {},
): Promise<WorkspaceApiKeyMetadata[]> {
  const { includeRevoked } = validate(listWorkspaceApiKeysInput, input);
  await assertCan(ctx, 'apikey:manage', { workspaceId });
  return ctx.deps.prisma.workspaceApiKey.findMany({
    where: { workspaceId, ...(includeRevoked ? {} : { revokedAt: null }) },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    select: keyFields,
  });
}

/** Batch for `Workspace.apiKeys`: the valid keys of each workspace whose keys the caller manages, null for the others. */
export async function apiKeysOfWorkspaces(ctx: ServiceContext, workspaceIds: readonly string[]): Promise<(WorkspaceApiKeyMetadata[] | null)[]> {
  const viewer = requireViewer(ctx);
  const ids = [...workspaceIds];
  const owned = await ctx.deps.prisma.workspaceMember.findMany({
    where: { userId: viewer.id, role: 'owner', workspaceId: { in: ids } },
    select: { workspaceId: true },
  });
  const manageable = new Set(ctx.actsFor ? [] : owned.map((row) => row.workspaceId));
  const rows = manageable.size
    ? await ctx.deps.prisma.workspaceApiKey.findMany({
        where: { workspaceId: { in: [...manageable] }, revokedAt: null },
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        select: keyFields,
      })
    : [];
  return ids.map((id) => (manageable.has(id) ? rows.filter((row) => row.workspaceId === id) : null));
}

/** The workspace's current key (the newest valid one): metadata only, never the secret. Null when it has none. */
export async function getCurrentWorkspaceApiKey(ctx: ServiceContext, workspaceId: string): Promise<WorkspaceApiKeyMetadata | null> {
  await assertCan(ctx, 'apikey:manage', { workspaceId });
  return ctx.deps.prisma.workspaceApiKey.findFirst({
    where: { workspaceId, revokedAt: null },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    select: keyFields,
  });
}

/** Revokes a key at once (idempotent: revoking a revoked key keeps its first revocation time). */
export async function revokeWorkspaceApiKey(ctx: ServiceContext, workspaceId: string, id: string): Promise<WorkspaceApiKeyMetadata> {
  await assertCan(ctx, 'apikey:manage', { workspaceId });
  const existing = isUuid(id) ? await ctx.deps.prisma.workspaceApiKey.findFirst({ where: { id, workspaceId }, select: { id: true, revokedAt: true } }) : null;
  if (!existing) throw new NotFoundError('API key');
  const key = await ctx.deps.prisma.workspaceApiKey.update({ where: { id }, data: { revokedAt: existing.revokedAt ?? new Date() }, select: keyFields });
  if (!existing.revokedAt) await publishWorkspaceEvent(ctx, workspaceId, 'apikey.revoked', id);
  return key;
}

/**
 * Replaces the workspace's current key (the newest valid one) with a new one of the same name, shown this
 * once; the replaced key stops working at once. Other named keys are left alone. With no valid key, it makes
 * one named "default". Under a lock on the workspace row, so concurrent rotations replace one key each.
 */
export async function rotateWorkspaceApiKey(ctx: ServiceContext, workspaceId: string): Promise<WorkspaceApiKeySecret & { revokedKeyId: string | null }> {
  const viewer = requireViewer(ctx);
  await assertCan(ctx, 'apikey:manage', { workspaceId });
  const { apiKey, prefix, keyHash } = newKey();
  const { key, revokedKeyId } = await ctx.deps.prisma.$transaction(async (tx) => {
    await lockWorkspace(tx, workspaceId);
    const previous = await tx.workspaceApiKey.findFirst({
      where: { workspaceId, revokedAt: null },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      select: { id: true, name: true },
    });
    if (previous) await tx.workspaceApiKey.update({ where: { id: previous.id }, data: { revokedAt: new Date() } });
    const created = await tx.workspaceApiKey.create({
      data: { workspaceId, name: previous?.name ?? DEFAULT_KEY_NAME, prefix, keyHash, createdById: viewer.id },
      select: keyFields,
    });
    return { key: created, revokedKeyId: previous?.id ?? null };
  });
  await publishWorkspaceEvent(ctx, workspaceId, 'apikey.rotated', key.id);
  ctx.deps.log.info({ workspaceId, keyPrefix: key.prefix, revokedKeyId, by: viewer.id }, 'workspace API key rotated');
  return { apiKey, key, revokedKeyId };
}

// ---------------------------------------------------------------------------------------------------------
// The key as a caller

/** The key a request carries: the x-service-api-key header, else a `Bearer pwk_…` authorization. */
export function workspaceKeyFromHeaders(headers: Headers): string | undefined {
  const header = headers.get(WORKSPACE_KEY_HEADER)?.trim();
  if (header) return header;
  const authorization = headers.get('authorization');
  const bearer = authorization?.toLowerCase().startsWith('bearer ') ? authorization.slice(7).trim() : undefined;
  return bearer?.startsWith(WORKSPACE_KEY_PREFIX) ? bearer : undefined;
}

/** Who a valid key acts as: its workspace, and the member who made it (whose rows the key reads). */
export interface WorkspaceKeyPrincipal {
  keyId: string;
  workspaceId: string;
  viewer: Viewer;
}

/**
 * Checks a presented key. Unknown, malformed, revoked keys, and keys whose maker is no longer a member of the
 * workspace, are all a 401: a key never outlives its maker's membership.
 */
export async function authenticateWorkspaceApiKey(deps: AppDeps, apiKey: string | undefined): Promise<WorkspaceKeyPrincipal> {
  if (!apiKey) throw new UnauthenticatedError(`A workspace API key is required: send it in the ${WORKSPACE_KEY_HEADER} header`);
  const record = apiKey.startsWith(WORKSPACE_KEY_PREFIX)
    ? await deps.prisma.workspaceApiKey.findUnique({
        where: { keyHash: hashBearerSecret(apiKey) },
        select: { id: true, workspaceId: true, prefix: true, createdById: true, revokedAt: true, lastUsedAt: true },
      })
    : null;
  if (!record || record.revokedAt) throw new UnauthenticatedError('The workspace API key is not valid (unknown, revoked or replaced by a rotation)');
  const membership = record.createdById
    ? await deps.prisma.workspaceMember.findUnique({
        where: { workspaceId_userId: { workspaceId: record.workspaceId, userId: record.createdById } },
        select: { user: { select: { id: true, name: true, email: true, image: true } } },
      })
    : null;
  if (!membership) throw new UnauthenticatedError('The workspace API key is no longer valid: the member who made it has left the workspace');
  const now = Date.now();
  if (!record.lastUsedAt || now - record.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
    // Best effort: an audit timestamp must never fail the request it describes.
    await deps.prisma.workspaceApiKey.update({ where: { id: record.id }, data: { lastUsedAt: new Date(now) } }).catch(() => undefined);
  }
  const { user } = membership;
  // Never an administrator through a key, whatever its maker is.
  const viewer: Viewer = {
    id: user.id,
    name: user.name,
    email: user.email,
    image: user.image,
    role: 'user',
    via: 'workspace-api-key',
    credential: { id: record.id, prefix: record.prefix },
  };
  return { keyId: record.id, workspaceId: record.workspaceId, viewer };
}

/**
 * A service context for a key's request: the maker as viewer, narrowed to the key's workspace at member
 * level (ServiceContext.actsFor): assertCan passes for member actions in that workspace and nothing else.
 */
export function serviceContextForKey(deps: AppDeps, principal: WorkspaceKeyPrincipal, request: { requestId: string; clientIp: string }): ServiceContext {
  return createServiceContext(deps, {
    viewer: principal.viewer,
    requestId: request.requestId,
    clientIp: request.clientIp,
    workspaceId: principal.workspaceId,
    actsFor: { workspaceId: principal.workspaceId, maxRole: 'member' },
  });
}
