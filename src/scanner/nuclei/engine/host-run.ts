/**
 * What the dns and ssl runners share (nuclei's executer for one protocol's blocks against one input):
 * blocks in order, template variables evaluated once from the protocol's input variables, internal extractor
 * values template-wide (latest wins), `<id>_<name>` values for later blocks, stop-at-first-match, result events
 * built like nuclei's MakeDefaultResultEvent, bounded template concurrency, warnings and counters.
 */
import { randomInt } from 'node:crypto';
import { type DslRecord, type DslScope, type DslValue, renderMarkers, scopeOf } from '../dsl/index.js';
import type { HostRunDeps, Matcher, NucleiTemplate, OperatorBlock, RunOutput, RunStats, RunWarning, TemplateResult } from '../types.js';
import { MutableScope, type OperatorResult, type PartResolver, executeOperators } from './operators.js';
import { REQUEST_CAP_WARNING } from './run.js';
import { createRunContext, createRunStats } from './run-templates.js';
import { runFlowTemplate } from './flow.js';
import type { BlockPayloads } from '../parse/payloads.js';
import { payloadCombinations, payloadScope, type PayloadValues } from './payloads.js';
import { resultEvents } from './result-event.js';
import { RequestOast, evaluateInteractions, perRequestVariables, renderRequestVariables } from './oast.js';
import { withoutOast } from '../oast.js';

const RANDSTR_CHARS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

export interface HostBlock extends OperatorBlock {
  path: string;
  id?: string;
  stopAtFirstMatch: boolean;
  payloads?: BlockPayloads;
  skip?: string;
}

/** One exchange of a block, as the protocol saw it. */
export interface HostEvent {
  /** nuclei's internal event (responseToDSLMap). */
  data: Record<string, DslValue>;
  /** What a finding reports as matched-at. */
  matched: string;
  request: string;
  response: string;
}

/** The protocol part: render and send one block, or say why it was not sent (undefined + warning). */
export type BlockExecutor<B extends HostBlock> = (block: B, scope: DslScope, run: HostTemplateRun<B>) => Promise<HostEvent | undefined>;

/** A flow following a host run (see FlowHooks in run.ts): its template context is the top scope layer; it sees every event. */
export interface HostFlowHooks<B> {
  context: DslRecord;
  onEvent(block: B, data: Record<string, DslValue>, op: OperatorResult | undefined): void;
}

/** What runs one protocol's blocks against a host: the input variables, the executor and its part names. */
export interface HostProtocol<B extends HostBlock> {
  inputVars: DslRecord;
  execute: BlockExecutor<B>;
  readPart: PartResolver;
}

export class HostTemplateRun<B extends HostBlock> {
  private readonly results: TemplateResult[] = [];
  private readonly resultKeys = new Set<string>();
  private readonly dynamic = new Map<string, string[]>();
  private readonly previous: DslRecord = Object.create(null) as DslRecord;
  private readonly randstr = new Map<string, string>();
  private readonly vars: DslRecord = Object.create(null) as DslRecord;
  /** Variables using `{{interactsh-url}}`: rendered per question / handshake, with its own OAST URL. */
  private readonly oastVars: Set<string>;
  private requests = 0;

  constructor(
    readonly tpl: NucleiTemplate,
    private readonly inputVars: DslRecord,
    readonly deps: HostRunDeps,
    readonly stats: RunStats,
    private readonly warnings: RunWarning[],
    private readonly flow?: HostFlowHooks<B>,
  ) {
    this.oastVars = perRequestVariables(tpl);
  }

  /** Template variables still to evaluate once (those using an OAST URL are evaluated per request). */
  private onceVariables(): Set<string> {
    return new Set(this.tpl.variables.map(([name]) => name).filter((name) => !this.oastVars.has(name)));
  }

  private pendingVars?: Set<string>;

  get findings(): TemplateResult[] {
    return this.results;
  }

  /** One block called by a flow (`dns(1)`); results accumulate in `findings`. */
  async runFlowBlock(block: B, protocol: HostProtocol<B>): Promise<void> {
    this.pendingVars ??= this.onceVariables();
    if (block.skip) {
      this.warn(`request block skipped: ${block.skip}`, block.path);
      return;
    }
    await this.runBlock(block, protocol.execute, protocol.readPart, this.pendingVars);
  }

  private get maxRequests(): number {
    return Math.max(1, this.deps.maxRequestsPerTemplate ?? 100);
  }

