/** Where `jarm()` is called in compiled DSL expressions (no I/O here: the parser uses it too). */
import type { DslNode } from '../dsl/index.js';
import type { CompiledDsl } from '../types.js';

function collectCalls(node: DslNode | undefined, out: DslNode[]): void {
  if (!node) return;
  const children: Array<DslNode | undefined> =
    node.k === 'call'
      ? node.args
      : node.k === 'unary'
        ? [node.arg]
        : node.k === 'bin'
          ? [node.l, node.r]
          : node.k === 'tern'
            ? [node.c, node.t, node.f]
            : node.k === 'arr'
              ? node.items
              : [];
  if (node.k === 'call' && node.name === 'jarm' && node.args.length === 1) out.push(node.args[0]!);
  for (const child of children) collectCalls(child, out);
}

/** The argument expressions of the `jarm()` calls of a block's dsl matchers and extractors. */
export function jarmArguments(block: { matchers: Array<{ dsl: CompiledDsl[] }>; extractors: Array<{ dsl: CompiledDsl[] }> }): DslNode[] {
  const out: DslNode[] = [];
  for (const item of [...block.matchers, ...block.extractors]) for (const d of item.dsl) collectCalls(d.ast, out);
  return out;
}

/** Whether a compiled expression calls `jarm()` (parse-time checks). */
export function usesJarm(ast: DslNode | undefined): boolean {
  const out: DslNode[] = [];
  collectCalls(ast, out);
  return out.length > 0;
}

/** Whether a block's matchers or extractors read `field` (as their part or in a dsl expression). */
export function readsField(
  block: { matchers: Array<{ part: string; dsl: CompiledDsl[] }>; extractors: Array<{ part: string; dsl: CompiledDsl[] }> },
  field: string,
): boolean {
  const word = new RegExp(`\\b${field}\\b`);
  return [...block.matchers, ...block.extractors].some((item) => item.part === field || item.dsl.some((d) => word.test(d.source)));
}
