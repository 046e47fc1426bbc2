/** Time helpers: date_time, to_unix_time, wait_for (unix_time lives with the numbers). */
import { isMainThread } from 'node:worker_threads';
import { formatGoTime } from '../../gotime/format.js';
import { GoTimeParseError, parseGoTime } from '../../gotime/parse.js';
import { DslEvalError, type DslValue } from '../ast.js';
import { def, S } from './registry.js';

/** nuclei's to_unix_time tries these layouts in order when none is given. */
const DEFAULT_LAYOUTS = [
  '2006-01-02T15:04:05Z07:00',
  '2006-01-02 15:04:05 Z07:00',
  '2006-01-02 15:04:05',
  '2006-01-02 15:04 Z07:00',
  '2006-01-02 15:04',
  '2006-01-02 Z07:00',
  '2006-01-02',
];

/** Longest wait_for honoured; longer waits are refused (the request is then not sent) rather than shortened. */
export const MAX_WAIT_SECONDS = 30;

/** nuclei's parseTimeOrNow: the optional second argument is Unix seconds, as an integer string or a number. */
function timeOrNow(args: DslValue[]): Date {
  if (args.length < 2) return new Date();
  const v = args[1];
  let seconds: number;
  if (typeof v === 'string') {
    if (!/^[+-]?[0-9]+$/.test(v)) throw new DslEvalError('invalid argument type');
    seconds = Number(v);
  } else if (typeof v === 'number' && Number.isFinite(v)) seconds = Math.trunc(v);
  else throw new DslEvalError('invalid argument type');
  return new Date(seconds * 1000);
}

/** `%Y %M %D %H %m %S` (and y d h s) style: each replaced by its two-digit-at-least value, as nuclei. */
function percentFormat(format: string, t: Date): string {
  let out = format;
  for (const [fragment, letter] of format.matchAll(/%([A-Za-z])/g)) {
    let value: number;
    if (letter === 'Y' || letter === 'y') value = t.getFullYear();
    else if (letter === 'M') value = t.getMonth() + 1;
    else if (letter === 'D' || letter === 'd') value = t.getDate();
    else if (letter === 'H' || letter === 'h') value = t.getHours();
    else if (letter === 'm') value = t.getMinutes();
    else if (letter === 'S' || letter === 's') value = t.getSeconds();
    else throw new DslEvalError(`invalid date time format string: ${fragment}`);
    out = out.split(fragment).join(String(value).padStart(2, '0'));
  }
  return out;
}

def('date_time', 1, 2, (args) => {
  const format = S(args[0]);
  const t = timeOrNow(args);
  // any %X directive switches to nuclei's simple format; otherwise the text is a Go layout
  return /%[A-Za-z]/.test(format) ? percentFormat(format, t) : formatGoTime(t, format);
});

def('to_unix_time', 1, 2, (args) => {
  const input = S(args[0]);
  if (/^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$/.test(input.trim()) && input.trim() === input) return Math.trunc(Number(input));
  const layouts = args.length === 2 ? [S(args[1])] : DEFAULT_LAYOUTS;
  for (const layout of layouts) {
    try {
      return parseGoTime(input, layout);
    } catch (err) {
      if (!(err instanceof GoTimeParseError)) throw err;
    }
  }
  throw new DslEvalError(
    args.length === 2 ? `could not parse the current input with the '${S(args[1])}' layout` : 'could not parse the current input with the default layouts',
  );
});

/**
 * wait_for(seconds) sleeps, then returns true (nuclei uses it to let a server finish work between requests).
 *
 * The evaluator is synchronous, so the sleep blocks its thread: Atomics.wait on a private SharedArrayBuffer,
 * which nothing ever notifies, with the wait as its timeout. HTTP templates are evaluated in template worker
 * threads (template-pool.ts), one template at a time, under TEMPLATE_BUDGET_MS — there the sleep holds up only
 * that template. On the main thread (network, dns and ssl templates run there) it would stall every scan, so it is
 * refused with an evaluation error instead. Waits over MAX_WAIT_SECONDS are refused, not shortened.
 */
def('wait_for', 1, 1, ([v]) => {
  const s = S(v).trim();
  if (!(typeof v === 'number' && Number.isFinite(v)) && !/^[+-]?[0-9]+(\.[0-9]*)?$/.test(s)) throw new DslEvalError(`wait_for: '${s}' is not a number`);
  const seconds = Math.trunc(Number(s));
  if (seconds > MAX_WAIT_SECONDS) throw new DslEvalError(`wait_for: ${seconds} s is over the ${MAX_WAIT_SECONDS} s limit`);
  if (seconds <= 0) return true;
  if (isMainThread) throw new DslEvalError('wait_for only runs in template worker threads (it would block the scanner)');
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, seconds * 1000);
  return true;
});
