import type { ServiceContext } from '../context.js';
import { UnauthenticatedError } from '../errors.js';
import { resolveViewer } from '../modules/accounts/service.js';

/**
 * Access to a subscription is checked when it starts, but it may stream for hours: a member removed from the
 * workspace, or a user who signed out (or whose API token was revoked), must stop receiving events. Each event
 * re-proves both before it is sent: the credentials the operation came with still name the same user, and
 * the subscription's own access check (a service call) still passes.
 */

/** The websocket close code for a socket whose session ended (graphql-ws's Forbidden). */
export const CLOSE_SESSION_ENDED = 4403;

interface Credentials {
  headers: Headers;
  /** Called when the credentials no longer name a user: the websocket closes (4403). */
  onSignedOut?: () => void;
}

/** A symbol key: yoga copies the context object it is given (so a WeakMap on it misses), and copies this along. */
const CREDENTIALS = Symbol('credentials');
type WithCredentials = ServiceContext & { [CREDENTIALS]?: Credentials };

/** The context builder records how each operation authenticated, for the re-checks below. */
export function rememberCredentials(ctx: ServiceContext, credentials: Credentials): void {
  (ctx as WithCredentials)[CREDENTIALS] = credentials;
}

async function reauthorize(ctx: ServiceContext, recheck: () => Promise<unknown>): Promise<void> {
  const credentials = (ctx as WithCredentials)[CREDENTIALS];
  if (credentials && ctx.viewer) {
    const viewer = await resolveViewer(ctx.deps, credentials.headers);
    if (!viewer || viewer.id !== ctx.viewer.id) {
      credentials.onSignedOut?.();
      throw new UnauthenticatedError('Your session has ended: sign in again');
    }
    ctx.viewer = viewer;
  }
  // Roles are memoised per operation; a subscription's operation lives on, so forget them before asking again.
  ctx.roleMemo.clear();
  await recheck();
}

export interface RecheckOptions {
  /**
   * For streams of many small events (reply partials, dozens a second): a check this recent is reused, so
   * access lapses within this time instead of costing queries per token. Default 0: every event.
   */
  reuseForMs?: number;
}

/**
 * Wraps a subscription's event stream: before each event is yielded, the viewer's access is checked again with
 * `recheck` (the service call that checked it at the start). When access is gone the stream ends with that
 * error. Written as a plain iterator, not a generator, so that unsubscribing ends a stream waiting for its next
 * event at once (a generator's return() waits for the pending await).
 */
export function recheckedEachEvent<T>(
  ctx: ServiceContext,
  source: AsyncIterable<T>,
  recheck: () => Promise<unknown>,
  options: RecheckOptions = {},
): AsyncIterableIterator<T> {
  const events = source[Symbol.asyncIterator]();
  let checkedAt = Number.NEGATIVE_INFINITY;
  const end = async () => (await events.return?.()) ?? { done: true as const, value: undefined };
  const iterator: AsyncIterableIterator<T> = {
    [Symbol.asyncIterator]: () => iterator,
    async next() {
      const result = await events.next();
      if (result.done) return result;
      try {
        if (Date.now() - checkedAt >= (options.reuseForMs ?? 0)) {
          await reauthorize(ctx, recheck);
          checkedAt = Date.now();
        }
      } catch (error) {
        await end();
        // Yoga's error masking sees it like a resolver's: expected errors keep their message and code.
        throw error;
      }
      return result;
    },
    return: () => end() as Promise<IteratorResult<T>>,
    throw: async (error?: unknown) => {
      await end();
      throw error;
    },
  };
  return iterator;
}

/** For subscribe resolvers: `subscribe: (_, args, ctx) => rechecked(ctx, service.subscribeX(ctx, id), () => service.getX(ctx, id))`. */
export async function rechecked<T>(
  ctx: ServiceContext,
  source: Promise<AsyncIterable<T>>,
  recheck: () => Promise<unknown>,
  options?: RecheckOptions,
): Promise<AsyncIterable<T>> {
  return recheckedEachEvent(ctx, await source, recheck, options);
}
