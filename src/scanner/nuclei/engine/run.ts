/**
 * Runs parsed nuclei HTTP templates against one target through an injected HttpSender.
 *
 * Execution follows nuclei v3's HTTP protocol:
 *  - blocks run in order; inside a block every `path` / `raw` entry is one request, in order
 *  - `{{...}}` markers are rendered from the target variables (BaseURL, RootURL, Hostname, Host, Port, Path, File,
 *    Scheme, Query, Input, FQDN), template `variables` / `constants`, values of internal extractors from earlier
 *    requests, and `randstr`; a request left with unresolved variables is not sent (nor are the block's later ones)
 *  - each response is an event: extractors run first (their values are visible to the matchers by name), then
 *    matchers with `matchers-condition`; results are built like nuclei's MakeDefaultResultEvent: one result per
 *    matched named matcher when the condition is `or`, otherwise one per named extractor, otherwise one
 *  - matchers or extractors using `status_code_1`, `body_2`... (req-condition) see the indexed values of all
 *    earlier responses of the block; a block's `id` exposes its values to later blocks as `<id>_<name>`
 *  - cookies set by responses are sent with the template's later requests (unless `disable-cookie`)
 *
 * Safety choices (documented behaviour, not nuclei's):
 *  - a block containing a matcher we cannot evaluate (xpath, a regex RE2 refuses, unknown DSL helper)
 *    never matches: guessing could produce false positives; the parser already warned, the run warns again
 *  - network errors produce no event (no matcher runs on an empty response)
 *  - requests to another host than the target (absolute URLs in templates) are skipped unless allowed; other
 *    ports and schemes of its host are the target (nuclei)
 *  - with no target (`baseUrl` absent) only self-contained blocks run (engine/self-contained.ts): their URLs are
 *    their own and the sender's scope guard alone decides where they may go
 */
import { randomInt } from 'node:crypto';
import { renderMarkers, scopeOf, type DslRecord, type DslScope, type DslValue } from '../dsl/index.js';
import type { HttpRequestBlock, HttpSendRequest, HttpSendResponse, NucleiTemplate, RunDeps, RunStats, RunWarning, TemplateResult } from '../types.js';
import { sameHost, splitUrl } from '../url-util.js';
import { type TargetInfo, layersWithTarget } from './target.js';
import { parseSetCookies, responseData } from './response.js';
import { MutableScope, type OperatorResult, executeOperators } from './operators.js';
import type { BuiltRequest } from './requests.js';
import { buildBlockRequest } from './self-contained.js';
import { iterateAllRounds, valueInRound } from './iterate-all.js';
import { type CacheEntry, clusterKey } from './clustering.js';
import { arrivalOrder, chainResponses } from './redirect-chain.js';
import { raceCopies, sendTogether } from './race.js';
import { resultEvents } from './result-event.js';
import { isOnceRequest, payloadCombinations, payloadScope, type PayloadValues } from './payloads.js';
import { RequestOast, evaluateInteractions, perRequestVariables, renderRequestVariables } from './oast.js';

/** The event of a request that failed, for its interactions only: no status, no body, the request as built. */
function unanswered(req: BuiltRequest): HttpSendResponse {
  const head = [`${req.method} ${req.url}`, ...Object.entries(req.headers).map(([k, v]) => `${k}: ${v}`)].join('\r\n');
  return { status: 0, headers: {}, body: '', durationMs: 0, rawRequest: `${head}\r\n\r\n${req.body ?? ''}`, rawResponse: '', finalUrl: req.url };
}

/** How the warning that a template reached its request cap begins (callers recognise it by this prefix). */
export const REQUEST_CAP_WARNING = 'request limit of';

const RANDSTR_CHARS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/**
 * How a flow (engine/flow.ts) follows a template run: its template context is the top scope layer (nuclei merges
 * it into every request's values and event), and it sees every event of the blocks it calls.
 */
export interface FlowHooks {
  context: DslRecord;
  onEvent(block: HttpRequestBlock, data: Record<string, DslValue>, op: OperatorResult | undefined): void;
}

export interface RunContext {
  /** Absent in a self-contained run: only self-contained blocks (URLs of their own) send anything. */
  target?: TargetInfo;
  deps: RunDeps;
  stats: RunStats;
  warnings: RunWarning[];
  cache?: Map<string, CacheEntry>;
  userAgent: string;
  timeoutMs: number;
  maxRequests: number;
}

