/**
 * Parser for the jq subset nuclei `json` extractors use (nuclei runs gojq). A scannerless precedence-climbing parser:
 *
 *   pipe `|`  <  comma `,`  <  alternative `//`  <  `or`  <  `and`  <  `== != < <= > >=`  <  `+ -`  <  `* / %`
 *   <  unary `-`  <  postfix (`.a`, `."a"`, `[e]`, `[a:b]`, `[]`, `?`)
 *
 * Terms: `.`, `..`, literals (strings with escapes and `\(…)` interpolation, numbers, true/false/null), `(…)`,
 * `[…]`, `{…}`, `if/elif/else/end`, `try f`, and calls `name`, `name(a; b)` checked against the builtin table.
 * Variables, `def`, `reduce`, `foreach`, `label`, formats (`@base64`) and assignment operators are refused with a
 * JqError, which the template parser turns into a warning. A template is untrusted input, so nesting is capped.
 */
import { JqError, type Json } from './values.js';

export type BinaryOp = '+' | '-' | '*' | '/' | '%' | '==' | '!=' | '<' | '<=' | '>' | '>=';

export type JqNode =
  | { kind: 'identity' }
  | { kind: 'recurse' }
  | { kind: 'literal'; value: Json }
  | { kind: 'string'; parts: Array<string | JqNode> }
  | { kind: 'index'; target: JqNode; index: JqNode }
  | { kind: 'slice'; target: JqNode; from?: JqNode; to?: JqNode }
  | { kind: 'iterate'; target: JqNode }
  | { kind: 'try'; body: JqNode; handler?: JqNode }
  | { kind: 'pipe'; left: JqNode; right: JqNode }
  | { kind: 'comma'; left: JqNode; right: JqNode }
  | { kind: 'alternative'; left: JqNode; right: JqNode }
  | { kind: 'and'; left: JqNode; right: JqNode }
  | { kind: 'or'; left: JqNode; right: JqNode }
  | { kind: 'binary'; op: BinaryOp; left: JqNode; right: JqNode }
  | { kind: 'negate'; operand: JqNode }
  | { kind: 'array'; body?: JqNode }
  | { kind: 'object'; entries: Array<{ key: JqNode; value: JqNode }> }
  | { kind: 'if'; cond: JqNode; then: JqNode; otherwise?: JqNode }
  | { kind: 'call'; name: string; args: JqNode[] };

/** Deepest nesting of parentheses, brackets, pipes in calls… a real template needs a handful. */
export const MAX_PARSE_DEPTH = 64;

const KEYWORDS = new Set(['if', 'then', 'elif', 'else', 'end', 'and', 'or', 'try', 'catch']);
const REFUSED = new Set(['def', 'reduce', 'foreach', 'label', 'import', 'include', 'as', '__loc__']);
const COMPARISONS: BinaryOp[] = ['==', '!=', '<=', '>=', '<', '>'];

export class Parser {
  private i = 0;
  private depth = 0;
  constructor(
    private readonly s: string,
    private readonly isFunction: (name: string, arity: number) => boolean,
  ) {}

  parseProgram(): JqNode {
    const node = this.pipe();
    this.ws();
    if (this.i < this.s.length) {
      if (/^as\b/.test(this.s.slice(this.i, this.i + 3))) throw new JqError("'as' bindings (variables) are not supported");
      throw new JqError(`unexpected ${this.near()}`);
    }
    return node;
  }

  private near(): string {
    const rest = this.s.slice(this.i, this.i + 20);
    return rest === '' ? 'end of expression' : `'${rest}'`;
  }

  private ws() {
    for (;;) {
      const c = this.s[this.i];
      if (c === ' ' || c === '\t' || c === '\n' || c === '\r') this.i++;
      else if (c === '#') {
        while (this.i < this.s.length && this.s[this.i] !== '\n') this.i++;
      } else return;
    }
  }

  /** Skip whitespace, then consume `tok` if it is next (a word only when not followed by an identifier char). */
  private eat(tok: string): boolean {
    this.ws();
    if (!this.s.startsWith(tok, this.i)) return false;
    if (/^[A-Za-z_]/.test(tok) && /[A-Za-z0-9_]/.test(this.s[this.i + tok.length] ?? '')) return false;
    this.i += tok.length;
    return true;
  }

  private expect(tok: string) {
    if (!this.eat(tok)) throw new JqError(`expected '${tok}' near ${this.near()}`);
  }

  private enter() {
    if (++this.depth > MAX_PARSE_DEPTH) throw new JqError(`expression nests deeper than ${MAX_PARSE_DEPTH} levels`);
  }

  private pipe(): JqNode {
    this.enter();
    const left = this.comma();
    this.ws();
    let node = left;
    if (this.s[this.i] === '|' && this.s[this.i + 1] !== '=') {
      this.i++;
      node = { kind: 'pipe', left, right: this.pipe() };
    }
    this.depth--;
    return node;
  }

  private comma(): JqNode {
    let left = this.alternative();
    for (;;) {
      this.ws();
      if (this.s[this.i] !== ',') return left;
      this.i++;
      left = { kind: 'comma', left, right: this.alternative() };
    }
  }

