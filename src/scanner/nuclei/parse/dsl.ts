/** DSL expressions and `{{markers}}` in templates: compile them, and list the helpers and variables they use. */
import { findMarkers, parseDsl } from '../dsl/index.js';
import type { CompiledDsl } from '../types.js';
import type { Ctx, Seg } from './context.js';
import { usesJarm } from '../jarm/calls.js';

/** Protocols whose runners compute `jarm()` fingerprints before evaluating (engine/network.ts). */
const JARM_PROTOCOLS = new Set(['network', 'tcp']);

/** Compile a DSL expression for a matcher/extractor. Returns the unsupported reason, if any. */
export function compileDsl(ctx: Ctx, source: string, segs: Seg[]): { compiled: CompiledDsl; unsupported?: string } {
  const hasMarkers = source.includes('{{');
  const parsed = parseDsl(source);
  const compiled: CompiledDsl = { source, ast: parsed.ast, hasMarkers };
  if (!parsed.ast) {
    if (hasMarkers) {
      // rendered at run time first; only check the helpers used inside the markers
      const unknown = markerUnknownFunctions(source);
      if (unknown.length) {
        const reason = `unknown helper function${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}`;
        ctx.warn(`${reason}; this matcher cannot be evaluated`, segs);
        return { compiled, unsupported: reason };
      }
      return { compiled };
    }
    ctx.error(`invalid DSL expression ${JSON.stringify(source)}: ${parsed.error}`, segs);
    return { compiled, unsupported: 'invalid expression' };
  }
  if (parsed.unknownFunctions.length) {
    const reason = `unknown helper function${parsed.unknownFunctions.length > 1 ? 's' : ''} ${parsed.unknownFunctions.join(', ')}`;
    ctx.warn(`${reason} in ${JSON.stringify(source)}; it cannot be evaluated`, segs);
    return { compiled, unsupported: reason };
  }
  if (usesJarm(parsed.ast) && !JARM_PROTOCOLS.has(String(segs[0]))) {
    const reason = 'jarm() is only computed in network (tcp) blocks';
    ctx.warn(`${reason}; ${JSON.stringify(source)} cannot be evaluated`, segs);
    return { compiled, unsupported: reason };
  }
  if (parsed.badArity.length) {
    const reason = `wrong number of arguments: ${parsed.badArity.join(', ')}`;
    ctx.warn(`${reason} in ${JSON.stringify(source)}; it cannot be evaluated`, segs);
    return { compiled, unsupported: reason };
  }
  return { compiled };
}

export function markerUnknownFunctions(text: string): string[] {
  const out = new Set<string>();
  for (const m of findMarkers(text)) {
    const parsed = parseDsl(m.inner.trim());
    for (const f of parsed.unknownFunctions) out.add(f);
    // fingerprints are computed for operators only, never for text that is sent
    if (usesJarm(parsed.ast)) out.add('jarm');
    if (m.inner.includes('{{')) for (const f of markerUnknownFunctions(m.inner)) out.add(f);
  }
  return [...out];
}

export function markerVariables(text: string): string[] {
  const out = new Set<string>();
  for (const m of findMarkers(text)) {
    const inner = m.inner.trim();
    if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(inner)) {
      out.add(inner);
      continue;
    }
    const parsed = parseDsl(inner);
    for (const v of parsed.variables) out.add(v);
    if (m.inner.includes('{{')) for (const v of markerVariables(m.inner)) out.add(v);
  }
  return [...out];
}
