/**
 * Runs a template's `flow:` (nuclei v3 pkg/tmplexec/flow): a JavaScript program, run in the QuickJS sandbox of
 * flow-sandbox.ts, decides which blocks run and in what order.
 *
 * Semantics followed from nuclei:
 *  - `http()` runs every http block in order; `http(1)`, `http("id")`, `http(1, "x")` run the blocks named by
 *    1-based index or by `id`, in the order given. `dns()` and `ssl()` likewise.
 *  - a call returns true when one of its events matched, or produced an operator result in a block without
 *    matchers, or came from a block without any matcher or extractor; false otherwise (and for an unknown id,
 *    with a warning)
 *  - the template context (`template[...]` in the script, and the top layer of every later request's values and
 *    matchers) holds: constants and plain variables; each event's fields as `<id>_<field>`, or
 *    `<protocol>_<field>` for a block without id (`http_status_code`, `ssl_subject_cn`); internal extractor
 *    values by name (one value as a string, several as a list); and what `set(name, value)` stored
 *  - results are the blocks' own results (a block's event is reported only when it matched or extracted, as
 *    without flow); events whose matchers are all `internal` are not reported (they only gate the flow)
 *  - builtins: `set`, `log`, `iterate`, `Dedupe`; a top-level `return` is allowed
 *
 * A script that fails (syntax error, CPU budget, memory limit) ends the template with a
 * `template failed: flow ...` warning; results reported before the failure are kept.
 */
import type { DslRecord, DslValue } from '../dsl/index.js';
import type {
  DnsRequestBlock,
  DnsResolver,
  HostRunDeps,
  HttpRequestBlock,
  HttpSender,
  NucleiTemplate,
  OperatorBlock,
  RunDeps,
  RunOutput,
  RunWarning,
  SslRequestBlock,
  TemplateResult,
  TlsConnector,
} from '../types.js';
import { dnsProtocol } from './dns.js';
import { type HostBlock, type HostProtocol, HostTemplateRun } from './host-run.js';
import type { OperatorResult } from './operators.js';
import { type RunContext, TemplateRun } from './run.js';
import { createRunContext } from './run-templates.js';
import { sslProtocol } from './ssl.js';
import { FLOW_PROTOCOLS } from '../parse/flow.js';
import { DEFAULT_FLOW_LIMITS, type FlowLimits, FlowScriptError, runFlowScript } from './flow-sandbox.js';

/** The host side of a flow's dns() / ssl() calls, when the run has a host to aim them at. */
export interface FlowHostProtocols {
  dns?: HostProtocol<DnsRequestBlock>;
  ssl?: HostProtocol<SslRequestBlock>;
  hostDeps?: HostRunDeps;
}

export interface FlowOptions {
  limits?: Partial<FlowLimits>;
  /** False when the run has no URL target: http() calls then return false with a warning. */
  http?: boolean;
  /** `log(...)` output of the script (debugging); dropped when absent. */
  onLog?: (templateId: string, text: string) => void;
}

/** Blocks of one protocol, called by index or id. */
interface ProtocolBlocks {
  blocks: Array<OperatorBlock & { id?: string; path: string }>;
  run(block: OperatorBlock): Promise<void>;
}

class FlowRun {
  readonly context: DslRecord = Object.create(null) as DslRecord;
  /** Set by an event of the protocol call in progress (nuclei's matcherStatus). */
  private status = false;
  private readonly protocols = new Map<string, ProtocolBlocks>();

  constructor(
    readonly tpl: NucleiTemplate,
    private readonly warn: (message: string, path?: string) => void,
  ) {
    for (const [k, v] of Object.entries(tpl.constants)) this.context[k] = v;
    for (const [k, v] of tpl.variables) if (!v.includes('{{')) this.context[k] = v;
  }

  register(name: string, blocks: ProtocolBlocks) {
    this.protocols.set(name, blocks);
  }

  /** What every block's events tell the flow (nuclei's protocolResultCallback plus AddTemplateVars). */
  onEvent(protocol: string, block: OperatorBlock & { id?: string }, data: Record<string, DslValue>, op: OperatorResult | undefined) {
    const prefix = block.id || protocol;
    for (const [k, v] of Object.entries(data)) {
      if (k === 'template-id' || k === 'template-info' || k === 'template-path') continue;
      this.context[`${prefix}_${k}`] = v;
    }
    if (op) {
      if (op.matched || block.matchers.length === 0) this.status = true;
      for (const [k, values] of op.dynamicValues) this.context[k] = values.length === 1 ? values[0] : values;
    } else if (block.matchers.length === 0 && block.extractors.length === 0) this.status = true;
  }

  async call(protocol: string, ids: string[]): Promise<boolean> {
    const entry = this.protocols.get(protocol);
    if (!entry) {
      this.warn(`flow called ${protocol}(), which cannot run here (no ${protocol} blocks, or no ${protocol} target for this run); it returned false`, 'flow');
      return false;
    }
    this.status = false;
    const chosen: ProtocolBlocks['blocks'] = [];
    if (!ids.length) chosen.push(...entry.blocks);
    for (const id of ids) {
      const index = /^\d+$/.test(id) ? Number(id) : Number.NaN;
      const block = entry.blocks.find((b) => b.id === id) ?? (index >= 1 ? entry.blocks[index - 1] : undefined);
      if (!block) {
        this.warn(`flow called ${protocol}(${JSON.stringify(id)}): no ${protocol} block with that index or id`, 'flow');
        return this.status;
      }
      chosen.push(block);
    }
    for (const block of chosen) await entry.run(block);
    return this.status;
  }

  set(name: string, value: unknown) {
    this.context[name] = toDslValue(value);
  }
}

