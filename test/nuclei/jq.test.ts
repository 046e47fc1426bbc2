import { describe, expect, it } from 'vitest';
import { compileJq, JqError, MAX_JQ_OUTPUTS, runJq } from '../../src/scanner/nuclei/jq.js';

const jq = (src: string, doc: unknown) => runJq(compileJq(src), doc);

const rdap = {
  events: [
    { eventAction: 'registration', eventDate: '1997-09-15T04:00:00Z' },
    { eventAction: 'expiration', eventDate: '2028-09-14T04:00:00Z' },
    { eventAction: 'last changed', eventDate: '2019-09-09T15:39:04Z' },
  ],
  entities: [
    {
      roles: ['registrar'],
      vcardArray: [
        'vcard',
        [
          ['version', {}, 'text', '4.0'],
          ['fn', {}, 'text', 'Registrar Inc'],
        ],
      ],
    },
    {
      roles: ['administrative', 'registrant'],
      vcardArray: [
        'vcard',
        [
          ['version', {}, 'text', '4.0'],
          ['fn', {}, 'text', 'Jane Doe'],
          ['adr', {}, 'text', ['', '', '1 Main St', 'Springfield', '', '12345', 'US']],
        ],
      ],
    },
  ],
  secureDNS: { delegationSigned: false },
};

