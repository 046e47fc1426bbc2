/** print_debug: the DSL's debug output, through a replaceable sink (nuclei's PrintDebugCallback). */
import { debuglog } from 'node:util';
import type { DslValue } from '../ast.js';
import { dslToString } from '../values.js';
import { def, INF } from './registry.js';

export type DslDebugSink = (message: string, args: DslValue[]) => void;

// The engine has no logger of its own (templates run in worker threads): by default print_debug goes to Node's
// debug channel, shown on stderr only when NODE_DEBUG includes "nuclei-dsl", as nuclei logs it at info level.
const nodeDebug = debuglog('nuclei-dsl');
let sink: DslDebugSink = (message) => nodeDebug('%s', message);

/** Route print_debug output elsewhere (a scan log, a test); returns the previous sink. */
export function setDslDebugSink(next: DslDebugSink): DslDebugSink {
  const previous = sink;
  sink = next;
  return previous;
}

/** print_debug(args...): logs "print_debug value: [a b]" (Go's fmt.Sprint of the arguments) and returns true. */
def('print_debug', 1, INF, (args) => {
  sink(`print_debug value: [${args.map(dslToString).join(' ')}]`, args);
  return true;
});
