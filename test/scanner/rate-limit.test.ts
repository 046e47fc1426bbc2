import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createHostRateLimiter } from '../../src/scanner/index.js';

describe('createHostRateLimiter', () => {
  it('never runs more than maxConcurrentPerHost operations for one host at once', async () => {
    const limiter = createHostRateLimiter({ maxConcurrentPerHost: 3, maxPerSecondPerHost: 10_000 });
    let running = 0;
    let peak = 0;
    const task = async () => {
      running++;
      peak = Math.max(peak, running);
      expect(limiter.active('127.0.0.1')).toBeLessThanOrEqual(3);
      await sleep(5);
      running--;
    };
    await Promise.all(Array.from({ length: 20 }, () => limiter.run('127.0.0.1', task)));
    expect(peak).toBe(3);
    expect(limiter.active('127.0.0.1')).toBe(0);
  });

  it('limits each host separately', async () => {
    const limiter = createHostRateLimiter({ maxConcurrentPerHost: 2, maxPerSecondPerHost: 10_000 });
    const running = new Map<string, number>();
    let peakTotal = 0;
    const task = (host: string) => async () => {
      running.set(host, (running.get(host) ?? 0) + 1);
      peakTotal = Math.max(
        peakTotal,
        [...running.values()].reduce((a, b) => a + b, 0),
      );
      expect(running.get(host)).toBeLessThanOrEqual(2);
      await sleep(5);
      running.set(host, running.get(host)! - 1);
    };
    await Promise.all(['127.0.0.1', '127.0.0.2', '::1'].flatMap((host) => Array.from({ length: 6 }, () => limiter.run(host, task(host)))));
    expect(peakTotal).toBe(6);
  });

  it('spaces starts to maxPerSecondPerHost once the burst is spent', async () => {
    const limiter = createHostRateLimiter({ maxConcurrentPerHost: 100, maxPerSecondPerHost: 50, burst: 1 });
    const starts: number[] = [];
    const begin = Date.now();
    await Promise.all(Array.from({ length: 6 }, () => limiter.run('h', async () => void starts.push(Date.now() - begin))));
    // One immediately, then one every 20 ms: the sixth no earlier than ~100 ms after the first.
    expect(starts[5] - starts[0]).toBeGreaterThanOrEqual(90);
    for (let i = 1; i < starts.length; i++) expect(starts[i] - starts[i - 1]).toBeGreaterThanOrEqual(15);
  });

  it('passes results and errors through and frees the slot either way', async () => {
    const limiter = createHostRateLimiter({ maxConcurrentPerHost: 1, maxPerSecondPerHost: 10_000 });
    await expect(limiter.run('h', async () => 42)).resolves.toBe(42);
    await expect(limiter.run('h', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(limiter.run('h', async () => 'still works')).resolves.toBe('still works');
    expect(limiter.active('h')).toBe(0);
  });

  it('rejects nonsense limits', () => {
    expect(() => createHostRateLimiter({ maxConcurrentPerHost: 0 })).toThrow(/maxConcurrentPerHost must be a positive number/);
    expect(() => createHostRateLimiter({ maxPerSecondPerHost: -1 })).toThrow(/maxPerSecondPerHost/);
  });
});
