/**
 * The builtins nuclei templates reach for, with gojq's semantics (its builtin.jq / func.go were read, not copied).
 * Arguments that are values (`split(",")`, `test(re; flags)`) run every combination, the last argument as the outer
 * loop, like gojq. Regexes go through goregex.ts (re2js: RE2 syntax as in Go, linear-time matching), never JS RegExp.
 */
import { compileGoRegex, type GoRegex } from '../goregex.js';
import { type Emit, type Env, add, evaluate, indexValue } from './evaluate.js';
import type { JqNode } from './parse.js';
import {
  checkDepth,
  codePointLength,
  compareValues,
  goJson,
  isObject,
  objectValues,
  type Json,
  type JsonObject,
  JqRuntimeError,
  MAX_SIZE,
  JqLimitError,
  sortedKeys,
  truthy,
  typeName,
} from './values.js';

export type Builtin = (env: Env, input: Json, args: JqNode[], emit: Emit) => void;

export const BUILTINS = new Map<string, Builtin>();

function fail(message: string): never {
  throw new JqRuntimeError(message);
}

/** A builtin whose arguments are plain values: called once per combination of their outputs. */
function valued(name: string, arity: number, f: (input: Json, ...args: Json[]) => Json) {
  BUILTINS.set(`${name}/${arity}`, (env, input, args, emit) => {
    const values: Json[] = new Array(arity);
    const loop = (i: number) => {
      if (i < 0) return emit(f(input, ...values));
      evaluate(env, args[i], input, (v) => {
        values[i] = v;
        loop(i - 1);
      });
    };
    loop(arity - 1);
  });
}

function filter(name: string, keep: (v: Json) => boolean) {
  BUILTINS.set(`${name}/0`, (_env, input, _args, emit) => {
    if (keep(input)) emit(input);
  });
}

function str(v: Json, what: string): string {
  return typeof v === 'string' ? v : fail(`${what} cannot be applied to ${typeName(v)} (${clip(v)})`);
}

function arr(v: Json, what: string): Json[] {
  return Array.isArray(v) ? v : fail(`${what} cannot be applied to ${typeName(v)} (${clip(v)})`);
}

