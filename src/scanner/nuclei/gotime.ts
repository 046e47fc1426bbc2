/**
 * Go's reference-time layouts ("2006-01-02 15:04:05 Z07:00"), for the DSL's `date_time` and `to_unix_time`.
 *
 * nuclei formats with `time.Time.Format` and parses with `time.Parse`, so templates carry Go layouts. The layout
 * is cut into chunks as Go's nextStdChunk does (Jan/January, Mon/Monday, 01/1, 02/_2/2, 002/__2, 15/03/3, 04/4,
 * 05/5, 2006/06, PM/pm, MST, the -07 and Z07 offset families, .000/.999 fractions); everything else is literal.
 * Formatting uses the process's local time zone (Go's time.Now and time.Unix are local); parsing without an
 * offset in the input gives UTC (time.Parse). Not supported: Go's fabricated locations for zone abbreviations
 * (an `MST` chunk accepts an abbreviation and, like Go for unknown ones, takes offset 0; `GMT+h` is honoured).
 */

type Std =
  | 'January'
  | 'Jan'
  | 'Monday'
  | 'Mon'
  | 'MST'
  | '01'
  | '1'
  | '02'
  | '_2'
  | '2'
  | '002'
  | '__2'
  | '15'
  | '03'
  | '3'
  | '04'
  | '4'
  | '05'
  | '5'
  | '2006'
  | '06'
  | 'PM'
  | 'pm'
  | 'tz'
  | 'frac';

/** One piece of a layout: literal text, or a reference-time element (tz: offset forms, frac: fractional seconds). */
type Chunk = { lit: string } | { std: Std; text: string; z?: boolean; digits?: number; nines?: boolean };

