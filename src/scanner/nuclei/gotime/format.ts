/** Go's time.Format: a point in time through a layout, in the process's local time zone (Go's time.Now is local). */
import { chunks, DAYS, MONTHS } from './layout.js';

const pad = (n: number, w: number, ch = '0') => String(n).padStart(w, ch);

export function formatOffset(chunk: { text: string; z?: boolean }, offsetMin: number): string {
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