export class TemplateRun {
  private readonly results: TemplateResult[] = [];
  private readonly resultKeys = new Set<string>();
  /** Values of internal extractors, template-wide (latest extraction wins). */
  private readonly dynamic = new Map<string, string[]>();
  /** `<blockId>_<name>` values of earlier blocks. */
  private readonly previous: Record<string, DslValue> = Object.create(null) as Record<string, DslValue>;
  private readonly cookies = new Map<string, string>();
  private readonly randstr = new Map<string, string>();
  private readonly vars: Record<string, string> = {};
  private readonly pendingVars = new Set<string>();
  /** Variables using `{{interactsh-url}}`: rendered for each request with its own OAST URL (engine/oast.ts). */
  private readonly oastVars: Set<string>;
  private requestCount = 0;
  /** Which extracted value of each dynamic name requests get (`iterate-all` rounds; 0 otherwise: the first). */
  private dynamicRound = 0;

  constructor(
    private readonly tpl: NucleiTemplate,
    private readonly ctx: RunContext,
    private readonly flow?: FlowHooks,
  ) {
    this.oastVars = perRequestVariables(tpl);
    for (const [name] of tpl.variables) if (!this.oastVars.has(name)) this.pendingVars.add(name);
  }

  /** One block called by a flow (`http(2)`); results accumulate in `results`. */
  async runFlowBlock(block: HttpRequestBlock): Promise<void> {
    if (block.skip) {
      this.warn(`request block skipped: ${block.skip}`, block.path);
      return;
    }
    if (this.requestCount >= this.ctx.maxRequests) return;
    await this.runBlock(block);
  }

  get findings(): TemplateResult[] {
    return this.results;
  }

  private warn(message: string, path?: string) {
    const w: RunWarning = { templateId: this.tpl.id, path, message };
    this.ctx.warnings.push(w);
    this.ctx.deps.onWarning?.(w);
  }

