/** Go's time.Parse: a layout's elements read from the input; UTC unless the input carries an offset. */
import { type Chunk, chunks, DAYS, MONTHS } from './layout.js';

export class GoTimeParseError extends Error {}

interface Fields {
  year: number;
  month: number;
  day: number;
  yday: number;
  hour: number;
  min: number;
  sec: number;
  ms: number;
  pm?: boolean;
  offsetSec?: number;
}

/** Go's `skip`: the literal must match, runs of spaces in the layout match runs of spaces in the input. */
function skip(value: string, lit: string): string {
  let v = value;
  let p = lit;
  while (p.length) {
    if (p[0] === ' ') {
      if (v.length && v[0] !== ' ') throw new GoTimeParseError(`cannot parse "${value}" as "${lit}"`);
      p = p.replace(/^ +/, '');
      v = v.replace(/^ +/, '');
      continue;
    }
    if (!v.length || v[0] !== p[0]) throw new GoTimeParseError(`cannot parse "${value}" as "${lit}"`);
    p = p.slice(1);
    v = v.slice(1);
  }
  return v;
}

function num(value: string, fixed: number | [number, number], what: string): [number, string] {
  const [min, max] = typeof fixed === 'number' ? [fixed, fixed] : fixed;
  const m = new RegExp(`^[0-9]{${min},${max}}`).exec(value);
  if (!m) throw new GoTimeParseError(`cannot parse "${value}" as ${what}`);
  return [Number(m[0]), value.slice(m[0].length)];
}

function lookup(value: string, names: string[], short: boolean): [number, string] {
  for (let i = 0; i < names.length; i++) {
    const name = short ? names[i].slice(0, 3) : names[i];
    if (value.slice(0, name.length).toLowerCase() === name.toLowerCase()) return [i, value.slice(name.length)];
  }
  throw new GoTimeParseError(`cannot parse "${value}" as a ${short ? 'short' : ''} name`);
}

function parseOffset(value: string, c: { text: string; z?: boolean }): [number, string] {
  if (c.z && value[0] === 'Z') return [0, value.slice(1)];
  const form = c.text.slice(1);
  const pattern = form.replace(/0/g, '[0-9]').replace(/7/g, '[0-9]');
  const m = new RegExp(`^[+-]${pattern}`).exec(value);
  if (!m) throw new GoTimeParseError(`cannot parse "${value}" as "${c.text}"`);
  const digits = m[0].slice(1).replace(/:/g, '');
  const secs = Number(digits.slice(0, 2)) * 3600 + Number(digits.slice(2, 4) || 0) * 60 + Number(digits.slice(4, 6) || 0);
  return [m[0][0] === '-' ? -secs : secs, value.slice(m[0].length)];
}

function parseFraction(value: string): [number, string] {
  const m = /^[.,]([0-9]+)/.exec(value);
  if (!m) return [0, value];
  return [Number(`0.${m[1]}`) * 1000, value.slice(m[0].length)];
}