const TZ_FORMS = ['070000', '07:00:00', '0700', '07:00', '07'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

function stdAt(layout: string, i: number): Chunk | undefined {
  const rest = layout.slice(i);
  const c = layout[i];
  const isDigit = (j: number) => j < layout.length && layout[j] >= '0' && layout[j] <= '9';
  switch (c) {
    case 'J':
      if (rest.startsWith('January')) return { std: 'January', text: 'January' };
      if (rest.startsWith('Jan')) return { std: 'Jan', text: 'Jan' };
      return undefined;
    case 'M':
      if (rest.startsWith('Monday')) return { std: 'Monday', text: 'Monday' };
      if (rest.startsWith('Mon')) return { std: 'Mon', text: 'Mon' };
      if (rest.startsWith('MST')) return { std: 'MST', text: 'MST' };
      return undefined;
    case '0':
      if (rest.startsWith('002')) return { std: '002', text: '002' };
      if (/^0[1-6]/.test(rest)) return { std: rest.slice(0, 2) as Std, text: rest.slice(0, 2) };
      return undefined;
    case '1':
      return rest.startsWith('15') ? { std: '15', text: '15' } : { std: '1', text: '1' };
    case '2':
      return rest.startsWith('2006') ? { std: '2006', text: '2006' } : { std: '2', text: '2' };
    case '_':
      if (rest.startsWith('_2') && !rest.startsWith('_2006')) return { std: '_2', text: '_2' };
      if (rest.startsWith('__2')) return { std: '__2', text: '__2' };
      return undefined;
    case '3':
    case '4':
    case '5':
      return { std: c, text: c };
    case 'P':
      return rest.startsWith('PM') ? { std: 'PM', text: 'PM' } : undefined;
    case 'p':
      return rest.startsWith('pm') ? { std: 'pm', text: 'pm' } : undefined;
    case '-':
    case 'Z':
      for (const form of TZ_FORMS) if (rest.startsWith(c + form)) return { std: 'tz', text: c + form, z: c === 'Z' };
      return undefined;
    case '.':
    case ',': {
      const d = layout[i + 1];
      if (d !== '0' && d !== '9') return undefined;
      let j = i + 1;
      while (j < layout.length && layout[j] === d) j++;
      if (isDigit(j)) return undefined;
      return { std: 'frac', text: layout.slice(i, j), digits: j - i - 1, nines: d === '9' };
    }
    default:
      return undefined;
  }
}

function chunks(layout: string): Chunk[] {
  const out: Chunk[] = [];
  let lit = '';
  for (let i = 0; i < layout.length; ) {
    // "_2006" is a literal "_" followed by the year, as in Go
    const std = stdAt(layout, i);
    if (std) {
      if (lit) out.push({ lit });
      lit = '';
      out.push(std);
      i += (std as { text: string }).text.length;
    } else {
      lit += layout[i];
      i++;
    }
  }
  if (lit) out.push({ lit });
  return out;
}

const pad = (n: number, w: number, ch = '0') => String(n).padStart(w, ch);

function formatOffset(chunk: { text: string; z?: boolean }, offsetMin: number): string {
  if (chunk.z && offsetMin === 0) return 'Z';
  const sign = offsetMin < 0 ? '-' : '+';
  const abs = Math.abs(offsetMin);
  const form = chunk.text.slice(1);
  const hh = pad(Math.floor(abs / 60), 2);
  const mm = pad(abs % 60, 2);
  if (form === '07') return sign + hh;
  if (form === '0700') return sign + hh + mm;
  if (form === '07:00') return `${sign}${hh}:${mm}`;
  if (form === '070000') return `${sign}${hh}${mm}00`;
  return `${sign}${hh}:${mm}:00`;
}

/** Locales whose short zone names are the tz database abbreviations for their regions (EST, CET, IST, AEDT, JST). */
const ZONE_LOCALES = ['en-US', 'en-GB', 'en-IN', 'en-AU', 'ja-JP'];

function zoneAbbreviation(d: Date): string {
  const offsetMin = -d.getTimezoneOffset();
  for (const locale of ZONE_LOCALES) {
    const name = new Intl.DateTimeFormat(locale, { timeZoneName: 'short' }).formatToParts(d).find((p) => p.type === 'timeZoneName')?.value;
    if (name && /^[A-Z]{3,5}$/.test(name)) return name;
  }
  if (offsetMin === 0) return 'UTC';
  // Go prints zones without an abbreviation as their offset: +03, -0330
  return formatOffset({ text: offsetMin % 60 === 0 ? '-07' : '-0700' }, offsetMin);
}

/** Go's `t.Format(layout)` for a point in time, in the local time zone. */
export function formatGoTime(d: Date, layout: string): string {
  let out = '';
  const hour = d.getHours();
  const yday = Math.round((Date.UTC(d.getFullYear(), d.getMonth(), d.getDate()) - Date.UTC(d.getFullYear(), 0, 1)) / 86_400_000) + 1;
  for (const c of chunks(layout)) {
    if ('lit' in c) {
      out += c.lit;
      continue;
    }
    switch (c.std) {
      case 'January':
        out += MONTHS[d.getMonth()];
        break;
      case 'Jan':
        out += MONTHS[d.getMonth()].slice(0, 3);
        break;
      case 'Monday':
        out += DAYS[d.getDay()];
        break;
      case 'Mon':
        out += DAYS[d.getDay()].slice(0, 3);
        break;
      case 'MST':
        out += zoneAbbreviation(d);
        break;
      case '01':
        out += pad(d.getMonth() + 1, 2);
        break;
      case '1':
        out += d.getMonth() + 1;
        break;
      case '02':
        out += pad(d.getDate(), 2);
        break;
      case '_2':
        out += pad(d.getDate(), 2, ' ');
        break;
      case '2':
        out += d.getDate();
        break;
      case '002':
        out += pad(yday, 3);
        break;
      case '__2':
        out += pad(yday, 3, ' ');
        break;
      case '15':
        out += pad(hour, 2);
        break;
      case '03':
        out += pad(hour % 12 || 12, 2);
        break;
      case '3':
        out += hour % 12 || 12;
        break;
      case '04':
        out += pad(d.getMinutes(), 2);
        break;
      case '4':
        out += d.getMinutes();
        break;
      case '05':
        out += pad(d.getSeconds(), 2);
        break;
      case '5':
        out += d.getSeconds();
        break;
      case '2006':
        out += pad(d.getFullYear(), 4);
        break;
      case '06':
        out += pad(d.getFullYear() % 100, 2);
        break;
      case 'PM':
        out += hour >= 12 ? 'PM' : 'AM';
        break;
      case 'pm':
        out += hour >= 12 ? 'pm' : 'am';
        break;
      case 'tz':
        out += formatOffset(c, -d.getTimezoneOffset());
        break;
      case 'frac': {
        // JavaScript time has millisecond precision: the nanoseconds below it are zero
        const nanos = pad(d.getMilliseconds() * 1_000_000, 9).slice(0, c.digits);
        if (!c.nines) out += c.text[0] + nanos;
        else if (/[1-9]/.test(nanos)) out += c.text[0] + nanos.replace(/0+$/, '');
        break;
      }
    }
  }
  return out;
}

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
