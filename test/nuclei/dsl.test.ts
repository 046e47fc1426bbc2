import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  compareVersions,
  decodeBytes,
  encodeString,
  evaluateExpression,
  mmh3Signed,
  murmur3x86_32,
  parseDsl,
  renderMarkers,
  scopeOf,
  type DslRecord,
} from '../../src/scanner/nuclei/index.js';

const ev = (expr: string, vars: DslRecord = {}) => evaluateExpression(expr, scopeOf(vars));

describe('DSL operators', () => {
  it('handles arithmetic, precedence and concatenation', () => {
    expect(ev('1 + 2 * 3')).toBe(7);
    expect(ev('(1 + 2) * 3')).toBe(9);
    expect(ev('10 - 4 - 3')).toBe(3);
    expect(ev('7 % 4 + 2 ** 3')).toBe(11);
    expect(ev('"a" + "b" + 1')).toBe('ab1');
    expect(ev("'x' + status_code", { status_code: 200 })).toBe('x200');
    expect(ev('-status_code', { status_code: 5 })).toBe(-5);
  });

  it('handles comparisons (type-strict equality like govaluate)', () => {
    expect(ev('status_code == 200', { status_code: 200 })).toBe(true);
    expect(ev('status_code == "200"', { status_code: 200 })).toBe(false);
    expect(ev('status_code != 404 && status_code >= 200 && status_code < 300', { status_code: 204 })).toBe(true);
    expect(ev("'abc' < 'abd'")).toBe(true);
    expect(ev("body =~ '^Hello'", { body: 'Hello world' })).toBe(true);
    expect(ev("body !~ '(?i)HELLO'", { body: 'Hello world' })).toBe(false);
    expect(ev('status_code in (200, 301, 302)', { status_code: 301 })).toBe(true);
  });

  it('handles boolean logic, negation and ternary', () => {
    expect(ev('!(1 > 2) && (true || false)')).toBe(true);
    expect(ev("status_code == 200 ? 'up' : 'down'", { status_code: 500 })).toBe('down');
    expect(ev("missing ?? 'fallback'")).toBe('fallback');
    expect(() => ev('1 && true')).toThrow(/not a boolean/);
  });

  it('string literals: both quote styles, backslash makes the next character literal', () => {
    expect(ev(`'it\\'s' == "it's"`)).toBe(true);
    expect(ev(`"a\\\\b"`)).toBe('a\\b');
    expect(ev(`'a\\nb'`)).toBe('anb'); // govaluate has no \n escape: the backslash only quotes the next character
  });

  it('reports missing variables and never reaches JavaScript objects', () => {
    expect(() => ev('nope == 1')).toThrow("No parameter 'nope' found.");
    expect(() => ev('constructor')).toThrow(/No parameter/);
    expect(() => ev('__proto__')).toThrow(/No parameter/);
    expect(() => ev('toString')).toThrow(/No parameter/);
    expect(() => ev('constructor("return 1")')).toThrow(/unknown function/);
    expect(() => ev('process.exit(1)')).toThrow();
  });

  it('reports syntax errors and unknown functions at parse time', () => {
    expect(parseDsl('status_code == ').error).toBeDefined();
    expect(parseDsl("contains(body, 'x'").error).toBeDefined();
    expect(parseDsl("body == 'unterminated").error).toContain('unclosed');
    const p = parseDsl("llm_prompt('year?') == '2024' && md5(body) == 'x' && contains(body)");
    expect(p.unknownFunctions).toEqual(['llm_prompt']);
    expect(p.badArity).toEqual(['contains/1']);
    expect(p.variables).toEqual(['body']);
  });
});

describe('DSL regexes have RE2 semantics (Go regexp, as nuclei)', () => {
  it('accepts Go syntax JS lacks: mid-pattern and scoped flags, \\z, POSIX classes', () => {
    expect(ev("regex('a(?i)bc', 'aBC')")).toBe(true);
    expect(ev("regex('a(?i)bc', 'ABC')")).toBe(false);
    expect(ev("regex('(?i:ab)c', 'ABc')")).toBe(true);
    expect(ev("regex('(?i:ab)c', 'ABC')")).toBe(false);
    expect(ev("regex('^[[:digit:]]+\\\\z', '123')")).toBe(true);
    expect(ev("'Server: nginx' =~ '(?i)NGINX'")).toBe(true);
  });

  it('expands replace_regex templates like Go: ${n}, $name, $1x is a (missing) group named 1x, $$ is a dollar', () => {
    expect(ev("replace_regex('v1.2', '(?P<major>[0-9]+)\\\\.([0-9]+)', '$major-${2}')")).toBe('v1-2');
    expect(ev("replace_regex('ab', '(a)', '$1x')")).toBe('b');
    expect(ev("replace_regex('ab', '(a)', '${1}x')")).toBe('axb');
    expect(ev("replace_regex('ab', 'a', '$$')")).toBe('$b');
  });

  it('answers a catastrophic-backtracking pattern in linear time', () => {
    const body = `${'a'.repeat(100_000)}!`;
    expect(ev("regex('^(a+)+$', body)", { body })).toBe(false);
  });

  it('refuses what RE2 refuses (back-references, look-arounds) as an evaluation error', () => {
    expect(() => ev("regex('(a)\\\\1', 'aa')")).toThrow(/back-references are not valid RE2 syntax/);
    expect(() => ev("regex('a(?=b)', 'ab')")).toThrow(/look-around assertions are not valid RE2 syntax/);
  });
});

