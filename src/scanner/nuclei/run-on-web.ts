import { mapBounded } from '../../concurrency.js';
import net from 'node:net';
import {
  clusterKey,
  createNodeHttpSender,
  REQUEST_CAP_WARNING,
  runTemplateTask,
  type HttpSender,
  type HttpSendResponse,
  type NucleiTemplate,
  type TemplateResult,
} from './index.js';
import { splitUrl } from './url-util.js';
import {
  ScopeError,
  webAssetKey,
  type AssetRef,
  type FindingObservation,
  type HostRateLimiter,
  type ScopeGuard,
  type StepError,
  type WebObservation,
} from '../index.js';
import { runWorkflow, workflowCatalog } from './engine/workflow.js';
import { templateUsesOast, type SharedOastClient } from './oast.js';

/**
 * Runs nuclei templates against the web endpoints a scan found and turns each result into the finding
 * observation the checks step stores. Pure over the network: no database, no storage (see loader.ts).
 *
 * Every connection goes through the scan's scope guard: the endpoint's own host name is pinned to the address
 * the http step probed (as the built-in checks dial it), anything else (a redirect elsewhere) is resolved and
 * judged by the guard at connect time. Requests go through the per-host limiter.
 *
 * Each template runs against each endpoint as a task of the template worker pool (src/scanner/nuclei/
 * template-pool.ts): matching happens off the API's event loop, within a time budget; requests come back here.
 */

export interface RunnableTemplate {
  template: NucleiTemplate;
}

export interface TemplateScanDeps {
  guard: ScopeGuard;
  limiter?: HostRateLimiter;
  /** Per request. */
  timeoutMs?: number;
  /** Send a request several templates make once per endpoint (default true). */
  cluster?: boolean;
  /** Endpoints scanned at once (templates within one run with the engine's own concurrency). */
  endpointConcurrency?: number;
  /** Templates of one endpoint run at once. */
  templateConcurrency?: number;
  /** Wall-clock budget of one template on one endpoint (TEMPLATE_BUDGET_MS); past it the template is cut off. */
  budgetMs?: number;
  /**
   * The scan target when it is a URL: on the endpoint it names (same scheme, host and port) templates run at its
   * path and query (`{{BaseURL}}` = `https://h/app/`), as nuclei run with that URL as input; elsewhere at `/`.
   */
  targetUrl?: string;
  /** Requests one template may send to one endpoint (scan option maxRequestsPerTemplatePerEndpoint; engine default 100). */
  maxRequestsPerTemplate?: number;
  signal?: AbortSignal;
  /**
   * OAST for templates using `{{interactsh-url}}` (src/oast). Its URLs go into what templates send, never as a
   * request target. A template using it gets its cooldown on top of its budget.
   */
  oast?: SharedOastClient;
}

export interface TemplateScanSummary {
  templates: number;
  endpoints: number;
  requestsSent: number;
  requestsSaved: number;
  requestsFailed: number;
  /** Results left out because the step output is bounded (their template/endpoint pairs are reported as errors). */
  truncated: number;
}

export interface TemplateScanResult {
  findings: FindingObservation[];
  /** One per template/endpoint pair that did not run to the end: `target` is `<templateId> <assetKey>`. */
  errors: StepError[];
  /** Template ids that ran: a finding of one of them no longer seen on a covered endpoint is fixed. */
  checkIds: string[];
  summary: TemplateScanSummary;
}

/**
 * Bounds of what one step stores (ScanStep.output) and of each finding's evidence: at most about
 * 500 × 12 KiB of evidence, whatever the templates and the endpoints answer.
 */
export const TEMPLATE_OUTPUT_LIMITS = {
  resultsPerTemplateAndEndpoint: 20,
  findingsPerStep: 500,
  requestExcerpt: 4_096,
  responseExcerpt: 8_192,
  extractedResults: 50,
  extractedResultLength: 1_024,
  errorMessage: 300,
} as const;

export const TEMPLATE_FINDING_SOURCE = 'nuclei';

export const DEFAULT_TEMPLATE_BUDGET_MS = 10_000;

/** Run-time warnings that mean a request (or the whole template) did not get an answer; see src/scanner/nuclei/engine/. */
const FAILURE_WARNING = /^(request \S+ \S+ failed: |template failed: )/;

function bounded(text: string, limit: number): string {
  return text.length > limit ? `${text.slice(0, limit)}… [${text.length - limit} more characters]` : text;
}

