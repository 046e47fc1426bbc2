import { mapBounded } from '../../concurrency.js';
import { createNodeNetworkConnector, runNetworkTemplates, type NetworkConnector, type NucleiTemplate } from './index.js';
import { serviceAssetKey, type AssetRef, type ServiceObservation } from '../index.js';
import { pinnedLookup, type RunnableTemplate, type TemplateScanDeps, type TemplateScanResult } from './run-on-web.js';
import { collectRuns, protocolRun } from './run-results.js';

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
  const run = protocolRun(templates, hasNetworkBlocks, services.length);
  if (!run.runnable.length || !services.length) return { findings: [], errors: [], checkIds: run.checkIds, summary: run.summary };
  const outcomes = await mapBounded(services, deps.endpointConcurrency ?? 4, async (service) => {
    const target = { host: service.host ?? service.address, port: service.port };
    const output = await runNetworkTemplates(run.runnable, target, {
      connect: connectorFor(service, deps),
      timeoutMs: deps.timeoutMs,
      concurrency: deps.templateConcurrency ?? 4,
      signal: deps.signal,
      ...(deps.oast ? { oast: deps.oast, oastCooldownMs: deps.oast.cooldownMs } : {}),
    });
    const { connections, connectionsFailed } = output.stats;
    return { asset: serviceAssetRef(service), results: output.results, warnings: output.warnings, sent: connections, failed: connectionsFailed };
  });
  return collectRuns(run, outcomes, 'network', FAILURE_WARNING);
}