describe('DSL helper functions', () => {
  it('string helpers', () => {
    expect(ev("contains('Hello World', 'World')")).toBe(true);
    expect(ev("contains_all('Hello everyone', 'lo', 'every')")).toBe(true);
    expect(ev("contains_all('Hello everyone', 'lo', 'nobody')")).toBe(false);
    expect(ev("contains_any('Hello everyone', 'abc', 'llo')")).toBe(true);
    expect(ev("regex('H([a-z]+)o', 'Hello')")).toBe(true);
    expect(ev("to_lower('ABC') + to_upper('def')")).toBe('abcDEF');
    expect(ev("tolower('ABC')")).toBe('abc'); // nuclei's underscore-less aliases
    expect(ev("len('héllo')")).toBe(6); // bytes, like Go
    expect(ev("trim('xxhixx', 'x')")).toBe('hi');
    expect(ev("trim_space('  hi  ')")).toBe('hi');
    expect(ev("replace('a-b-c', '-', '+')")).toBe('a+b+c');
    expect(ev("replace_regex('v1.2.3', '([0-9]+)\\\\.([0-9]+)', '${2}.$1')")).toBe('v2.1.3');
    expect(ev("starts_with('nuclei', 'x', 'nuc')")).toBe(true);
    expect(ev("ends_with('nuclei', 'lei')")).toBe(true);
    expect(ev("concat('a', 1, true)")).toBe('a1true');
    expect(ev("join(',', 'a', 'b')")).toBe('a,b');
    expect(ev("split('a,b,c', ',')")).toEqual(['a', 'b', 'c']);
    expect(ev("substr('abcdef', 1, 3)")).toBe('bc');
    expect(ev("reverse('abc')")).toBe('cba');
    expect(ev("repeat('ab', 3)")).toBe('ababab');
    expect(ev("count('banana', 'a')")).toBe(3);
  });

  it('encoding helpers', () => {
    expect(ev("base64('Hello')")).toBe('SGVsbG8=');
    expect(ev("base64_decode('SGVsbG8=')")).toBe('Hello');
    expect(() => ev("base64_decode('not base64!')")).toThrow(/base64/);
    expect(ev("base64_py('Hello')")).toBe('SGVsbG8=\n');
    expect(ev(`base64_py('${'a'.repeat(60)}')`)).toBe(`${'YWFh'.repeat(19)}\nYWFh\n`);
    expect(ev("hex_encode('aa')")).toBe('6161');
    expect(ev("hex_decode('6161')")).toBe('aa');
    expect(ev("url_encode('a b&c=d/é')")).toBe('a+b%26c%3Dd%2F%C3%A9');
    expect(ev("url_decode('a+b%26c')")).toBe('a b&c');
    expect(ev('html_escape(\'<a href="x">\')')).toBe('&lt;a href=&#34;x&#34;&gt;');
    expect(ev("html_unescape('&lt;b&gt;&amp;&#39;')")).toBe("<b>&'");
    expect(ev("gzip_decode(gzip('round trip'))")).toBe('round trip');
    expect(ev("hex_to_dec('ff') + dec_to_hex(255)")).toBe('255ff');
  });

  it('hash helpers match known vectors', () => {
    expect(ev("md5('')")).toBe('d41d8cd98f00b204e9800998ecf8427e');
    expect(ev("md5('hello')")).toBe('5d41402abc4b2a76b9719d911017c592');
    expect(ev("sha1('abc')")).toBe('a9993e364706816aba3e25717850c26c9cd0d89d');
    expect(ev("sha256('abc')")).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(ev("hmac('sha256', 'The quick brown fox jumps over the lazy dog', 'key')")).toBe('f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8');
    // python: mmh3.hash("foo") == -156908512, mmh3.hash("hello") == 613153351; nuclei returns the signed value as text
    expect(ev("mmh3('foo')")).toBe('-156908512');
    expect(ev("mmh3('hello')")).toBe('613153351');
  });

  it('mmh3 matches MurmurHash3_x86_32 reference vectors', () => {
    const b = (s: string) => Buffer.from(s, 'utf8');
    expect(murmur3x86_32(b(''), 0)).toBe(0);
    expect(murmur3x86_32(b(''), 1)).toBe(0x514e28b7);
    expect(murmur3x86_32(b(''), 0xffffffff)).toBe(0x81f16f39);
    expect(murmur3x86_32(Buffer.from([0, 0, 0, 0]), 0)).toBe(0x2362f9de);
    expect(murmur3x86_32(b('aaaa'), 0x9747b28c)).toBe(0x5a97808a);
    expect(murmur3x86_32(b('Hello, world!'), 0x9747b28c)).toBe(0x24884cba);
    expect(murmur3x86_32(b('The quick brown fox jumps over the lazy dog'), 0x9747b28c)).toBe(0x2fa826cd);
    expect(mmh3Signed(b('foo'), 42)).toBe(-1322301282);
  });

  it('hashes binary (non UTF-8) data by its bytes', () => {
    const bytes = Buffer.from([0xff, 0x00, 0xc3, 0x28, 0x41]);
    const text = decodeBytes(bytes);
    expect(encodeString(text).equals(bytes)).toBe(true);
    expect(ev('md5(body)', { body: text })).toBe(createHash('md5').update(bytes).digest('hex'));
    expect(ev('len(body)', { body: text })).toBe(5);
    expect(ev('base64(body)', { body: text })).toBe(bytes.toString('base64'));
  });

  it('compare_versions follows go-version semantics', () => {
    expect(ev("compare_versions('2.4.49', '< 2.4.50')")).toBe(true);
    expect(ev("compare_versions('2.4.50', '< 2.4.50')")).toBe(false);
    expect(ev("compare_versions('v1.0.0', '>v0.0.1', '<v1.0.1')")).toBe(true);
    expect(ev("compare_versions('1.4', '>= 1.0, < 1.4')")).toBe(false);
    expect(ev("compare_versions('1.3.9', '>= 1.0', '< 1.4')")).toBe(true);
    expect(ev("compare_versions('10.0.0', '> 9.9.9')")).toBe(true); // numeric, not lexical
    expect(ev("compare_versions('1.2.3', '= 1.2.3')")).toBe(true);
    expect(ev("compare_versions('1.2', '1.2.0')")).toBe(true);
    expect(ev("compare_versions('1.2.5', '~> 1.2.3')")).toBe(true);
    expect(ev("compare_versions('1.3.0', '~> 1.2.3')")).toBe(false);
    expect(ev("compare_versions('2.0.0-beta', '< 2.0.0')")).toBe(false); // pre-release vs release constraint
    expect(ev("compare_versions('2.0.0-beta.2', '> 2.0.0-beta.1')")).toBe(true);
    expect(() => ev("compare_versions('not-a-version', '< 1.0')")).toThrow(/Malformed version/);
    expect(compareVersions('5.8.1', '>= 5.0', '<= 5.8.1')).toBe(true);
  });

  it('random helpers produce values of the requested shape', () => {
    expect(ev('rand_base(12)')).toMatch(/^[A-Za-z0-9]{12}$/);
    expect(ev("rand_base(5, 'ab')")).toMatch(/^[ab]{5}$/);
    expect(ev('rand_text_alpha(6)')).toMatch(/^[A-Za-z]{6}$/);
    expect(ev('rand_text_numeric(4)')).toMatch(/^[0-9]{4}$/);
    const n = ev('rand_int(10, 20)') as number;
    expect(n).toBeGreaterThanOrEqual(10);
    expect(n).toBeLessThan(20);
  });
});

