/**
 * Template regexes (matchers, extractors, the DSL's `regex*` / `replace_regex` helpers and `=~`) run on re2js: a
 * port of RE2, the engine behind Go's `regexp` that nuclei uses. That gives the same syntax as nuclei (`(?P<name>)`,
 * `\A`, `\z`, `\Q…\E`, POSIX classes, mid-pattern and scoped flags such as `a(?i)b` / `(?i:b)`, `(?U)`) and, above
 * all, matching in time linear in the input: a tenant's `^(a+)+$` cannot backtrack for minutes the way a JS RegExp
 * would. What RE2 refuses (back-references, look-arounds) nuclei refuses too; the parser reports it as a warning
 * and the matcher never matches.
 *
 * Linear is not free: a pattern with a large program (`(?:(a|b){100}){10}`) still costs seconds on a 1 MiB body
 * when submatches are needed, so template runs happen off the API's event loop within a time budget (see
 * template-pool.ts).
 */
import { RE2JS } from 're2js';

export type GoRegex = RE2JS;

export interface GoRegexResult {
  regex?: GoRegex;
  error?: string;
}

/** A readable reason for the constructs template authors most often bring from PCRE / JavaScript. */
function explain(src: string, message: string): string {
  if (/\(\?<?[=!]/.test(src)) return 'look-around assertions are not valid RE2 syntax';
  if (/(^|[^\\])(\\\\)*\\[1-9]/.test(src)) return 'back-references are not valid RE2 syntax';
  return message.replace(/^error parsing regexp: /, '');
}

const cache = new Map<string, GoRegexResult>();
const CACHE_SIZE = 2_000;

/** Compile a Go (RE2) regex; invalid patterns come back as `error`, never as a throw. */
export function compileGoRegex(src: string): GoRegexResult {
  const hit = cache.get(src);
  if (hit) return hit;
  let result: GoRegexResult;
  try {
    result = { regex: RE2JS.compile(src) };
  } catch (err) {
    result = { error: explain(src, (err as Error).message) };
  }
  if (cache.size >= CACHE_SIZE) cache.clear();
  cache.set(src, result);
  return result;
}

/** The match and its groups as JS shapes them: index 0 is the match, `undefined` for a group that took no part. */
export type GoMatch = Array<string | undefined>;

/** All non-overlapping matches, leftmost first (Go's FindAllStringSubmatch). */
export function findAll(re: GoRegex, text: string, limit = 10_000): GoMatch[] {
  const out: GoMatch[] = [];
  for (const match of re.matchAll(text)) {
    out.push([...match]);
    if (out.length >= limit) break;
  }
  return out;
}

/**
 * Go's `ReplaceAllString`: `$1`, `${1}`, `$name`, `${name}` expand to the group (empty when there is no such
 * group; a name is the longest run of letters, digits and `_`, so `$1x` is the group named `1x`), `$$` is a `$`,
 * and a `$` that starts no reference stays as it is.
 */
export function replaceAllGo(re: GoRegex, text: string, template: string): string {
  const names = re.namedGroups();
  return re.matcher(text).replaceAll((...args: unknown[]) => {
    const groups = args.slice(0, re.groupCount() + 1) as Array<string | undefined>;
    return expandGo(template, (name) => {
      const index = /^[0-9]+$/.test(name) ? Number(name) : names[name];
      return index === undefined ? '' : (groups[index] ?? '');
    });
  });
}

function expandGo(template: string, group: (name: string) => string): string {
  let out = '';
  for (let i = 0; i < template.length; i++) {
    const c = template[i];
    if (c !== '$') {
      out += c;
      continue;
    }
    if (template[i + 1] === '$') {
      out += '$';
      i++;
      continue;
    }
    const braced = template[i + 1] === '{';
    const nameMatch = /^[A-Za-z0-9_]+/.exec(template.slice(i + (braced ? 2 : 1)));
    if (!nameMatch || (braced && template[i + 2 + nameMatch[0].length] !== '}')) {
      out += '$';
      continue;
    }
    out += group(nameMatch[0]);
    i += nameMatch[0].length + (braced ? 2 : 0);
  }
  return out;
}