  /** Object values stop before `,` (it separates entries) but may hold `//`, `or`, `and`, … and a pipe of those. */
  private objectValue(): JqNode {
    const left = this.alternative();
    this.ws();
    if (this.s[this.i] === '|' && this.s[this.i + 1] !== '=') {
      this.i++;
      return { kind: 'pipe', left, right: this.objectValue() };
    }
    return left;
  }

  private alternative(): JqNode {
    const left = this.or();
    this.ws();
    if (this.s.startsWith('//', this.i)) {
      if (this.s[this.i + 2] === '=') throw new JqError('assignment operators are not supported');
      this.i += 2;
      this.enter();
      const right = this.alternative();
      this.depth--;
      return { kind: 'alternative', left, right };
    }
    this.refuseAssignment();
    return left;
  }

  private refuseAssignment() {
    this.ws();
    const two = this.s.slice(this.i, this.i + 2);
    if ((this.s[this.i] === '=' && this.s[this.i + 1] !== '=') || ['|=', '+=', '-=', '*=', '/=', '%='].includes(two)) {
      throw new JqError('assignment operators are not supported');
    }
  }

  private or(): JqNode {
    let left = this.and();
    while (this.eat('or')) left = { kind: 'or', left, right: this.and() };
    return left;
  }

  private and(): JqNode {
    let left = this.comparison();
    while (this.eat('and')) left = { kind: 'and', left, right: this.comparison() };
    return left;
  }

  private comparison(): JqNode {
    const left = this.additive();
    this.ws();
    const op = COMPARISONS.find((o) => this.s.startsWith(o, this.i));
    if (!op) return left;
    this.i += op.length;
    const node: JqNode = { kind: 'binary', op, left, right: this.additive() };
    this.ws();
    if (COMPARISONS.some((o) => this.s.startsWith(o, this.i))) throw new JqError('comparisons do not chain; use parentheses');
    return node;
  }

  private additive(): JqNode {
    let left = this.multiplicative();
    for (;;) {
      this.ws();
      const c = this.s[this.i];
      if ((c !== '+' && c !== '-') || this.s[this.i + 1] === '=') return left;
      this.i++;
      left = { kind: 'binary', op: c, left, right: this.multiplicative() };
    }
  }

  private multiplicative(): JqNode {
    let left = this.unary();
    for (;;) {
      this.ws();
      const c = this.s[this.i];
      // `//` is the alternative operator, not a division
      if ((c !== '*' && c !== '/' && c !== '%') || this.s[this.i + 1] === '=' || (c === '/' && this.s[this.i + 1] === '/')) return left;
      this.i++;
      left = { kind: 'binary', op: c, left, right: this.unary() };
    }
  }

  private unary(): JqNode {
    this.ws();
    if (this.s[this.i] === '-' && !/[0-9]/.test(this.s[this.i + 1] ?? '')) {
      this.i++;
      this.enter();
      const operand = this.unary();
      this.depth--;
      return { kind: 'negate', operand };
    }
    return this.postfix();
  }

  private postfix(): JqNode {
    this.enter();
    let node = this.term();
    for (;;) {
      // postfix steps must touch the term: `.a .b` is not `.a.b` in jq either, but `.a [0]` is; keep it simple
      this.ws();
      const c = this.s[this.i];
      if (c === '?') {
        this.i++;
        node = { kind: 'try', body: node };
      } else if (c === '[') {
        this.i++;
        node = this.bracket(node);
      } else if (c === '.' && this.s[this.i + 1] !== '.') {
        this.i++;
        if (this.s[this.i] === '[') {
          this.i++;
          node = this.bracket(node);
          continue;
        }
        const key = this.keyAfterDot();
        if (key === undefined) throw new JqError(`expected a key after '.' near ${this.near()}`);
        node = { kind: 'index', target: node, index: key };
      } else break;
    }
    this.depth--;
    return node;
  }

  /** After `[`: `]` iterates, `e]` indexes, `a:b]` / `a:]` / `:b]` slice. */
  private bracket(target: JqNode): JqNode {
    if (this.eat(']')) return { kind: 'iterate', target };
    if (this.eat(':')) {
      const to = this.pipe();
      this.expect(']');
      return { kind: 'slice', target, to };
    }
    const index = this.pipe();
    if (this.eat(':')) {
      if (this.eat(']')) return { kind: 'slice', target, from: index };
      const to = this.pipe();
      this.expect(']');
      return { kind: 'slice', target, from: index, to };
    }
    this.expect(']');
    return { kind: 'index', target, index };
  }

  private keyAfterDot(): JqNode | undefined {
    if (this.s[this.i] === '"') return this.stringLiteral();
    const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(this.s.slice(this.i, this.i + 256));
    if (!m) return undefined;
    this.i += m[0].length;
    return { kind: 'literal', value: m[0] };
  }

