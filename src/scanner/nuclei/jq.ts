/**
 * jq for nuclei `json` extractors (nuclei runs gojq): the grammar is in jq/parse.ts, evaluation in jq/evaluate.ts,
 * the builtins in jq/builtins.ts. What falls outside the subset (variables, `def`, `reduce`, formats, assignment,
 * unknown functions) is a JqError at compile time; the template parser turns it into a warning and skips the
 * extractor.
 */
import { isBuiltin } from './jq/builtins.js';
import { type Env, evaluate } from './jq/evaluate.js';
import { type JqNode, Parser } from './jq/parse.js';
import { goJson, JqError, type Json } from './jq/values.js';

export { goJson, JqError, type Json };
export type { JqNode };

export interface JqProgram {
  source: string;
  ast: JqNode;
}

/** Values one run may produce; a template extracts a handful, a hostile `..` over a large body stops here. */
export const MAX_JQ_OUTPUTS = 10_000;

/** Longest expression accepted: real ones are under 300 characters. */
export const MAX_JQ_SOURCE = 4_096;

export function compileJq(source: string): JqProgram {
  const trimmed = source.trim();
  if (trimmed === '') throw new JqError('empty jq expression');
  if (trimmed.length > MAX_JQ_SOURCE) throw new JqError(`expression longer than ${MAX_JQ_SOURCE} characters`);
  return { source, ast: new Parser(trimmed, isBuiltin).parseProgram() };
}

class OutputCap {}

/**
 * Run a program on a JSON document. Scalars are returned as text, arrays/objects as Go-compact JSON (sorted keys).
 * `null` results are dropped (nuclei would print the string "null"; dropping it avoids bogus values).
 * Like nuclei, evaluation stops at the first error and keeps the values produced before it; a run that passes a
 * bound (outputs, steps, nesting, size) stops the same way.
 */
export function runJq(program: JqProgram, doc: unknown): string[] {
  const out: string[] = [];
  const env: Env = { steps: 0, depth: 0 };
  const cap = new OutputCap();
  try {
    evaluate(env, program.ast, doc as Json, (v) => {
      if (v === null || v === undefined) return;
      if (typeof v === 'string') out.push(v);
      else if (typeof v === 'number' || typeof v === 'boolean') out.push(String(v));
      else out.push(goJson(v));
      if (out.length >= MAX_JQ_OUTPUTS) throw cap;
    });
  } catch {
    // runtime errors, bounds (JqLimitError) and the output cap all end the run with what it produced so far;
    // so does anything the bounds did not foresee (a stack overflow): an extractor must never take the template down
  }
  return out;
}