describe('jq expressions from the community templates', () => {
  it('concatenates strings with +, also over a generator and across commas', () => {
    expect(jq('"Version: " + .server_version', { server_version: '15.4.2' })).toEqual(['Version: 15.4.2']);
    expect(jq('"Version: " +.server_version', {})).toEqual(['Version: ']); // string + null is the string
    expect(jq('"adminUser: " + ( .adminPrincipals[] | tostring )', { adminPrincipals: ['admin', 7, { a: 1 }] })).toEqual([
      'adminUser: admin',
      'adminUser: 7',
      'adminUser: {"a":1}',
    ]);
    expect(jq('"Version: "+ .version , "Cluster Name: "+ .cluster_name', { version: '1.15.0', cluster_name: 'vault-1' })).toEqual([
      'Version: 1.15.0',
      'Cluster Name: vault-1',
    ]);
    const users = {
      data: {
        users: {
          nodes: [
            { username: 'root', email: 'r@x.io' },
            { username: 'bob', email: 'b@x.io' },
          ],
        },
      },
    };
    expect(jq('.data.users.nodes[] | "username: " + .username + ", email: " + .email', users)).toEqual([
      'username: root, email: r@x.io',
      'username: bob, email: b@x.io',
    ]);
  });

  it('filters with select, comparisons and contains', () => {
    const items = {
      items: [
        { id: 1, is_admin: 0 },
        { id: 2, is_admin: 1 },
        { id: 3, is_admin: true },
      ],
    };
    expect(jq('.items[] | select(.is_admin == 1) | .id', items)).toEqual(['2']);
    const posts = [
      { slug: 'upload', content: { rendered: '<div>eeSFL_UploadGo</div>' } },
      { slug: 'other', content: { rendered: 'nothing' } },
    ];
    expect(jq('.[] | select(.content.rendered | contains("eeSFL_UploadGo")) | .slug', posts)).toEqual(['upload']);
    expect(jq('.events[] | select(.eventAction == "registration").eventDate', rdap)).toEqual(['1997-09-15T04:00:00Z']);
    const vcard = '.entities[] | select(.roles[] | contains("registrant")) | .vcardArray[1].[]';
    expect(jq(`${vcard} | select(.[0] == "fn") | .[-1]`, rdap)).toEqual(['Jane Doe']);
    expect(jq(`${vcard} | select(.[0] == "adr") | .[-1][] | select(. != "")`, rdap)).toEqual(['1 Main St', 'Springfield', '12345', 'US']);
    expect(jq(`${vcard} | select(.[0] == "adr") | .[-1][-1]`, rdap)).toEqual(['US']);
    expect(jq('.[-1][] | select(. != "")', [[], ['a', '', 'b']])).toEqual(['a', 'b']);
    const matrix = { 'm.server': 'matrix.example.org:443', 'm.homeserver': { base_url: 'https://matrix.example.org' } };
    expect(jq('."m.server" | select( . != null )', matrix)).toEqual(['matrix.example.org:443']);
    expect(jq('."m.identity_server" | .base_url | select( . != null )', matrix)).toEqual([]);
    expect(jq('.server | select((.name != null) and (.version != null)) | .name, .version', { server: { name: 'Synapse', version: '1.98' } })).toEqual([
      'Synapse',
      '1.98',
    ]);
  });

  it('takes alternatives with //', () => {
    expect(jq('.secureDNS.delegationSigned // false', rdap)).toEqual(['false']);
    expect(jq('.secureDNS.delegationSigned // false', { secureDNS: { delegationSigned: true } })).toEqual(['true']);
    expect(jq('.secureDNS.delegationSigned // false', 'not an object')).toEqual([]); // gojq lets an error on the left through
    expect(jq('.a? // "default", (.[] // "none")', [])).toEqual(['default', 'none']);
    // `..` walks objects by sorted key, as gojq does; `empty[0]` is empty
    const doc = { z: { nodeId: 'n-z' }, a: [{ nodeId: 'n-a' }, { other: 1 }], nodeId: null };
    expect(jq('..|objects|.nodeId//empty[0]', doc)).toEqual(['n-a', 'n-z']);
  });

  it('evaluates if/then/else with and', () => {
    const src = 'if .allowPasswordRecovery==true and .allowSelfRegistration==true then true else false end';
    expect(jq(src, { allowPasswordRecovery: true, allowSelfRegistration: true })).toEqual(['true']);
    expect(jq(src, { allowPasswordRecovery: true, allowSelfRegistration: 'true' })).toEqual(['false']);
    expect(jq('if . == 1 then "one" elif . == 2 then "two" else "many" end', 2)).toEqual(['two']);
    expect(jq('if . then "yes" end', false)).toEqual(['false']); // no else: the input passes through
  });

  it('captures with RE2 regexes and compares versions as arrays', () => {
    const charx = { charging_controllers: { c1: { info: { _v_: { firmware_version: 'V1.6.4' } } }, c2: { info: { _v_: { firmware_version: 'v1.7.3' } } } } };
    const capture = '.charging_controllers | .[].info._v_.firmware_version | capture("V(?<version>\\\\d+(?:\\\\.\\\\d+)*)"; "i") | .version';
    expect(jq(capture, charx)).toEqual(['1.6.4', '1.7.3']);
    const older = `${capture} | split(".") | map(tonumber) | if . < ("1.7.3" | split(".") | map(tonumber)) then true else false end`;
    expect(jq(older, charx)).toEqual(['true', 'false']);
    // `+` binds tighter than `|`: the template adds a string to an object, an error, so gojq (and we) extract nothing
    expect(jq(`"Firmware Version: "+ ${capture}`, charx)).toEqual([]);
    expect(jq('capture("(?P<major>\\\\d+)\\\\.(?P<minor>\\\\d+)")', 'v10.2')).toEqual(['{"major":"10","minor":"2"}']);
    expect(jq('test("ADMIN"; "i"), test("ADMIN")', 'admin')).toEqual(['true', 'false']);
    expect(jq('[match("a(b)?"; "g") | [.offset, .length, .captures[0].string]]', 'é ab a')).toEqual(['[[2,2,"b"],[5,1,null]]']);
    expect(jq('[scan("\\\\d+")]', 'a1b22')).toEqual(['["1","22"]']);
    expect(jq('test("(a+)+$")', `${'a'.repeat(5000)}!`)).toEqual(['false']); // linear time, no backtracking
    expect(jq('test("(?=x)")', 'x')).toEqual([]); // RE2 has no look-arounds: a runtime error, no value
  });

  it('runs the other builtins with jq semantics', () => {
    expect(jq('.[] | to_entries | .[].key', [{ b: 1, a: 2 }])).toEqual(['a', 'b']);
    expect(jq('keys, length, (.a | type), has("a"), (.s | ascii_downcase, ascii_upcase)', { a: [1], s: 'MiX' })).toEqual([
      '["a","s"]',
      '2',
      'array',
      'true',
      'mix',
      'MIX',
    ]);
    expect(jq('.[] | numbers, strings', [1, 'x', null, true])).toEqual(['1', 'x']);
    expect(jq('map(tonumber) | add, first, last', ['1', '2.5'])).toEqual(['3.5', '1', '2.5']);
    expect(jq('split(",") | join("-"), (map(startswith("a")) | any, all)', 'ab,ac,b')).toEqual(['ab-ac-b', 'true', 'false']);
    expect(jq('first(.[] | select(. > 1)), [limit(2; .[])], [.[] | values]', [1, 2, 3, null])).toEqual(['2', '[1,2]', '[1,2,3]']);
    expect(jq('{a: .x, "b": (.y + 1), c} | tojson', { x: 'X', y: 1, c: [true] })).toEqual(['{"a":"X","b":2,"c":[true]}']);
    expect(jq('"v\\(.major).\\(.minor)"', { major: 1, minor: [2] })).toEqual(['v1.[2]']);
    expect(jq('(1,2) + (10,20)', null)).toEqual(['11', '12', '21', '22']);
    expect(jq('[.[] | . % 3], (.[0] / 2), ([3,1,2] | sort | reverse), ([1,1,2] | unique), ({a:{b:1}} * {a:{c:2}})', [7, -7])).toEqual([
      '[1,-1]',
      '3.5',
      '[3,2,1]',
      '[1,2]',
      '{"a":{"b":1,"c":2}}',
    ]);
    expect(jq('[null, false, true, 0, "a", [], {}] | sort == .', null)).toEqual(['true']);
    expect(jq('{"a":1} + {"b":2}, [1] + [2], null + "x", .[1:], .a?', 'hello')).toEqual(['{"a":1,"b":2}', '[1,2]', 'x', 'ello']);
    expect(jq('try error("boom") catch ., (.x | not)', {})).toEqual(['boom', 'true']);
    expect(jq('.[2], .[-1], .[9], first, last', 'abcdé')).toEqual(['c', 'é', 'a', 'é']); // gojq indexes strings by code point
    const entries = 'to_entries, with_entries({key: (.key | ascii_upcase), value}), ([{name: "a", Value: 1}, {Key: "b", value: 2}] | from_entries)';
    expect(jq(entries, { b: 2, a: 1 })).toEqual(['[{"key":"a","value":1},{"key":"b","value":2}]', '{"A":1,"B":2}', '{"a":1,"b":2}']);
    expect(jq('to_entries', ['x'])).toEqual(['[{"key":0,"value":"x"}]']);
    expect(jq('[{key: 1, value: 2}] | from_entries', null)).toEqual([]); // a key must be a string
    expect(jq('"1.5" | tonumber, ("-2e3" | tonumber), (" 1" | tonumber)', null)).toEqual(['1.5', '-2000']);
    expect(jq('[1, 2] | reverse, ("ab" | reverse)', null)).toEqual(['[2,1]']); // gojq reverses arrays only
    expect(jq('[limit(0; 1, 2)], [limit(-1; 1, 2)]', null)).toEqual(['[]']);
  });
});

