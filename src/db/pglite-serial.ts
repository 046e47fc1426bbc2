import type { PGlite } from '@electric-sql/pglite';

/**
 * PGlite is one connection. Its own mutex serialises single statements, not transactions: a query from
 * another request (or the job queue) issued while a Prisma transaction is open would run INSIDE that
 * transaction, be rolled back with it, or abort it. This wrapper makes every statement outside a
 * transaction wait until the open transaction has finished. Statements inside a transaction go through
 * the transaction object PGlite hands to the callback, so they are not queued behind it.
 */
export function serializePGlite(pglite: PGlite): PGlite {
  let tail: Promise<unknown> = Promise.resolve();
  const exclusive = <T>(work: () => Promise<T>): Promise<T> => {
    const run = tail.then(work, work);
    tail = run.catch(() => undefined);
    return run;
  };
  return new Proxy(pglite, {
    get(target, property, receiver) {
      if (property === 'query' || property === 'exec' || property === 'transaction') {
        const method = Reflect.get(target, property, target) as (...args: unknown[]) => Promise<unknown>;
        return (...args: unknown[]) => exclusive(() => method.apply(target, args));
      }
      const value = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
