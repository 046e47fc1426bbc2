import type { AppDeps, ServiceContext } from '../../context.js';
import { AppError, ConflictError } from '../../errors.js';
import { requireAdmin } from '../../auth/authz.js';
import { validate } from '../../validate.js';
import { hasPendingInvitation } from '../workspaces/invitations.js';
import { createUserInput, type CreateUserInput } from './schemas.js';

export type SignUpMode = 'open' | 'invite' | 'closed';

/**
 * Who may create an account (SIGNUP). Unset: open while the instance has no account, so the first person
 * can sign up (and administers it), then by invitation. `npm run admin:create` makes the first
 * administrator without ever opening sign-up.
 */
export async function signUpMode(deps: AppDeps): Promise<SignUpMode> {
  if (deps.env.SIGNUP) return deps.env.SIGNUP;
  const anyone = await deps.prisma.user.findFirst({ select: { id: true } });
  return anyone ? 'invite' : 'open';
}

/** Throws SIGNUP_CLOSED (403) unless this e-mail may sign up now. */
export async function assertMaySignUp(deps: AppDeps, email: string): Promise<void> {
  const mode = await signUpMode(deps);
  if (mode === 'open') return;
  if (mode === 'closed') throw new AppError('SIGNUP_CLOSED', 'Sign-up is closed on this server: an administrator creates accounts');
  if (!(await hasPendingInvitation(deps, email))) {
    throw new AppError(
      'SIGNUP_CLOSED',
      'Sign-up on this server is by invitation: ask a workspace owner to invite this email address, or an administrator to create your account',
    );
  }
}

export interface CreatedUser {
  id: string;
  name: string;
  email: string;
  role: 'admin' | 'user';
}

/**
 * Creates an account with a password, whatever SIGNUP says, and no session (the person signs in
 * themselves). For administrators (createUser) and `npm run admin:create`. Passwords are hashed by the
 * auth library, as at sign-up.
 */
export async function createUserAccount(deps: Pick<AppDeps, 'prisma' | 'auth'>, input: CreateUserInput): Promise<CreatedUser> {
  const { name, email, password, role } = validate(createUserInput, input);
  const auth = await deps.auth.$context;
  const taken = () => new ConflictError('An account with this email already exists');
  if (await deps.prisma.user.findUnique({ where: { email }, select: { id: true } })) throw taken();
  const passwordHash = await auth.password.hash(password);
  const user = await auth.internalAdapter.createUser({ name, email, emailVerified: false, role }, { method: 'admin' }).catch((error: unknown) => {
    throw (error as { code?: unknown } | null)?.code === 'P2002' ? taken() : error;
  });
  try {
    await auth.internalAdapter.linkAccount({ userId: user.id, providerId: 'credential', accountId: user.id, password: passwordHash });
  } catch (error) {
    // No half-made account: without its credential nobody could sign in to it.
    await deps.prisma.user.delete({ where: { id: user.id } }).catch(() => undefined);
    throw error;
  }
  const stored = await deps.prisma.user.findUniqueOrThrow({ where: { id: user.id }, select: { id: true, name: true, email: true, role: true } });
  return stored;
}

/** An administrator creates an account (the way in when SIGNUP is invite or closed). */
export async function createUser(ctx: ServiceContext, input: CreateUserInput): Promise<CreatedUser> {
  requireAdmin(ctx);
  return createUserAccount(ctx.deps, input);
}
