import { describe, expect, it } from 'vitest';
import { ConfigError, loadEnv } from '../src/env.js';
import { ValidationError } from '../src/errors.js';
import { canonicalTimeZone, checkCadence, nextTick, shortestGapSeconds } from '../src/modules/schedules/cadence.js';

/** The cadence rules on their own: next ticks across time zones and daylight saving, the floor, the settings. */

const NOW = new Date('2026-03-28T12:00:00Z');

function refusal(run: () => unknown): { field: string; message: string } {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).details![0]!;
  }
  throw new Error('expected a ValidationError');
}

describe('schedule cadence', () => {
  it('reads the expression in its time zone, across a daylight-saving change', () => {
    // Paris moves to summer time in the night of 28 to 29 March 2026: 03:00 local is 02:00 UTC before, 01:00 after.
    expect(nextTick('0 3 * * *', 'Europe/Paris', NOW).toISOString()).toBe('2026-03-29T01:00:00.000Z');
    expect(nextTick('0 3 * * *', 'UTC', NOW).toISOString()).toBe('2026-03-29T03:00:00.000Z');
    expect(nextTick('0 9 * * 1', 'America/New_York', NOW).toISOString()).toBe('2026-03-30T13:00:00.000Z');
    // Strictly after: a tick at exactly now is not the next one.
    expect(nextTick('0 12 * * *', 'UTC', NOW).toISOString()).toBe('2026-03-29T12:00:00.000Z');
  });

  it('measures the shortest gap, not the usual one', () => {
    expect(shortestGapSeconds('*/5 * * * *', 'UTC', NOW)).toBe(300);
    expect(shortestGapSeconds('0 * * * *', 'UTC', NOW)).toBe(3600);
    expect(shortestGapSeconds('0,10 3 * * *', 'UTC', NOW)).toBe(600);
    expect(shortestGapSeconds('0 0 * * 1,2', 'UTC', NOW)).toBe(86_400);
  });

  it('holds schedules to the floor and names the field of every refusal', () => {
    expect(checkCadence('*/5 * * * *', 'utc', 300, NOW)).toEqual({ timeZone: 'UTC', nextRunAt: new Date('2026-03-28T12:05:00Z') });
    expect(refusal(() => checkCadence('*/5 * * * *', 'UTC', 600, NOW))).toEqual({ field: 'cron', message: expect.stringContaining('at most every 600 s') });
    expect(refusal(() => checkCadence('0 0 * * *', 'Atlantis/Capital', 300, NOW)).field).toBe('timeZone');
    expect(refusal(() => checkCadence('0 0 * *', 'UTC', 300, NOW)).field).toBe('cron');
    expect(refusal(() => checkCadence('0 25 * * *', 'UTC', 300, NOW)).field).toBe('cron');
    expect(canonicalTimeZone('america/argentina/buenos_aires')).toMatch(/^America\/(Argentina\/)?Buenos_Aires$/);
  });

  it('reads SCHEDULE_MIN_INTERVAL_SECONDS and SCHEDULE_TICK_SECONDS from the environment, with defaults and bounds', () => {
    const defaults = loadEnv({});
    expect(defaults.SCHEDULE_MIN_INTERVAL_SECONDS).toBe(300);
    expect(defaults.SCHEDULE_TICK_SECONDS).toBe(30);
    expect(loadEnv({ SCHEDULE_MIN_INTERVAL_SECONDS: '3600', SCHEDULE_TICK_SECONDS: '1' })).toMatchObject({
      SCHEDULE_MIN_INTERVAL_SECONDS: 3600,
      SCHEDULE_TICK_SECONDS: 1,
    });
    expect(() => loadEnv({ SCHEDULE_MIN_INTERVAL_SECONDS: '30' })).toThrow(ConfigError);
    expect(() => loadEnv({ SCHEDULE_MIN_INTERVAL_SECONDS: '30' })).toThrow(/SCHEDULE_MIN_INTERVAL_SECONDS/);
    expect(() => loadEnv({ SCHEDULE_TICK_SECONDS: '0' })).toThrow(/SCHEDULE_TICK_SECONDS/);
  });
});
