/**
 * Evaluator: every expression streams its outputs to a callback, so a run keeps the values produced before an error
 * (nuclei stops at gojq's first error and keeps what came before) and `first(f)` can stop a generator early.
 * Binary operators run the right operand as the outer loop and the left as the inner one, as jq and gojq do:
 * `(1,2) + (10,20)` gives 11, 12, 21, 22.
 */
import { BUILTINS } from './builtins.js';
import type { BinaryOp, JqNode } from './parse.js';
import {
  checkDepth,
  compareValues,
  goJson,
  isObject,
  objectValues,
  type Json,
  type JsonObject,
  JqLimitError,
  JqRuntimeError,
  MAX_DEPTH,
  MAX_SIZE,
  sortedKeys,
  truthy,
  typeName,
} from './values.js';

export type Emit = (v: Json) => void;

/** Evaluation steps one run may take: plenty for extractors, small enough that `[.,.]|[.,.]|…` stops quickly. */
export const MAX_STEPS = 1_000_000;

export interface Env {
  steps: number;
  depth: number;
}

/** Wraps an error thrown by the consumer of a `try` body so that the `try` does not swallow it. */
class Downstream {
  constructor(
    readonly owner: object,
    readonly error: unknown,
  ) {}
}

/**
 * Run `body`; errors it raises itself are passed to `onError` (which may rethrow), errors raised by whoever
 * consumes its outputs pass through untouched, as in jq 1.7 / gojq.
 */
export function guarded(env: Env, body: JqNode, input: Json, emit: Emit, onError: (err: JqRuntimeError) => void) {
  const owner = {};
  try {
    evaluate(env, body, input, (v) => {
      try {
        emit(v);
      } catch (err) {
        throw new Downstream(owner, err);
      }
    });
  } catch (err) {
    if (err instanceof Downstream && err.owner === owner) throw err.error;
    if (err instanceof JqRuntimeError) onError(err);
    else throw err;
  }
}

/** One step of the budget: every expression evaluated and every value an iteration produces. */
export function tick(env: Env) {
  if (++env.steps > MAX_STEPS) throw new JqLimitError(`more than ${MAX_STEPS} evaluation steps`);
}

export function evaluate(env: Env, node: JqNode, input: Json, emit: Emit): void {
  tick(env);
  if (++env.depth > MAX_DEPTH) throw new JqLimitError(`evaluation nests deeper than ${MAX_DEPTH} levels`);
  try {
    step(env, node, input, emit);
  } finally {
    env.depth--;
  }
}

/** Evaluate `a` and `b` on the same input, `b` as the outer loop. */
function pairs(env: Env, a: JqNode, b: JqNode, input: Json, f: (x: Json, y: Json) => void) {
  evaluate(env, b, input, (y) => evaluate(env, a, input, (x) => f(x, y)));
}

