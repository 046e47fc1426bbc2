import { CronExpressionParser } from 'cron-parser';
import { ValidationError } from '../../errors.js';

/**
 * When a schedule fires: a standard 5-field cron expression read in an IANA time zone. Pure functions over
 * cron-parser; the service checks a schedule here before it is stored and the ticker asks for the next tick.
 */

const FIELD_NAMES = 'minute hour day-of-month month day-of-week';
/** Enough consecutive ticks to see the shortest gap of any expression with lists or ranges within a day or a week. */
const TICKS_FOR_MIN_GAP = 64;

function fieldError(field: 'cron' | 'timeZone', message: string): ValidationError {
  return new ValidationError(`Invalid input: ${field}: ${message}`, [{ field, message }]);
}

/** The canonical name of an IANA time zone (`europe/paris` → `Europe/Paris`); a ValidationError on `timeZone` otherwise. */
export function canonicalTimeZone(timeZone: string): string {
  // Intl also knows offsets such as +01:00 on some Node versions: only names are accepted, as the API says.
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(timeZone))
    throw fieldError('timeZone', `"${timeZone}" is not an IANA time zone such as Europe/Paris or UTC`);
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone }).resolvedOptions().timeZone;
  } catch {
    throw fieldError('timeZone', `"${timeZone}" is not an IANA time zone such as Europe/Paris or UTC`);
  }
}

function parse(cron: string, timeZone: string, after: Date) {
  const fields = cron.trim().split(/\s+/);
  // cron-parser also takes a seconds field and @macros: the API promises exactly the 5 classic fields.
  if (fields.length !== 5 || fields.some((field) => field.startsWith('@'))) {
    throw fieldError('cron', `must have exactly 5 fields (${FIELD_NAMES}); got ${fields.length}`);
  }
  try {
    return CronExpressionParser.parse(fields.join(' '), { tz: timeZone, currentDate: after, strict: false });
  } catch (error) {
    throw fieldError('cron', `is not a valid cron expression: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** The first tick strictly after `after`. */
export function nextTick(cron: string, timeZone: string, after: Date): Date {
  const expression = parse(cron, timeZone, after);
  try {
    return expression.next().toDate();
  } catch (error) {
    // An expression that never matches (31 February): cron-parser gives up searching.
    throw fieldError('cron', `never fires: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** The shortest gap, in seconds, between consecutive ticks over the next TICKS_FOR_MIN_GAP ticks. */
export function shortestGapSeconds(cron: string, timeZone: string, after: Date): number {
  const expression = parse(cron, timeZone, after);
  let previous: number | undefined;
  let shortest = Number.POSITIVE_INFINITY;
  try {
    for (let i = 0; i < TICKS_FOR_MIN_GAP && expression.hasNext(); i++) {
      const at = expression.next().getTime();
      if (previous !== undefined) shortest = Math.min(shortest, (at - previous) / 1000);
      previous = at;
    }
  } catch (error) {
    if (previous === undefined) throw fieldError('cron', `never fires: ${error instanceof Error ? error.message : String(error)}`);
  }
  return shortest;
}

/**
 * Checks a schedule's cadence as it will be stored: a valid 5-field expression in a known zone that fires no
 * more often than `minIntervalSeconds`. Returns the canonical zone and the first tick after `now`.
 */
export function checkCadence(cron: string, timeZone: string, minIntervalSeconds: number, now: Date): { timeZone: string; nextRunAt: Date } {
  const zone = canonicalTimeZone(timeZone);
  const gap = shortestGapSeconds(cron, zone, now);
  if (gap < minIntervalSeconds) {
    throw fieldError('cron', `fires every ${gap} s at times; schedules may fire at most every ${minIntervalSeconds} s (SCHEDULE_MIN_INTERVAL_SECONDS)`);
  }
  return { timeZone: zone, nextRunAt: nextTick(cron, zone, now) };
}
