import { afterEach, describe, expect, it } from 'vitest';
import { evaluateExpression, parseTemplate, scopeOf, setDslDebugSink, type DslRecord } from '../../src/scanner/nuclei/index.js';

const ev = (expr: string, vars: DslRecord = {}) => evaluateExpression(expr, scopeOf(vars));

describe('to_title(s, lang)', () => {
  it('title-cases each word and lowers the rest, with x/text word rules', () => {
    expect(ev("to_title('hELLO wORLD')")).toBe('Hello World');
    expect(ev("to_title('foo-bar/baz qux_quux')")).toBe('Foo-Bar/Baz Qux_quux');
    expect(ev('to_title("o\'neil and d.c. 3rd")')).toBe("O'neil And D.c. 3Rd");
    expect(ev("to_title('a..b')")).toBe('A..B');
    expect(ev("to_title('ǆemal straße')")).toBe('ǅemal Straße');
    expect(ev("totitle('x')")).toBe('X');
    expect(ev("to_title('')")).toBe('');
  });

  it('honours Turkish and Dutch; an unknown language tag is und', () => {
    expect(ev("to_title('istanbul ırmak', 'tr')")).toBe('İstanbul Irmak');
    expect(ev("to_title('ijssel', 'nl')")).toBe('IJssel');
    expect(ev("to_title('istanbul', 'not a tag')")).toBe('Istanbul');
  });

  it('needs one or two arguments', () => {
    expect(() => ev('to_title()')).toThrow('invalid number of arguments');
    expect(() => ev("to_title('a', 'en', 'x')")).toThrow('invalid number of arguments');
  });
});

describe('print_debug(args...)', () => {
  let restore: ReturnType<typeof setDslDebugSink> | undefined;
  afterEach(() => {
    if (restore) setDslDebugSink(restore);
  });

  it('sends Go-printed arguments to the debug sink and returns true', () => {
    const seen: string[] = [];
    restore = setDslDebugSink((message) => seen.push(message));
    expect(ev("print_debug('token', 42, split('a,b', ','))")).toBe(true);
    expect(ev("print_debug(body) && contains(body, 'x')", { body: 'xyz' })).toBe(true);
    expect(seen).toEqual(['print_debug value: [token 42 [a b]]', 'print_debug value: [xyz]']);
  });

  it('returns true through the default sink (Node debuglog "nuclei-dsl") and needs an argument', () => {
    expect(ev("printdebug('x')")).toBe(true);
    expect(() => ev('print_debug()')).toThrow('invalid number of arguments');
  });
});

describe('template loading', () => {
  const template = (dsl: string) => `id: t
info: { name: t, author: a, severity: info }
http:
  - method: GET
    path: ["{{BaseURL}}/{{date_time('%Y')}}/{{rand_ip('10.0.0.0/8')}}"]
    matchers:
      - type: dsl
        dsl: [${JSON.stringify(dsl)}]
`;

  it('knows the new helpers: no "unknown helper" warning, nothing unsupported', () => {
    const exprs = [
      "to_unix_time(date_time('2006-01-02')) > 0",
      'wait_for(1) && print_debug(body)',
      "len(generate_jwt('{}', 'HS256', 'k')) > 0 && len(aes_gcm('0123456789abcdef', body)) > 0",
      "len(aes_cbc(body, '0123456789abcdef', '0123456789abcdef')) > 0 && len(zip('a', body)) > 0",
      "unpack('>I', body) > 0 && ip_format('127.0.0.1', 5) == '2130706433' && to_title(body) == 'X'",
    ];
    for (const expr of exprs) {
      const r = parseTemplate(template(expr));
      expect(r.errors).toEqual([]);
      expect(r.warnings).toEqual([]);
      expect(r.template!.requests[0].skip).toBeUndefined();
      expect(r.template!.requests[0].matchers[0].unsupported).toBeUndefined();
    }
  });

  it('warns about jarm in http blocks: fingerprints are computed for network blocks only', () => {
    const r = parseTemplate(template("jarm(Host) == 'x'"));
    expect(r.template!.requests[0].matchers[0].unsupported).toBe('jarm() is only computed in network (tcp) blocks');
  });
});