function step(env: Env, node: JqNode, input: Json, emit: Emit): void {
  switch (node.kind) {
    case 'identity':
      emit(input);
      return;
    case 'recurse':
      recurse(env, input, emit, 0);
      return;
    case 'literal':
      emit(node.value);
      return;
    case 'string':
      interpolate(env, node.parts, 0, '', input, emit);
      return;
    case 'index':
      evaluate(env, node.target, input, (t) => evaluate(env, node.index, input, (k) => emit(indexValue(t, k))));
      return;
    case 'slice': {
      const bound = (n: JqNode | undefined, f: (v: Json) => void) => (n ? evaluate(env, n, input, f) : f(null));
      evaluate(env, node.target, input, (t) => bound(node.to, (to) => bound(node.from, (from) => emit(sliceValue(t, from, to)))));
      return;
    }
    case 'iterate':
      evaluate(env, node.target, input, (t) => {
        // each value counts: `[.[], .[]] | [.[], .[]] | …` doubles an array per stage with a single evaluation
        const values = Array.isArray(t) ? t : isObject(t) ? objectValues(t) : undefined;
        if (!values) throw new JqRuntimeError(`cannot iterate over ${typeName(t)}`);
        for (const v of values) {
          tick(env);
          emit(v);
        }
      });
      return;
    case 'try':
      guarded(env, node.body, input, emit, (err) => {
        if (node.handler) evaluate(env, node.handler, err.message, emit);
      });
      return;
    case 'pipe':
      evaluate(env, node.left, input, (v) => evaluate(env, node.right, v, emit));
      return;
    case 'comma':
      evaluate(env, node.left, input, emit);
      evaluate(env, node.right, input, emit);
      return;
    case 'alternative': {
      // `a // b`: a's truthy outputs, or b's outputs when there are none. An error in a is not swallowed: gojq
      // (and jq 1.6) let it through, so `"x" | .a // 1` is an error, not 1
      let any = false;
      evaluate(env, node.left, input, (v) => {
        if (truthy(v)) {
          any = true;
          emit(v);
        }
      });
      if (!any) evaluate(env, node.right, input, emit);
      return;
    }
    case 'and':
    case 'or':
      evaluate(env, node.left, input, (l) => {
        if (node.kind === 'and' ? !truthy(l) : truthy(l)) return emit(node.kind === 'or');
        evaluate(env, node.right, input, (r) => emit(truthy(r)));
      });
      return;
    case 'binary':
      pairs(env, node.left, node.right, input, (l, r) => emit(binary(node.op, l, r)));
      return;
    case 'negate':
      evaluate(env, node.operand, input, (v) => {
        if (typeof v !== 'number') throw new JqRuntimeError(`cannot negate ${typeName(v)}`);
        emit(-v);
      });
      return;
    case 'array': {
      const items: Json[] = [];
      if (node.body) evaluate(env, node.body, input, (v) => items.push(v));
      emit(items);
      return;
    }
    case 'object':
      buildObject(env, node.entries, 0, {}, input, emit);
      return;
    case 'if':
      evaluate(env, node.cond, input, (c) => {
        if (truthy(c)) evaluate(env, node.then, input, emit);
        else if (node.otherwise) evaluate(env, node.otherwise, input, emit);
        else emit(input);
      });
      return;
    case 'call': {
      const fn = BUILTINS.get(`${node.name}/${node.args.length}`);
      if (!fn) throw new JqRuntimeError(`function ${node.name}/${node.args.length} is not defined`);
      fn(env, input, node.args, emit);
      return;
    }
  }
}

function recurse(env: Env, v: Json, emit: Emit, depth: number) {
  checkDepth(depth);
  tick(env);
  emit(v);
  if (Array.isArray(v)) for (const x of v) recurse(env, x, emit, depth + 1);
  else if (isObject(v)) for (const x of objectValues(v)) recurse(env, x, emit, depth + 1);
}

function interpolate(env: Env, parts: Array<string | JqNode>, i: number, acc: string, input: Json, emit: Emit) {
  if (i === parts.length) return emit(acc);
  const part = parts[i];
  if (typeof part === 'string') return interpolate(env, parts, i + 1, acc + part, input, emit);
  evaluate(env, part, input, (v) => {
    const text = acc + (typeof v === 'string' ? v : goJson(v));
    if (text.length > MAX_SIZE) throw new JqLimitError(`string longer than ${MAX_SIZE} characters`);
    interpolate(env, parts, i + 1, text, input, emit);
  });
}

function buildObject(env: Env, entries: Array<{ key: JqNode; value: JqNode }>, i: number, acc: JsonObject, input: Json, emit: Emit) {
  if (i === entries.length) return emit(acc);
  const { key, value } = entries[i];
  evaluate(env, key, input, (k) => {
    if (typeof k !== 'string') throw new JqRuntimeError(`object keys must be strings, not ${typeName(k)}`);
    evaluate(env, value, input, (v) => buildObject(env, entries, i + 1, { ...acc, [k]: v }, input, emit));
  });
}

export function indexValue(t: Json, k: Json): Json {
  if (typeof k === 'string') {
    if (t === null) return null;
    if (isObject(t)) return Object.hasOwn(t, k) ? t[k] : null;
    throw new JqRuntimeError(`cannot index ${typeName(t)} with "${k}"`);
  }
  if (typeof k === 'number') {
    if (t === null) return null;
    // gojq (unlike jq) indexes strings by code point: "abcde"[2] is "c"
    if (typeof t === 'string') return [...t].at(Math.floor(k)) ?? null;
    if (Array.isArray(t)) {
      const n = Math.floor(k);
      const idx = n < 0 ? t.length + n : n;
      return idx >= 0 && idx < t.length ? t[idx] : null;
    }
    throw new JqRuntimeError(`cannot index ${typeName(t)} with number`);
  }
  if (isObject(k) && (t === null || Array.isArray(t) || typeof t === 'string')) {
    const from = k.start ?? null;
    const to = k.end ?? null;
    return sliceValue(t, from, to);
  }
  throw new JqRuntimeError(`cannot index ${typeName(t)} with ${typeName(k)}`);
}

