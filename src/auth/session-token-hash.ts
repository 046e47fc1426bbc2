import { hashBearerSecret } from '../crypto/bearer-hash.js';
import type { BetterAuthOptions } from 'better-auth';
import type { DBAdapter, DBTransactionAdapter, Where } from '@better-auth/core/db/adapter';

/**
 * Session tokens are bearer secrets: whoever reads the `session` table (a backup, a replica, the WAL, a
 * query log) could otherwise act as every signed-in user. better-auth 1.7 stores them as given and has no
 * option to hash them, so its database adapter is wrapped: on the `session` model the `token` column holds
 * SHA-256(token), every lookup by token hashes the presented value, and rows read back by token carry the
 * presented token again (the library re-sets cookies from it). Rows listed by anything else (e.g. by
 * user) carry only the hash, which is useless as a credential: it would be hashed again on use.
 */

const SESSION_MODEL = 'session';
const TOKEN_FIELD = 'token';

type AdapterFactory = (options: BetterAuthOptions) => DBAdapter<BetterAuthOptions>;

function hashWhere(where: Where[] | undefined): { where: Where[] | undefined; presented?: string } {
  if (!where) return { where };
  let presented: string | undefined;
  const hashed = where.map((clause) => {
    if (clause.field !== TOKEN_FIELD) return clause;
    const { value } = clause;
    if (typeof value === 'string') {
      if (!clause.operator || clause.operator === 'eq') presented = value;
      return { ...clause, value: hashBearerSecret(value) };
    }
    if (Array.isArray(value))
      return { ...clause, value: (value as unknown[]).map((item) => (typeof item === 'string' ? hashBearerSecret(item) : item)) } as Where;
    return clause;
  });
  return { where: hashed, presented };
}

function hashFields<T extends Record<string, unknown>>(data: T): T {
  return typeof data[TOKEN_FIELD] === 'string' ? { ...data, [TOKEN_FIELD]: hashBearerSecret(data[TOKEN_FIELD] as string) } : data;
}

function withToken<T>(row: T, token: string | undefined): T {
  if (!token || !row || typeof row !== 'object') return row;
  return { ...(row as Record<string, unknown>), [TOKEN_FIELD]: token } as T;
}

function wrap<A extends DBTransactionAdapter<BetterAuthOptions>>(inner: A): A {
  const isSession = (model: string) => model === SESSION_MODEL;
  const wrapped: DBTransactionAdapter<BetterAuthOptions> = {
    ...inner,
    create: async (args) => {
      if (!isSession(args.model)) return inner.create(args);
      const presented = (args.data as Record<string, unknown>)[TOKEN_FIELD];
      const row = await inner.create({ ...args, data: hashFields(args.data as Record<string, unknown>) as typeof args.data });
      return withToken(row, typeof presented === 'string' ? presented : undefined);
    },
    findOne: async (args) => {
      if (!isSession(args.model)) return inner.findOne(args);
      const { where, presented } = hashWhere(args.where);
      return withToken(await inner.findOne({ ...args, where: where! }), presented);
    },
    findMany: (args) => (isSession(args.model) ? inner.findMany({ ...args, where: hashWhere(args.where).where }) : inner.findMany(args)),
    count: (args) => (isSession(args.model) ? inner.count({ ...args, where: hashWhere(args.where).where }) : inner.count(args)),
    update: async (args) => {
      if (!isSession(args.model)) return inner.update(args);
      const { where, presented } = hashWhere(args.where);
      return withToken(await inner.update({ ...args, where: where!, update: hashFields(args.update) }), presented);
    },
    updateMany: (args) =>
      isSession(args.model) ? inner.updateMany({ ...args, where: hashWhere(args.where).where!, update: hashFields(args.update) }) : inner.updateMany(args),
    delete: (args) => (isSession(args.model) ? inner.delete({ ...args, where: hashWhere(args.where).where! }) : inner.delete(args)),
    deleteMany: (args) => (isSession(args.model) ? inner.deleteMany({ ...args, where: hashWhere(args.where).where! }) : inner.deleteMany(args)),
    consumeOne: async (args) => {
      if (!isSession(args.model)) return inner.consumeOne(args);
      const { where, presented } = hashWhere(args.where);
      return withToken(await inner.consumeOne({ ...args, where: where! }), presented);
    },
    incrementOne: async (args) => {
      if (!isSession(args.model)) return inner.incrementOne(args);
      const { where, presented } = hashWhere(args.where);
      return withToken(await inner.incrementOne({ ...args, where: where!, set: args.set && hashFields(args.set) }), presented);
    },
  };
  return wrapped as A;
}

/** `database: hashSessionTokens(prismaAdapter(prisma, …))`: the same adapter, with session tokens stored hashed. */
export function hashSessionTokens(factory: AdapterFactory): AdapterFactory {
  return (options) => {
    const inner = factory(options);
    const outer = wrap(inner) as DBAdapter<BetterAuthOptions>;
    outer.transaction = (callback) => inner.transaction((trx) => callback(wrap(trx)));
    return outer;
  };
}
