/** Recursive-descent parser of the nuclei DSL, with a cache and a summary of the variables and helpers used. */
import { DslSyntaxError, type DslNode } from './ast.js';
import { FUNCTIONS } from './helpers/index.js';
import { tokenize, type Tok } from './lexer.js';

const COMPARATORS = new Set(['==', '!=', '>', '>=', '<', '<=', '=~', '!~', 'in']);
const MAX_DEPTH = 200;

class Parser {
  private p = 0;
  private depth = 0;
  constructor(private readonly toks: Tok[]) {}

  private peek(): Tok {
    return this.toks[this.p];
  }
  private next(): Tok {
    return this.toks[this.p++];
  }
  private isOp(v: string): boolean {
    const t = this.peek();
    return t.t === 'op' && t.v === v;
  }
  private expectOp(v: string) {
    const t = this.next();
    if (t.t !== 'op' || t.v !== v) throw new DslSyntaxError(`expected '${v}' at ${t.pos}`);
  }

  parseAll(): DslNode {
    let node = this.expr();
    // govaluate reads a top-level `a, b` as the list [a, b] (templates extract "tls_version, cipher" this way)
    if (this.isOp(',')) {
      const items = [node];
      while (this.isOp(',')) {
        this.next();
        items.push(this.expr());
      }
      node = { k: 'arr', items };
    }
    const t = this.peek();
    if (t.t !== 'eof') throw new DslSyntaxError(`unexpected token at ${t.pos}`);
    return node;
  }

  private expr(): DslNode {
    if (++this.depth > MAX_DEPTH) throw new DslSyntaxError('expression nested too deeply');
    try {
      return this.ternary();
    } finally {
      this.depth--;
    }
  }

  private ternary(): DslNode {
    const c = this.coalesce();
    if (this.isOp('?')) {
      this.next();
      const t = this.expr();
      if (this.isOp(':')) {
        this.next();
        const f = this.expr();
        return { k: 'tern', c, t, f };
      }
      return { k: 'tern', c, t };
    }
    return c;
  }

  private binaryLevel(ops: string[], nextLevel: () => DslNode): DslNode {
    let l = nextLevel();
    for (;;) {
      const t = this.peek();
      if (t.t === 'op' && ops.includes(t.v)) {
        this.next();
        const r = nextLevel();
        l = { k: 'bin', op: t.v, l, r };
      } else return l;
    }
  }

  private coalesce = (): DslNode => this.binaryLevel(['??'], this.or);
  private or = (): DslNode => this.binaryLevel(['||'], this.and);
  private and = (): DslNode => this.binaryLevel(['&&'], this.cmp);
  private cmp = (): DslNode => {
    let l = this.bitor();
    for (;;) {
      const t = this.peek();
      const op = t.t === 'op' ? t.v : t.t === 'id' && t.v === 'in' ? 'in' : undefined;
      if (op && COMPARATORS.has(op)) {
        this.next();
        const r = this.bitor();
        l = { k: 'bin', op, l, r };
      } else return l;
    }
  };
  private bitor = (): DslNode => this.binaryLevel(['|'], this.bitxor);
  private bitxor = (): DslNode => this.binaryLevel(['^'], this.bitand);
  private bitand = (): DslNode => this.binaryLevel(['&'], this.shift);
  private shift = (): DslNode => this.binaryLevel(['<<', '>>'], this.add);
  private add = (): DslNode => this.binaryLevel(['+', '-'], this.mul);
  private mul = (): DslNode => this.binaryLevel(['*', '/', '%'], this.pow);
  private pow = (): DslNode => this.binaryLevel(['**'], this.unary);

  private unary = (): DslNode => {
    const t = this.peek();
    if (t.t === 'op' && (t.v === '!' || t.v === '-' || t.v === '~')) {
      this.next();
      if (++this.depth > MAX_DEPTH) throw new DslSyntaxError('expression nested too deeply');
      try {
        return { k: 'unary', op: t.v, arg: this.unary() };
      } finally {
        this.depth--;
      }
    }
    return this.primary();
  };

  private primary(): DslNode {
    const t = this.next();
    switch (t.t) {
      case 'num':
        return { k: 'lit', v: t.v };
      case 'str':
        return { k: 'lit', v: t.v };
      case 'id': {
        if (this.isOp('[]')) {
          this.next();
          return { k: 'var', name: t.v };
        }
        if (t.v === 'true') return { k: 'lit', v: true };
        if (t.v === 'false') return { k: 'lit', v: false };
        if (t.v === 'nil' || t.v === 'null') return { k: 'lit', v: null };
        if (this.isOp('(')) {
          this.next();
          const args: DslNode[] = [];
          if (!this.isOp(')')) {
            args.push(this.expr());
            while (this.isOp(',')) {
              this.next();
              args.push(this.expr());
            }
          }
          this.expectOp(')');
          return { k: 'call', name: t.v, args };
        }
        return { k: 'var', name: t.v };
      }
      case 'op':
        if (t.v === '(') {
          const first = this.expr();
          if (this.isOp(',')) {
            const items = [first];
            while (this.isOp(',')) {
              this.next();
              items.push(this.expr());
            }
            this.expectOp(')');
            return { k: 'arr', items };
          }
          this.expectOp(')');
          return first;
        }
        throw new DslSyntaxError(`unexpected '${t.v}' at ${t.pos}`);
      case 'eof':
        throw new DslSyntaxError('unexpected end of expression');
    }
  }
}

export interface ParsedDsl {
  ast?: DslNode;
  error?: string;
  /** Functions called in the expression that the engine does not implement. */
  unknownFunctions: string[];
  /** Calls with a wrong number of arguments, e.g. `md5/2`. */
  badArity: string[];
  /** Variables referenced. */
  variables: string[];
  /** Functions referenced (known or not). */
  functions: string[];
}

function walk(node: DslNode, visit: (n: DslNode) => void) {
  visit(node);
  switch (node.k) {
    case 'unary':
      walk(node.arg, visit);
      break;
    case 'bin':
      walk(node.l, visit);
      walk(node.r, visit);
      break;
    case 'tern':
      walk(node.c, visit);
      walk(node.t, visit);
      if (node.f) walk(node.f, visit);
      break;
    case 'call':
      for (const a of node.args) walk(a, visit);
      break;
    case 'arr':
      for (const a of node.items) walk(a, visit);
      break;
    default:
      break;
  }
}

const parseCache = new Map<string, ParsedDsl>();

export function parseDsl(src: string): ParsedDsl {
  const cached = parseCache.get(src);
  if (cached) return cached;
  let result: ParsedDsl;
  try {
    const ast = new Parser(tokenize(src)).parseAll();
    const unknownFunctions = new Set<string>();
    const badArity = new Set<string>();
    const variables = new Set<string>();
    const functions = new Set<string>();
    walk(ast, (n) => {
      if (n.k === 'var') variables.add(n.name);
      if (n.k === 'call') {
        functions.add(n.name);
        const def = FUNCTIONS.get(n.name);
        if (!def) unknownFunctions.add(n.name);
        else if (n.args.length < def.min || n.args.length > def.max) badArity.add(`${n.name}/${n.args.length}`);
      }
    });
    result = {
      ast,
      unknownFunctions: [...unknownFunctions],
      badArity: [...badArity],
      variables: [...variables],
      functions: [...functions],
    };
  } catch (err) {
    result = {
      error: (err as Error).message,
      unknownFunctions: [],
      badArity: [],
      variables: [],
      functions: [],
    };
  }
  if (parseCache.size > 5000) parseCache.clear();
  parseCache.set(src, result);
  return result;
}
