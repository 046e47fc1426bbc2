import { describe, expect, it } from 'vitest';
import { PERMUTATION_WORDS, permutations } from '../../src/scanner/discovery/permutations.js';

describe('permutations', () => {
  it('tries numeric neighbours of a label first', () => {
    const guesses = permutations(['dev.example.test'], 'example.test', { max: 7 });
    expect(guesses).toEqual([
      'dev1.example.test',
      'dev2.example.test',
      'dev3.example.test',
      'dev01.example.test',
      'dev02.example.test',
      'dev-1.example.test',
      'dev-2.example.test',
    ]);
  });

  it('counts up and down from a trailing number, keeping its zero padding', () => {
    expect(permutations(['web07.example.test'], 'example.test', { max: 4 })).toEqual([
      'web08.example.test',
      'web06.example.test',
      'web09.example.test',
      'web.example.test',
    ]);
  });

  it('swaps environment words inside a label and joins words to it', () => {
    const guesses = permutations(['dev-api.example.test'], 'example.test', { max: 1000 });
    expect(guesses).toContain('staging-api.example.test');
    expect(guesses).toContain('dev-admin.example.test');
    expect(guesses).toContain('dev-api-internal.example.test');
    expect(guesses).toContain('qa-dev-api.example.test');
    // A label is never joined with a word it already holds.
    expect(guesses).not.toContain('dev-api-dev.example.test');
    expect(guesses).not.toContain('api-dev-api.example.test');
  });

  it('joins words to a plain label and, last, puts words under it', () => {
    const guesses = permutations(['shop.example.test'], 'example.test', { max: 1000 });
    expect(guesses).toContain('shop-api.example.test');
    expect(guesses).toContain('staging-shop.example.test');
    expect(guesses).toContain('dev.shop.example.test');
    expect(guesses.indexOf('dev.shop.example.test')).toBeGreaterThan(guesses.indexOf('shop-api.example.test'));
  });

  it('never returns a name already found, nor the same guess twice', () => {
    const found = ['dev.example.test', 'dev1.example.test', 'staging-api.example.test', 'dev-api.example.test'];
    const guesses = permutations(found, 'example.test', { max: 10_000 });
    for (const name of found) expect(guesses).not.toContain(name);
    expect(new Set(guesses).size).toBe(guesses.length);
    expect(guesses).toContain('dev2.example.test');
  });

  it('skips excluded names (known or asked before) and fills the budget with others', () => {
    const guesses = permutations(['dev.example.test'], 'example.test', { max: 2, exclude: new Set(['dev1.example.test']) });
    expect(guesses).toEqual(['dev2.example.test', 'dev3.example.test']);
  });

  it('is bounded by max and shares the budget between labels', () => {
    const found = ['alpha.example.test', 'beta.example.test', 'gamma.example.test'];
    const guesses = permutations(found, 'example.test', { max: 6 });
    expect(guesses).toHaveLength(6);
    expect(guesses.filter((name) => name.startsWith('alpha')).length).toBe(2);
    expect(guesses.filter((name) => name.startsWith('gamma')).length).toBe(2);
    expect(permutations(found, 'example.test', { max: 0 })).toEqual([]);
  });

  it('is deterministic whatever the order of the found names', () => {
    const found = ['b.example.test', 'a-dev.example.test', 'x.y.example.test'];
    expect(permutations(found, 'example.test', { max: 200 })).toEqual(permutations([...found].reverse(), 'example.test', { max: 200 }));
  });

  it('varies the leftmost label only and keeps deeper names under their own parent', () => {
    const guesses = permutations(['dev.eu.example.test'], 'example.test', { max: 3 });
    expect(guesses).toEqual(['dev1.eu.example.test', 'dev2.eu.example.test', 'dev3.eu.example.test']);
  });

  it('ignores names outside the parent and the parent itself', () => {
    expect(permutations(['example.test', 'dev.other.test'], 'example.test', { max: 100 })).toEqual([]);
  });

  it('uses the given words instead of the built-in list', () => {
    const guesses = permutations(['dev-shop.example.test'], 'example.test', { max: 1000, words: ['dev', 'live'] });
    expect(guesses).toContain('live-shop.example.test');
    expect(guesses).not.toContain('staging-shop.example.test');
    expect(PERMUTATION_WORDS).toContain('staging');
  });

  it('produces only valid DNS labels', () => {
    const long = 'a'.repeat(62);
    const guesses = permutations([`${long}.example.test`], 'example.test', { max: 1000 });
    // 62 + "1" fits (63); 62 + "01" or "-api" does not.
    expect(guesses).toContain(`${long}1.example.test`);
    expect(guesses.every((name) => name.split('.').every((label) => label.length <= 63))).toBe(true);
    expect(guesses.some((name) => name.includes(`${long}01`))).toBe(false);
  });
});
