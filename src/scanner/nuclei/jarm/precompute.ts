/**
 * Fingerprints a block's expressions need, computed before its (synchronous) operators run: every `jarm(x)` call
 * in its dsl matchers and extractors has its argument evaluated in the event's scope; an argument that is the
 * target host's `host:port` (Go's net.SplitHostPort form) is fingerprinted once per run and host:port, and the
 * value is handed to the evaluator as a scope layer (dsl/helpers/jarm.ts reads it back).
 */
import { type DslNode, type DslRecord, type DslScope, evaluateDsl } from '../dsl/index.js';
import { jarmScopeKey } from '../dsl/helpers/jarm.js';
import { splitHostPort } from '../engine/network-io.js';
import type { NetworkConnector } from '../network-types.js';
import { jarmArguments } from './calls.js';
import { computeJarm, type JarmResult } from './index.js';

export { jarmArguments } from './calls.js';

export interface JarmRunOptions {
  connect: NetworkConnector;
  /** Per-probe timeout (default 10 s, nuclei's). */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** One run's fingerprints by host:port, so templates of a run probing the same service share them. */
export class JarmCache {
  private readonly results = new Map<string, Promise<JarmResult>>();

  constructor(private readonly options: JarmRunOptions) {}

  get(host: string, port: number): Promise<JarmResult> {
    const key = `${host.toLowerCase()}\u0000${port}`;
    let result = this.results.get(key);
    if (!result) {
      result = computeJarm(host, port, this.options);
      this.results.set(key, result);
    }
    return result;
  }

  /** `layer` for a block's `jarm()` calls; `beforeProbes` runs first when there are any (empty layer otherwise). */
  async forBlock(
    block: Parameters<typeof jarmArguments>[0],
    scope: DslScope,
    targetHost: string,
    allowOffTarget: boolean | undefined,
    beforeProbes?: () => void,
  ): Promise<{ layer: DslRecord | undefined; warnings: string[] }> {
    const args = jarmArguments(block);
    if (!args.length) return { layer: undefined, warnings: [] };
    beforeProbes?.();
    return this.layer(args, scope, targetHost, allowOffTarget === true);
  }

  /**
   * The scope layer for a block: fingerprints of the arguments that are the target host's host:port. Others are
   * left out with a warning (the helper then fails, so its matcher is false), as are arguments that do not
   * evaluate or are not host:port (nuclei's helper fails on those too).
   */
  async layer(args: DslNode[], scope: DslScope, targetHost: string, allowOffTarget: boolean): Promise<{ layer: DslRecord; warnings: string[] }> {
    const layer = Object.create(null) as DslRecord;
    const warnings: string[] = [];
    const target = targetHost.replace(/^\[(.*)\]$/, '$1').toLowerCase();
    for (const arg of args) {
      let value: unknown;
      try {
        value = evaluateDsl(arg, scope);
      } catch {
        continue;
      }
      if (typeof value !== 'string' || layer[jarmScopeKey(value)] !== undefined) continue;
      const split = splitHostPort(value);
      if (!split) {
        warnings.push(`jarm(${JSON.stringify(value)}): not host:port; the expression cannot match`);
        continue;
      }
      if (!allowOffTarget && split.host.toLowerCase() !== target) {
        warnings.push(`jarm(${JSON.stringify(value)}) not computed: it is not the target ${targetHost}`);
        continue;
      }
      const result = await this.get(split.host, split.port);
      layer[jarmScopeKey(value)] = result.hash;
    }
    return { layer, warnings };
  }
}
