import { APIError } from 'better-auth/api';
import { hashBearerSecret } from '../../crypto/bearer-hash.js';
import { SESSION_EXPIRES_IN_SECONDS, SESSION_UPDATE_AGE_SECONDS } from '../../auth/better-auth.js';
import type { AppDeps, ServiceContext, Viewer } from '../../context.js';
import { AppError, ConflictError, UnauthenticatedError, ValidationError } from '../../errors.js';
import { requireViewer } from '../../auth/authz.js';
import { validate } from '../../validate.js';
import { signInInput, signUpInput, type SignInInput, type SignUpInput } from './schemas.js';
import { verifyApiToken, isApiToken } from './api-tokens.js';
import { assertMaySignUp } from './users.js';
import { acceptInvitations } from '../workspaces/invitations.js';

export interface AuthResult {
  token: string;
  user: { id: string; name: string; email: string };
}

/** better-auth speaks in APIError; the rest of the app speaks in AppError. */
export function fromAuthError(error: unknown): never {
  if (error instanceof APIError) {
    const body = (error.body ?? {}) as { code?: string; message?: string };
    const message = body.message ?? error.message;
    if (body.code === 'USER_ALREADY_EXISTS' || body.code === 'USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL') {
      throw new ConflictError('An account with this email already exists');
    }
    if (body.code === 'INVALID_PASSWORD')
      throw new ValidationError('Invalid input: currentPassword: is incorrect', [{ field: 'currentPassword', message: 'is incorrect' }]);
    if (error.statusCode === 401 || body.code === 'INVALID_EMAIL_OR_PASSWORD') throw new UnauthenticatedError('Invalid email or password');
    if (error.statusCode === 400 || error.statusCode === 422) throw new ValidationError(message);
    throw new AppError('BAD_REQUEST', message);
  }
  throw error;
}

export function limitAttempt(ctx: ServiceContext, action: string): void {
  ctx.deps.authLimiter.hit(`${action}:${ctx.clientIp}`);
}

/**
 * Besides the per-address limit: attempts per account, whatever address they come from. The e-mail is
 * normalised as at sign-up, so case and spaces do not open fresh windows.
 */
export function limitAccountAttempt(ctx: ServiceContext, action: string, email: unknown): void {
  if (typeof email !== 'string' || !email.trim()) return;
  ctx.deps.authLimiter.hit(`${action}:account:${email.trim().toLowerCase()}`, ctx.deps.env.AUTH_ACCOUNT_RATE_LIMIT_MAX);
}

export function collectCookies(ctx: ServiceContext, headers: Headers | undefined): void {
  const cookies = headers?.getSetCookie?.() ?? [];
  for (const cookie of cookies) ctx.responseHeaders.append('set-cookie', cookie);
}

export async function signUp(ctx: ServiceContext, input: SignUpInput): Promise<AuthResult> {
  limitAttempt(ctx, 'sign-up');
  const body = validate(signUpInput, input);
  await assertMaySignUp(ctx.deps, body.email);
  let result: AuthResult;
  try {
    const { headers, response } = await ctx.deps.auth.api.signUpEmail({ body, returnHeaders: true });
    if (!response.token) throw new AppError('INTERNAL', 'Sign-up did not create a session');
    collectCookies(ctx, headers);
    result = { token: response.token, user: { id: response.user.id, name: response.user.name, email: response.user.email } };
  } catch (error) {
    fromAuthError(error);
  }
  await acceptInvitations(ctx, result.user);
  return result;
}

export async function signIn(ctx: ServiceContext, input: SignInInput): Promise<AuthResult> {
  limitAttempt(ctx, 'sign-in');
  limitAccountAttempt(ctx, 'sign-in', input?.email);
  const body = validate(signInInput, input);
  try {
    const { headers, response } = await ctx.deps.auth.api.signInEmail({ body, returnHeaders: true });
    collectCookies(ctx, headers);
    return { token: response.token, user: { id: response.user.id, name: response.user.name, email: response.user.email } };
  } catch (error) {
    fromAuthError(error);
  }
}