/**
 * What the finding is about within its endpoint, exactly as src/modules/tools/normalize.ts derives it from a
 * nuclei -jsonl line (so a pushed nuclei result and our engine's result of one template dedupe into one
 * finding): the matcher name, else the extractor name, else the matched path (unless it is `/`), else the
 * template id.
 */
export function templateMatcher(result: Pick<TemplateResult, 'templateId' | 'matcherName' | 'extractorName' | 'matchedUrl'>): string {
  const named = result.matcherName?.trim() || result.extractorName?.trim();
  if (named) return named.slice(0, 500);
  let path: string | undefined;
  try {
    path = new URL(result.matchedUrl).pathname;
  } catch {
    path = undefined;
  }
  return (path && path !== '/' ? path : result.templateId).slice(0, 500);
}

export function webAssetRef(web: WebObservation): AssetRef {
  return { type: 'web', key: webAssetKey(web), host: web.host, address: web.address, port: web.port };
}

export function toFindingObservation(result: TemplateResult, asset: AssetRef, protocol: 'http' | 'network' | 'dns' | 'ssl' = 'http'): FindingObservation {
  const limits = TEMPLATE_OUTPUT_LIMITS;
  const matcher = templateMatcher(result);
  const extracted: NonNullable<FindingObservation['evidence']['extracted']> = { type: protocol };
  const values = result.extractedResults.slice(0, limits.extractedResults).map((value) => bounded(value, limits.extractedResultLength));
  if (values.length) extracted['extracted-results'] = values;
  if (result.matcherName) extracted['matcher-name'] = result.matcherName.slice(0, 200);
  if (result.extractorName) extracted['extractor-name'] = result.extractorName.slice(0, 200);
  if (result.tags?.length) extracted.tags = result.tags.slice(0, 20);
  if (result.reference?.length) extracted.reference = result.reference.slice(0, 20).map((ref) => ref.slice(0, 500));
  const { cveId, cweId, cvssScore, cvssMetrics } = result.classification;
  const classification = {
    ...(cveId?.length ? { cveId } : {}),
    ...(cweId?.length ? { cweId } : {}),
    ...(cvssScore !== undefined ? { cvssScore } : {}),
    ...(cvssMetrics ? { cvssMetrics } : {}),
  };
  return {
    kind: 'finding',
    checkId: result.templateId,
    name: result.templateName,
    severity: result.severity === 'unknown' ? 'info' : result.severity,
    description: result.description ?? '',
    remediation: result.remediation ?? '',
    asset,
    matcher,
    fingerprintParts: [result.templateId, asset.key, matcher],
    evidence: {
      url: result.matchedUrl.slice(0, 2048),
      request: bounded(result.request, limits.requestExcerpt),
      response: bounded(result.response, limits.responseExcerpt),
      extracted,
    },
    source: TEMPLATE_FINDING_SOURCE,
    ...(Object.keys(classification).length ? { classification } : {}),
  };
}

/**
 * A lookup that answers the endpoint's own name (or address) with the address the probe used, after the
 * guard agreed to it, and sends every other name (redirect targets) through the guard's own lookup.
 */
export function pinnedLookup(web: Pick<WebObservation, 'host' | 'address'>, guard: ScopeGuard): net.LookupFunction {
  const own = new Set([web.host.toLowerCase().replace(/^\[(.*)\]$/, '$1'), web.address.toLowerCase()]);
  const family = net.isIPv6(web.address) ? 6 : 4;
  return ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (!own.has(hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1'))) return guard.guardedLookup(hostname, options as never, callback as never);
    const decision = guard.check(web.address);
    if (!decision.allowed) return callback(new ScopeError(web.address, decision.range, decision.label, hostname), options.all ? [] : undefined);
    if (options.all) return callback(null, [{ address: web.address, family }]);
    return callback(null, web.address, family);
  }) as unknown as net.LookupFunction;
}

/**
 * Where templates run on an endpoint: the target URL (path and query kept, fragment dropped) when the endpoint is
 * the one that URL names, else the URL the http step probed (`/`).
 */
export function endpointBaseUrl(web: Pick<WebObservation, 'scheme' | 'host' | 'port' | 'url'>, targetUrl: string | undefined): string {
  const target = targetUrl ? splitUrl(targetUrl) : undefined;
  if (!target || target.pathAndQuery === '/') return web.url;
  const sameEndpoint =
    target.scheme === web.scheme && target.port === web.port && target.hostname.toLowerCase() === web.host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  return sameEndpoint ? `${target.scheme}://${target.authority}${target.pathAndQuery}` : web.url;
}

