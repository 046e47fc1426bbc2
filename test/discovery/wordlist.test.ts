import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { builtinWordlist, parseWordlist, validateLabels } from '../../src/scanner/discovery/wordlist.js';

describe('builtinWordlist', () => {
  it('is the SecLists file, byte for byte, normalised once', () => {
    const file = readFileSync(new URL('../../src/scanner/discovery/data/subdomains-top5000.txt', import.meta.url));
    expect(createHash('sha256').update(file).digest('hex')).toBe('e0b369620e8b7d5c97aa5d4e9ff78ca1e369339da09f42f4759d8ce7fa875f4c');
    const words = builtinWordlist();
    expect(words).toHaveLength(4989);
    expect(new Set(words).size).toBe(4989);
    expect(words).toContain('www');
    expect(words).toContain('autodiscover.mail');
    expect(words).toContain('forestdnszones'); // upper case in the file
    expect(words.every((word) => word === word.toLowerCase())).toBe(true);
    expect(builtinWordlist()).toBe(words);
    expect(Object.isFrozen(words)).toBe(true);
  });
});

describe('parseWordlist', () => {
  it('trims, lower-cases, drops blank lines, comments and repeats', () => {
    expect(parseWordlist('# my list\r\nWWW\n  api  \n\nwww\n#dev\nmail.internal\n')).toEqual(['www', 'api', 'mail.internal']);
  });
});

describe('validateLabels', () => {
  it('accepts labels and dotted prefixes, normalised', () => {
    expect(validateLabels(['Dev', 'www.dev', '_dmarc', 'a-b', 'dev', 'x1.', ''], { max: 10 })).toEqual(['dev', 'www.dev', '_dmarc', 'a-b', 'x1']);
  });

  it.each([
    ['-start', 2],
    ['a..b', 2],
    ['white space', 2],
    ['*.wild', 2],
    ['ünï', 2],
    [`${'a'.repeat(64)}`, 2],
    [Array.from({ length: 40 }, () => 'abcde').join('.'), 2],
  ])('rejects %j, naming it and its position', (bad, position) => {
    expect(() => validateLabels(['ok', bad, 'also-bad!'], { max: 10 })).toThrow(new RegExp(`entry ${position} \\(`));
    expect(() => validateLabels(['ok', bad], { max: 10 })).toThrow(TypeError);
  });

  it('rejects lists longer than max, counting distinct entries', () => {
    expect(validateLabels(['a', 'A', 'b'], { max: 2 })).toEqual(['a', 'b']);
    expect(() => validateLabels(['a', 'b', 'c'], { max: 2 })).toThrow('wordlist has 3 entries; at most 2');
  });
});
