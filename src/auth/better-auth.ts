import { betterAuth } from 'better-auth';
import { prismaAdapter } from 'better-auth/adapters/prisma';
import { bearer } from 'better-auth/plugins';
import type { PrismaClient } from '../db.js';
import { hashSessionTokens } from './session-token-hash.js';
import { announceAuthWrites } from './announce-writes.js';

export const AUTH_BASE_PATH = '/api/v1/api/auth';

/** A session lives 7 days and is extended when used a day or more after its last extension. */
export const SESSION_EXPIRES_IN_SECONDS = 7 * 86_400;
export const SESSION_UPDATE_AGE_SECONDS = 86_400;

export interface AuthOptions {
  prisma: PrismaClient;
  secret: string;
  baseURL: string;
  /** Called after the library changed or removed a user or session row (the viewer cache forgets). */
  onWrite?: () => void;
}

/**
 * Accounts and sessions by better-auth on our own tables (user, session, account, verification).
 * Passwords are hashed by the library (scrypt); a session token is accepted as `Authorization: Bearer`
 * (bearer plugin) or as its signed cookie.
 */
export function createAuth({ prisma, secret, baseURL, onWrite }: AuthOptions) {
  const adapter = hashSessionTokens(prismaAdapter(prisma, { provider: 'postgresql' }));
  return betterAuth({
    appName: 'Perimeter',
    baseURL,
    basePath: AUTH_BASE_PATH,
    secret,
    // Session tokens are stored as SHA-256 hashes (auth/session-token-hash.ts); writes are announced (auth/announce-writes.ts).
    database: onWrite ? announceAuthWrites(adapter, onWrite) : adapter,
    emailAndPassword: { enabled: true, minPasswordLength: 8, maxPasswordLength: 128, autoSignIn: true },
    session: { expiresIn: SESSION_EXPIRES_IN_SECONDS, updateAge: SESSION_UPDATE_AGE_SECONDS },
    plugins: [bearer()],
    telemetry: { enabled: false },
    // Our own limiter covers sign-in and sign-up on REST and GraphQL alike (auth/rate-limit.ts).
    rateLimit: { enabled: false },
    logger: { disabled: true },
    user: {
      additionalFields: {
        role: { type: 'string', required: false, input: false, defaultValue: 'user' },
      },
    },
    databaseHooks: {
      user: {
        create: {
          // The first account on a fresh instance administers it. Sign-up cannot set a role (input: false);
          // an administrator creating an account (or `npm run admin:create`) may.
          before: async (user) => {
            const existing = await prisma.user.count();
            const requested = (user as { role?: unknown }).role === 'admin' ? 'admin' : 'user';
            return { data: { ...user, role: existing === 0 ? 'admin' : requested } };
          },
        },
      },
    },
  });
}

export type Auth = ReturnType<typeof createAuth>;