  private term(): JqNode {
    this.ws();
    const c = this.s[this.i];
    if (c === undefined) throw new JqError('unexpected end of expression');
    if (c === '.') {
      if (this.s[this.i + 1] === '.') {
        this.i += 2;
        return { kind: 'recurse' };
      }
      this.i++;
      if (this.s[this.i] === '[') return { kind: 'identity' };
      const key = this.keyAfterDot();
      return key ? { kind: 'index', target: { kind: 'identity' }, index: key } : { kind: 'identity' };
    }
    if (c === '"') return this.stringLiteral();
    const num = /^-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?/.exec(this.s.slice(this.i, this.i + 64));
    if (num && /[0-9]/.test(c === '-' ? this.s[this.i + 1] : c)) {
      this.i += num[0].length;
      return { kind: 'literal', value: Number(num[0]) };
    }
    if (c === '(') {
      this.i++;
      const inner = this.pipe();
      this.expect(')');
      return inner;
    }
    if (c === '[') {
      this.i++;
      if (this.eat(']')) return { kind: 'array' };
      const body = this.pipe();
      this.expect(']');
      return { kind: 'array', body };
    }
    if (c === '{') {
      this.i++;
      return this.object();
    }
    if (c === '$') throw new JqError('variables are not supported');
    if (c === '@') throw new JqError('formats (@base64, @csv, …) are not supported');
    const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(this.s.slice(this.i, this.i + 256));
    if (!word) throw new JqError(`unexpected ${this.near()}`);
    const name = word[0];
    if (REFUSED.has(name)) throw new JqError(`'${name}' is not supported`);
    this.i += name.length;
    switch (name) {
      case 'true':
        return { kind: 'literal', value: true };
      case 'false':
        return { kind: 'literal', value: false };
      case 'null':
        return { kind: 'literal', value: null };
      case 'if':
        return this.conditional();
      case 'try': {
        const body = this.postfix();
        return this.eat('catch') ? { kind: 'try', body, handler: this.postfix() } : { kind: 'try', body };
      }
    }
    if (KEYWORDS.has(name)) throw new JqError(`unexpected '${name}'`);
    const args: JqNode[] = [];
    if (this.s[this.i] === '(') {
      this.i++;
      do args.push(this.pipe());
      while (this.eat(';'));
      this.expect(')');
    }
    if (!this.isFunction(name, args.length)) throw new JqError(`function ${name}/${args.length} is not supported`);
    return { kind: 'call', name, args };
  }

  /** After `if`: `cond then a (elif c then b)* (else d)? end`; `elif` nests as the else branch. */
  private conditional(): JqNode {
    const cond = this.pipe();
    this.expect('then');
    const then = this.pipe();
    if (this.eat('elif')) {
      this.enter();
      const otherwise = this.conditional();
      this.depth--;
      return { kind: 'if', cond, then, otherwise };
    }
    const otherwise = this.eat('else') ? this.pipe() : undefined;
    this.expect('end');
    return { kind: 'if', cond, then, otherwise };
  }

  /** After `{`: entries `a: v`, `"a": v`, `(e): v`, `a` (short for `a: .a`), `"a"`, separated by `,`. */
  private object(): JqNode {
    const entries: Array<{ key: JqNode; value: JqNode }> = [];
    if (this.eat('}')) return { kind: 'object', entries };
    do {
      this.ws();
      let key: JqNode;
      const c = this.s[this.i];
      if (c === '"') key = this.stringLiteral();
      else if (c === '(') {
        this.i++;
        key = this.pipe();
        this.expect(')');
      } else {
        const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(this.s.slice(this.i, this.i + 256));
        if (!word) throw new JqError(`expected an object key near ${this.near()}`);
        this.i += word[0].length;
        key = { kind: 'literal', value: word[0] };
      }
      const value: JqNode = this.eat(':') ? this.objectValue() : { kind: 'index', target: { kind: 'identity' }, index: key };
      entries.push({ key, value });
    } while (this.eat(','));
    this.expect('}');
    return { kind: 'object', entries };
  }

  /** A JSON-style string; `\(e)` interpolates e's output (strings as they are, other values as JSON). */
  private stringLiteral(): JqNode {
    this.i++; // opening quote
    const parts: Array<string | JqNode> = [];
    let text = '';
    for (;;) {
      const c = this.s[this.i];
      if (c === undefined) throw new JqError('unterminated string');
      this.i++;
      if (c === '"') break;
      if (c !== '\\') {
        text += c;
        continue;
      }
      const e = this.s[this.i++];
      const simple: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
      if (e in simple) text += simple[e];
      else if (e === 'u') {
        const hex = this.s.slice(this.i, this.i + 4);
        if (!/^[0-9A-Fa-f]{4}$/.test(hex)) throw new JqError('bad \\u escape in string');
        text += String.fromCharCode(Number.parseInt(hex, 16));
        this.i += 4;
      } else if (e === '(') {
        if (text) parts.push(text);
        text = '';
        parts.push(this.pipe());
        this.expect(')');
      } else throw new JqError(`bad escape '\\${e ?? ''}' in string`);
    }
    if (text || parts.length === 0) parts.push(text);
    if (parts.length === 1 && typeof parts[0] === 'string') return { kind: 'literal', value: parts[0] };
    return { kind: 'string', parts };
  }
}
