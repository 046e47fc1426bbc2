/**
 * CSV as RFC 4180 writes it (CRLF line ends, fields quoted when they hold a quote, comma, CR or LF, quotes
 * doubled), with the OWASP defence against formula injection: a text cell starting with = + - @, a tab or a
 * carriage return is prefixed with a single quote, so spreadsheet programs show it as text instead of running it.
 */

/** Characters that make a spreadsheet read a cell as a formula (OWASP "CSV Injection"). */
const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

export type CsvValue = string | number | boolean | Date | null | undefined | readonly string[];

/** One cell: numbers and booleans as they are, dates in ISO 8601, lists joined with "; ", nothing as empty. */
export function csvCell(value: CsvValue): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  let text = value instanceof Date ? value.toISOString() : typeof value === 'string' ? value : value.join('; ');
  if (FORMULA_START.test(text)) text = `'${text}`;
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function csvRow(values: readonly CsvValue[]): string {
  return `${values.map(csvCell).join(',')}\r\n`;
}

/** Column name and how to read it from a row. */
export type CsvColumns<T> = readonly (readonly [header: string, read: (row: T) => CsvValue])[];

export function csvHeader<T>(columns: CsvColumns<T>): string {
  return csvRow(columns.map(([header]) => header));
}

export function csvLine<T>(columns: CsvColumns<T>, row: T): string {
  return csvRow(columns.map(([, read]) => read(row)));
}
