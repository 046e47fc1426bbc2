import { mapBounded } from '../../concurrency.js';
import type { DiscoveryDnsClient } from '../discovery/index.js';
import {
  createNodeTlsConnector,
  dnsResolverFromClient,
  runDnsTemplatesDetailed,
  runSslTemplatesDetailed,
  type NucleiTemplate,
  type RunOutput,
} from './index.js';
import { hostAssetKey, serviceAssetKey, type AssetRef, type FindingObservation, type StepError } from '../index.js';
import {
  pinnedLookup,
  TEMPLATE_OUTPUT_LIMITS,
  toFindingObservation,
  type RunnableTemplate,
  type TemplateScanDeps,
  type TemplateScanResult,
  type TemplateScanSummary,
} from './run-on-web.js';

/**
 * Runs the `dns` blocks of nuclei templates against the host names a scan resolved, and the `ssl` blocks against
 * the TLS services it inspected, as nuclei runs them against a domain or a host:port input. A dns finding is about
 * the name (the host asset), an ssl finding about the service that answered the handshake (the service asset).
 * Pure over the network like run-on-web.ts: questions go through the scan's DNS client (SCAN_DNS_SERVERS, its
 * per-server limits); handshakes through the scope guard, the service's own name pinned to the address the scan
 * reached, and the per-host limiter.
 */

/** Run-time warnings that mean a template did not get its answer (it fixes nothing on that asset). */
const FAILURE_WARNING = /^(dns \S+ \S+ failed: |ssl \S+ failed: |ssl \S+: (no certificates|certificate could not)|template failed: )/;

export interface TlsEndpoint {
  host?: string;
  address: string;
  port: number;
}

export interface HostTemplateScanDeps extends TemplateScanDeps {
  dns: Pick<DiscoveryDnsClient, 'exchange'>;
}

export const hasDnsBlocks = (template: NucleiTemplate) => Boolean(template.dns?.length);
export const hasSslBlocks = (template: NucleiTemplate) => Boolean(template.ssl?.length);

interface Outcome {
  asset: AssetRef;
  output: RunOutput;
}

function collect(outcomes: Outcome[], protocol: 'dns' | 'ssl', summary: TemplateScanSummary): { findings: FindingObservation[]; errors: StepError[] } {
  const limits = TEMPLATE_OUTPUT_LIMITS;
  const findings: FindingObservation[] = [];
  const errors: StepError[] = [];
  for (const { asset, output } of outcomes) {
    summary.requestsSent += output.stats.requestsSent;
    summary.requestsFailed += output.stats.requestsFailed;
    const failed = new Set<string>();
    for (const warning of output.warnings) {
      if (!warning.templateId || failed.has(warning.templateId) || !FAILURE_WARNING.test(warning.message)) continue;
      failed.add(warning.templateId);
      errors.push({ code: 'TEMPLATE_REQUEST_FAILED', message: warning.message.slice(0, limits.errorMessage), target: `${warning.templateId} ${asset.key}` });
    }
    const perTemplate = new Map<string, number>();
    for (const result of output.results) {
      const count = (perTemplate.get(result.templateId) ?? 0) + 1;
      perTemplate.set(result.templateId, count);
      if (count > limits.resultsPerTemplateAndEndpoint || findings.length >= limits.findingsPerStep) {
        summary.truncated += 1;
        // Not everything this pair found is stored: it must not count as "ran clean" (which would fix findings).
        if (!failed.has(result.templateId)) {
          failed.add(result.templateId);
          errors.push({
            code: 'TEMPLATE_RESULTS_TRUNCATED',
            message: 'more results than a scan step keeps; the rest were dropped',
            target: `${result.templateId} ${asset.key}`,
          });
        }
        continue;
      }
      findings.push(toFindingObservation(result, asset, protocol));
    }
  }
  return { findings, errors };
}

/** dns templates × host names: findings on host assets. */
export async function runTemplatesOnHostNames(
  templates: readonly RunnableTemplate[],
  names: readonly string[],
  deps: HostTemplateScanDeps,
): Promise<TemplateScanResult> {
  const runnable = templates.map((entry) => entry.template).filter((template) => !template.skip && hasDnsBlocks(template));
  const summary: TemplateScanSummary = {
    templates: runnable.length,
    endpoints: runnable.length ? names.length : 0,
    requestsSent: 0,
    requestsSaved: 0,
    requestsFailed: 0,
    truncated: 0,
  };
  const checkIds = names.length ? [...new Set(runnable.map((template) => template.id))].sort() : [];
  if (!runnable.length || !names.length) return { findings: [], errors: [], checkIds, summary };
  const resolver = dnsResolverFromClient(deps.dns);
  const outcomes = await mapBounded(names, deps.endpointConcurrency ?? 4, async (name) => ({
    asset: { type: 'host', key: hostAssetKey({ host: name }), host: name } as AssetRef,
    output: await runDnsTemplatesDetailed(runnable, { host: name }, { resolver, concurrency: deps.templateConcurrency ?? 4, signal: deps.signal }),
  }));
  const { findings, errors } = collect(outcomes, 'dns', summary);
  return { findings: sorted(findings), errors: sortedErrors(errors), checkIds, summary };
}

/** ssl templates × TLS services: findings on service assets. */
export async function runTemplatesOnTlsServices(
  templates: readonly RunnableTemplate[],
  endpoints: readonly TlsEndpoint[],
  deps: TemplateScanDeps,
): Promise<TemplateScanResult> {
  const runnable = templates.map((entry) => entry.template).filter((template) => !template.skip && hasSslBlocks(template));
  const summary: TemplateScanSummary = {
    templates: runnable.length,
    endpoints: runnable.length ? endpoints.length : 0,
    requestsSent: 0,
    requestsSaved: 0,
    requestsFailed: 0,
    truncated: 0,
  };
  const checkIds = endpoints.length ? [...new Set(runnable.map((template) => template.id))].sort() : [];
  if (!runnable.length || !endpoints.length) return { findings: [], errors: [], checkIds, summary };
  const outcomes = await mapBounded(endpoints, deps.endpointConcurrency ?? 4, async (endpoint) => {
    const host = endpoint.host ?? endpoint.address;
    const connector = createNodeTlsConnector({ lookup: pinnedLookup({ host, address: endpoint.address }, deps.guard) });
    const limiter = deps.limiter;
    const connect: typeof connector = limiter ? (request) => limiter.run(endpoint.address, () => connector(request)) : connector;
    const asset: AssetRef = {
      type: 'service',
      key: serviceAssetKey({ address: endpoint.address, port: endpoint.port, transport: 'tcp' }),
      host,
      address: endpoint.address,
      port: endpoint.port,
    };
    const output = await runSslTemplatesDetailed(
      runnable,
      { host, port: endpoint.port },
      { connect, timeoutMs: deps.timeoutMs, concurrency: deps.templateConcurrency ?? 4, signal: deps.signal },
    );
    return { asset, output };
  });
  const { findings, errors } = collect(outcomes, 'ssl', summary);
  return { findings: sorted(findings), errors: sortedErrors(errors), checkIds, summary };
}

function sorted(findings: FindingObservation[]): FindingObservation[] {
  return findings.sort((a, b) => a.fingerprintParts.join('\0').localeCompare(b.fingerprintParts.join('\0')));
}

function sortedErrors(errors: StepError[]): StepError[] {
  return errors.sort((a, b) => (a.target ?? '').localeCompare(b.target ?? ''));
}