function clip(v: Json): string {
  const text = goJson(v);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

function iterate(v: Json, what: string): Json[] {
  if (Array.isArray(v)) return v;
  if (isObject(v)) return objectValues(v);
  return fail(`cannot iterate over ${typeName(v)} in ${what}`);
}

function collect(env: Env, node: JqNode, input: Json): Json[] {
  const out: Json[] = [];
  evaluate(env, node, input, (v) => out.push(v));
  return out;
}

class Stop {}

// ---- control and filters
BUILTINS.set('empty/0', () => {});
BUILTINS.set('error/0', (_env, input) => fail(typeof input === 'string' ? input : goJson(input)));
valued('error', 1, (_input, msg) => fail(typeof msg === 'string' ? msg : goJson(msg)));
BUILTINS.set('not/0', (_env, input, _args, emit) => emit(!truthy(input)));
BUILTINS.set('select/1', (env, input, [f], emit) => evaluate(env, f, input, (c) => (truthy(c) ? emit(input) : undefined)));
BUILTINS.set('map/1', (env, input, [f], emit) => {
  const out: Json[] = [];
  for (const v of iterate(input, 'map')) evaluate(env, f, v, (x) => out.push(x));
  emit(out);
});
BUILTINS.set('recurse/0', (env, input, _args, emit) => evaluate(env, { kind: 'recurse' }, input, emit));
BUILTINS.set('recurse/1', (env, input, [f], emit) => {
  const r = (v: Json) => {
    emit(v);
    evaluate(env, f, v, r);
  };
  r(input);
});
BUILTINS.set('first/1', (env, input, [f], emit) => {
  const stop = new Stop();
  let got: { v: Json } | undefined;
  try {
    evaluate(env, f, input, (v) => {
      got = { v };
      throw stop;
    });
  } catch (err) {
    if (err !== stop) throw err;
  }
  if (got) emit(got.v);
});
BUILTINS.set('last/1', (env, input, [f], emit) => {
  const all = collect(env, f, input);
  if (all.length > 0) emit(all[all.length - 1]);
});
BUILTINS.set('limit/2', (env, input, [n, f], emit) =>
  evaluate(env, n, input, (count) => {
    if (typeof count !== 'number') fail('limit expects a number');
    if (count < 0) fail("limit doesn't support negative count");
    if (count === 0) return;
    const stop = new Stop();
    let seen = 0;
    try {
      evaluate(env, f, input, (v) => {
        emit(v);
        if (++seen >= count) throw stop;
      });
    } catch (err) {
      if (err !== stop) throw err;
    }
  }),
);
BUILTINS.set('isempty/1', (env, input, [f], emit) => {
  const stop = new Stop();
  let empty = true;
  try {
    evaluate(env, f, input, () => {
      empty = false;
      throw stop;
    });
  } catch (err) {
    if (err !== stop) throw err;
  }
  emit(empty);
});
filter('values', (v) => v !== null);
filter('nulls', (v) => v === null);
filter('booleans', (v) => typeof v === 'boolean');
filter('numbers', (v) => typeof v === 'number');
filter('strings', (v) => typeof v === 'string');
filter('arrays', Array.isArray);
filter('objects', isObject);
filter('iterables', (v) => Array.isArray(v) || isObject(v));
filter('scalars', (v) => !Array.isArray(v) && !isObject(v));

// ---- values
valued('length', 0, (v) => {
  if (v === null) return 0;
  if (typeof v === 'boolean') return fail('boolean has no length');
  if (typeof v === 'number') return Math.abs(v);
  if (typeof v === 'string') return codePointLength(v);
  return Array.isArray(v) ? v.length : Object.keys(v).length;
});
valued('utf8bytelength', 0, (v) => Buffer.byteLength(str(v, 'utf8bytelength')));
valued('keys', 0, (v) => (isObject(v) ? sortedKeys(v) : Array.isArray(v) ? v.map((_, i) => i) : fail(`${typeName(v)} has no keys`)));
valued('keys_unsorted', 0, (v) => (isObject(v) ? sortedKeys(v) : Array.isArray(v) ? v.map((_, i) => i) : fail(`${typeName(v)} has no keys`)));
valued('has', 1, (v, k) => {
  if (isObject(v) && typeof k === 'string') return Object.hasOwn(v, k);
  if (Array.isArray(v) && typeof k === 'number') return k >= 0 && k < v.length;
  return fail(`cannot check whether ${typeName(v)} has a ${typeName(k)} key`);
});
valued('type', 0, (v) => typeName(v));
valued('tostring', 0, (v) => (typeof v === 'string' ? v : goJson(v)));
valued('tojson', 0, (v) => goJson(v));
valued('fromjson', 0, (v) => {
  try {
    return JSON.parse(str(v, 'fromjson')) as Json;
  } catch (err) {
    if (err instanceof JqRuntimeError) throw err;
    return fail(`${clip(v)} is not valid JSON`);
  }
});
valued('tonumber', 0, (v) => {
  if (typeof v === 'number') return v;
  const s = str(v, 'tonumber');
  // gojq's number syntax: optional sign, no surrounding spaces
  if (!/^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/.test(s)) return fail(`cannot parse ${clip(v)} as a number`);
  return Number(s);
});
for (const name of ['floor', 'ceil', 'round', 'abs'] as const) {
  valued(name, 0, (v) => (typeof v === 'number' ? (name === 'abs' ? Math.abs(v) : Math[name](v)) : fail(`${name} cannot be applied to ${typeName(v)}`)));
}
valued('first', 0, (v) => indexValue(v, 0)); // .[0]
valued('last', 0, (v) => indexValue(v, -1)); // .[-1]
valued('reverse', 0, (v) => [...arr(v, 'reverse')].reverse()); // gojq reverses arrays only
valued('add', 0, (v) => iterate(v, 'add').reduce<Json>((acc, x) => add(acc, x), null));
valued('any', 0, (v) => iterate(v, 'any').some(truthy));
valued('all', 0, (v) => iterate(v, 'all').every(truthy));
BUILTINS.set('any/1', (env, input, [f], emit) => emit(iterate(input, 'any').some((v) => collect(env, f, v).some(truthy))));
BUILTINS.set('all/1', (env, input, [f], emit) => emit(iterate(input, 'all').every((v) => collect(env, f, v).every(truthy))));
valued('sort', 0, (v) => [...arr(v, 'sort')].sort((a, b) => compareValues(a, b)));
valued('unique', 0, (v) => [...arr(v, 'unique')].sort((a, b) => compareValues(a, b)).filter((x, i, all) => i === 0 || compareValues(all[i - 1], x) !== 0));
valued('min', 0, (v) => arr(v, 'min').reduce<Json>((m, x, i) => (i === 0 || compareValues(x, m) < 0 ? x : m), null));
valued('max', 0, (v) => arr(v, 'max').reduce<Json>((m, x, i) => (i === 0 || compareValues(x, m) >= 0 ? x : m), null));
BUILTINS.set('sort_by/1', (env, input, [f], emit) => {
  const keyed = arr(input, 'sort_by').map((v) => ({ v, k: collect(env, f, v) as Json }));
  emit(keyed.sort((a, b) => compareValues(a.k, b.k)).map((x) => x.v));
});
valued('contains', 1, (a, b) => contains(a, b, 0));
valued('inside', 1, (a, b) => contains(b, a, 0));
valued('to_entries', 0, (v) => {
  if (isObject(v)) return sortedKeys(v).map((key) => ({ key, value: v[key] }));
  return arr(v, 'to_entries').map((value, key) => ({ key, value }));
});
valued('from_entries', 0, (v) => fromEntries(iterate(v, 'from_entries')));
BUILTINS.set('with_entries/1', (env, input, [f], emit) => {
  const entries: Json[] = [];
  const pairs = isObject(input)
    ? sortedKeys(input).map((key) => ({ key, value: input[key] }))
    : arr(input, 'with_entries').map((value, key) => ({ key, value }));
  for (const pair of pairs) evaluate(env, f, pair, (e) => entries.push(e));
  emit(fromEntries(entries));
});

function contains(a: Json, b: Json, depth: number): boolean {
  checkDepth(depth);
  if (typeName(a) !== typeName(b)) fail(`${typeName(a)} (${clip(a)}) and ${typeName(b)} (${clip(b)}) cannot have their containment checked`);
  if (typeof a === 'string') return a.includes(b as string);
  if (Array.isArray(a)) return (b as Json[]).every((y) => a.some((x) => typeName(x) === typeName(y) && contains(x, y, depth + 1)));
  if (isObject(a)) {
    const o = b as JsonObject;
    return Object.keys(o).every((k) => Object.hasOwn(a, k) && typeName(a[k]) === typeName(o[k]) && contains(a[k], o[k], depth + 1));
  }
  return compareValues(a, b) === 0;
}

/** gojq: key from .key // .Key // .name // .Name (a string, or the object cannot be built), value from .value or .Value. */
function fromEntries(entries: Json[]): JsonObject {
  const out: JsonObject = {};
  for (const e of entries) {
    if (!isObject(e)) fail(`cannot index ${typeName(e)} with "key"`);
    const key = [e.key, e.Key, e.name, e.Name].find((k) => k !== undefined && truthy(k)) ?? null;
    if (typeof key !== 'string') fail(`object keys must be strings, not ${typeName(key)}`);
    const value = Object.hasOwn(e, 'value') ? e.value : (e.Value ?? null);
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

// ---- strings
valued('startswith', 1, (s, p) => str(s, 'startswith').startsWith(str(p, 'startswith')));
valued('endswith', 1, (s, p) => str(s, 'endswith').endsWith(str(p, 'endswith')));
valued('ltrimstr', 1, (s, p) => (typeof s === 'string' && typeof p === 'string' && s.startsWith(p) ? s.slice(p.length) : s));
valued('rtrimstr', 1, (s, p) => (typeof s === 'string' && typeof p === 'string' && s.endsWith(p) && p !== '' ? s.slice(0, -p.length) : s));
valued('trim', 0, (s) => str(s, 'trim').trim());
valued('ltrim', 0, (s) => str(s, 'ltrim').trimStart());
valued('rtrim', 0, (s) => str(s, 'rtrim').trimEnd());
valued('ascii_downcase', 0, (s) => str(s, 'ascii_downcase').replace(/[A-Z]/g, (c) => c.toLowerCase()));
valued('ascii_upcase', 0, (s) => str(s, 'ascii_upcase').replace(/[a-z]/g, (c) => c.toUpperCase()));
valued('split', 1, (s, sep) => {
  const text = str(s, 'split');
  const by = str(sep, 'split');
  return by === '' ? [...text] : text.split(by);
});
valued('join', 1, (v, sep) => {
  const by = str(sep, 'join');
  let size = 0;
  const parts = iterate(v, 'join').map((x) => {
    if (x === null) return '';
    if (typeof x === 'string' || typeof x === 'number' || typeof x === 'boolean') {
      const text = String(x);
      size += text.length + by.length;
      if (size > MAX_SIZE) throw new JqLimitError(`string longer than ${MAX_SIZE} characters`);
      return text;
    }
    return fail(`cannot join with ${typeName(x)}`);
  });
  return parts.join(by);
});

// ---- regexes (gojq accepts the flags g, i and m; m is RE2's s: `.` matches newlines)
function regex(re: Json, flags: Json, what: string): { re: GoRegex; global: boolean } {
  const source = str(re, what);
  const f = flags === null ? '' : str(flags, what);
  if (/[^gim]/.test(f)) fail(`unsupported regular expression flag: ${JSON.stringify(f)}`);
  const full = `${f.includes('i') ? '(?i)' : ''}${f.includes('m') ? '(?s)' : ''}${source}`;
  const compiled = compileGoRegex(full);
  if (!compiled.regex) return fail(`invalid regular expression ${JSON.stringify(source)}: ${compiled.error}`);
  return { re: compiled.regex, global: f.includes('g') };
}

const MAX_MATCHES = 10_000;

interface Found {
  match: JsonObject;
  /** UTF-16 bounds of the whole match in the input. */
  start: number;
  end: number;
}

/** gojq's match objects: offsets and lengths in code points; a group that took no part has offset -1, string null. */
function matches(input: Json, re: Json, flags: Json, global: boolean, what: string): Found[] {
  const text = str(input, what);
  const r = regex(re, flags, what);
  const names: Record<string, number> = r.re.namedGroups();
  const nameOf = new Map<number, string>(Object.entries(names).map(([n, i]) => [i, n]));
  const out: Found[] = [];
  const m = r.re.matcher(text);
  // code-point offsets counted forward from the previous match, so many matches in a long text stay linear
  let cursor = 0;
  let cursorCp = 0;
  while (m.find()) {
    // past the cap a partial answer (a `split` with separators left in) would be wrong: end the run instead
    if (out.length === MAX_MATCHES) throw new JqLimitError(`more than ${MAX_MATCHES} regex matches`);
    const start = m.start();
    cursorCp += codePointLength(text.slice(cursor, start));
    cursor = start;
    const captures: Json[] = [];
    for (let g = 1; g <= r.re.groupCount(); g++) {
      const name = nameOf.get(g) ?? null;
      const groupStart = m.start(g);
      if (groupStart < 0) captures.push({ offset: -1, length: 0, string: null, name });
      else {
        const s = m.group(g) as string;
        captures.push({ offset: cursorCp + codePointLength(text.slice(start, groupStart)), length: codePointLength(s), string: s, name });
      }
    }
    const whole = m.group() as string;
    out.push({ match: { offset: cursorCp, length: codePointLength(whole), string: whole, captures }, start, end: m.end() });
    if (!(global || r.global)) break;
  }
  return out;
}

function capturesOf(match: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const c of match.captures as JsonObject[]) {
    if (typeof c.name === 'string') Object.defineProperty(out, c.name, { value: c.string, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

function regexBuiltin(name: string, each: (matches: Found[], emit: Emit, input: Json) => void, global = false) {
  for (const arity of [1, 2]) {
    BUILTINS.set(`${name}/${arity}`, (env, input, args, emit) => {
      const withFlags = (flags: Json) =>
        evaluate(env, args[0], input, (re) => {
          if (name === 'test') {
            str(input, name);
            const r = regex(re, flags, name);
            return emit(r.re.matcher(str(input, name)).find());
          }
          each(matches(input, re, flags, global, name), emit, input);
        });
      if (arity === 2) evaluate(env, args[1], input, withFlags);
      else withFlags(null);
    });
  }
}

regexBuiltin('test', () => {});
regexBuiltin('match', (ms, emit) => {
  for (const m of ms) emit(m.match);
});
regexBuiltin('capture', (ms, emit) => {
  for (const m of ms) emit(capturesOf(m.match));
});
regexBuiltin(
  'scan',
  (ms, emit) => {
    for (const m of ms) {
      const captures = m.match.captures as JsonObject[];
      emit(captures.length === 0 ? m.match.string : captures.map((c) => c.string));
    }
  },
  true,
);
BUILTINS.set('split/2', (env, input, [re, flags], emit) =>
  evaluate(env, flags, input, (f) =>
    evaluate(env, re, input, (r) => {
      const text = str(input, 'split');
      const parts: Json[] = [];
      let last = 0;
      for (const m of matches(input, r, f, true, 'split')) {
        parts.push(text.slice(last, m.start));
        last = m.end;
      }
      parts.push(text.slice(last));
      emit(parts);
    }),
  ),
);

export function isBuiltin(name: string, arity: number): boolean {
  return BUILTINS.has(`${name}/${arity}`);
}
