/**
 * A scan step's OAST client: one correlation id, registered with the listeners over pub/sub (refreshed while the
 * client lives, dropped at close), URLs `<id><nonce>.<OAST_DOMAIN>`, and the interactions published for the id
 * kept (bounded) until a request's wait collects them. The engine gets it as `RunDeps.oast`; template worker
 * threads mint URLs with its domain and id and wait through it (template-pool.ts).
 */
import type { PubSub } from '../pubsub.js';
import {
  OAST_CORRELATION_ID_LENGTH,
  oastUniqueIdOf,
  oastUrlMinter,
  randomOastId,
  type OastInteraction,
  type SharedOastClient,
} from '../scanner/nuclei/oast.js';

export interface OastClientHandle extends SharedOastClient {
  close(): Promise<void>;
}

export interface OastClientOptions {
  pubsub: PubSub;
  domain: string;
  cooldownMs: number;
  /** How often the registration is refreshed (below the listeners' OAST_EVICTION_SECONDS). */
  refreshMs: number;
  /** Interactions held for collection; the oldest go first. */
  maxHeld?: number;
}

export function createOastClient(options: OastClientOptions): OastClientHandle {
  const { pubsub } = options;
  const correlationId = randomOastId(OAST_CORRELATION_ID_LENGTH);
  const maxHeld = options.maxHeld ?? 1_000;
  const held: OastInteraction[] = [];
  const subscription = pubsub.subscribe('oast:interaction', correlationId);
  let closed = false;
  void (async () => {
    for await (const interaction of subscription) {
      if (typeof interaction?.uniqueId !== 'string') continue;
      held.push(interaction);
      if (held.length > maxHeld) held.shift();
    }
  })().catch(() => {});
  const register = (active: boolean) => pubsub.publish('oast:registration', { correlationId, active });
  register(true);
  const refresh = setInterval(() => register(true), options.refreshMs);
  refresh.unref();

  const collect = (ids: Set<string>): OastInteraction[] => {
    const mine: OastInteraction[] = [];
    for (let i = held.length - 1; i >= 0; i--) {
      if (ids.has(held[i].uniqueId)) mine.unshift(...held.splice(i, 1));
    }
    return mine;
  };

  return {
    domain: options.domain,
    correlationId,
    cooldownMs: options.cooldownMs,
    newUrl: oastUrlMinter(options.domain, correlationId),
    interactions: (urls, { cooldownMs, signal }) => {
      const ids = new Set(urls.map(oastUniqueIdOf).filter((id): id is string => id !== undefined));
      return new Promise((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', done);
          resolve(collect(ids));
        };
        const timer = setTimeout(done, closed ? 0 : cooldownMs);
        if (signal?.aborted) done();
        else signal?.addEventListener('abort', done, { once: true });
      });
    },
    close: async () => {
      if (closed) return;
      closed = true;
      clearInterval(refresh);
      register(false);
      held.length = 0;
      await subscription.return?.();
    },
  };
}
