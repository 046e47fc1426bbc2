/** String helpers: case, trimming, search, split/join, regex, substrings, padding. */
import { byteLength } from '../../bytes.js';
import { compileGoRegex, replaceAllGo, type GoRegex } from '../../goregex.js';
import { DslEvalError, type DslValue } from '../ast.js';
import { checkSize, deepEqual, MAX_STRING } from '../values.js';
import { def, INF, intArg, MAX_RANDOM_LENGTH, S, trimAll } from './registry.js';

function trimChars(s: string, cutset: string, left: boolean, right: boolean): string {
  const cut = new Set([...cutset]);
  const chars = [...s];
  let a = 0;
  let b = chars.length;
  if (left) while (a < b && cut.has(chars[a])) a++;
  if (right) while (b > a && cut.has(chars[b - 1])) b--;
  return chars.slice(a, b).join('');
}

function regexOrThrow(pattern: string): GoRegex {
  const re = compileGoRegex(pattern);
  if (!re.regex) throw new DslEvalError(`invalid regex '${pattern}': ${re.error}`);
  return re.regex;
}

function toStringList(v: DslValue): string[] {
  return Array.isArray(v) ? v.map(S) : [S(v)];
}

def('len', 1, 1, ([v]) => (Array.isArray(v) ? v.length : byteLength(S(v))));
def('to_upper', 1, 1, ([v]) => S(v).toUpperCase());
def('to_lower', 1, 1, ([v]) => S(v).toLowerCase());
def('sort', 1, INF, (args) => (args.length === 1 ? [...S(args[0])].sort().join('') : args.map(S).sort()));
def('uniq', 1, INF, (args) => (args.length === 1 ? [...new Set([...S(args[0])])].join('') : [...new Set(args.map(S))]));
def('repeat', 2, 2, ([s, n]) => {
  const count = intArg(n, 'repeat');
  if (count < 0 || S(s).length * count > MAX_STRING) throw new DslEvalError('repeat count out of range');
  return S(s).repeat(count);
});
def('replace', 3, 3, ([s, a, b]) => checkSize(S(s).split(S(a)).join(S(b))));
def('replace_regex', 3, 3, ([s, p, r]) => checkSize(replaceAllGo(regexOrThrow(S(p)), S(s), S(r))));
def('trim', 2, 2, ([s, c]) => trimChars(S(s), S(c), true, true));
def('trim_left', 2, 2, ([s, c]) => trimChars(S(s), S(c), true, false));
def('trim_right', 2, 2, ([s, c]) => trimChars(S(s), S(c), false, true));
def('trim_space', 1, 1, ([s]) => S(s).trim());
def('trim_prefix', 2, 2, ([s, p]) => (S(s).startsWith(S(p)) ? S(s).slice(S(p).length) : S(s)));
def('trim_suffix', 2, 2, ([s, p]) => (S(p) !== '' && S(s).endsWith(S(p)) ? S(s).slice(0, S(s).length - S(p).length) : S(s)));
def('reverse', 1, 1, ([s]) => [...S(s)].reverse().join(''));
def('contains', 2, 2, ([s, sub]) => S(s).includes(S(sub)));
def('contains_all', 2, INF, ([s, ...subs]) => subs.every((x) => S(s).includes(S(x))));
def('contains_any', 2, INF, ([s, ...subs]) => subs.some((x) => S(s).includes(S(x))));
def('starts_with', 2, INF, ([s, ...p]) => p.some((x) => S(s).startsWith(S(x))));
def('ends_with', 2, INF, ([s, ...p]) => p.some((x) => S(s).endsWith(S(x))));
def('line_starts_with', 2, INF, ([s, ...p]) =>
  S(s)
    .split('\n')
    .some((line) => p.some((x) => line.startsWith(S(x)))),
);
def('line_ends_with', 2, INF, ([s, ...p]) =>
  S(s)
    .split('\n')
    .some((line) => p.some((x) => line.endsWith(S(x)))),
);
def('concat', 0, INF, (args) => checkSize(args.map(S).join('')));
def('split', 2, 3, (args) => {
  const input = S(args[0]);
  if (args.length === 2) {
    const sep = S(args[1]);
    if (/^-?\d+$/.test(sep)) {
      const size = Number(sep);
      if (size <= 0) throw new DslEvalError('split: chunk size must be positive');
      const chunks: string[] = [];
      for (let i = 0; i < input.length; i += size) chunks.push(input.slice(i, i + size));
      return chunks;
    }
    return input.split(sep);
  }
  const n = intArg(args[2], 'split');
  const parts = input.split(S(args[1]));
  if (n < 0 || parts.length <= n) return parts;
  if (n === 0) return [];
  return [...parts.slice(0, n - 1), parts.slice(n - 1).join(S(args[1]))];
});
def('join', 2, INF, ([sep, ...rest]) => {
  if (rest.length === 1) {
    if (!Array.isArray(rest[0])) throw new DslEvalError('cannot cast elements into string');
    return rest[0].map(S).join(S(sep));
  }
  if (rest.some(Array.isArray)) throw new DslEvalError('cannot use join on more than one slice element');
  return rest.map(S).join(S(sep));
});
def('regex', 2, 2, ([p, s]) => regexOrThrow(S(p)).test(S(s)));
def('regex_any', 2, 2, ([s, ps]) => toStringList(ps).some((p) => regexOrThrow(p).test(S(s))));
def('regex_all', 2, 2, ([s, ps]) => toStringList(ps).every((p) => regexOrThrow(p).test(S(s))));
def('equals_any', 2, INF, ([v, ...rest]) => rest.flatMap((r) => (Array.isArray(r) ? r : [r])).some((r) => deepEqual(v, r)));
def('remove_bad_chars', 2, 2, ([s, bad]) => trimAll(S(s), S(bad)));
def('substr', 2, 3, (args) => {
  const s = S(args[0]);
  if (s.length === 0) throw new DslEvalError('empty string');
  const start = intArg(args[1], 'substr');
  if (start < 0 || start > s.length) throw new DslEvalError('start position out of range');
  if (args.length === 2) return s.slice(start);
  const end = intArg(args[2], 'substr');
  if (end < start || end > s.length) throw new DslEvalError('end position out of range');
  return s.slice(start, end);
});
def('count', 2, 2, ([s, sub]) => {
  const a = S(s);
  const b = S(sub);
  if (b === '') return [...a].length + 1;
  return a.split(b).length - 1;
});
def('index', 2, 2, ([v, i]) => {
  const idx = intArg(i, 'index');
  if (Array.isArray(v)) {
    if (idx < 0 || idx >= v.length) throw new DslEvalError('index out of range');
    return v[idx];
  }
  const s = S(v);
  if (idx < 0 || idx >= s.length) throw new DslEvalError('index out of range');
  return s[idx];
});
def('padding', 4, 4, ([s, pad, len, mode]) => {
  const data = S(s);
  const p = S(pad);
  const n = intArg(len, 'padding');
  if (n <= 0 || n > MAX_RANDOM_LENGTH) throw new DslEvalError('invalid padding length');
  if (!p) throw new DslEvalError('invalid padding byte');
  if (data.length >= n) return data;
  let padding = '';
  for (let i = 0; padding.length < n - data.length; i++) padding += p[i % p.length];
  if (S(mode) === 'prefix') return padding + data;
  if (S(mode) === 'suffix') return data + padding;
  throw new DslEvalError("padding mode must be 'prefix' or 'suffix'");
});
