/**
 * Translate Go (RE2) regular expressions, as written in nuclei templates, to JavaScript RegExp.
 *
 * Handled: leading inline flags `(?i)`, `(?s)`, `(?m)` (combined too), `(?P<name>...)` groups, `\A`, `\z`,
 * `\Q...\E`, `\x{HH}`, `\pL`/`\p{Greek}`, POSIX classes `[[:alpha:]]`, a leading `]` inside a class.
 * Refused (returned as an error so the caller can warn and skip): constructs RE2 rejects (back-references,
 * look-arounds) — nuclei would refuse such a template too — and constructs JS (Node 20) cannot express
 * (mid-pattern or scoped flags such as `a(?i)b` / `(?i:b)`, the ungreedy flag `U`).
 */

export interface GoRegexResult {
  regex?: RegExp;
  error?: string;
}

const POSIX: Record<string, string> = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  ascii: '\\x00-\\x7F',
  blank: '\\t ',
  cntrl: '\\x00-\\x1F\\x7F',
  digit: '0-9',
  graph: '!-~',
  lower: 'a-z',
  print: ' -~',
  punct: '!-\\/:-@\\[-`{-~',
  space: '\\t\\n\\v\\f\\r ',
  upper: 'A-Z',
  word: '0-9A-Za-z_',
  xdigit: '0-9A-Fa-f',
};

function escapeLiteral(s: string): string {
  return s.replace(/[\\^$.*+?()[\]{}|/-]/g, (c) => `\\${c}`);
}

function hexToEscape(hex: string, inClass: boolean): string | undefined {
  const cp = Number.parseInt(hex, 16);
  if (!Number.isFinite(cp) || cp > 0x10ffff) return undefined;
  if (cp <= 0xffff) return `\\u${cp.toString(16).padStart(4, '0')}`;
  if (inClass) return undefined;
  const v = cp - 0x10000;
  const hi = 0xd800 + (v >> 10);
  const lo = 0xdc00 + (v & 0x3ff);
  return `(?:\\u${hi.toString(16)}\\u${lo.toString(16)})`;
}

