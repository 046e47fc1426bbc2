import { describe, expect, it } from 'vitest';
import { goEscapedPath } from '../../src/scanner/nuclei/go-path.js';
import { header, run, server, useEngineServers } from './engine-fixtures.js';

useEngineServers();

describe('request paths as nuclei sends them (Go net/url)', () => {
  it('keeps valid escapes and the paths of nuclei http-paths integration test', () => {
    expect(goEscapedPath('/some%0A/%0D')).toBe('/some%0A/%0D');
    expect(goEscapedPath('/%73%6f%6d%65%0A/%0D')).toBe('/%73%6f%6d%65%0A/%0D');
    expect(goEscapedPath('/%00test%20')).toBe('/%00test%20');
    expect(goEscapedPath('/test/..;/..;/')).toBe('/test/..;/..;/');
    expect(goEscapedPath('//CFIDE/wizards/common/utils.cfc')).toBe('//CFIDE/wizards/common/utils.cfc');
    expect(goEscapedPath('/%2e%2e/%2e%2e/etc/passwd')).toBe('/%2e%2e/%2e%2e/etc/passwd');
    expect(goEscapedPath("/a/(b)!*'")).toBe("/a/(b)!*'");
  });

  it('escapes an unparsable path whole: invalid escapes and control bytes', () => {
    expect(goEscapedPath('/xyz/%u2s/%invalid')).toBe('/xyz/%25u2s/%25invalid');
    expect(goEscapedPath('/%zz')).toBe('/%25zz');
    expect(goEscapedPath('/%2e/%zz')).toBe('/%252e/%25zz');
    expect(goEscapedPath('/a%')).toBe('/a%25');
    expect(goEscapedPath('/a\nb')).toBe('/a%0Ab');
  });

  it('re-escapes the decoded path when it holds bytes a path cannot carry as is', () => {
    expect(goEscapedPath('/a b')).toBe('/a%20b');
    expect(goEscapedPath('/<script>%2e')).toBe('/%3Cscript%3E.');
    expect(goEscapedPath('/é')).toBe('/%C3%A9');
  });

  it('on the wire: /%zz goes out as /%25zz and /%2e%2e/ as written, the query untouched', async () => {
    const before = server.log.length;
    await run(`${header('paths-wire')}
http:
  - path: ["{{BaseURL}}/%zz?q=%zz", "{{BaseURL}}/%2e%2e/x?q=%2e"]
    matchers:
      - type: status
        status: [599]
`);
    expect(server.log.slice(before).map((r) => r.url)).toEqual(['/%25zz?q=%zz', '/%2e%2e/x?q=%2e']);
  });

  it('raw requests: the same rule (only unsafe requests keep an invalid escape)', async () => {
    const before = server.log.length;
    await run(`${header('paths-raw')}
http:
  - raw:
      - |
        GET /..%u002f..%u002fetc HTTP/1.1
        Host: {{Hostname}}

    matchers:
      - type: status
        status: [599]
`);
    expect(server.log.slice(before).map((r) => r.url)).toEqual(['/..%25u002f..%25u002fetc']);
  });
});