/**
 * The `template` object the script sees: the context with long strings (response bodies of many blocks) cut, so
 * that copying it into the sandbox after each call stays within the sandbox's heap. Requests and matchers keep
 * the full values.
 */
const SCRIPT_VALUE_CHARS = 64 * 1024;
function scriptView(context: DslRecord): DslRecord {
  const out: DslRecord = {};
  for (const [k, v] of Object.entries(context)) out[k] = typeof v === 'string' && v.length > SCRIPT_VALUE_CHARS ? v.slice(0, SCRIPT_VALUE_CHARS) : v;
  return out;
}

function toDslValue(value: unknown): DslValue {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  if (Array.isArray(value)) return value.map(toDslValue);
  return JSON.stringify(value);
}

/**
 * Runs one flow template: http blocks against `ctx`'s target (as runTemplatesDetailed), dns/ssl blocks through
 * `hosts` when given. Counts the template in `ctx.stats`; warnings go to `ctx.warnings` / `onWarning`.
 */
export async function runFlowTemplate(
  tpl: NucleiTemplate,
  ctx: RunContext,
  hosts: FlowHostProtocols = {},
  options: FlowOptions = {},
): Promise<TemplateResult[]> {
  const warnings: RunWarning[] = ctx.warnings;
  const onWarning = ctx.deps.onWarning;
  const warn = (message: string, path?: string) => {
    const w: RunWarning = { templateId: tpl.id, path, message };
    warnings.push(w);
    onWarning?.(w);
  };
  const stats = ctx.stats;
  if (tpl.skip || !tpl.flow) {
    stats.templatesSkipped++;
    warn(`template skipped: ${tpl.skip ?? 'no flow'}`);
    return [];
  }
  stats.templatesRun++;
  const flow = new FlowRun(tpl, warn);
  const runs: Array<{ findings: TemplateResult[] }> = [];

  if (options.http !== false && tpl.requests.length) {
    const http = new TemplateRun(tpl, ctx, {
      context: flow.context,
      onEvent: (block: HttpRequestBlock, data, op) => flow.onEvent('http', block, data, op),
    });
    runs.push(http);
    flow.register('http', { blocks: tpl.requests, run: (block) => http.runFlowBlock(block as HttpRequestBlock) });
  }
  const hostDeps = hosts.hostDeps ?? { stats, signal: ctx.deps.signal, onWarning };
  const hostRun = <B extends HostBlock>(name: 'dns' | 'ssl', blocks: B[] | undefined, protocol: HostProtocol<B> | undefined) => {
    if (!blocks?.length || !protocol) return;
    const run = new HostTemplateRun<B>(tpl, protocol.inputVars, hostDeps, stats, warnings, {
      context: flow.context,
      onEvent: (block, data, op) => flow.onEvent(name, block, data, op),
    });
    runs.push(run);
    flow.register(name, { blocks, run: (block) => run.runFlowBlock(block as B, protocol) });
  };
  hostRun('dns', tpl.dns, hosts.dns);
  hostRun('ssl', tpl.ssl, hosts.ssl);

  const signal = ctx.deps.signal;
  try {
    await runFlowScript(
      tpl.flow,
      FLOW_PROTOCOLS,
      {
        call: (protocol, ids) => flow.call(protocol, ids),
        set: (name, value) => flow.set(name, value),
        context: () => scriptView(flow.context),
        log: (text) => options.onLog?.(tpl.id, text),
        signal,
      },
      { ...DEFAULT_FLOW_LIMITS, ...options.limits },
    );
  } catch (err) {
    const message = err instanceof FlowScriptError ? err.message : `flow failed: ${(err as Error).message}`;
    warn(`template failed: ${message}`, 'flow');
  }
  return runs.flatMap((run) => run.findings);
}

export interface FlowTarget {
  /** URL for the http blocks. */
  baseUrl?: string;
  /** Host (and port for ssl) for the dns and ssl blocks. */
  host?: string;
  port?: number;
}

export interface FlowRunDeps extends Omit<RunDeps, 'send'>, Omit<FlowOptions, 'http'> {
  send?: HttpSender;
  resolver?: DnsResolver;
  connect?: TlsConnector;
}

/**
 * Runs flow templates against a target that may have a URL (http blocks), a host (dns, ssl) or both, one after
 * another. Templates without `flow:` are skipped with a warning (use the protocol runners for them).
 */
export async function runFlowTemplatesDetailed(templates: NucleiTemplate[], target: FlowTarget, deps: FlowRunDeps): Promise<RunOutput> {
  const ctx = createRunContext(
    { baseUrl: target.baseUrl ?? 'http://invalid.invalid/' },
    { ...deps, send: deps.send ?? (() => Promise.reject(new Error('no http sender for this flow run'))) },
  );
  const hostDeps: HostRunDeps = { stats: ctx.stats, signal: deps.signal, onWarning: deps.onWarning, timeoutMs: deps.timeoutMs };
  const hosts: FlowHostProtocols = { hostDeps };
  if (target.host && deps.resolver) hosts.dns = dnsProtocol({ host: target.host }, { ...hostDeps, resolver: deps.resolver });
  if (target.host && deps.connect) {
    hosts.ssl = sslProtocol(
      { host: target.host, port: target.port },
      { ...hostDeps, connect: deps.connect, allowOffTargetRequests: deps.allowOffTargetRequests },
    );
  }
  const results: TemplateResult[] = [];
  for (const tpl of templates) {
    if (deps.signal?.aborted) break;
    results.push(...(await runFlowTemplate(tpl, ctx, hosts, { ...deps, http: Boolean(target.baseUrl && deps.send) })));
  }
  return { results, warnings: ctx.warnings, stats: ctx.stats };
}