function senderFor(web: WebObservation, deps: TemplateScanDeps): { send: HttpSender; close: () => void } {
  const sender = createNodeHttpSender({ lookup: pinnedLookup(web, deps.guard), keepAlive: true, maxBodyBytes: 1024 * 1024, maxRawBytes: 64 * 1024 });
  const limiter = deps.limiter;
  const send: HttpSender = limiter ? (request) => limiter.run(web.address, () => sender(request)) : sender;
  return { send, close: () => sender.destroy() };
}

/**
 * The engine's request clustering, kept on this side of the worker threads (each template runs in a task of its
 * own): a request several templates make on one endpoint is sent once; a template's own repeat is sent again.
 */
function clustered(send: HttpSender, stats: Pick<TemplateScanSummary, 'requestsSent' | 'requestsSaved'>, enabled: boolean) {
  const cache = new Map<string, { owner: string; promise: Promise<HttpSendResponse> }>();
  return (owner: string): HttpSender =>
    (request) => {
      if (!enabled) {
        stats.requestsSent += 1;
        return send(request);
      }
      const key = clusterKey(request);
      const hit = cache.get(key);
      if (hit && hit.owner !== owner) {
        stats.requestsSaved += 1;
        return hit.promise;
      }
      stats.requestsSent += 1;
      // The signal is the requesting template's: a template cut off at its budget must not cancel the shared answer.
      const promise = send({ ...request, signal: undefined });
      cache.set(key, { owner, promise });
      promise.catch(() => {
        if (cache.get(key)?.promise === promise) cache.delete(key);
      });
      return abortable(promise, request.signal);
    };
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(Object.assign(new Error('request cancelled'), { code: 'ABORT_ERR' }));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** A workflow's results repeat those of its templates' own runs: one of each. */
function uniqueResults(results: TemplateResult[]): TemplateResult[] {
  const seen = new Set<string>();
  return results.filter((r) => {
    const key = JSON.stringify([r.templateId, r.matcherName ?? '', r.extractorName ?? '', r.matchedUrl, r.extractedResults]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

interface TemplateFailure {
  code: 'TEMPLATE_REQUEST_FAILED' | 'TEMPLATE_BUDGET_EXCEEDED' | 'TEMPLATE_REQUEST_CAP_REACHED';
  message: string;
}

interface EndpointOutcome {
  asset: AssetRef;
  results: TemplateResult[];
  /** templateId → why the template did not run to the end on this endpoint (the first failure). */
  failures: Map<string, TemplateFailure>;
}

/** Runs every template against every endpoint; the result is deterministic in order whatever finished first. */
export async function runTemplatesOnWeb(
  templates: readonly RunnableTemplate[],
  web: readonly WebObservation[],
  deps: TemplateScanDeps,
): Promise<TemplateScanResult> {
  // Templates without http blocks (network-only ones) are run by their own runners, not counted here; self-contained
  // ones run once per scan (run-self-contained.ts), not per endpoint.
  const runnable = templates.map((entry) => entry.template).filter((template) => !template.skip && template.requests.length > 0 && !template.selfContained);
  // Workflows run their templates (found among the others by file name, engine/workflow.ts) on each endpoint too.
  const workflows = templates.map((entry) => entry.template).filter((template) => !template.skip && template.workflow?.length);
  const catalog = workflowCatalog(templates.map((entry) => entry.template).filter((template) => !template.skip));
  const checkIds = [...new Set(runnable.map((template) => template.id))].sort();
  const summary: TemplateScanSummary = {
    templates: runnable.length,
    endpoints: web.length,
    requestsSent: 0,
    requestsSaved: 0,
    requestsFailed: 0,
    truncated: 0,
  };
  if ((!runnable.length && !workflows.length) || !web.length) return { findings: [], errors: [], checkIds, summary };
  const budgetMs = deps.budgetMs ?? DEFAULT_TEMPLATE_BUDGET_MS;

  const outcomes = await mapBounded(web, deps.endpointConcurrency ?? 4, async (endpoint): Promise<EndpointOutcome> => {
    const asset = webAssetRef(endpoint);
    const failures = new Map<string, TemplateFailure>();
    const fail = (templateId: string, failure: TemplateFailure) => {
      if (!failures.has(templateId)) failures.set(templateId, failure);
    };
    const { send, close } = senderFor(endpoint, deps);
    const sendAs = clustered(send, summary, deps.cluster ?? true);
    // One template on this endpoint; `owner` names who asks in the cluster cache (a workflow re-running a template
    // gets the answers its own run already had).
    const runOne = async (template: NucleiTemplate, owner: string): Promise<TemplateResult[]> => {
      // Warnings stream in while the template runs: one cut off later must not keep an earlier request failure.
      const outcome = await runTemplateTask({
        template,
        baseUrl: endpointBaseUrl(endpoint, deps.targetUrl),
        send: sendAs(owner),
        budgetMs: deps.oast && templateUsesOast(template) ? budgetMs + deps.oast.cooldownMs : budgetMs,
        oast: deps.oast,
        timeoutMs: deps.timeoutMs,
        maxRequestsPerTemplate: deps.maxRequestsPerTemplate,
        signal: deps.signal,
        onWarning: (warning) => {
          if (FAILURE_WARNING.test(warning.message)) fail(template.id, { code: 'TEMPLATE_REQUEST_FAILED', message: warning.message });
          // Not every request was tried: what was not seen is not "fixed", and the owner learns why.
          else if (warning.message.startsWith(REQUEST_CAP_WARNING)) {
            fail(template.id, {
              code: 'TEMPLATE_REQUEST_CAP_REACHED',
              message: `template stopped: ${warning.message} on this endpoint (scan option maxRequestsPerTemplatePerEndpoint)`,
            });
          }
        },
      });
      switch (outcome.status) {
        case 'done':
          summary.requestsFailed += outcome.requestsFailed;
          return outcome.results;
        case 'over-budget':
          failures.set(template.id, {
            code: 'TEMPLATE_BUDGET_EXCEEDED',
            message: `template stopped: it ran past its time budget of ${budgetMs} ms on this endpoint (TEMPLATE_BUDGET_MS); its results were dropped`,
          });
          return [];
        case 'aborted':
          fail(template.id, { code: 'TEMPLATE_REQUEST_FAILED', message: 'template stopped: the scan step was stopped' });
          return [];
        case 'failed':
          fail(template.id, { code: 'TEMPLATE_REQUEST_FAILED', message: `template failed: ${outcome.message}` });
          return [];
      }
    };
    try {
      const perTemplate = await mapBounded(runnable, deps.templateConcurrency ?? 4, (template) => runOne(template, template.id));
      const perWorkflow = await mapBounded(workflows, deps.templateConcurrency ?? 4, async (workflow) => {
        const out = await runWorkflow(workflow, catalog, (template) => runOne(template, `${workflow.id}>${template.id}`), { signal: deps.signal });
        return out.results;
      });
      return { asset, results: uniqueResults([...perTemplate.flat(), ...perWorkflow.flat()]), failures };
    } finally {
      close();
    }
  });

  const limits = TEMPLATE_OUTPUT_LIMITS;
  const findings: FindingObservation[] = [];
  const errors: StepError[] = [];
  for (const { asset, results, failures } of outcomes) {
    for (const [templateId, { code, message }] of failures) {
      errors.push({ code, message: bounded(message, limits.errorMessage), target: `${templateId} ${asset.key}` });
    }
    const perTemplate = new Map<string, number>();
    for (const result of results) {
      const count = (perTemplate.get(result.templateId) ?? 0) + 1;
      perTemplate.set(result.templateId, count);
      if (count > limits.resultsPerTemplateAndEndpoint || findings.length >= limits.findingsPerStep) {
        summary.truncated += 1;
        // Not everything this pair found is stored: it must not count as "ran clean" (which would fix findings).
        if (!failures.has(result.templateId)) {
          failures.set(result.templateId, { code: 'TEMPLATE_REQUEST_FAILED', message: 'truncated' });
          errors.push({
            code: 'TEMPLATE_RESULTS_TRUNCATED',
            message: 'more results than a scan step keeps; the rest were dropped',
            target: `${result.templateId} ${asset.key}`,
          });
        }
        continue;
      }
      findings.push(toFindingObservation(result, asset));
    }
  }
  findings.sort((a, b) => a.fingerprintParts.join('\0').localeCompare(b.fingerprintParts.join('\0')));
  errors.sort((a, b) => (a.target ?? '').localeCompare(b.target ?? ''));
  return { findings, errors, checkIds, summary };
}