describe('{{marker}} rendering', () => {
  const scope = scopeOf({ BaseURL: 'http://h:8080', user: 'admin', n: 3 });

  it('substitutes variables and evaluates helper expressions', () => {
    expect(renderMarkers('{{BaseURL}}/x?u={{user}}&n={{n}}', scope).text).toBe('http://h:8080/x?u=admin&n=3');
    expect(renderMarkers("{{base64(concat(user, ':', 'pw'))}}", scope).text).toBe('YWRtaW46cHc=');
    expect(renderMarkers("{{base64('{{user}}:pw')}}", scope).text).toBe('YWRtaW46cHc=');
    expect(renderMarkers('{{ to_upper(user) }}', scope).text).toBe('ADMIN');
  });

  it('leaves literal-only markers (SSTI payloads) and reports unknown variables', () => {
    expect(renderMarkers('{{7*7}} and ${{7*7}}', scope)).toEqual({ text: '{{7*7}} and ${{7*7}}', unresolved: [], errors: [] });
    const r = renderMarkers('{{BaseURL}}/{{missing}}', scope);
    expect(r.text).toBe('http://h:8080/{{missing}}');
    expect(r.unresolved).toEqual(['missing']);
  });

  it('does not treat JSON braces as markers', () => {
    expect(renderMarkers('{"a":{"b":"{{user}}"}}', scope).text).toBe('{"a":{"b":"admin"}}');
  });
});
