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

export type Std =
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
export type Chunk = { lit: string } | { std: Std; text: string; z?: boolean; digits?: number; nines?: boolean };

const TZ_FORMS = ['070000', '07:00:00', '0700', '07:00', '07'];
export const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
export const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

function stdAt(layout: string, i: number): Chunk | undefined {
  const rest = layout.slice(i);
  const c = layout[i];
  const isDigit = (j: number) => j < layout.length && layout[j] >= '0' && layout[j] <= '9';
  switch (c) {
    case 'J':
      if (rest.startsWith('January')) return { std: 'January', text: 'January' };
      // "Jan" followed by a lower-case letter ("Janet") is literal text, as in Go
      if (rest.startsWith('Jan') && !/^[a-z]/.test(rest.slice(3))) return { std: 'Jan', text: 'Jan' };
      return undefined;
    case 'M':
      if (rest.startsWith('Monday')) return { std: 'Monday', text: 'Monday' };
      if (rest.startsWith('Mon') && !/^[a-z]/.test(rest.slice(3))) return { std: 'Mon', text: 'Mon' };
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

export function chunks(layout: string): Chunk[] {
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