  warn(message: string, path?: string) {
    const w: RunWarning = { templateId: this.tpl.id, path, message };
    this.warnings.push(w);
    this.deps.onWarning?.(w);
  }

  /** Scope for rendering and matching: input variables < dynamic values < previous < template variables < constants < randstr. */
  scope(): DslScope {
    const dynamic: DslRecord = Object.create(null) as DslRecord;
    for (const [k, v] of this.dynamic) {
      dynamic[k] = v[0];
      if (v.length > 1) {
        v.forEach((x, i) => {
          dynamic[`${k}${i}`] = x;
        });
      }
    }
    const randstr: DslScope = {
      get: (name: string) => {
        if (!/^randstr(_\d+)?$/.test(name)) return undefined;
        let v = this.randstr.get(name);
        if (!v) {
          v = '';
          for (let i = 0; i < 27; i++) v += RANDSTR_CHARS[randomInt(RANDSTR_CHARS.length)];
          this.randstr.set(name, v);
        }
        return v;
      },
    };
    return scopeOf(this.inputVars, dynamic, this.previous, this.vars, this.tpl.constants, randstr, this.flow?.context);
  }

  /** Template variables, each evaluated once as soon as what it uses is known. */
  private resolveVariables(pending: Set<string>) {
    for (let progress = true; progress && pending.size > 0; ) {
      progress = false;
      for (const [name, raw] of this.tpl.variables) {
        if (!pending.has(name)) continue;
        const r = renderMarkers(raw, this.scope());
        if (r.unresolved.length || r.errors.length) continue;
        this.vars[name] = r.text;
        pending.delete(name);
        progress = true;
      }
    }
  }

  async run(blocks: B[], execute: BlockExecutor<B>, readPart: PartResolver): Promise<TemplateResult[]> {
    if (this.tpl.skip) {
      this.stats.templatesSkipped++;
      this.warn(`template skipped: ${this.tpl.skip}`);
      return [];
    }
    this.stats.templatesRun++;
    const pending = this.onceVariables();
    let templateMatched = false;
    for (const block of blocks) {
      if (this.deps.signal?.aborted) break;
      if (templateMatched && this.tpl.stopAtFirstMatch) break;
      if (block.skip) {
        this.warn(`request block skipped: ${block.skip}`, block.path);
        continue;
      }
      const outcome = await this.runBlock(block, execute, readPart, pending);
      if (outcome === 'cap') return this.results;
      if (outcome) templateMatched = true;
    }
    return this.results;
  }

  /**
   * The block once, or once per payload combination (nuclei's generator), each request counted against the cap.
   * Whether it matched, or 'cap' once the template's request cap stopped it.
   */
  private async runBlock(block: B, execute: BlockExecutor<B>, readPart: PartResolver, pending: Set<string>): Promise<boolean | 'cap'> {
    this.resolveVariables(pending);
    const unsupported = block.matchers.filter((m: Matcher) => m.unsupported);
    if (unsupported.length) {
      this.warn(
        `${unsupported.map((m) => `${m.path}: ${m.unsupported}`).join('; ')} — this request block cannot match (it still runs for extractors)`,
        block.path,
      );
    }
    let matched = false;
    const rounds: Iterable<PayloadValues | undefined> = block.payloads ? payloadCombinations(block.payloads) : [undefined];
    for (const payload of rounds) {
      if (this.deps.signal?.aborted) break;
      if (this.requests >= this.maxRequests) {
        this.warn(`${REQUEST_CAP_WARNING} ${this.maxRequests} per template reached; remaining requests skipped`, block.path);
        return 'cap';
      }
      this.requests++;
      const oast = new RequestOast(this.deps.oast);
      const oastVars = renderRequestVariables(this.tpl, this.oastVars, (found) => scopeOf(this.scope(), found, oast.layer));
      const layers = payloadScope(scopeOf(this.scope(), oastVars, oast.layer), payload, (scope) => scope);
      const event = await execute(block, layers, this);
      if (!event) continue;
      const scope = new MutableScope(scopeOf(layers, event.data));
      const op = executeOperators(block, scope, unsupported.length > 0, readPart);
      this.flow?.onEvent(block, event.data, op);
      if (block.id) {
        for (const [k, v] of Object.entries(event.data)) this.previous[`${block.id}_${k}`] = v;
        for (const [k, v] of scope.local) this.previous[`${block.id}_${k}`] = v;
      }
      // the event again with each interaction of this request's URL (engine/oast.ts)
      const evaluate = (fields: Record<string, DslValue>) => {
        const again = executeOperators(block, new MutableScope(scopeOf(layers, event.data, fields)), unsupported.length > 0, readPart);
        if (again) this.emit(block, again, event);
        return again?.matched ?? false;
      };
      const oastMatched = await evaluateInteractions(oast, block, this.deps, evaluate, (message) => this.warn(message, block.path));
      if (oastMatched) matched = true;
      if (!op) continue;
      for (const [k, v] of op.dynamicValues) this.dynamic.set(k, v);
      this.emit(block, op, event);
      if (op.matched || oastMatched) {
        matched = true;
        if (block.stopAtFirstMatch) break;
      }
    }
    return matched;
  }

