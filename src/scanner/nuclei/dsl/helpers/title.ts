/**
 * to_title(s, optionalLang): golang.org/x/text/cases.Title, which nuclei uses — the first cased letter of each
 * word upper (title) case, the rest of the word lower case ("hELLO wORLD" → "Hello World", "foo-bar" → "Foo-Bar").
 *
 * Words follow x/text's approximation of Unicode word breaking: letters, digits, marks, connector punctuation
 * and format characters never break a word; a mid-word character (apostrophe, period, colon, middle dot...)
 * does not break it either, unless two come in a row; anything else (spaces, hyphens, slashes, CJK...) breaks.
 * Language: Turkish and Azeri dotted i, Dutch "ij" at the start of a word; other tags behave as und, and an
 * unparsable tag falls back to und, as nuclei does.
 */
import { def, S } from './registry.js';

const CASED = /[\p{Lowercase}\p{Uppercase}\p{Lt}]/u;
const LETTER = /[\p{L}\p{M}\p{Nd}\p{Pc}\p{Cf}\u200d]/u;
const NOT_LETTER = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;
const MID = new Set([
  "'",
  '.',
  ':',
  '·',
  '\u0387',
  '\u055f',
  '\u05f4',
  '\u2018',
  '\u2019',
  '\u2024',
  '\u2027',
  '\ufe13',
  '\ufe52',
  '\ufe55',
  '\uff07',
  '\uff0e',
  '\uff1a',
]);
/** Title case differs from upper case for the Latin digraphs and ß. */
const TITLE: Record<string, string> = { Ǆ: 'ǅ', ǅ: 'ǅ', ǆ: 'ǅ', Ǉ: 'ǈ', ǈ: 'ǈ', ǉ: 'ǈ', Ǌ: 'ǋ', ǋ: 'ǋ', ǌ: 'ǋ', Ǳ: 'ǲ', ǲ: 'ǲ', ǳ: 'ǲ', ß: 'Ss' };

const isBreak = (ch: string) => !MID.has(ch) && (!LETTER.test(ch) || NOT_LETTER.test(ch));

function language(tag: string): 'tr' | 'nl' | 'und' {
  const primary = tag.trim().toLowerCase().split(/[-_]/)[0];
  if (primary === 'tr' || primary === 'az') return 'tr';
  return primary === 'nl' ? 'nl' : 'und';
}

export function toTitle(s: string, lang: 'tr' | 'nl' | 'und'): string {
  const locale = lang === 'tr' ? 'tr' : undefined;
  const chars = [...s];
  let out = '';
  let midWord = false;
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i];
    const wasMid = MID.has(ch);
    if (CASED.test(ch)) {
      if (!midWord) {
        if (lang === 'nl' && (ch === 'i' || ch === 'I') && (chars[i + 1] === 'j' || chars[i + 1] === 'J')) {
          out += 'IJ';
          i++;
        } else out += TITLE[ch] ?? ch.toLocaleUpperCase(locale);
        midWord = true;
      } else out += ch.toLocaleLowerCase(locale);
    } else {
      out += ch;
      if (isBreak(ch)) midWord = false;
    }
    if (wasMid && i + 1 < chars.length && MID.has(chars[i + 1])) midWord = false;
  }
  return out;
}

def('to_title', 1, 2, (args) => toTitle(S(args[0]), args.length > 1 ? language(S(args[1])) : 'und'));
