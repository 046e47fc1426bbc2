/** Random values, time, number conversions and version comparison. */
import { randomInt } from 'node:crypto';
import { compareVersions } from '../../versions.js';
import { DslEvalError, type DslValue } from '../ast.js';
import { def, INF, intArg, MAX_RANDOM_LENGTH, S, trimAll } from './registry.js';

const LETTERS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
const NUMBERS = '0123456789';

function randSeq(charset: string, length: number): string {
  if (length < 0 || length > MAX_RANDOM_LENGTH) throw new DslEvalError('random length out of range');
  if (!charset) throw new DslEvalError('empty character set');
  const chars = [...charset];
  let out = '';
  for (let i = 0; i < length; i++) out += chars[randomInt(chars.length)];
  return out;
}

function stringNumberToDecimal(v: DslValue, prefix: string, radix: number): number {
  let s = S(v).trim().toLowerCase();
  if (s.startsWith(prefix)) s = s.slice(prefix.length);
  const valid = radix === 16 ? /^[0-9a-f]+$/ : radix === 8 ? /^[0-7]+$/ : /^[01]+$/;
  if (!valid.test(s)) throw new DslEvalError(`invalid number '${S(v)}'`);
  return Number.parseInt(s, radix);
}

def('rand_char', 0, 1, (args) => {
  const cs = args.length && S(args[0]).trim() !== '' ? S(args[0]) : LETTERS + NUMBERS;
  return randSeq(cs, 1);
});
def('rand_base', 1, 2, (args) => {
  const cs = args.length === 2 && S(args[1]).trim() !== '' ? S(args[1]) : LETTERS + NUMBERS;
  return randSeq(cs, intArg(args[0], 'rand_base'));
});
def('rand_text_alphanumeric', 1, 2, (args) =>
  randSeq(trimAll(LETTERS + NUMBERS, args.length === 2 ? S(args[1]) : ''), intArg(args[0], 'rand_text_alphanumeric')),
);
def('rand_text_alpha', 1, 2, (args) => randSeq(trimAll(LETTERS, args.length === 2 ? S(args[1]) : ''), intArg(args[0], 'rand_text_alpha')));
def('rand_text_numeric', 1, 2, (args) => randSeq(trimAll(NUMBERS, args.length === 2 ? S(args[1]) : ''), intArg(args[0], 'rand_text_numeric')));
def('rand_int', 0, 2, (args) => {
  const min = args.length >= 1 ? intArg(args[0], 'rand_int') : 0;
  const max = args.length === 2 ? intArg(args[1], 'rand_int') : 2147483647;
  if (max <= min) throw new DslEvalError('rand_int: max must be greater than min');
  return min + randomInt(Math.min(max - min, 281474976710655));
});
def('unix_time', 0, 1, (args) => Math.floor(Date.now() / 1000) + (args.length ? intArg(args[0], 'unix_time') : 0));
def('to_number', 1, 1, ([v]) => {
  if (typeof v === 'number') return v;
  const s = S(v).trim();
  if (/^[+-]?\d+$/.test(s) || /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) return Number(s);
  throw new DslEvalError(`${s} could not be converted to int`);
});
def('to_string', 1, 1, ([v]) => S(v));
def('dec_to_hex', 1, 1, ([v]) => {
  if (typeof v !== 'number') throw new DslEvalError('invalid number');
  return Math.trunc(v).toString(16);
});
def('hex_to_dec', 1, 1, ([v]) => stringNumberToDecimal(v, '0x', 16));
def('oct_to_dec', 1, 1, ([v]) => stringNumberToDecimal(v, '0o', 8));
def('bin_to_dec', 1, 1, ([v]) => stringNumberToDecimal(v, '0b', 2));
def('compare_versions', 2, INF, ([v, ...constraints]) => {
  try {
    return compareVersions(S(v), ...constraints.map(S));
  } catch (err) {
    throw new DslEvalError((err as Error).message);
  }
});