export function translateGoRegex(src: string): { source?: string; flags: string; error?: string } {
  let flags = '';
  let i = 0;
  // leading flag groups, possibly several: (?i)(?s)...
  for (;;) {
    const m = /^\(\?([a-zA-Z]+)\)/.exec(src.slice(i));
    if (!m) break;
    for (const f of m[1]) {
      if (f === 'i' || f === 'm' || f === 's') {
        if (!flags.includes(f)) flags += f;
      } else if (f === 'U') {
        return { flags, error: 'the ungreedy flag (?U) is not supported' };
      } else {
        return { flags, error: `unknown inline flag '${f}'` };
      }
    }
    i += m[0].length;
  }

  let out = '';
  let inClass = false;
  let classStart = -1;
  let needUnicode = false;
  const n = src.length;
  while (i < n) {
    const c = src[i];
    if (c === '\\') {
      const d = src[i + 1];
      if (d === undefined) return { flags, error: 'trailing backslash' };
      if (!inClass && d === 'A') {
        out += '(?<![\\s\\S])';
        i += 2;
        continue;
      }
      if (!inClass && d === 'z') {
        out += '(?![\\s\\S])';
        i += 2;
        continue;
      }
      if (d === 'Q') {
        const end = src.indexOf('\\E', i + 2);
        const lit = end === -1 ? src.slice(i + 2) : src.slice(i + 2, end);
        out += escapeLiteral(lit);
        i = end === -1 ? n : end + 2;
        continue;
      }
      if (d === 'x' && src[i + 2] === '{') {
        const end = src.indexOf('}', i + 3);
        if (end === -1) return { flags, error: 'unterminated \\x{...}' };
        const esc = hexToEscape(src.slice(i + 3, end), inClass);
        if (!esc) return { flags, error: `unsupported code point \\x{${src.slice(i + 3, end)}}` };
        out += esc;
        i = end + 1;
        continue;
      }
      if (d === 'p' || d === 'P') {
        needUnicode = true;
        if (src[i + 2] === '{') {
          const end = src.indexOf('}', i + 3);
          if (end === -1) return { flags, error: 'unterminated \\p{...}' };
          const name = src.slice(i + 3, end);
          const neg = name.startsWith('^');
          const prop = neg ? name.slice(1) : name;
          const letter = neg ? (d === 'p' ? 'P' : 'p') : d;
          // Go script names (Greek, Han...) need the Script= prefix in JS; one/two-letter names are categories
          const jsName = /^[A-Z][a-z]?$/.test(prop) ? prop : `Script=${prop}`;
          out += `\\${letter}{${jsName}}`;
          i = end + 1;
        } else {
          const name = src[i + 2];
          if (!name) return { flags, error: 'bad \\p escape' };
          out += `\\${d}{${name}}`;
          i += 3;
        }
        continue;
      }
      if (/[1-9]/.test(d)) return { flags, error: 'back-references are not valid RE2 syntax' };
      if (d === 'C') return { flags, error: '\\C is not supported' };
      out += c + d;
      i += 2;
      continue;
    }
    if (inClass) {
      if (c === '[' && src[i + 1] === ':') {
        const end = src.indexOf(':]', i + 2);
        if (end !== -1) {
          let name = src.slice(i + 2, end);
          const neg = name.startsWith('^');
          if (neg) name = name.slice(1);
          const ranges = POSIX[name];
          if (!ranges) return { flags, error: `unknown POSIX class [:${name}:]` };
          if (neg) return { flags, error: 'negated POSIX classes are not supported' };
          out += ranges;
          i = end + 2;
          continue;
        }
      }
      if (c === '[') {
        out += '\\[';
        i++;
        continue;
      }
      if (c === ']' && i > classStart) {
        inClass = false;
        out += ']';
        i++;
        continue;
      }
      if (c === ']') {
        out += '\\]';
        i++;
        continue;
      }
      out += c;
      i++;
      continue;
    }
    if (c === '[') {
      inClass = true;
      out += '[';
      i++;
      if (src[i] === '^') {
        out += '^';
        i++;
      }
      // a ']' right after '[' or '[^' is a literal in RE2
      classStart = src[i] === ']' ? i + 1 : i;
      if (src[i] === ']') {
        out += '\\]';
        i++;
      }
      continue;
    }
    if (c === '(' && src[i + 1] === '?') {
      const rest = src.slice(i + 2);
      if (rest.startsWith('P<')) {
        out += '(?<';
        i += 4;
        continue;
      }
      if (rest.startsWith(':')) {
        out += '(?:';
        i += 3;
        continue;
      }
      if (rest.startsWith('=') || rest.startsWith('!') || rest.startsWith('<=') || rest.startsWith('<!')) {
        return { flags, error: 'look-around assertions are not valid RE2 syntax' };
      }
      if (rest.startsWith('<')) {
        out += '(?<';
        i += 3;
        continue;
      }
      return { flags, error: 'inline flags in the middle of a pattern are not supported' };
    }
    if (c === '/') {
      out += '\\/';
      i++;
      continue;
    }
    out += c;
    i++;
  }
  if (inClass) return { flags, error: 'missing closing ]' };
  if (needUnicode) flags += 'u';
  return { source: out, flags };
}

const cache = new Map<string, GoRegexResult>();

/** Compile a Go regex for JS. The returned RegExp has no `g` flag; use `globalCopy` for iteration. */
export function compileGoRegex(src: string): GoRegexResult {
  const hit = cache.get(src);
  if (hit) return hit;
  const t = translateGoRegex(src);
  let result: GoRegexResult;
  if (t.error || t.source === undefined) {
    result = { error: t.error ?? 'invalid regex' };
  } else {
    try {
      result = { regex: new RegExp(t.source, t.flags) };
    } catch (err) {
      result = { error: (err as Error).message };
    }
  }
  if (cache.size > 2000) cache.clear();
  cache.set(src, result);
  return result;
}

export function globalCopy(re: RegExp): RegExp {
  return new RegExp(re.source, re.flags.includes('g') ? re.flags : `${re.flags}g`);
}

/** All non-overlapping matches (like Go's FindAllStringSubmatch). */
export function findAll(re: RegExp, text: string, limit = 10_000): RegExpExecArray[] {
  const g = globalCopy(re);
  const out: RegExpExecArray[] = [];
  let m: RegExpExecArray | null;
  while ((m = g.exec(text)) !== null) {
    out.push(m);
    if (m[0] === '') g.lastIndex++;
    if (out.length >= limit) break;
  }
  return out;
}