describe('errors', () => {
  it('refuses syntax outside the subset at compile time', () => {
    for (const src of [
      '. as $x | $x',
      'reduce .[] as $x (0; . + $x)',
      '.a = 1',
      '.a |= 1',
      '@base64',
      'nosuch(1)',
      'select',
      'def f: .; f',
      '.[',
      '"open',
      '1 == 2 == 3',
      '',
    ]) {
      expect(() => compileJq(src), src).toThrow(JqError);
    }
    expect(() => compileJq(`${'('.repeat(200)}.${')'.repeat(200)}`)).toThrow(/nests deeper/);
    expect(() => compileJq(`.${' '.repeat(5000)}`)).not.toThrow(); // trimmed first
    expect(() => compileJq(`.a${' | .a'.repeat(1000)}`)).toThrow(JqError);
  });

  it('stops at a runtime error and keeps the values produced before it', () => {
    expect(jq('"Version: " + .v', { v: 3 })).toEqual([]); // string + number
    expect(jq('.[] | select(.content.rendered | contains("x")) | .slug', [{ slug: 'a', content: { rendered: 'x' } }, { slug: 'b' }])).toEqual(['a']);
    expect(jq('.a.b', { a: [1] })).toEqual([]);
    expect(jq('.[] | tonumber', ['1', 'one', '3'])).toEqual(['1']);
    expect(jq('.[]?, "after"', 5)).toEqual(['after']);
    // `?` guards its own expression, not what consumes its outputs
    expect(jq('.[]? | (. + 1)', ['a', 'b'])).toEqual([]);
  });
});

describe('bounds', () => {
  it(`caps a run at ${MAX_JQ_OUTPUTS} values`, () => {
    const big = Array.from({ length: 30_000 }, (_, i) => i);
    expect(jq('.[]', big)).toHaveLength(MAX_JQ_OUTPUTS);
    expect(jq('.[] | (., .)', big)).toHaveLength(MAX_JQ_OUTPUTS);
  });

  it('stops exponential blow-ups and deep values without throwing', () => {
    const doubling = `[.,.]${' | [.,.]'.repeat(60)} | tostring`;
    expect(jq(doubling, 'x')).toEqual([]);
    expect(jq(`.${' | . + .'.repeat(40)}`, 'abcd')).toEqual([]);
    expect(jq(`.${' | (., .)'.repeat(40)} | empty`, 1)).toEqual([]); // 2^40 paths: the step budget ends it
    expect(jq(`[.[], .[]]${' | [.[], .[]]'.repeat(40)} | length`, [1])).toEqual([]); // 2^41 items, one evaluation per stage
    expect(jq(`.${' | "\\(.)\\(.)"'.repeat(40)} | length`, 'ab')).toEqual([]); // interpolation doubling
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(jq('[..] | length', deep)).toEqual([]);
    expect(jq('tostring', deep)).toEqual([]);
    expect(jq('. == .', deep)).toEqual([]);
    expect(jq('.[0][0]', deep)).toEqual([]); // a value too deep to print as JSON: nothing
    expect(jq('recurse(.[0]?) | numbers', deep)).toEqual([]);
  });

  it('keeps regex offsets linear in the number of matches', () => {
    const text = `é${'a'.repeat(199)}`.repeat(10_000); // 2,000,000 characters, 10,000 matches: the cap
    const started = performance.now();
    expect(jq('[match("é"; "g")] | length, .[-1].offset', text)).toEqual(['10000', '1999800']);
    expect(jq('split("é"; null) | length', text)).toEqual(['10001']);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(jq('"before", split("é"; null)', `${text}é`)).toEqual(['before']); // one match more: the run ends
  });
});
