/** Tree-walking evaluator of the nuclei DSL (no `eval`, no JavaScript objects reachable) and scopes. */
import { compileGoRegex } from '../goregex.js';
import { DslEvalError, DslSyntaxError, type DslNode, type DslScope, type DslValue } from './ast.js';
import { FUNCTIONS } from './helpers/index.js';
import { parseDsl } from './parser.js';
import { bool, checkSize, deepEqual, dslToString, num } from './values.js';

export function evaluateDsl(node: DslNode, scope: DslScope): DslValue {
  switch (node.k) {
    case 'lit':
      return node.v;
    case 'var': {
      const v = scope.get(node.name);
      if (v === undefined) throw new DslEvalError(`No parameter '${node.name}' found.`, node.name);
      return v;
    }
    case 'arr':
      return node.items.map((i) => evaluateDsl(i, scope));
    case 'unary': {
      const v = evaluateDsl(node.arg, scope);
      if (node.op === '!') return !bool(v, '!');
      if (node.op === '-') return -num(v, '-');
      return ~num(v, '~');
    }
    case 'tern': {
      const c = evaluateDsl(node.c, scope);
      if (bool(c, '?')) return evaluateDsl(node.t, scope);
      return node.f ? evaluateDsl(node.f, scope) : null;
    }
    case 'call': {
      const def = FUNCTIONS.get(node.name);
      if (!def) throw new DslEvalError(`unknown function '${node.name}'`);
      if (node.args.length < def.min || node.args.length > def.max) {
        throw new DslEvalError(`invalid number of arguments for ${node.name}: ${node.args.length}`);
      }
      const args = node.args.map((a) => evaluateDsl(a, scope));
      return def.fn(args, scope);
    }
    case 'bin':
      return evalBinary(node, scope);
  }
}

function evalBinary(node: Extract<DslNode, { k: 'bin' }>, scope: DslScope): DslValue {
  const op = node.op;
  if (op === '&&') {
    if (!bool(evaluateDsl(node.l, scope), '&&')) return false;
    return bool(evaluateDsl(node.r, scope), '&&');
  }
  if (op === '||') {
    if (bool(evaluateDsl(node.l, scope), '||')) return true;
    return bool(evaluateDsl(node.r, scope), '||');
  }
  if (op === '??') {
    let l: DslValue;
    try {
      l = evaluateDsl(node.l, scope);
    } catch (err) {
      if (err instanceof DslEvalError && err.missingVariable) l = null;
      else throw err;
    }
    return l !== null ? l : evaluateDsl(node.r, scope);
  }
  const l = evaluateDsl(node.l, scope);
  const r = evaluateDsl(node.r, scope);
  switch (op) {
    case '==':
      return deepEqual(l, r);
    case '!=':
      return !deepEqual(l, r);
    case '>':
    case '<':
    case '>=':
    case '<=': {
      if (typeof l === 'string' && typeof r === 'string') {
        return op === '>' ? l > r : op === '<' ? l < r : op === '>=' ? l >= r : l <= r;
      }
      const a = num(l, op);
      const b = num(r, op);
      return op === '>' ? a > b : op === '<' ? a < b : op === '>=' ? a >= b : a <= b;
    }
    case '=~':
    case '!~': {
      if (typeof r !== 'string' || typeof l !== 'string') throw new DslEvalError(`'${op}' needs strings`);
      const re = compileGoRegex(r);
      if (!re.regex) throw new DslEvalError(`invalid regex '${r}': ${re.error}`);
      const m = re.regex.test(l);
      return op === '=~' ? m : !m;
    }
    case 'in': {
      const list = Array.isArray(r) ? r : [r];
      return list.some((x) => deepEqual(l, x));
    }
    case '+':
      if (typeof l === 'string' || typeof r === 'string') return checkSize(dslToString(l) + dslToString(r));
      return num(l, '+') + num(r, '+');
    case '-':
      return num(l, '-') - num(r, '-');
    case '*':
      return num(l, '*') * num(r, '*');
    case '/':
      return num(l, '/') / num(r, '/');
    case '%':
      return num(l, '%') % num(r, '%');
    case '**':
      return num(l, '**') ** num(r, '**');
    case '&':
      return num(l, '&') & num(r, '&');
    case '|':
      return num(l, '|') | num(r, '|');
    case '^':
      return num(l, '^') ^ num(r, '^');
    case '<<':
      return num(l, '<<') << num(r, '<<');
    case '>>':
      return num(l, '>>') >> num(r, '>>');
    default:
      throw new DslEvalError(`unknown operator ${op}`);
  }
}

/** Parse and evaluate in one go. Throws DslSyntaxError / DslEvalError. */
export function evaluateExpression(src: string, scope: DslScope): DslValue {
  const parsed = parseDsl(src);
  if (!parsed.ast) throw new DslSyntaxError(parsed.error ?? 'invalid expression');
  return evaluateDsl(parsed.ast, scope);
}

/* ------------------------------------------------------------------------------------------------------------ */
/* Scopes                                                                                                       */
/* ------------------------------------------------------------------------------------------------------------ */

export type DslRecord = Record<string, DslValue | undefined>;

/** A scope over several records; later records win. Own properties only. */
export function scopeOf(...records: Array<DslRecord | DslScope | undefined>): DslScope {
  const layers = records.filter((r): r is DslRecord | DslScope => r !== undefined).reverse();
  return {
    get(name: string) {
      for (const layer of layers) {
        if (typeof (layer as DslScope).get === 'function') {
          const v = (layer as DslScope).get(name);
          if (v !== undefined) return v;
        } else if (Object.hasOwn(layer, name)) {
          const v = (layer as DslRecord)[name];
          if (v !== undefined) return v;
        }
      }
      return undefined;
    },
  };
}
