/** Tokenizer of the nuclei DSL (govaluate syntax). */
import { DslSyntaxError } from './ast.js';

export type Tok =
  | { t: 'num'; v: number; pos: number }
  | { t: 'str'; v: string; pos: number }
  | { t: 'id'; v: string; pos: number }
  | { t: 'op'; v: string; pos: number }
  | { t: 'eof'; pos: number };

const OPERATORS = [
  '**',
  '==',
  '!=',
  '>=',
  '<=',
  '=~',
  '!~',
  '&&',
  '||',
  '??',
  '<<',
  '>>',
  '>',
  '<',
  '+',
  '-',
  '*',
  '/',
  '%',
  '!',
  '~',
  '&',
  '|',
  '^',
  '?',
  ':',
  '(',
  ')',
  ',',
];

const MAX_EXPRESSION_LENGTH = 20_000;

export function tokenize(src: string): Tok[] {
  if (src.length > MAX_EXPRESSION_LENGTH) throw new DslSyntaxError('expression too long');
  const toks: Tok[] = [];
  let i = 0;
  const n = src.length;
  while (i < n) {
    const c = src[i];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    const start = i;
    if (c >= '0' && c <= '9') {
      const hex = /^0[xX][0-9a-fA-F]+/.exec(src.slice(i));
      if (hex) {
        toks.push({ t: 'num', v: Number.parseInt(hex[0].slice(2), 16), pos: start });
        i += hex[0].length;
        continue;
      }
      const m = /^[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/.exec(src.slice(i));
      if (!m) throw new DslSyntaxError(`bad number at ${i}`);
      toks.push({ t: 'num', v: Number(m[0]), pos: start });
      i += m[0].length;
      continue;
    }
    if (c === "'" || c === '"') {
      let out = '';
      i++;
      let closed = false;
      while (i < n) {
        const d = src[i];
        if (d === '\\') {
          if (i + 1 < n) out += src[i + 1];
          i += 2;
          continue;
        }
        if (d === c) {
          closed = true;
          i++;
          break;
        }
        out += d;
        i++;
      }
      if (!closed) throw new DslSyntaxError(`unclosed string literal at ${start}`);
      toks.push({ t: 'str', v: out, pos: start });
      continue;
    }
    if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i));
      toks.push({ t: 'id', v: m![0], pos: start });
      i += m![0].length;
      continue;
    }
    if (c === '[') {
      // govaluate escaped parameter name: [some-name]
      const end = src.indexOf(']', i + 1);
      if (end === -1) throw new DslSyntaxError(`unclosed [ at ${i}`);
      const name = src.slice(i + 1, end);
      if (!name) throw new DslSyntaxError(`empty [] at ${i}`);
      toks.push({ t: 'id', v: name, pos: start });
      // mark as forced variable by prefixing? keep simple: treat as identifier that can't be a call
      toks.push({ t: 'op', v: '[]', pos: start });
      i = end + 1;
      continue;
    }
    const op = OPERATORS.find((o) => src.startsWith(o, i));
    if (!op) throw new DslSyntaxError(`unexpected character '${c}' at ${i}`);
    toks.push({ t: 'op', v: op, pos: start });
    i += op.length;
  }
  toks.push({ t: 'eof', pos: n });
  return toks;
}