  /** nuclei MakeDefaultResultEvent. */
  private emit(block: B, op: OperatorResult, event: HostEvent) {
    if (op.dynamicValues.size && !op.matched) return;
    const extracted = op.extracts.size > 0 || op.outputExtracts.length > 0;
    if (extracted && block.matchers.length && !op.matched) return;
    if (!op.matched && !extracted) return;
    // nuclei prints no event whose matchers are all internal (flows gate later requests with such matchers)
    if (this.flow && op.matched && block.matchers.length && block.matchers.every((m) => m.internal)) return;
    const out = resultEvents(this.tpl, op, event);
    for (const r of out) {
      const key = JSON.stringify([r.matcherName ?? '', r.extractorName ?? '', r.matchedUrl, r.extractedResults]);
      if (this.resultKeys.has(key)) continue;
      this.resultKeys.add(key);
      this.results.push(r);
    }
  }
}

/** Runs `templates` with bounded concurrency; results keep the templates' order. */
export async function runHostTemplates<B extends HostBlock>(
  templates: NucleiTemplate[],
  deps: HostRunDeps,
  blocksOf: (t: NucleiTemplate) => B[] | undefined,
  inputVars: DslRecord,
  execute: BlockExecutor<B>,
  readPart: PartResolver,
): Promise<RunOutput> {
  const stats = deps.stats ?? createRunStats();
  const warnings: RunWarning[] = [];
  const runnable = templates.filter((t) => (blocksOf(t)?.length ?? 0) > 0);
  const perTemplate: TemplateResult[][] = runnable.map(() => []);
  let next = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= runnable.length || deps.signal?.aborted) return;
      // a template using OAST is skipped with the reason when there is no client to give it URLs
      const tpl = deps.oast ? runnable[i] : withoutOast(runnable[i]);
      const run = new HostTemplateRun<B>(tpl, inputVars, deps, stats, warnings);
      try {
        if (tpl.flow && !tpl.skip) {
          // a flow decides which blocks run (engine/flow.ts); this runner offers it this protocol only
          const name = blocksOf(tpl) === (tpl.dns as unknown) ? 'dns' : 'ssl';
          const ctx = createRunContext(
            { baseUrl: 'http://flow.invalid/' },
            { send: () => Promise.reject(new Error('no http target')), stats, onWarning: deps.onWarning, signal: deps.signal },
          );
          ctx.warnings = warnings;
          perTemplate[i] = await runFlowTemplate(tpl, ctx, { [name]: { inputVars, execute, readPart }, hostDeps: deps }, { http: false });
          continue;
        }
        perTemplate[i] = await run.run(blocksOf(tpl)!, execute, readPart);
      } catch (err) {
        run.warn(`template failed: ${(err as Error).message}`);
      }
    }
  };
  const workers = Math.max(1, Math.min(deps.concurrency ?? 4, runnable.length || 1));
  await Promise.all(Array.from({ length: workers }, worker));
  return { results: perTemplate.flat(), warnings, stats };
}

/** Renders a block field; undefined (and a warning) when markers stay unresolved, as nuclei refuses to send then. */
export function renderField(text: string, scope: DslScope, run: { warn(m: string, p?: string): void }, path: string): string | undefined {
  const r = renderMarkers(text, scope);
  if (r.unresolved.length || r.errors.length) {
    const what = r.unresolved.length ? `unresolved ${r.unresolved.map((v) => `{{${v}}}`).join(', ')}` : r.errors.join('; ');
    run.warn(`request not sent: ${what}`, path);
    return undefined;
  }
  return r.text;
}
