import net from 'node:net';
import { mapBounded } from '../../concurrency.js';
import {
  hostAssetKey,
  isScopeError,
  type AssetRef,
  type FindingObservation,
  type HostObservation,
  type ServiceObservation,
  type StepError,
  type WebObservation,
} from '../index.js';
import { createNodeHttpSender, REQUEST_CAP_WARNING, runTemplateTask, type HttpSender, type NucleiTemplate, type TemplateResult } from './index.js';
import {
  DEFAULT_TEMPLATE_BUDGET_MS,
  TEMPLATE_OUTPUT_LIMITS,
  toFindingObservation,
  webAssetRef,
  type RunnableTemplate,
  type TemplateScanDeps,
  type TemplateScanResult,
} from './run-on-web.js';
import { splitUrl } from './url-util.js';

/**
 * Runs the scan's self-contained templates (top-level `self-contained: true`) once per scan, as nuclei runs them
 * once whatever its inputs (executeAllSelfContained): no target, every URL is the template's own. Pure over the
 * network, like run-on-web.ts: same worker pool and time budget, same sender, limiter and scope guard.
 *
 * Scope: such a template's URLs are fixed (`https://api.example.com/...`), so the address guard alone would let a
 * scan of example.com send tokens or passwords to any public site. A request (and every redirect) may only reach
 * a host of this scan — the target's name, the names and addresses the scan resolved or found, the web endpoints
 * it probed — pinned to the address the scan saw, and the scope guard judges that address at connect time.
 * Anything else is refused before any DNS query or connection, and the refusal is a step error naming the host.
 *
 * A finding belongs to the asset an ASM user looks at for the URL that matched: the web endpoint the scan probed
 * at that scheme, host and port; else the host asset of that name or address; else the target's host asset.
 */

/** What the scan reached: the only hosts a self-contained template may talk to, and the assets for its findings. */
export interface ScanReach {
  web: readonly WebObservation[];
  hosts: readonly HostObservation[];
  services: readonly ServiceObservation[];
  /** The target's host name or address (absent for a CIDR target): the asset a finding falls back to. */
  targetHost?: string;
}

/** Refused: the host is not one this scan reached. Same code as the scope guard's refusals (never retried). */
export class NotInScanError extends Error {
  readonly code = 'SCOPE_BLOCKED' as const;
  constructor(readonly host: string) {
    super(`${host} is not a host of this scan: a self-contained template may only reach the scan's target and the hosts the scan found`);
    this.name = 'NotInScanError';
  }
}

const bare = (host: string) => host.toLowerCase().replace(/^\[(.*)\]$/, '$1');

/** name or address → the address the scan used for it (undefined: known, resolved by the guard at connect time). */
function reachableHosts(reach: ScanReach): Map<string, string | undefined> {
  const hosts = new Map<string, string | undefined>();
  const add = (host: string | undefined, address: string | undefined) => {
    if (!host) return;
    const key = bare(host);
    if (!hosts.get(key)) hosts.set(key, address);
  };
  for (const web of reach.web) {
    add(web.host, web.address);
    add(web.address, web.address);
  }
  for (const host of reach.hosts) {
    const refused = new Set(host.outOfScope.map((entry) => entry.address));
    const usable = host.addresses.filter((address) => !refused.has(address));
    add(host.host, usable[0]);
    for (const address of usable) add(address, address);
  }
  for (const service of reach.services) {
    add(service.host, service.address);
    add(service.address, service.address);
  }
  add(reach.targetHost, net.isIP(bare(reach.targetHost ?? '')) ? bare(reach.targetHost!) : undefined);
  return hosts;
}

/** A lookup for the scan's hosts only: pinned to the address the scan used, judged by the guard; others refused. */
function scanLookup(hosts: Map<string, string | undefined>, guard: TemplateScanDeps['guard']): net.LookupFunction {
  return ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    const key = bare(hostname);
    if (!hosts.has(key)) return callback(new NotInScanError(hostname), options.all ? [] : undefined);
    const address = hosts.get(key);
    if (!address) return guard.guardedLookup(hostname, options as never, callback as never);
    try {
      guard.assertAddressAllowed(address);
    } catch (err) {
      return callback(err, options.all ? [] : undefined);
    }
    const family = net.isIPv6(address) ? 6 : 4;
    return options.all ? callback(null, [{ address, family }]) : callback(null, address, family);
  }) as unknown as net.LookupFunction;
}

/** The asset of a finding at `url` (see the file comment). */
export function selfContainedAsset(url: string, reach: ScanReach): AssetRef {
  const split = splitUrl(url);
  const host = split ? bare(split.hostname) : '';
  const web = split && reach.web.find((w) => w.scheme === split.scheme && w.port === split.port && (bare(w.host) === host || bare(w.address) === host));
  if (web) return webAssetRef(web);
  // by name, else (an address in the URL) the host the scan resolved to it
  const known = reach.hosts.find((h) => bare(h.host) === host) ?? reach.hosts.find((h) => h.addresses.some((address) => bare(address) === host));
  if (known) return { type: 'host', key: hostAssetKey(known), host: known.host };
  const fallback = reach.targetHost ?? host;
  return { type: 'host', key: hostAssetKey({ host: fallback }), host: fallback };
}

const FAILURE_WARNING = /^(request \S+ \S+ failed: |template failed: )/;