function applyChunk(f: Fields, c: Exclude<Chunk, { lit: string }>, value: string, next: Chunk | undefined): string {
  let v = value;
  switch (c.std) {
    case 'January':
    case 'Jan':
      [f.month, v] = lookup(v, MONTHS, c.std === 'Jan');
      f.month += 1;
      return v;
    case 'Monday':
    case 'Mon':
      return lookup(v, DAYS, c.std === 'Mon')[1];
    case 'MST': {
      const m = /^(GMT([+-][0-9]{1,2})?|UTC|[A-Z]{3,5}|ChST|MeST)/.exec(v);
      if (!m) throw new GoTimeParseError(`cannot parse "${v}" as "MST"`);
      f.offsetSec = m[2] ? Number(m[2]) * 3600 : 0;
      return v.slice(m[0].length);
    }
    case '01':
    case '1':
      [f.month, v] = num(v, c.std === '01' ? 2 : [1, 2], 'month');
      if (f.month < 1 || f.month > 12) throw new GoTimeParseError('month out of range');
      return v;
    case '02':
    case '_2':
    case '2':
      if (c.std === '_2' && v[0] === ' ') v = v.slice(1);
      [f.day, v] = num(v, c.std === '02' ? 2 : [1, 2], 'day');
      return v;
    case '002':
    case '__2':
      if (c.std === '__2') v = v.replace(/^ {1,2}/, '');
      [f.yday, v] = num(v, c.std === '002' ? 3 : [1, 3], 'day of year');
      if (f.yday < 1 || f.yday > 366) throw new GoTimeParseError('day-of-year out of range');
      return v;
    case '15':
      [f.hour, v] = num(v, [1, 2], 'hour');
      if (f.hour > 23) throw new GoTimeParseError('hour out of range');
      return v;
    case '03':
    case '3':
      [f.hour, v] = num(v, c.std === '03' ? 2 : [1, 2], 'hour');
      if (f.hour > 12) throw new GoTimeParseError('hour out of range');
      return v;
    case '04':
    case '4':
      [f.min, v] = num(v, c.std === '04' ? 2 : [1, 2], 'minute');
      if (f.min > 59) throw new GoTimeParseError('minute out of range');
      return v;
    case '05':
    case '5':
      [f.sec, v] = num(v, c.std === '05' ? 2 : [1, 2], 'second');
      if (f.sec > 59) throw new GoTimeParseError('second out of range');
      // Go accepts a fractional second after the seconds even when the layout has none
      if (!(next && 'std' in next && next.std === 'frac')) [f.ms, v] = parseFraction(v);
      return v;
    case '2006':
      [f.year, v] = num(v, 4, 'year');
      return v;
    case '06':
      [f.year, v] = num(v, 2, 'year');
      f.year += f.year >= 69 ? 1900 : 2000;
      return v;
    case 'PM':
    case 'pm': {
      const ap = v.slice(0, 2);
      const want = c.std === 'PM' ? ['AM', 'PM'] : ['am', 'pm'];
      if (!want.includes(ap)) throw new GoTimeParseError(`cannot parse "${v}" as "${c.std}"`);
      f.pm = ap === want[1];
      return v.slice(2);
    }
    case 'tz':
      [f.offsetSec, v] = parseOffset(v, c);
      return v;
    case 'frac': {
      if (!c.nines) {
        const m = new RegExp(`^[.,][0-9]{${c.digits}}`).exec(v);
        if (!m) throw new GoTimeParseError(`cannot parse "${v}" as "${c.text}"`);
      }
      [f.ms, v] = parseFraction(v);
      return v;
    }
  }
}

const daysIn = (year: number, month: number) => (month === 2 ? (isLeap(year) ? 29 : 28) : new Date(Date.UTC(2001, month, 0)).getUTCDate());
const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;

/** Go's `time.Parse(layout, value)`, as Unix seconds (floored, as Go's `Unix()`). Throws GoTimeParseError. */
export function parseGoTime(value: string, layout: string): number {
  const f: Fields = { year: 0, month: -1, day: -1, yday: -1, hour: 0, min: 0, sec: 0, ms: 0 };
  const list = chunks(layout);
  let v = value;
  for (let i = 0; i < list.length; i++) {
    const c = list[i];
    v = 'lit' in c ? skip(v, c.lit) : applyChunk(f, c, v, list[i + 1]);
  }
  if (v.length) throw new GoTimeParseError(`extra text: "${v}"`);
  if (f.pm === true && f.hour < 12) f.hour += 12;
  else if (f.pm === false && f.hour === 12) f.hour = 0;
  if (f.yday >= 0 && f.month < 0 && f.day < 0) {
    if (f.yday > (isLeap(f.year) ? 366 : 365)) throw new GoTimeParseError('day-of-year out of range');
    const d = new Date(Date.UTC(2000, 0, 1));
    d.setUTCFullYear(f.year, 0, f.yday);
    f.month = d.getUTCMonth() + 1;
    f.day = d.getUTCDate();
  }
  if (f.month < 0) f.month = 1;
  if (f.day < 0) f.day = 1;
  if (f.day < 1 || f.day > daysIn(f.year, f.month)) throw new GoTimeParseError('day out of range');
  const d = new Date(0);
  d.setUTCFullYear(f.year, f.month - 1, f.day);
  d.setUTCHours(f.hour, f.min, f.sec, 0);
  return Math.floor(d.getTime() / 1000) - (f.offsetSec ?? 0);
}
