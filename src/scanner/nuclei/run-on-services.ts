import { mapBounded } from '../../concurrency.js';
import { createNodeNetworkConnector, runNetworkTemplates, type NetworkConnector, type NucleiTemplate } from './index.js';
import { serviceAssetKey, type AssetRef, type FindingObservation, type ServiceObservation, type StepError } from '../index.js';
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
 * Runs the `network` (tcp) blocks of nuclei templates against the services a scan's port scan found, as nuclei
 * runs them against `host:port` inputs, and turns each result into a finding on that service. Pure over the
 * network, like run-on-web.ts: every connection goes through the scan's scope guard (the service's own name is
 * pinned to the address the port scan reached; any other name is judged at connect time) and the per-host limiter.
 *
 * Network matching is small (banners, short answers read under a byte cap) and runs on re2js, so it stays on
 * this thread; the engine bounds connections, reads and time per template.
 */

/** Run-time warnings that mean the template did not get its answer from the service (so it fixes nothing there). */
const FAILURE_WARNING =
  /^(could not connect to |no answer from |template failed: |could not evaluate the input|input is not valid hex|connection limit of |\S+: )/;

export function serviceAssetRef(service: ServiceObservation): AssetRef {
  return { type: 'service', key: serviceAssetKey(service), host: service.host, address: service.address, port: service.port };
}

export function hasNetworkBlocks(template: NucleiTemplate): boolean {
  return Boolean(template.network?.length);
}

function connectorFor(service: ServiceObservation, deps: TemplateScanDeps): NetworkConnector {
  const connect = createNodeNetworkConnector({ lookup: pinnedLookup({ host: service.host ?? service.address, address: service.address }, deps.guard) });
  const limiter = deps.limiter;
  return limiter ? (request) => limiter.run(service.address, () => connect(request)) : connect;
}

export async function runTemplatesOnServices(
  templates: readonly RunnableTemplate[],
  services: readonly ServiceObservation[],
  deps: TemplateScanDeps,
): Promise<TemplateScanResult> {
  const runnable = templates.map((entry) => entry.template).filter((template) => !template.skip && hasNetworkBlocks(template));
  const summary: TemplateScanSummary = {
    templates: runnable.length,
    endpoints: runnable.length ? services.length : 0,
    requestsSent: 0,
    requestsSaved: 0,
    requestsFailed: 0,
    truncated: 0,
  };
  const checkIds = services.length ? [...new Set(runnable.map((template) => template.id))].sort() : [];
  if (!runnable.length || !services.length) return { findings: [], errors: [], checkIds, summary };

  const outcomes = await mapBounded(services, deps.endpointConcurrency ?? 4, async (service) => {
    const target = { host: service.host ?? service.address, port: service.port };
    const output = await runNetworkTemplates(runnable, target, {
      connect: connectorFor(service, deps),
      timeoutMs: deps.timeoutMs,
      concurrency: deps.templateConcurrency ?? 4,
      signal: deps.signal,
    });
    return { service, output };
  });

  const findings: FindingObservation[] = [];
  const errors: StepError[] = [];
  const limits = TEMPLATE_OUTPUT_LIMITS;
  for (const { service, output } of outcomes) {
    const asset = serviceAssetRef(service);
    summary.requestsSent += output.stats.connections;
    summary.requestsFailed += output.stats.connectionsFailed;
    const failed = new Map<string, string>();
    for (const warning of output.warnings) {
      if (warning.templateId && FAILURE_WARNING.test(warning.message) && !failed.has(warning.templateId)) failed.set(warning.templateId, warning.message);
    }
    for (const [templateId, message] of failed) {
      errors.push({ target: `${templateId} ${asset.key}`, code: 'TEMPLATE_REQUEST_FAILED', message: message.slice(0, limits.errorMessage) });
    }
    const perTemplate = new Map<string, number>();
    for (const result of output.results) {
      const count = (perTemplate.get(result.templateId) ?? 0) + 1;
      perTemplate.set(result.templateId, count);
      if (count > limits.resultsPerTemplateAndEndpoint || findings.length >= limits.findingsPerStep) {
        summary.truncated += 1;
        // Not everything this pair found is stored: it must not count as "ran clean" (which would fix findings).
        if (!failed.has(result.templateId)) {
          failed.set(result.templateId, 'truncated');
          errors.push({
            code: 'TEMPLATE_RESULTS_TRUNCATED',
            message: 'more results than a scan step keeps; the rest were dropped',
            target: `${result.templateId} ${asset.key}`,
          });
        }
        continue;
      }
      findings.push(toFindingObservation(result, asset, 'network'));
    }
  }
  findings.sort((a, b) => a.fingerprintParts.join('\0').localeCompare(b.fingerprintParts.join('\0')));
  errors.sort((a, b) => (a.target ?? '').localeCompare(b.target ?? ''));
  return { findings, errors, checkIds, summary };
}
