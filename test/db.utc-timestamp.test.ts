import { describe, expect, it } from 'vitest';
import { utcTimestamp } from '../src/db/utc-timestamp.js';

/** What prepared reads did before: the Date parser on the text as an ISO instant. */
const viaDateParser = (text: string) => new Date(`${text.replace(' ', 'T')}Z`);

describe('utcTimestamp', () => {
  it('reads what the Date parser reads, for the layouts PostgreSQL and json_build_object write', () => {
    const texts: string[] = [];
    for (let i = 0; i < 2000; i++) {
      const iso = new Date(Date.UTC(100, 0, 1) + Math.floor(Math.random() * 300_000) * 86_400_000 + Math.floor(Math.random() * 86_400_000)).toISOString();
      // PostgreSQL trims trailing zeros of the fraction, and the dot with them.
      const trimmed = iso.slice(0, -1).replace(/\.?0+$/, '');
      texts.push(trimmed.replace('T', ' '), trimmed);
    }
    texts.push('2024-07-01 03:20:00', '2024-07-01 03:20:00.5', '2024-07-01 03:20:00.05', '2024-07-01 03:20:00.123456', '2024-02-29 23:59:59.999');
    for (const text of texts) expect(utcTimestamp(text).getTime(), text).toBe(viaDateParser(text).getTime());
  });

  it('leaves what it does not read from the digits to the Date parser: early years, BC, infinity, five-digit years', () => {
    for (const text of [
      '0099-12-31 23:59:59',
      '0001-01-01 00:00:00',
      '2024-07-01 03:20:00 BC',
      'infinity',
      '-infinity',
      '10000-01-01 00:00:00',
      '2024-07-01 03:20:00.',
    ]) {
      expect(Object.is(utcTimestamp(text).getTime(), viaDateParser(text).getTime()), text).toBe(true);
    }
    expect(utcTimestamp('0099-12-31 23:59:59').getUTCFullYear()).toBe(99);
  });
});
