/** The table of DSL helper functions and the argument conversions the helper families share. */
import { decodeBytes, encodeString } from '../../bytes.js';
import { DslEvalError, type DslScope, type DslValue } from '../ast.js';
import { dslToString } from '../values.js';

export interface FnDef {
  min: number;
  max: number;
  /** `scope` is the evaluation's scope, for helpers that read values the runner computed before (jarm). */
  fn: (args: DslValue[], scope: DslScope) => DslValue;
}

export const S = dslToString;
export const MAX_RANDOM_LENGTH = 1024 * 1024;

export function bytes(v: DslValue): Buffer {
  return encodeString(S(v));
}

export function fromBytes(b: Uint8Array): string {
  return decodeBytes(b);
}

export function intArg(v: DslValue, fname: string): number {
  if (typeof v === 'number' && Number.isFinite(v)) return Math.trunc(v);
  const s = S(v).trim();
  if (/^-?\d+$/.test(s)) return Number(s);
  throw new DslEvalError(`${fname}: '${S(v)}' is not an integer`);
}

export function trimAll(s: string, cutset: string): string {
  const cut = new Set([...cutset]);
  return [...s].filter((c) => !cut.has(c)).join('');
}

export const FUNCTIONS = new Map<string, FnDef>();

export function def(name: string, min: number, max: number, fn: (args: DslValue[], scope: DslScope) => DslValue) {
  FUNCTIONS.set(name, { min, max, fn });
}

export const INF = Number.POSITIVE_INFINITY;
