import type { BetterAuthOptions } from 'better-auth';
import type { DBAdapter, DBTransactionAdapter } from '@better-auth/core/db/adapter';

type AdapterFactory = (options: BetterAuthOptions) => DBAdapter<BetterAuthOptions>;

/** The auth library's rows a cached viewer is read from (auth/auth-cache.ts): a write to them may change who a token is. */
const WATCHED_MODELS = new Set(['user', 'session']);
/** Writes that may end or change what is cached; creating a row (sign-up, sign-in) cannot. */
const CHANGING_WRITES = ['update', 'updateMany', 'delete', 'deleteMany', 'consumeOne', 'incrementOne'] as const;

function watch<A extends DBTransactionAdapter<BetterAuthOptions>>(inner: A, changed: () => void): A {
  const wrapped: Record<string, unknown> = { ...inner };
  for (const name of CHANGING_WRITES) {
    const write = inner[name] as (args: { model: string }) => Promise<unknown>;
    wrapped[name] = async (args: { model: string }) => {
      try {
        return await write(args);
      } finally {
        if (WATCHED_MODELS.has(args.model)) changed();
      }
    };
  }
  return wrapped as A;
}

/**
 * `database: announceAuthWrites(adapter, onWrite)`: the same adapter, calling `onWrite` after the library
 * changed or removed a user or session row (sign-out, password change revoking sessions, session extension),
 * and after the transaction that did so has ended, so a cache never keeps what was just revoked.
 */
export function announceAuthWrites(factory: AdapterFactory, onWrite: () => void): AdapterFactory {
  return (options) => {
    const inner = factory(options);
    const outer = watch(inner, onWrite) as DBAdapter<BetterAuthOptions>;
    outer.transaction = async (callback) => {
      let dirty = false;
      try {
        return await inner.transaction((trx) =>
          callback(
            watch(trx, () => {
              dirty = true;
            }),
          ),
        );
      } finally {
        if (dirty) onWrite();
      }
    };
    return outer;
  };
}