  /**
   * Scope with: dynamic values < target variables (added later) < template variables < constants < randstr; a
   * request's OAST layer gives its `{{interactsh-url}}` and the variables using it.
   */
  private baseLayers(request?: { vars: DslRecord; oast: DslScope }): DslScope {
    const dynamic: DslRecord = Object.create(null) as DslRecord;
    for (const [k, v] of this.dynamic) {
      dynamic[k] = valueInRound(v, this.dynamicRound);
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
    const vars = request ? { ...this.vars, ...request.vars } : this.vars;
    return scopeOf(this.previous, dynamic, vars, this.tpl.constants, randstr, request?.oast, this.flow?.context);
  }

  /** This request's values of the variables using `{{interactsh-url}}` (one URL per request, as nuclei). */
  private requestLayers(oast: RequestOast): { vars: DslRecord; oast: DslScope } {
    const scopeWith = (vars: DslRecord) => layersWithTarget(this.baseLayers({ vars, oast: oast.layer }), this.ctx.target, false);
    return { vars: renderRequestVariables(this.tpl, this.oastVars, scopeWith), oast: oast.layer };
  }

  /** Evaluate template variables once each, as soon as everything they use is known (values stay stable). */
  private resolveVariables() {
    // repeat while progress is made: a variable may use one declared after it
    for (let progress = true; progress && this.pendingVars.size > 0; ) {
      progress = false;
      for (const [name, raw] of this.tpl.variables) {
        if (!this.pendingVars.has(name)) continue;
        const scope = layersWithTarget(this.baseLayers(), this.ctx.target, false);
        const r = renderMarkers(raw, scope);
        if (r.unresolved.length || r.errors.length) continue;
        this.vars[name] = r.text;
        this.pendingVars.delete(name);
        progress = true;
      }
    }
  }

  async run(): Promise<TemplateResult[]> {
    const tpl = this.tpl;
    if (tpl.skip) {
      this.ctx.stats.templatesSkipped++;
      this.warn(`template skipped: ${tpl.skip}`);
      return [];
    }
    this.ctx.stats.templatesRun++;
    let templateMatched = false;
    for (const block of tpl.requests) {
      if (this.ctx.deps.signal?.aborted) break;
      if (templateMatched && tpl.stopAtFirstMatch) break;
      if (block.skip) {
        this.warn(`request block skipped: ${block.skip}`, block.path);
        continue;
      }
      const matched = await this.runBlock(block);
      if (matched) templateMatched = true;
    }
    return this.results;
  }

  private async runBlock(block: HttpRequestBlock): Promise<boolean> {
    const unsupported = block.matchers.filter((m) => m.unsupported);
    if (unsupported.length) {
      this.warn(
        `${unsupported.map((m) => `${m.path}: ${m.unsupported}`).join('; ')} — this request block cannot match (its requests still run for extractors)`,
        block.path,
      );
    }
    const entries = block.raw.length ? block.raw : block.paths;
    const isRaw = block.raw.length > 0;
    const indexed: Record<string, DslValue> = Object.create(null) as Record<string, DslValue>;
    // a race sends copies of the block's first request only (nuclei's executeRaceRequest)
    const copies = block.race ? raceCopies(block.race.count, (message) => this.warn(message, block.path)) : 1;
    const last = block.race ? Math.min(1, entries.length) : entries.length;
    let blockMatched = false;
    // Without payloads the entries run once; with them once per combination (nuclei's requestGenerator).
    const rounds: Iterable<PayloadValues | undefined> = block.payloads ? payloadCombinations(block.payloads) : [undefined];
    let round = 0;
    // Interactions of requests that carried an OAST URL arrive while the block goes on; the block ends with them.
    const oastWaits: Promise<boolean>[] = [];
    combinations: for (const payload of rounds) {
      round++;
      for (let i = 0; i < last; i++) {
        // iterate-all: once per extracted value of the dynamic values the entry uses; else once, with the first
        const valueRounds = block.iterateAll ? iterateAllRounds(entries[i]!, this.dynamic) : 1;
        for (let valueRound = 0; valueRound < valueRounds; valueRound++) {
          this.dynamicRound = valueRound;
          if (this.ctx.deps.signal?.aborted) break combinations;
          if (round > 1 && isRaw && isOnceRequest(entries[i])) continue;
          if (this.requestCount + copies > this.ctx.maxRequests) {
            this.warn(
              `${REQUEST_CAP_WARNING} ${this.ctx.maxRequests} per template reached; remaining requests${block.payloads ? ' and payload combinations' : ''} skipped`,
              block.path,
            );
            break combinations;
          }
          this.resolveVariables();
          const oast = new RequestOast(this.ctx.deps.oast);
          const layers = payloadScope(this.baseLayers(this.requestLayers(oast)), payload, (scope) => layersWithTarget(scope, this.ctx.target, false));
          const entryPath = `${block.path}.${isRaw ? 'raw' : 'path'}[${i}]`;
          const built = buildBlockRequest(block, entries[i], this.ctx.target, layers, this.ctx.userAgent, this.cookies);
          if (!built.ok) {
            this.warn(`request not sent: ${built.reason}${built.unresolved ? '; skipping the rest of this block' : ''}`, entryPath);
            if (built.unresolved) break combinations;
            continue;
          }
          const req = built.request;
          const split = splitUrl(req.url);
          // another port or scheme of the target's host is the target (nuclei; the scope guard pins that host's address)
          // with no target (self-contained run) the sender's scope decides where a request may go
          const target = this.ctx.target;
          if (!split || (target && !this.ctx.deps.allowOffTargetRequests && !sameHost(split, target.url))) {
            this.warn(`request to ${req.url} skipped: it does not go to the target ${target?.input}`, entryPath);
            continue;
          }
          const sendReq: HttpSendRequest = {
            method: req.method,
            url: req.url,
            headers: req.headers,
            body: req.body,
            followRedirects: block.redirects,
            maxRedirects: block.redirects ? block.maxRedirects : 0,
            sameHostRedirectsOnly: block.hostRedirects || undefined,
            timeoutMs: req.timeoutMs ?? this.ctx.timeoutMs,
            ...(req.sni ? { sni: req.sni } : {}),
            ...(req.unsafeRaw !== undefined ? { unsafeRaw: req.unsafeRaw } : {}),
            maxBodyBytes: block.maxSize,
            signal: this.ctx.deps.signal,
          };
          this.requestCount += copies;
          const responses = await sendTogether(
            (r) => this.send(r),
            sendReq,
            copies,
            (err) => {
              this.ctx.stats.requestsFailed++;
              this.warn(`request ${req.method} ${req.url} failed: ${err.message}`, entryPath);
            },
          );
          const strip = !isRaw && /\{\{\s*BaseURL\s*\}\}\//.test(entries[i]);
          const at = { index: i, layers, strip, indexed, cannotMatch: unsupported.length > 0 };
          const waitFor = (resp: HttpSendResponse) => {
            const evaluate = (fields: Record<string, DslValue>) => this.handleInteraction(block, req, resp, at, fields);
            oastWaits.push(evaluateInteractions(oast, block, this.ctx.deps, evaluate, (message) => this.warn(message, entryPath)));
          };
          // a request that got no answer (a target busy running the payload) may still have called back (nuclei)
          if (!responses.length) waitFor(unanswered(req));
          let stop = false;
          for (const resp of responses) {
            const outcome = this.handleResponse(block, req, resp, at);
            waitFor(resp);
            if (outcome.matched) blockMatched = true;
            if (outcome.stop) {
              stop = true;
              break;
            }
          }
          if (stop) break combinations;
        }
      }
    }
    this.dynamicRound = 0;
    for (const matched of await Promise.all(oastWaits)) if (matched) blockMatched = true;
    return blockMatched;
  }

  /** The final response's event again, with one interaction's fields (engine/oast.ts); true when it matched. */
  private handleInteraction(
    block: HttpRequestBlock,
    req: BuiltRequest,
    resp: HttpSendResponse,
    at: { layers: DslScope; strip: boolean; indexed: Record<string, DslValue>; cannotMatch: boolean },
    fields: Record<string, DslValue>,
  ): boolean {
    const output = { ...responseData(resp, req.url, this.ctx.target?.input ?? req.url, this.tpl.id), ...fields };
    const scope = new MutableScope(scopeOf(layersWithTarget(at.layers, this.ctx.target, at.strip), at.indexed, output));
    const op = executeOperators(block, scope, at.cannotMatch);
    this.flow?.onEvent(block, output, op);
    if (!op) return false;
    for (const [k, v] of op.dynamicValues) this.dynamic.set(k, v);
    this.emit(block, op, resp, req);
    return op.matched;
  }

  /** Cookies, then operators on the final response and each redirect response of its chain (nuclei's respChain). */
  private handleResponse(
    block: HttpRequestBlock,
    req: BuiltRequest,
    resp: HttpSendResponse,
    at: { index: number; layers: DslScope; strip: boolean; indexed: Record<string, DslValue>; cannotMatch: boolean },
  ): { matched: boolean; stop: boolean } {
    if (!block.disableCookie) {
      for (const hop of arrivalOrder(resp)) for (const [k, v] of parseSetCookies(hop)) this.cookies.set(k, v);
    }
    const varLayer = layersWithTarget(at.layers, this.ctx.target, at.strip);
    let matched = false;
    for (const event of chainResponses(resp)) {
      const output = responseData(event, req.url, this.ctx.target?.input ?? req.url, this.tpl.id);
      if (block.reqCondition) {
        for (const [k, v] of Object.entries(output)) at.indexed[`${k}_${at.index + 1}`] = v;
      }
      const scope = new MutableScope(scopeOf(varLayer, at.indexed, output));
      const op = executeOperators(block, scope, at.cannotMatch);
      this.flow?.onEvent(block, output, op);
      if (block.id) {
        for (const [k, v] of Object.entries(output)) this.previous[`${block.id}_${k}`] = v;
        for (const [k, v] of scope.local) this.previous[`${block.id}_${k}`] = v;
      }
      if (!op) continue;
      for (const [k, v] of op.dynamicValues) this.dynamic.set(k, v);
      this.emit(block, op, event, req);
      if (op.matched) {
        matched = true;
        if (block.stopAtFirstMatch) return { matched, stop: true };
      }
    }
    return { matched, stop: false };
  }

  private async send(req: HttpSendRequest): Promise<HttpSendResponse> {
    const cache = this.ctx.cache;
    if (!cache) {
      this.ctx.stats.requestsSent++;
      return this.ctx.deps.send(req);
    }
    const key = clusterKey(req);
    const hit = cache.get(key);
    if (hit && hit.owner !== this.tpl.id) {
      this.ctx.stats.requestsSaved++;
      return hit.promise;
    }
    this.ctx.stats.requestsSent++;
    const promise = this.ctx.deps.send(req);
    cache.set(key, { owner: this.tpl.id, promise });
    // a failed request is not cached for others
    promise.catch(() => {
      if (cache.get(key)?.promise === promise) cache.delete(key);
    });
    return promise;
  }

  /** Writes an event's results (nuclei's MakeDefaultResultEvent, result-event.ts) unless nuclei would not write it. */
  private emit(block: HttpRequestBlock, op: OperatorResult, resp: HttpSendResponse, req: BuiltRequest) {
    // matchers that are all `internal` only steer the run (nuclei tmplexec: such an event is not written)
    if (op.matched && block.matchers.length && block.matchers.every((m) => m.internal)) return;
    if (op.dynamicValues.size && !op.matched) return;
    const extracted = op.extracts.size > 0 || op.outputExtracts.length > 0;
    if (extracted && block.matchers.length && !op.matched) return;
    if (!op.matched && !extracted) return;
    const out = resultEvents(this.tpl, op, { matched: resp.finalUrl || req.url, request: resp.rawRequest, response: resp.rawResponse });
    for (const r of out) {
      const key = JSON.stringify([r.matcherName ?? '', r.extractorName ?? '', r.matchedUrl, r.extractedResults]);
      if (this.resultKeys.has(key)) continue;
      this.resultKeys.add(key);
      this.results.push(r);
    }
  }
}
