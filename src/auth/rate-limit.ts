import { RateLimitedError } from '../errors.js';

/**
 * Fixed-window attempt counter for sign-in and sign-up, keyed by action and client address, and for
 * sign-in also by account (e-mail), so that an attacker spreading guesses over many addresses still meets
 * a limit per account. In memory: each API instance counts on its own (documented in the README).
 */
export class AttemptLimiter {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();

  constructor(
    private readonly max: number,
    private readonly windowMs: number,
  ) {}

  /** Counts one attempt; throws RateLimitedError (429 with Retry-After) past the limit (`max`, default the limiter's). */
  hit(key: string, max = this.max, now = Date.now()): void {
    const window = this.windows.get(key);
    if (!window || window.resetAt <= now) {
      this.windows.set(key, { count: 1, resetAt: now + this.windowMs });
      this.sweep(now);
      return;
    }
    window.count += 1;
    if (window.count > max) throw new RateLimitedError(Math.max(1, Math.ceil((window.resetAt - now) / 1000)));
  }

  private sweep(now: number): void {
    if (this.windows.size < 10_000) return;
    for (const [key, window] of this.windows) if (window.resetAt <= now) this.windows.delete(key);
  }
}
