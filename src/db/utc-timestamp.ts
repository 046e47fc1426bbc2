/**
 * PostgreSQL `timestamp` text (`2024-07-01 03:20:00.005`, or with a `T` where a statement built it as JSON) as
 * the UTC instant it holds, as Prisma writes them. Read from the digits: about three times as fast as handing
 * `2024-07-01T03:20:00.005Z` to the Date parser (0.15 µs against 0.42 µs here), and a list page reads a few
 * hundred. Anything else (a year before 100 or after 9999, BC, `infinity`, another layout) goes to the Date
 * parser as before; so do fractions, beyond milliseconds, which both drop.
 */
export function utcTimestamp(text: string): Date {
  const length = text.length;
  const separator = text.charCodeAt(10);
  if (
    length < 19 ||
    length > 26 ||
    text.charCodeAt(4) !== DASH ||
    text.charCodeAt(7) !== DASH ||
    (separator !== SPACE && separator !== LETTER_T) ||
    text.charCodeAt(13) !== COLON ||
    text.charCodeAt(16) !== COLON ||
    (length > 19 && (length === 20 || text.charCodeAt(19) !== DOT))
  ) {
    return viaDateParser(text);
  }
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 2);
  const day = digits(text, 8, 2);
  const hours = digits(text, 11, 2);
  const minutes = digits(text, 14, 2);
  const seconds = digits(text, 17, 2);
  const milliseconds = length > 20 ? digits(text, 20, Math.min(3, length - 20)) * MS_SCALE[Math.min(3, length - 20)]! : 0;
  // Date.UTC reads years 0–99 as 1900–1999; NaN when a character was not a digit.
  if (!(year >= 100) || Number.isNaN(milliseconds + month + day + hours + minutes + seconds)) return viaDateParser(text);
  return new Date(Date.UTC(year, month - 1, day, hours, minutes, seconds, milliseconds));
}

const DASH = 45;
const SPACE = 32;
const LETTER_T = 84;
const COLON = 58;
const DOT = 46;
/** A fraction of 1, 2 or 3 digits in milliseconds. */
const MS_SCALE = [0, 100, 10, 1];

/** The number written by `count` decimal digits from `start`; NaN if one is not a digit. */
function digits(text: string, start: number, count: number): number {
  let value = 0;
  for (let i = start; i < start + count; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return Number.NaN;
    value = value * 10 + digit;
  }
  return value;
}

function viaDateParser(text: string): Date {
  return new Date(`${text.replace(' ', 'T')}Z`);
}
