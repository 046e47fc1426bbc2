/** Values of the nuclei DSL: Go's string form, type checks, equality, the size limit on strings. */
import { DslEvalError, type DslValue } from './ast.js';

/** Go's `fmt.Sprint` of a value, as nuclei's toString does. */
export function dslToString(v: DslValue | undefined): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return formatNumber(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  return `[${v.map(dslToString).join(' ')}]`;
}

function formatNumber(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Infinity) return '+Inf';
  if (n === -Infinity) return '-Inf';
  return String(n);
}

export function typeOf(v: DslValue): string {
  if (v === null) return 'nil';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

export function deepEqual(a: DslValue, b: DslValue): boolean {
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  }
  return a === b;
}

export function num(v: DslValue, op: string): number {
  if (typeof v !== 'number') throw new DslEvalError(`value '${dslToString(v)}' (${typeOf(v)}) cannot be used with '${op}', it is not a number`);
  return v;
}

export function bool(v: DslValue, op: string): boolean {
  if (typeof v !== 'boolean') throw new DslEvalError(`value '${dslToString(v)}' (${typeOf(v)}) cannot be used with '${op}', it is not a boolean`);
  return v;
}

export const MAX_STRING = 64 * 1024 * 1024;

export function checkSize(s: string): string {
  if (s.length > MAX_STRING) throw new DslEvalError('string result too large');
  return s;
}
