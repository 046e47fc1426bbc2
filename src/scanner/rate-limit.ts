/**
 * Per-host limiter: at most N operations in flight and at most R starts per second per host.
 *
 * Scanning is many small operations against few hosts; without this, a port sweep plus the HTTP
 * and TLS probes that follow it would hit one target as hard as the machine allows, which reads as
 * an attack and can knock over a small server. Two limits because they catch different things:
 * concurrency bounds open sockets (slow targets), the token bucket bounds request rate (fast ones).
 *
 * Callers key by the IP they dial, so two names for one server share one budget.
 */

export interface HostRateLimiterOptions {
  /** Operations in flight per host. */
  maxConcurrentPerHost?: number;
  /** Operation starts per second per host (token bucket refill rate). */
  maxPerSecondPerHost?: number;
  /** Bucket size: how many starts may happen at once after an idle period. Defaults to one second's worth. */
  burst?: number;
}

export interface HostRateLimiter {
  /** Runs `fn` once `host` has a free slot and a token; resolves or rejects with `fn`'s outcome. */
  run<T>(host: string, fn: () => Promise<T>): Promise<T>;
  /** Operations running right now for `host` (for tests and metrics). */
  active(host: string): number;
  readonly options: Required<HostRateLimiterOptions>;
}

/** Polite defaults for real targets; a port sweep of the top 100 ports finishes in well under a second. */
export const DEFAULT_RATE_LIMITS: Required<HostRateLimiterOptions> = {
  maxConcurrentPerHost: 32,
  maxPerSecondPerHost: 200,
  burst: 200,
};

/** Hosts remembered before idle ones with full buckets are dropped. */
const SWEEP_THRESHOLD = 1024;

interface HostState {
  active: number;
  tokens: number;
  refilledAt: number;
  waiting: Array<() => void>;
  timer?: NodeJS.Timeout;
}

export function createHostRateLimiter(options: HostRateLimiterOptions = {}): HostRateLimiter {
  const maxConcurrentPerHost = positive('maxConcurrentPerHost', options.maxConcurrentPerHost ?? DEFAULT_RATE_LIMITS.maxConcurrentPerHost);
  const maxPerSecondPerHost = positive('maxPerSecondPerHost', options.maxPerSecondPerHost ?? DEFAULT_RATE_LIMITS.maxPerSecondPerHost);
  const burst = Math.max(1, options.burst ?? maxPerSecondPerHost);
  const hosts = new Map<string, HostState>();

  function stateFor(host: string): HostState {
    let state = hosts.get(host);
    if (!state) {
      if (hosts.size >= SWEEP_THRESHOLD) sweepIdleHosts();
      state = { active: 0, tokens: burst, refilledAt: Date.now(), waiting: [] };
      hosts.set(host, state);
    }
    return state;
  }

  function refill(state: HostState): void {
    const now = Date.now();
    state.tokens = Math.min(burst, state.tokens + ((now - state.refilledAt) / 1000) * maxPerSecondPerHost);
    state.refilledAt = now;
  }

  function sweepIdleHosts(): void {
    for (const [host, state] of hosts) {
      if (state.active > 0 || state.waiting.length > 0 || state.timer) continue;
      refill(state);
      if (state.tokens >= burst) hosts.delete(host);
    }
  }

  /** Starts as many waiters as both limits allow; if only tokens are short, wakes up when the next one is due. */
  function pump(host: string, state: HostState): void {
    refill(state);
    while (state.waiting.length > 0 && state.active < maxConcurrentPerHost && state.tokens >= 1) {
      state.tokens -= 1;
      state.active += 1;
      state.waiting.shift()!();
    }
    if (state.waiting.length > 0 && state.active < maxConcurrentPerHost && !state.timer) {
      const waitMs = Math.ceil(((1 - state.tokens) / maxPerSecondPerHost) * 1000);
      state.timer = setTimeout(
        () => {
          state.timer = undefined;
          pump(host, state);
        },
        Math.max(1, waitMs),
      );
    }
    // Forget idle hosts once their bucket is full again, so a long-running worker does not grow without bound;
    // a forgotten host starts with a full bucket, which is exactly the state it was in.
    if (state.active === 0 && state.waiting.length === 0 && state.tokens >= burst && !state.timer) hosts.delete(host);
  }

  async function run<T>(host: string, fn: () => Promise<T>): Promise<T> {
    const state = stateFor(host);
    await new Promise<void>((resolve) => {
      state.waiting.push(resolve);
      pump(host, state);
    });
    try {
      return await fn();
    } finally {
      state.active -= 1;
      // The state may have been dropped and recreated meanwhile only if it was idle, which it is not while we hold a slot.
      pump(host, state);
    }
  }

  return {
    run,
    active: (host) => hosts.get(host)?.active ?? 0,
    options: { maxConcurrentPerHost, maxPerSecondPerHost, burst },
  };
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`${name} must be a positive number, got ${value}`);
  return value;
}
