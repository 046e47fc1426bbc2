/**
 * `jarm(host:port)`: nuclei's helper (projectdiscovery/dsl over tlsx's jarm) opens ten TLS connections, which a
 * synchronous evaluator cannot. The network and ssl runners compute the fingerprints a block's expressions ask for
 * before evaluating them (jarm/precompute.ts) and put them in the scope under `jarmScopeKey(argument)`, a name no
 * template variable can have; this helper only reads them back.
 */
import { DslEvalError } from '../ast.js';
import { def, S } from './registry.js';

/** Scope name of a precomputed fingerprint: a NUL byte keeps it out of reach of template names. */
export function jarmScopeKey(argument: string): string {
  return `\u0000jarm\u0000${argument}`;
}

def('jarm', 1, 1, ([target], scope) => {
  if (typeof target !== 'string') throw new DslEvalError('jarm: invalid target');
  const value = scope.get(jarmScopeKey(target));
  if (typeof value === 'string') return value;
  throw new DslEvalError(`jarm: no fingerprint of ${JSON.stringify(S(target))} was computed (network and ssl blocks compute it for their target's host:port)`);
});
