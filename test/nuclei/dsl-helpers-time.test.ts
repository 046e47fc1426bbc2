import { Worker } from 'node:worker_threads';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { evaluateExpression, scopeOf, type DslRecord } from '../../src/scanner/nuclei/index.js';

const ev = (expr: string, vars: DslRecord = {}) => evaluateExpression(expr, scopeOf(vars));
// 2023-11-14 22:13:20 UTC, a Tuesday, day 318 of the year
const T = 1700000000;

let savedTz: string | undefined;
beforeEach(() => {
  savedTz = process.env.TZ;
  process.env.TZ = 'UTC';
});
afterEach(() => {
  if (savedTz === undefined) delete process.env.TZ;
  else process.env.TZ = savedTz;
});

describe('date_time', () => {
  it('formats with nuclei %-directives, two digits at least', () => {
    expect(ev(`date_time('%Y-%M-%D %H:%m:%S', ${T})`)).toBe('2023-11-14 22:13:20');
    expect(ev(`date_time('%y/%d %h.%s', '${T}')`)).toBe('2023/14 22.20');
    expect(ev(`date_time('%D/%H/%m/%S', ${T - 9 * 86400 - 22 * 3600 - 12 * 60 - 19})`)).toBe('05/00/01/01');
    expect(ev("date_time('%Y')")).toMatch(/^2[0-9]{3}$/);
  });

  it('formats Go layouts when there is no %-directive', () => {
    expect(ev(`date_time('2006-01-02 15:04:05', ${T})`)).toBe('2023-11-14 22:13:20');
    expect(ev(`date_time('Mon, 02 Jan 2006 15:04:05 MST', ${T})`)).toBe('Tue, 14 Nov 2023 22:13:20 UTC');
    expect(ev(`date_time('Monday January 2 3:4:5 PM pm 06 002', ${T})`)).toBe('Tuesday November 14 10:13:20 PM pm 23 318');
    expect(ev(`date_time('2006-01-02T15:04:05Z07:00|-07:00|-0700|.000|.999|_2006', ${T})`)).toBe('2023-11-14T22:13:20Z|+00:00|+0000|.000||_2023');
    expect(ev(`date_time('Jan _2 __2', ${T - 9 * 86400})`)).toBe('Nov  5 309');
    expect(ev("date_time('Jan 2, 2006', hex_to_dec('65a0b1c2'))")).toBe('Jan 12, 2024');
    expect(ev(`date_time('Janet Month: Jan Mon', ${T})`)).toBe('Janet Month: Nov Tue');
  });

  it('uses the local time zone, as Go', () => {
    process.env.TZ = 'Asia/Kolkata';
    expect(ev(`date_time('2006-01-02T15:04:05-07:00 MST', ${T})`)).toBe('2023-11-15T03:43:20+05:30 IST');
    expect(ev(`date_time('%H:%m', ${T})`)).toBe('03:43');
  });

  it('rejects unknown directives, bad times and wrong arity', () => {
    expect(() => ev("date_time('%Q')")).toThrow('invalid date time format string: %Q');
    expect(() => ev("date_time('%Y', 'soon')")).toThrow('invalid argument type');
    expect(() => ev("date_time('%Y', true)")).toThrow('invalid argument type');
    expect(() => ev('date_time()')).toThrow('invalid number of arguments');
    expect(() => ev("date_time('%Y', 1, 2)")).toThrow('invalid number of arguments');
  });
});

describe('to_unix_time', () => {
  it('takes numbers as they are and tries nuclei default layouts in order', () => {
    expect(ev(`to_unix_time('${T}')`)).toBe(T);
    expect(ev(`to_unix_time(${T})`)).toBe(T);
    expect(ev("to_unix_time('1700000000.9')")).toBe(T);
    expect(ev("to_unix_time('2023-11-14T22:13:20Z')")).toBe(T);
    expect(ev("to_unix_time('2023-11-14T22:13:20.123+01:00')")).toBe(T - 3600);
    expect(ev("to_unix_time('2023-11-14 22:13:20 +01:00')")).toBe(T - 3600);
    expect(ev("to_unix_time('2023-11-14 22:13:20')")).toBe(T);
    expect(ev("to_unix_time('2023-11-14 22:13 -02:30')")).toBe(T - 20 + 9000);
    expect(ev("to_unix_time('2023-11-14')")).toBe(T - (22 * 3600 + 13 * 60 + 20));
    expect(ev("tounixtime('2023-11-14 Z')")).toBe(T - (22 * 3600 + 13 * 60 + 20));
  });

  it('parses with a Go layout given as second argument (UTC unless the input has an offset)', () => {
    expect(ev("to_unix_time('14/11/2023', '02/01/2006')")).toBe(T - (22 * 3600 + 13 * 60 + 20));
    expect(ev("to_unix_time('14 Nov 23 22:13 UTC', '02 Jan 06 15:04 MST')")).toBe(T - 20);
    expect(ev("to_unix_time('Tuesday, Nov 14, 2023 at 10:13:20pm', 'Monday, Jan 2, 2006 at 3:04:05pm')")).toBe(T);
    expect(ev("to_unix_time('2023-11-14T22:13:20+0100', '2006-01-02T15:04:05Z0700')")).toBe(T - 3600);
    expect(ev("to_unix_time('1969-12-31', '2006-01-02')")).toBe(-86400);
  });

  it('reports inputs no layout reads', () => {
    expect(() => ev("to_unix_time('yesterday')")).toThrow('could not parse the current input with the default layouts');
    expect(() => ev("to_unix_time('2023-02-30')")).toThrow('default layouts');
    expect(() => ev("to_unix_time('2023-13-01')")).toThrow('default layouts');
    expect(() => ev("to_unix_time('2023-11-14 22:13:20 and more')")).toThrow('default layouts');
    expect(() => ev("to_unix_time('14/11/2023', '2006-01-02')")).toThrow("could not parse the current input with the '2006-01-02' layout");
    expect(() => ev("to_unix_time('1', '2', '3')")).toThrow('invalid number of arguments');
  });
});

describe('wait_for', () => {
  it('returns true at once for zero or negative waits', () => {
    expect(ev('wait_for(0)')).toBe(true);
    expect(ev("wait_for('-3')")).toBe(true);
  });

  it('refuses waits over the limit, non-numbers, and sleeping on the main thread', () => {
    expect(() => ev('wait_for(31)')).toThrow('over the 30 s limit');
    expect(() => ev("wait_for('soon')")).toThrow("'soon' is not a number");
    expect(() => ev('wait_for(1)')).toThrow('only runs in template worker threads');
    expect(() => ev('wait_for()')).toThrow('invalid number of arguments');
  });

  it('sleeps in a worker thread (where templates are evaluated) and returns true', async () => {
    const worker = new Worker(new URL('./dsl-helpers-worker.mjs', import.meta.url), { workerData: { expression: 'wait_for(1)' } });
    const answer = await new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    await worker.terminate();
    expect(answer).toEqual({ value: true });
  });
});
