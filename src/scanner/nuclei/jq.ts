/**
 * A small subset of jq, enough for nuclei `json` extractors:
 *   `.`  `.a.b`  `."a-b"`  `.["a"]`  `.[0]`  `.[-1]`  `.[]`  `.a[]`  `..`  optional `?`,
 *   pipes `|`, commas `,`, and the builtins `keys`, `length`, `tostring`, `values`.
 * Anything else is a parse error; the parser turns it into a warning and the extractor is skipped.
 */

export type JqNode =
  | { kind: 'identity' }
  | { kind: 'recurse' }
  | { kind: 'path'; steps: JqStep[] }
  | { kind: 'pipe'; left: JqNode; right: JqNode }
  | { kind: 'comma'; items: JqNode[] }
  | { kind: 'builtin'; name: 'keys' | 'length' | 'tostring' | 'values' };

export type JqStep =
  | { kind: 'key'; key: string; optional: boolean }
  | { kind: 'index'; index: number; optional: boolean }
  | { kind: 'iterate'; optional: boolean }
  | { kind: 'recurse' };

export interface JqProgram {
  source: string;
  ast: JqNode;
}

export class JqError extends Error {}

class Parser {
  private i = 0;
  constructor(private readonly s: string) {}

  parse(): JqNode {
    const node = this.pipe();
    this.ws();
    if (this.i < this.s.length) throw new JqError(`unexpected '${this.s.slice(this.i, this.i + 10)}'`);
    return node;
  }

  private ws() {
    while (this.i < this.s.length && /\s/.test(this.s[this.i])) this.i++;
  }

  private pipe(): JqNode {
    let left = this.comma();
    for (;;) {
      this.ws();
      if (this.s[this.i] === '|' && this.s[this.i + 1] !== '=') {
        this.i++;
        const right = this.comma();
        left = { kind: 'pipe', left, right };
      } else return left;
    }
  }

  private comma(): JqNode {
    const items = [this.term()];
    for (;;) {
      this.ws();
      if (this.s[this.i] === ',') {
        this.i++;
        items.push(this.term());
      } else break;
    }
    return items.length === 1 ? items[0] : { kind: 'comma', items };
  }

  private term(): JqNode {
    this.ws();
    const rest = this.s.slice(this.i);
    const word = /^(keys|length|tostring|values)\b/.exec(rest);
    if (word) {
      this.i += word[0].length;
      return { kind: 'builtin', name: word[1] as 'keys' | 'length' | 'tostring' | 'values' };
    }
    if (rest.startsWith('(')) {
      this.i++;
      const inner = this.pipe();
      this.ws();
      if (this.s[this.i] !== ')') throw new JqError('missing )');
      this.i++;
      return inner;
    }
    if (this.s[this.i] !== '.') throw new JqError(`unsupported jq expression near '${rest.slice(0, 20)}'`);
    const steps: JqStep[] = [];
    // leading dot
    if (this.s[this.i + 1] === '.') {
      this.i += 2;
      steps.push({ kind: 'recurse' });
    } else {
      this.i++;
      const first = this.keyAfterDot();
      if (first !== undefined) steps.push({ kind: 'key', key: first, optional: this.optional() });
    }
    for (;;) {
      const c = this.s[this.i];
      if (c === '[') {
        this.i++;
        this.ws();
        if (this.s[this.i] === ']') {
          this.i++;
          steps.push({ kind: 'iterate', optional: this.optional() });
          continue;
        }
        if (this.s[this.i] === '"') {
          const key = this.stringLit();
          this.ws();
          if (this.s[this.i] !== ']') throw new JqError('missing ]');
          this.i++;
          steps.push({ kind: 'key', key, optional: this.optional() });
          continue;
        }
        const m = /^-?\d+/.exec(this.s.slice(this.i));
        if (!m) throw new JqError('unsupported index expression (slices and expressions are not supported)');
        this.i += m[0].length;
        this.ws();
        if (this.s[this.i] !== ']') throw new JqError('unsupported index expression (slices are not supported)');
        this.i++;
        steps.push({ kind: 'index', index: Number(m[0]), optional: this.optional() });
        continue;
      }
      if (c === '.') {
        if (this.s[this.i + 1] === '.') throw new JqError('unexpected ..');
        this.i++;
        if (this.s[this.i] === '[') continue;
        const key = this.keyAfterDot();
        if (key === undefined) throw new JqError('expected a key after .');
        steps.push({ kind: 'key', key, optional: this.optional() });
        continue;
      }
      break;
    }
    if (steps.length === 0) return { kind: 'identity' };
    if (steps.length === 1 && steps[0].kind === 'recurse') return { kind: 'recurse' };
    return { kind: 'path', steps };
  }

