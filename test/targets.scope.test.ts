import { describe, expect, it } from 'vitest';
import { normalizeTarget } from '../src/modules/targets/normalize.js';
import { createScopeMatcher } from '../src/modules/targets/scope.js';

/** Which targets cover a place a tool reported: the rule that ties pushed results to targets. */

function matcherOf(...values: string[]) {
  return createScopeMatcher(values.map((value) => ({ id: value, ...normalizeTarget(value) })));
}

describe('target scope matching', () => {
  it('a domain covers itself and names under it, not names that merely end the same', () => {
    const covering = matcherOf('example.com');
    expect(covering({ host: 'example.com' })).toEqual(['example.com']);
    expect(covering({ host: 'API.Example.com.' })).toEqual(['example.com']);
    expect(covering({ url: 'https://a.b.example.com:8443/x' })).toEqual(['example.com']);
    expect(covering({ host: 'badexample.com' })).toEqual([]);
    expect(covering({ host: 'example.com.evil.net' })).toEqual([]);
  });

  it('an IP covers that address as the host or as the address a name resolved to; a CIDR its network', () => {
    const covering = matcherOf('10.0.0.7', '10.0.1.0/24', '2001:db8::/120');
    expect(covering({ host: '10.0.0.7', port: 22 })).toEqual(['10.0.0.7']);
    expect(covering({ url: 'https://app.example.com/', ip: '10.0.0.7' })).toEqual(['10.0.0.7']);
    expect(covering({ url: 'http://10.0.1.200:8080/' })).toEqual(['10.0.1.0/24']);
    expect(covering({ host: '10.0.2.1' })).toEqual([]);
    expect(covering({ url: 'http://[2001:db8::42]/' })).toEqual(['2001:db8::/120']);
    expect(covering({ host: '2001:db8::1:1' })).toEqual([]);
  });

  it('a URL covers the same scheme, host and port at its path or below, segment by segment', () => {
    const covering = matcherOf('http://h.example.com:8080', 'http://h.example.com:8080/x', 'https://h.example.com');
    expect(covering({ url: 'http://h.example.com:8080/x/secret' }).sort()).toEqual(['http://h.example.com:8080', 'http://h.example.com:8080/x']);
    expect(covering({ url: 'http://h.example.com:8080/x/' }).sort()).toEqual(['http://h.example.com:8080', 'http://h.example.com:8080/x']);
    expect(covering({ url: 'http://h.example.com:8080/xy' })).toEqual(['http://h.example.com:8080']);
    expect(covering({ url: 'https://h.example.com:443/login' })).toEqual(['https://h.example.com']);
    expect(covering({ url: 'http://h.example.com/' })).toEqual([]);
    // A bare host and port: the URL target without a path on that endpoint.
    expect(covering({ host: 'h.example.com', port: 8080 })).toEqual(['http://h.example.com:8080']);
    expect(covering({ host: 'h.example.com' })).toEqual([]);
  });

  it('an unusable report matches nothing', () => {
    expect(matcherOf('example.com')({})).toEqual([]);
  });
});
