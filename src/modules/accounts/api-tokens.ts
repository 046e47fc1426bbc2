import { hashBearerSecret } from '../../crypto/bearer-hash.js';
import { randomBytes } from 'node:crypto';
import type { AppDeps, ServiceContext, Viewer } from '../../context.js';
import { ForbiddenError, NotFoundError } from '../../errors.js';
import { isUuid, requireViewer } from '../../auth/authz.js';
import { validate } from '../../validate.js';
import { createApiTokenInput, type CreateApiTokenInput } from './schemas.js';

/** Personal API tokens look like `prm_<43 base64url chars>`: recognisable in logs and secret scanners. */
const TOKEN_PREFIX = 'prm_';
const SHOWN_PREFIX_LENGTH = 12;
/** Writing lastUsedAt on every request would turn reads into writes; once a minute is enough to audit. */
const LAST_USED_RESOLUTION_MS = 60_000;

const publicFields = { id: true, name: true, prefix: true, createdAt: true, lastUsedAt: true, expiresAt: true, revokedAt: true } as const;

export function isApiToken(value: string): boolean {
  return value.startsWith(TOKEN_PREFIX);
}

/**
 * Token management needs a signed-in session: a leaked token must not be able to mint fresh tokens
 * (outliving its own revocation) nor revoke or enumerate the owner's others.
 */
function requireSessionViewer(ctx: ServiceContext) {
  const viewer = requireViewer(ctx);
  if (viewer.via !== 'session') {
    throw new ForbiddenError(
      'Personal API tokens are managed from a signed-in session, not with an API token: sign in with your password to create, list or revoke tokens',
    );
  }
  return viewer;
}

/** Creates a token and shows its secret this once; only its SHA-256 is stored. */
export async function createApiToken(ctx: ServiceContext, input: CreateApiTokenInput) {
  const viewer = requireSessionViewer(ctx);
  const { name, expiresInDays } = validate(createApiTokenInput, input);
  const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
  const apiToken = await ctx.deps.prisma.apiToken.create({
    data: {
      userId: viewer.id,
      name,
      prefix: token.slice(0, SHOWN_PREFIX_LENGTH),
      tokenHash: hashBearerSecret(token),
      expiresAt: expiresInDays ? new Date(Date.now() + expiresInDays * 86_400_000) : null,
    },
    select: publicFields,
  });
  return { token, apiToken };
}

export async function listApiTokens(ctx: ServiceContext) {
  const viewer = requireSessionViewer(ctx);
  return ctx.deps.prisma.apiToken.findMany({ where: { userId: viewer.id }, orderBy: { createdAt: 'desc' }, select: publicFields });
}

export async function revokeApiToken(ctx: ServiceContext, id: string) {
  const viewer = requireSessionViewer(ctx);
  const existing = isUuid(id) ? await ctx.deps.prisma.apiToken.findFirst({ where: { id, userId: viewer.id }, select: { id: true, revokedAt: true } }) : null;
  if (!existing) throw new NotFoundError('API token');
  const revoked = await ctx.deps.prisma.apiToken.update({
    where: { id },
    data: { revokedAt: existing.revokedAt ?? new Date() },
    select: publicFields,
  });
  // From this answer on, no process accepts the token (auth/auth-cache.ts).
  ctx.deps.authCache.invalidate();
  return revoked;
}

/** The token's viewer and until when it is valid (its expiry; +Infinity when it has none), or null. */
export async function verifyApiToken(deps: AppDeps, token: string): Promise<{ viewer: Viewer; until: number } | null> {
  const record = await deps.prisma.apiToken.findUnique({
    where: { tokenHash: hashBearerSecret(token) },
    select: {
      id: true,
      prefix: true,
      revokedAt: true,
      expiresAt: true,
      lastUsedAt: true,
      user: { select: { id: true, name: true, email: true, image: true, role: true } },
    },
  });
  const now = Date.now();
  if (!record || record.revokedAt || (record.expiresAt && record.expiresAt.getTime() <= now)) return null;
  if (!record.lastUsedAt || now - record.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
    // Best effort: an audit timestamp must never fail the request it describes.
    await deps.prisma.apiToken.update({ where: { id: record.id }, data: { lastUsedAt: new Date(now) } }).catch(() => undefined);
  }
  const { user } = record;
  const viewer: Viewer = {
    id: user.id,
    name: user.name,
    email: user.email,
    image: user.image,
    role: user.role,
    via: 'api-token',
    credential: { id: record.id, prefix: record.prefix },
  };
  return { viewer, until: record.expiresAt?.getTime() ?? Number.POSITIVE_INFINITY };
}