type Failure = { code: 'TEMPLATE_OUT_OF_SCOPE' | 'TEMPLATE_REQUEST_FAILED' | 'TEMPLATE_BUDGET_EXCEEDED' | 'TEMPLATE_REQUEST_CAP_REACHED'; message: string };

export async function runSelfContainedTemplates(templates: readonly RunnableTemplate[], reach: ScanReach, deps: TemplateScanDeps): Promise<TemplateScanResult> {
  const runnable = templates.map((entry) => entry.template).filter((template) => !template.skip && template.selfContained && template.requests.length > 0);
  const summary = { templates: runnable.length, endpoints: 0, requestsSent: 0, requestsSaved: 0, requestsFailed: 0, truncated: 0 };
  if (!runnable.length) return { findings: [], errors: [], checkIds: [], summary };
  const budgetMs = deps.budgetMs ?? DEFAULT_TEMPLATE_BUDGET_MS;
  const hosts = reachableHosts(reach);
  const sender = createNodeHttpSender({ lookup: scanLookup(hosts, deps.guard), keepAlive: true, maxBodyBytes: 1024 * 1024, maxRawBytes: 64 * 1024 });
  const errorTarget = (templateId: string) => `${templateId} ${reach.targetHost ? hostAssetKey({ host: reach.targetHost }) : 'self-contained'}`;

  const runOne = async (template: NucleiTemplate): Promise<{ template: NucleiTemplate; results: TemplateResult[]; failure?: Failure }> => {
    let failure: Failure | undefined;
    const fail = (next: Failure) => {
      failure ??= next;
    };
    const send: HttpSender = async (request) => {
      const host = splitUrl(request.url)?.hostname;
      try {
        // Refused here, before any DNS query; redirects meet the same rule in the lookup.
        if (!host || !hosts.has(bare(host))) throw new NotInScanError(host ?? request.url);
        summary.requestsSent += 1;
        const key = hosts.get(bare(host)) ?? bare(host);
        return await (deps.limiter ? deps.limiter.run(key, () => sender(request)) : sender(request));
      } catch (err) {
        if (isScopeError(err)) fail({ code: 'TEMPLATE_OUT_OF_SCOPE', message: `request not sent: ${(err as Error).message}` });
        throw err;
      }
    };
    const outcome = await runTemplateTask({
      template,
      send,
      budgetMs,
      timeoutMs: deps.timeoutMs,
      maxRequestsPerTemplate: deps.maxRequestsPerTemplate,
      signal: deps.signal,
      onWarning: (warning) => {
        if (FAILURE_WARNING.test(warning.message)) fail({ code: 'TEMPLATE_REQUEST_FAILED', message: warning.message });
        else if (warning.message.startsWith(REQUEST_CAP_WARNING)) {
          fail({ code: 'TEMPLATE_REQUEST_CAP_REACHED', message: `template stopped: ${warning.message} (scan option maxRequestsPerTemplatePerEndpoint)` });
        }
      },
    });
    switch (outcome.status) {
      case 'done':
        summary.requestsFailed += outcome.requestsFailed;
        return { template, results: outcome.results, failure };
      case 'over-budget':
        return {
          template,
          results: [],
          failure: {
            code: 'TEMPLATE_BUDGET_EXCEEDED',
            message: `template stopped: it ran past its time budget of ${budgetMs} ms (TEMPLATE_BUDGET_MS); its results were dropped`,
          },
        };
      case 'aborted':
        return { template, results: [], failure: failure ?? { code: 'TEMPLATE_REQUEST_FAILED', message: 'template stopped: the scan step was stopped' } };
      case 'failed':
        return { template, results: [], failure: failure ?? { code: 'TEMPLATE_REQUEST_FAILED', message: `template failed: ${outcome.message}` } };
    }
  };

  let runs: Awaited<ReturnType<typeof runOne>>[];
  try {
    runs = await mapBounded(runnable, deps.templateConcurrency ?? 4, runOne);
  } finally {
    sender.destroy();
  }
  const limits = TEMPLATE_OUTPUT_LIMITS;
  const findings: FindingObservation[] = [];
  const errors: StepError[] = [];
  const checkIds: string[] = [];
  for (const { template, results, failure } of runs) {
    if (failure) errors.push({ code: failure.code, message: failure.message.slice(0, limits.errorMessage), target: errorTarget(template.id) });
    const kept = results.slice(0, Math.max(0, Math.min(limits.resultsPerTemplateAndEndpoint, limits.findingsPerStep - findings.length)));
    if (kept.length < results.length) {
      summary.truncated += results.length - kept.length;
      errors.push({
        code: 'TEMPLATE_RESULTS_TRUNCATED',
        message: 'more results than a scan step keeps; the rest were dropped',
        target: errorTarget(template.id),
      });
    }
    // Only a template that ran to the end with everything kept may fix its earlier findings.
    else if (!failure) checkIds.push(template.id);
    for (const result of kept) findings.push(toFindingObservation(result, selfContainedAsset(result.matchedUrl, reach)));
  }
  findings.sort((a, b) => a.fingerprintParts.join('\0').localeCompare(b.fingerprintParts.join('\0')));
  errors.sort((a, b) => (a.target ?? '').localeCompare(b.target ?? ''));
  return { findings, errors, checkIds: checkIds.sort(), summary };
}