  private optional(): boolean {
    if (this.s[this.i] === '?') {
      this.i++;
      return true;
    }
    return false;
  }

  private keyAfterDot(): string | undefined {
    if (this.s[this.i] === '"') return this.stringLit();
    const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(this.s.slice(this.i));
    if (!m) return undefined;
    this.i += m[0].length;
    return m[0];
  }

  private stringLit(): string {
    // JSON-style string
    const start = this.i;
    this.i++;
    while (this.i < this.s.length && this.s[this.i] !== '"') {
      if (this.s[this.i] === '\\') this.i++;
      this.i++;
    }
    if (this.s[this.i] !== '"') throw new JqError('unterminated string');
    this.i++;
    try {
      return JSON.parse(this.s.slice(start, this.i)) as string;
    } catch {
      throw new JqError('bad string literal');
    }
  }
}

export function compileJq(source: string): JqProgram {
  const trimmed = source.trim();
  if (trimmed === '') throw new JqError('empty jq expression');
  return { source, ast: new Parser(trimmed).parse() };
}

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

function isObject(v: Json): v is { [k: string]: Json } {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function typeName(v: Json): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v === 'object' ? 'object' : typeof v;
}

function applyStep(step: JqStep, input: Json): Json[] {
  switch (step.kind) {
    case 'recurse': {
      const out: Json[] = [];
      const walk = (v: Json) => {
        out.push(v);
        if (Array.isArray(v)) v.forEach(walk);
        else if (isObject(v)) Object.values(v).forEach(walk);
      };
      walk(input);
      return out;
    }
    case 'key':
      if (input === null) return [null];
      if (isObject(input)) return [Object.hasOwn(input, step.key) ? input[step.key] : null];
      if (step.optional) return [];
      throw new JqError(`cannot index ${typeName(input)} with "${step.key}"`);
    case 'index':
      if (input === null) return [null];
      if (Array.isArray(input)) {
        const idx = step.index < 0 ? input.length + step.index : step.index;
        return [idx >= 0 && idx < input.length ? input[idx] : null];
      }
      if (step.optional) return [];
      throw new JqError(`cannot index ${typeName(input)} with number`);
    case 'iterate':
      if (Array.isArray(input)) return input;
      if (isObject(input)) return Object.values(input);
      if (step.optional) return [];
      throw new JqError(`cannot iterate over ${typeName(input)}`);
  }
}

function run(node: JqNode, input: Json): Json[] {
  switch (node.kind) {
    case 'identity':
      return [input];
    case 'recurse':
      return applyStep({ kind: 'recurse' }, input);
    case 'path': {
      let current: Json[] = [input];
      for (const step of node.steps) {
        const next: Json[] = [];
        for (const v of current) next.push(...applyStep(step, v));
        current = next;
      }
      return current;
    }
    case 'pipe': {
      const out: Json[] = [];
      for (const v of run(node.left, input)) out.push(...run(node.right, v));
      return out;
    }
    case 'comma': {
      const out: Json[] = [];
      for (const item of node.items) out.push(...run(item, input));
      return out;
    }
    case 'builtin':
      switch (node.name) {
        case 'keys':
          if (isObject(input)) return [Object.keys(input).sort()];
          if (Array.isArray(input)) return [input.map((_, i) => i)];
          throw new JqError(`${typeName(input)} has no keys`);
        case 'values':
          if (input === null) return [];
          return [input];
        case 'length':
          if (input === null) return [0];
          if (typeof input === 'string') return [[...input].length];
          if (Array.isArray(input)) return [input.length];
          if (isObject(input)) return [Object.keys(input).length];
          if (typeof input === 'number') return [Math.abs(input)];
          throw new JqError('boolean has no length');
        case 'tostring':
          return [typeof input === 'string' ? input : goJson(input)];
      }
  }
}

/** Go's json.Marshal: object keys sorted, no whitespace. */
export function goJson(v: Json): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return `[${v.map(goJson).join(',')}]`;
  if (typeof v === 'object') {
    const keys = Object.keys(v).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${goJson(v[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/**
 * Run a program on a JSON document. Scalars are returned as text, arrays/objects as compact JSON.
 * `null` results are dropped (nuclei would print the string "null"; dropping it avoids bogus values).
 * Evaluation stops at the first error, like nuclei.
 */
export function runJq(program: JqProgram, doc: unknown): string[] {
  let values: Json[];
  try {
    values = run(program.ast, doc as Json);
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const v of values) {
    if (v === null || v === undefined) continue;
    if (typeof v === 'string') out.push(v);
    else if (typeof v === 'number' || typeof v === 'boolean') out.push(String(v));
    else out.push(goJson(v));
  }
  return out;
}