function sliceValue(t: Json, from: Json, to: Json): Json {
  if (t === null) return null;
  if ((from !== null && typeof from !== 'number') || (to !== null && typeof to !== 'number')) {
    throw new JqRuntimeError('slice bounds must be numbers');
  }
  const items: Json[] | string[] = typeof t === 'string' ? [...t] : Array.isArray(t) ? t : [];
  if (typeof t !== 'string' && !Array.isArray(t)) throw new JqRuntimeError(`cannot slice ${typeName(t)}`);
  const clamp = (n: number) => Math.min(items.length, Math.max(0, n < 0 ? items.length + n : n));
  const a = clamp(from === null ? 0 : Math.floor(from));
  const b = clamp(to === null ? items.length : Math.ceil(to));
  const part = items.slice(a, Math.max(a, b));
  return typeof t === 'string' ? (part as string[]).join('') : part;
}

function tooBig(n: number): boolean {
  return n > MAX_SIZE;
}

export function binary(op: BinaryOp, l: Json, r: Json): Json {
  switch (op) {
    case '==':
      return compareValues(l, r) === 0;
    case '!=':
      return compareValues(l, r) !== 0;
    case '<':
      return compareValues(l, r) < 0;
    case '<=':
      return compareValues(l, r) <= 0;
    case '>':
      return compareValues(l, r) > 0;
    case '>=':
      return compareValues(l, r) >= 0;
    case '+':
      return add(l, r);
  }
  if (typeof l === 'number' && typeof r === 'number') {
    if (op === '-') return l - r;
    if (op === '*') return l * r;
    if (op === '/') {
      if (r === 0) throw new JqRuntimeError(`${l} cannot be divided by zero`);
      return l / r;
    }
    // jq's % truncates both operands to integers
    const [a, b] = [Math.trunc(l), Math.trunc(r)];
    if (b === 0) throw new JqRuntimeError(`${l} cannot be divided by zero`);
    const m = a % b;
    return m === 0 ? 0 : m;
  }
  if (op === '-' && Array.isArray(l) && Array.isArray(r)) return l.filter((x) => !r.some((y) => compareValues(x, y) === 0));
  if (op === '*') {
    const [s, n] = typeof l === 'string' && typeof r === 'number' ? [l, r] : typeof r === 'string' && typeof l === 'number' ? [r, l] : [];
    if (s !== undefined && n !== undefined) {
      if (n <= 0) return null;
      const times = Math.max(1, Math.floor(n));
      if (tooBig(s.length * times)) throw new JqLimitError(`string longer than ${MAX_SIZE} characters`);
      return s.repeat(times);
    }
    if (isObject(l) && isObject(r)) return deepMerge(l, r, 0);
  }
  if (op === '/' && typeof l === 'string' && typeof r === 'string') return l.split(r === '' ? /(?:)/u : r);
  throw new JqRuntimeError(`cannot ${op === '-' ? 'subtract' : op === '*' ? 'multiply' : 'divide'} ${typeName(l)} and ${typeName(r)}`);
}

export function add(l: Json, r: Json): Json {
  if (l === null) return r;
  if (r === null) return l;
  if (typeof l === 'number' && typeof r === 'number') return l + r;
  if (typeof l === 'string' && typeof r === 'string') {
    if (tooBig(l.length + r.length)) throw new JqLimitError(`string longer than ${MAX_SIZE} characters`);
    return l + r;
  }
  if (Array.isArray(l) && Array.isArray(r)) {
    if (tooBig(l.length + r.length)) throw new JqLimitError(`array longer than ${MAX_SIZE} items`);
    return [...l, ...r];
  }
  if (isObject(l) && isObject(r)) return { ...l, ...r };
  throw new JqRuntimeError(`cannot add ${typeName(l)} and ${typeName(r)}`);
}

function deepMerge(l: JsonObject, r: JsonObject, depth: number): JsonObject {
  checkDepth(depth);
  const out: JsonObject = { ...l };
  for (const k of sortedKeys(r)) {
    const a = Object.hasOwn(out, k) ? out[k] : undefined;
    const b = r[k];
    // defineProperty: a key named __proto__ must stay a key
    Object.defineProperty(out, k, {
      value: a !== undefined && isObject(a) && isObject(b) ? deepMerge(a, b, depth + 1) : b,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}
