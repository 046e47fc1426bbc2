import { describe, expect, it } from 'vitest';
import { isoString } from '../src/iso-string.js';

describe('isoString (the DateTime scalar and REST dates)', () => {
  it("is exactly toISOString's text", () => {
    const samples = [
      0,
      Date.UTC(2024, 3, 1, 4, 44, 0, 123),
      Date.UTC(1999, 11, 31, 23, 59, 59, 999),
      Date.UTC(2000, 1, 29, 0, 0, 0, 5),
      Date.UTC(9999, 11, 31, 23, 59, 59, 999),
      Date.UTC(1, 0, 1),
      Date.UTC(999, 5, 6, 7, 8, 9, 10),
      -1,
    ];
    for (let i = 0; i < 2_000; i += 1) samples.push(Date.UTC(2020, 0, 1) + i * 987_654_321);
    for (const time of samples) {
      const date = new Date(time);
      expect(isoString(date), String(time)).toBe(date.toISOString());
    }
  });

  it('takes the extended form outside years 0–9999, and refuses an invalid date as toISOString does', () => {
    for (const time of [Date.UTC(10_000, 0, 1), Date.UTC(-1, 0, 1), -62_198_755_200_001]) {
      const date = new Date(time);
      expect(isoString(date)).toBe(date.toISOString());
    }
    expect(() => isoString(new Date(Number.NaN))).toThrow(RangeError);
  });
});
