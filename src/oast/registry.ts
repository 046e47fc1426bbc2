/**
 * Which correlation ids the OAST listeners answer for, and how many interactions each may still record.
 *
 * Like interactsh's server, a listener only records interactions for ids a client registered (here: a scan step's
 * OAST client, over pub/sub, src/oast/client.ts); anything else that reaches the listeners (scanners of the
 * internet, other names under the domain) is answered and forgotten. Memory is bounded: at most `maxIds` ids (the
 * longest idle goes first), an id idle for `idleMs` (no registration refresh, no interaction) is dropped, and an
 * id records at most `maxInteractionsPerId` interactions (a target looping on the URL cannot flood the bus).
 */
import { OAST_CORRELATION_ID_LENGTH, OAST_ID_LENGTH } from '../scanner/nuclei/oast.js';

export interface OastRegistryOptions {
  domain: string;
  maxInteractionsPerId: number;
  idleMs: number;
  maxIds?: number;
  now?: () => number;
}

export interface OastMatch {
  correlationId: string;
  /** `<correlation-id><nonce>`. */
  uniqueId: string;
  /** The labels left of the domain. */
  fullId: string;
}

const CORRELATION_ID = new RegExp(`^[a-z0-9]{${OAST_CORRELATION_ID_LENGTH}}$`);

export function isCorrelationId(value: unknown): value is string {
  return typeof value === 'string' && CORRELATION_ID.test(value);
}

export class OastRegistry {
  readonly domain: string;
  private readonly ids = new Map<string, { seenAt: number; recorded: number }>();
  private readonly now: () => number;
  private readonly maxIds: number;

  constructor(private readonly options: OastRegistryOptions) {
    this.domain = options.domain.toLowerCase().replace(/\.$/, '');
    this.now = options.now ?? Date.now;
    this.maxIds = options.maxIds ?? 10_000;
  }

  get size(): number {
    return this.ids.size;
  }

  register(correlationId: string): void {
    if (!isCorrelationId(correlationId)) return;
    const entry = this.ids.get(correlationId);
    // re-inserted: Map order is least recently seen first, which eviction relies on
    this.ids.delete(correlationId);
    this.ids.set(correlationId, { seenAt: this.now(), recorded: entry?.recorded ?? 0 });
    this.evict();
  }

  deregister(correlationId: string): void {
    this.ids.delete(correlationId);
  }

  /** Whether a name is the OAST domain or under it (what the DNS listener answers for). */
  covers(name: string): boolean {
    const host = normalizeName(name);
    return host === this.domain || host.endsWith(`.${this.domain}`);
  }

  /**
   * The registered id a name carries (`x.<id><nonce>.<domain>`, any label depth, any case), or undefined. The
   * first label holding a registered correlation id followed by a nonce wins.
   */
  match(name: string): OastMatch | undefined {
    this.evict();
    const host = normalizeName(name);
    if (!host.endsWith(`.${this.domain}`)) return undefined;
    const fullId = host.slice(0, -(this.domain.length + 1));
    for (const label of fullId.split('.')) {
      if (label.length < OAST_ID_LENGTH) continue;
      const correlationId = label.slice(0, OAST_CORRELATION_ID_LENGTH);
      if (this.ids.has(correlationId) && /^[a-z0-9]+$/.test(label.slice(0, OAST_ID_LENGTH))) {
        return { correlationId, uniqueId: label.slice(0, OAST_ID_LENGTH), fullId };
      }
    }
    return undefined;
  }

  /** Counts one interaction of the id; false once it has recorded its share (the interaction is dropped). */
  take(correlationId: string): boolean {
    const entry = this.ids.get(correlationId);
    if (!entry || entry.recorded >= this.options.maxInteractionsPerId) return false;
    entry.recorded += 1;
    entry.seenAt = this.now();
    this.ids.delete(correlationId);
    this.ids.set(correlationId, entry);
    return true;
  }

  private evict(): void {
    const oldest = this.now() - this.options.idleMs;
    // least recently seen first: stop at the first one that stays
    for (const [id, entry] of this.ids) {
      if (this.ids.size <= this.maxIds && entry.seenAt >= oldest) break;
      this.ids.delete(id);
    }
  }
}

/** Lower case, no trailing dot, no port (an HTTP Host header may carry one). */
export function normalizeName(name: string): string {
  let host = name.trim().toLowerCase();
  if (host.startsWith('[')) return host;
  host = host.replace(/:\d+$/, '');
  return host.replace(/\.$/, '');
}
