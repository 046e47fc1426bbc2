import type { ServiceContext, Viewer } from '../../context.js';
import { ForbiddenError } from '../../errors.js';
import { requireViewer } from '../../auth/authz.js';
import { validate } from '../../validate.js';
import { changePasswordInput, updateProfileInput, type ChangePasswordInput, type UpdateProfileInput } from './schemas.js';
import { collectCookies, fromAuthError, limitAccountAttempt, limitAttempt } from './service.js';

/**
 * The auth library's own account routes, behind our validation and limits: the library accepts any string
 * as a name or image, and its session route answers the raw session token.
 */

const viewerFields = { id: true, name: true, email: true, image: true, role: true } as const;

/** The caller's session and user, never the session token (the caller has it; a response may be logged). */
export async function getSession(ctx: ServiceContext, headers: Headers) {
  if (ctx.viewer?.via !== 'session') return null;
  const found = await ctx.deps.auth.api.getSession({ headers, returnHeaders: true }).catch(() => null);
  if (!found?.response) return null;
  collectCookies(ctx, found.headers);
  const { session } = found.response;
  return {
    session: {
      id: session.id,
      userId: session.userId,
      expiresAt: session.expiresAt,
      createdAt: session.createdAt,
      updatedAt: session.updatedAt,
      ipAddress: session.ipAddress ?? null,
      userAgent: session.userAgent ?? null,
    },
    user: ctx.viewer,
  };
}

/** Name and picture (an http(s) URL, or null to remove it). */
export async function updateProfile(ctx: ServiceContext, input: UpdateProfileInput): Promise<Viewer> {
  const viewer = requireViewer(ctx);
  const { name, image } = validate(updateProfileInput, input);
  const user = await ctx.deps.prisma.user.update({ where: { id: viewer.id }, data: { name, image }, select: viewerFields });
  // Cached viewers carry the name and picture.
  ctx.deps.authCache.invalidate();
  return { ...user, via: viewer.via };
}

/**
 * Needs the current password and a signed-in session (not an API token). With revokeOtherSessions every
 * other session ends and the answer carries the caller's new session token (the old one ends too).
 */
export async function changePassword(ctx: ServiceContext, headers: Headers, input: ChangePasswordInput): Promise<{ token: string | null }> {
  const viewer = requireViewer(ctx);
  if (viewer.via !== 'session') throw new ForbiddenError('The password is changed from a signed-in session, not with an API token');
  limitAttempt(ctx, 'change-password');
  limitAccountAttempt(ctx, 'change-password', viewer.email);
  const body = validate(changePasswordInput, input);
  try {
    const { headers: responseHeaders, response } = await ctx.deps.auth.api.changePassword({ headers, body, returnHeaders: true });
    collectCookies(ctx, responseHeaders);
    return { token: response.token };
  } catch (error) {
    fromAuthError(error);
  }
}
