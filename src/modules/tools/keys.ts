import { hashBearerSecret } from '../../crypto/bearer-hash.js';
import { randomBytes } from 'node:crypto';
import type { AppDeps, ServiceContext } from '../../context.js';
import { AppError, NotFoundError, UnauthenticatedError } from '../../errors.js';
import { assertCan, isUuid, requireViewer } from '../../auth/authz.js';
import { publishWorkspaceEvent } from '../workspaces/events.js';

/** Tool keys look like `ptk_<43 base64url chars>`: recognisable in logs and secret scanners, never stored. */
export const TOOL_KEY_PREFIX = 'ptk_';
/** The header a tool sends its key in. `Authorization: Bearer ptk_…` is accepted too. */
export const TOOL_KEY_HEADER = 'x-tool-api-key';
const SHOWN_PREFIX_LENGTH = 12;
/** Writing lastUsedAt on every submission would add a write per call; once a minute is enough to audit. */
const LAST_USED_RESOLUTION_MS = 60_000;

const keyFields = { id: true, toolId: true, workspaceId: true, prefix: true, createdAt: true, lastUsedAt: true, createdById: true } as const;

export interface ToolKeyMetadata {
  id: string;
  toolId: string;
  /** The workspace the key was made in: the only one it submits to. */
  workspaceId: string;
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  createdById: string | null;
}

/** The key a request carries: the X-Tool-Api-Key header, else a `Bearer ptk_…` authorization. */
export function toolKeyFromHeaders(headers: Headers): string | undefined {
  const header = headers.get(TOOL_KEY_HEADER)?.trim();
  if (header) return header;
  const authorization = headers.get('authorization');
  const bearer = authorization?.toLowerCase().startsWith('bearer ') ? authorization.slice(7).trim() : undefined;
  return bearer?.startsWith(TOOL_KEY_PREFIX) ? bearer : undefined;
}

/**
 * Who may manage a tool's key in a workspace: that workspace's owners, for its own custom tools and for the
 * built-in ones alike. A key is bound to the workspace it is made in (a built-in tool has one per
 * workspace), so no one manages a key that reaches another workspace. A tool of another workspace answers
 * 404, like one that does not exist.
 */
async function manageableTool(ctx: ServiceContext, id: string, workspaceId: string | undefined) {
  requireViewer(ctx);
  if (!workspaceId) {
    throw new AppError('WORKSPACE_REQUIRED', "A tool's key belongs to one workspace: send the X-Workspace-Id header (or a wid cookie)");
  }
  await assertCan(ctx, 'tool:manage', { workspaceId });
  const tool = isUuid(id) ? await ctx.deps.prisma.tool.findFirst({ where: { id, OR: [{ builtin: true, workspaceId: null }, { workspaceId }] } }) : null;
  if (!tool) throw new NotFoundError('Tool');
  return { tool, workspaceId };
}

/**
 * Makes a new key for the tool in this workspace and shows it this once; only its SHA-256 is stored. The
 * previous key of the same tool and workspace is revoked in the same transaction, under a lock on the tool
 * row, so exactly one key per workspace is valid after any number of concurrent rotations. Other
 * workspaces' keys for a built-in tool are untouched.
 */
export async function rotateToolApiKey(ctx: ServiceContext, toolId: string, workspaceId?: string): Promise<{ apiKey: string; key: ToolKeyMetadata }> {
  const { tool, workspaceId: keyWorkspaceId } = await manageableTool(ctx, toolId, workspaceId);
  const apiKey = TOOL_KEY_PREFIX + randomBytes(32).toString('base64url');
  const key = await ctx.deps.prisma.$transaction(async (tx) => {
    const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM "tool" WHERE id = ${tool.id}::uuid FOR UPDATE`;
    if (!locked.length) throw new NotFoundError('Tool');
    await tx.toolKey.updateMany({ where: { toolId: tool.id, workspaceId: keyWorkspaceId, revokedAt: null }, data: { revokedAt: new Date() } });
    return tx.toolKey.create({
      data: {
        toolId: tool.id,
        workspaceId: keyWorkspaceId,
        prefix: apiKey.slice(0, SHOWN_PREFIX_LENGTH),
        keyHash: hashBearerSecret(apiKey),
        createdById: ctx.viewer!.id,
      },
      select: keyFields,
    });
  });
  await publishWorkspaceEvent(ctx, keyWorkspaceId, 'tool.key_rotated', tool.id);
  ctx.deps.log.info({ toolId: tool.id, workspaceId: keyWorkspaceId, keyPrefix: key.prefix, by: ctx.viewer!.id }, 'tool API key rotated');
  return { apiKey, key };
}

/** The workspace's valid key for the tool (metadata, never the secret), or null when it has none. Same rules as rotation. */
export async function getToolApiKey(ctx: ServiceContext, toolId: string, workspaceId?: string): Promise<ToolKeyMetadata | null> {
  const { tool, workspaceId: keyWorkspaceId } = await manageableTool(ctx, toolId, workspaceId);
  return ctx.deps.prisma.toolKey.findFirst({
    where: { toolId: tool.id, workspaceId: keyWorkspaceId, revokedAt: null },
    orderBy: { createdAt: 'desc' },
    select: keyFields,
  });
}

export interface AuthenticatedTool {
  keyId: string;
  /** The key's shown prefix (ptk_…), never the secret: the audit log names the key by it. */
  prefix: string;
  /** The workspace the key was made in: submissions land there and nowhere else. */
  workspaceId: string;
  tool: { id: string; name: string; builtin: boolean; enabled: boolean; workspaceId: string | null };
}

/** Checks a presented key: unknown, malformed and rotated-away keys are all the same 401. */
export async function authenticateToolKey(deps: AppDeps, apiKey: string | undefined): Promise<AuthenticatedTool> {
  if (!apiKey) throw new UnauthenticatedError(`A tool API key is required: send it in the ${TOOL_KEY_HEADER} header`);
  const record = apiKey.startsWith(TOOL_KEY_PREFIX)
    ? await deps.prisma.toolKey.findUnique({
        where: { keyHash: hashBearerSecret(apiKey) },
        select: {
          id: true,
          workspaceId: true,
          prefix: true,
          revokedAt: true,
          lastUsedAt: true,
          tool: { select: { id: true, name: true, builtin: true, enabled: true, workspaceId: true } },
        },
      })
    : null;
  if (!record || record.revokedAt) throw new UnauthenticatedError('The tool API key is not valid (unknown, or replaced by a rotation)');
  const now = Date.now();
  if (!record.lastUsedAt || now - record.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
    // Best effort: an audit timestamp must never fail the request it describes.
    await deps.prisma.toolKey.update({ where: { id: record.id }, data: { lastUsedAt: new Date(now) } }).catch(() => undefined);
  }
  return { keyId: record.id, prefix: record.prefix, workspaceId: record.workspaceId, tool: record.tool };
}
