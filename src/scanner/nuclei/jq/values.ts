/** jq values, their ordering and their JSON text, with the limits that keep a hostile expression bounded. */

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type JsonObject = { [k: string]: Json };

/** Compile-time error: the expression is outside the supported subset (or is not jq). */
export class JqError extends Error {}

/** A jq runtime error (`"a" + 1`, `.[0]` on an object, …): `?`, `try` and `//` may swallow it. */
export class JqRuntimeError extends Error {}

/** A run went past a bound (outputs, steps, depth, size). Nothing inside the program can catch it. */
export class JqLimitError extends Error {}

/** Deepest nesting of evaluation and of walks over values (`..`, comparisons, JSON text). */
export const MAX_DEPTH = 512;
/** Longest string or array an operator may build (`+`, `*`, `join`, JSON text). */
export const MAX_SIZE = 4_000_000;

export function isObject(v: Json): v is JsonObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export function typeName(v: Json): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v === 'object' ? 'object' : typeof v;
}

export function truthy(v: Json): boolean {
  return v !== null && v !== false;
}

export function checkDepth(depth: number) {
  if (depth > MAX_DEPTH) throw new JqLimitError(`values nest deeper than ${MAX_DEPTH} levels`);
}

/** Object keys in jq's order: by code point (Go compares UTF-8 bytes, which orders the same way). */
export function sortedKeys(o: JsonObject): string[] {
  return Object.keys(o).sort(compareStrings);
}

export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i) as number;
    const y = b.codePointAt(i) as number;
    if (x !== y) return x < y ? -1 : 1;
    if (x > 0xffff) i++;
  }
  return a.length < b.length ? -1 : 1;
}

const RANK: Record<string, number> = { null: 0, boolean: 1, number: 3, string: 4, array: 5, object: 6 };

/** jq's total order: null < false < true < numbers < strings < arrays < objects (objects by sorted keys, then values). */
export function compareValues(a: Json, b: Json, depth = 0): number {
  checkDepth(depth);
  const ta = typeName(a);
  const tb = typeName(b);
  if (ta !== tb) return RANK[ta] + (a === true ? 1 : 0) < RANK[tb] + (b === true ? 1 : 0) ? -1 : 1;
  switch (ta) {
    case 'null':
      return 0;
    case 'boolean':
      return a === b ? 0 : a ? 1 : -1;
    case 'number':
      return a === b ? 0 : (a as number) < (b as number) ? -1 : 1;
    case 'string':
      return compareStrings(a as string, b as string);
    case 'array': {
      const x = a as Json[];
      const y = b as Json[];
      for (let i = 0; i < Math.min(x.length, y.length); i++) {
        const c = compareValues(x[i], y[i], depth + 1);
        if (c !== 0) return c;
      }
      return x.length === y.length ? 0 : x.length < y.length ? -1 : 1;
    }
    default: {
      const x = a as JsonObject;
      const y = b as JsonObject;
      const kx = sortedKeys(x);
      const ky = sortedKeys(y);
      const byKeys = compareValues(kx, ky, depth + 1);
      if (byKeys !== 0) return byKeys;
      for (const k of kx) {
        const c = compareValues(x[k], y[k], depth + 1);
        if (c !== 0) return c;
      }
      return 0;
    }
  }
}

/** Go's json.Marshal shape (object keys sorted, no whitespace), as gojq prints values; bounded in depth and size. */
export function goJson(v: Json): string {
  const parts: string[] = [];
  let size = 0;
  const push = (s: string) => {
    size += s.length;
    if (size > MAX_SIZE) throw new JqLimitError(`JSON text longer than ${MAX_SIZE} characters`);
    parts.push(s);
  };
  const write = (x: Json, depth: number) => {
    checkDepth(depth);
    if (Array.isArray(x)) {
      push('[');
      x.forEach((item, i) => {
        if (i > 0) push(',');
        write(item, depth + 1);
      });
      push(']');
    } else if (isObject(x)) {
      push('{');
      sortedKeys(x).forEach((k, i) => {
        push(`${i > 0 ? ',' : ''}${JSON.stringify(k)}:`);
        write(x[k], depth + 1);
      });
      push('}');
    } else push(x === undefined ? 'null' : JSON.stringify(x));
  };
  write(v, 0);
  return parts.join('');
}

/** Length in code points, as jq counts strings. */
export function codePointLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    n++;
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) i++;
  }
  return n;
}

/** An object's values in gojq's iteration order: by sorted key (Go maps have no order of their own). */
export function objectValues(o: JsonObject): Json[] {
  return sortedKeys(o).map((k) => o[k]);
}