/** Ends the caller's session (a personal API token is revoked through its own endpoint instead). */
export async function signOut(ctx: ServiceContext, headers: Headers): Promise<{ success: boolean }> {
  requireViewer(ctx);
  try {
    collectCookies(ctx, (await ctx.deps.auth.api.signOut({ headers, returnHeaders: true })).headers);
  } catch (error) {
    fromAuthError(error);
  }
  return { success: true };
}

export function getViewer(ctx: ServiceContext): Viewer {
  return requireViewer(ctx);
}

/** Who is calling: a personal API token or a session (bearer token or cookie). Null when neither is valid. */
export async function resolveViewer(deps: AppDeps, headers: Headers): Promise<Viewer | null> {
  const authorization = headers.get('authorization');
  const bearer = authorization?.toLowerCase().startsWith('bearer ') ? authorization.slice(7).trim() : undefined;
  if (bearer && isApiToken(bearer)) return cachedBearerViewer(deps, bearer, () => verifyApiToken(deps, bearer));
  if (!bearer && !headers.get('cookie')) return null;
  if (bearer && !bearer.includes('.')) {
    const fresh = await cachedBearerViewer(deps, bearer, () => freshSessionViewer(deps, bearer));
    if (fresh !== undefined) return fresh;
  }
  const session = await deps.auth.api.getSession({ headers }).catch(() => null);
  if (!session) return null;
  const user = session.user as typeof session.user & { role?: string };
  return {
    id: user.id,
    name: user.name,
    email: user.email,
    image: user.image ?? null,
    role: user.role === 'admin' ? 'admin' : 'user',
    via: 'session',
  };
}

const SESSION_EXPIRES_IN_MS = SESSION_EXPIRES_IN_SECONDS * 1000;
const SESSION_UPDATE_AGE_MS = SESSION_UPDATE_AGE_SECONDS * 1000;

/**
 * The hot path for `Authorization: Bearer <session token>`: one indexed lookup of the auth library's own
 * session row. Undefined when the library must handle it (the session is due for extension, so
 * `getSession` extends it); null when the token names no live session.
 */
async function freshSessionViewer(deps: AppDeps, token: string): Promise<{ viewer: Viewer; until: number } | null | undefined> {
  const session = await deps.prisma.session.findUnique({
    where: { token: hashBearerSecret(token) },
    select: { expiresAt: true, user: { select: { id: true, name: true, email: true, image: true, role: true } } },
  });
  const now = Date.now();
  if (!session || session.expiresAt.getTime() <= now) return null;
  const extendAt = session.expiresAt.getTime() - SESSION_EXPIRES_IN_MS + SESSION_UPDATE_AGE_MS;
  if (extendAt <= now) return undefined;
  const { user } = session;
  // Valid until its extension is due: from then on the library must see it (and extend it).
  return { viewer: { id: user.id, name: user.name, email: user.email, image: user.image, role: user.role, via: 'session' }, until: extendAt };
}

/**
 * A bearer credential's viewer through the auth cache (auth/auth-cache.ts), keyed by the secret's hash (the
 * form the database holds). `lookup` answers as the uncached path would; only a viewer is remembered, never
 * past `until`, and not when an invalidation happened while it looked.
 */
async function cachedBearerViewer<Missing extends null | undefined>(
  deps: AppDeps,
  bearer: string,
  lookup: () => Promise<{ viewer: Viewer; until: number } | Missing>,
): Promise<Viewer | Missing> {
  const key = hashBearerSecret(bearer);
  const cached = deps.authCache.viewer(key);
  if (cached) return cached;
  const generation = deps.authCache.generation();
  const found = await lookup();
  if (!found) return found as Missing;
  // Shared by every request presenting this credential until forgotten: nobody may change it in place.
  const viewer = Object.freeze(found.viewer);
  deps.authCache.rememberViewer(key, viewer, generation, found.until);
  return viewer;
}
