import { mapBounded } from '../../concurrency.js';
import type { DiscoveryDnsClient } from '../discovery/index.js';
import {
  createNodeNetworkConnector,
  createNodeTlsConnector,
  dnsResolverFromClient,
  runDnsTemplatesDetailed,
  runSslTemplatesDetailed,
  type NucleiTemplate,
} from './index.js';
import { hostAssetKey, serviceAssetKey, type AssetRef } from '../index.js';
import { pinnedLookup, type RunnableTemplate, type TemplateScanDeps, type TemplateScanResult } from './run-on-web.js';
import { collectRuns, protocolRun } from './run-results.js';

/**
 * Runs the `dns` blocks of nuclei templates against the host names a scan resolved, and the `ssl` blocks against
 * the TLS services it inspected, as nuclei runs them against a domain or a host:port input. A dns finding is about
 * the name (the host asset), an ssl finding about the service that answered the handshake (the service asset).
 * Pure over the network like run-on-web.ts: questions go through the scan's DNS client (SCAN_DNS_SERVERS, its
 * per-server limits); handshakes through the scope guard, the service's own name pinned to the address the scan
 * reached, and the per-host limiter.
 */

/** Run-time warnings that mean a template did not get its answer (it fixes nothing on that asset). */
const FAILURE_WARNING = /^(dns \S+ \S+ failed: |ssl \S+ failed: |ssl \S+: (no certificates|certificate could not)|template failed: |request limit of )/;

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

/** dns templates × host names: findings on host assets. */
export async function runTemplatesOnHostNames(
  templates: readonly RunnableTemplate[],
  names: readonly string[],
  deps: HostTemplateScanDeps,
): Promise<TemplateScanResult> {
  const run = protocolRun(templates, hasDnsBlocks, names.length);
  if (!run.runnable.length || !names.length) return { findings: [], errors: [], checkIds: run.checkIds, summary: run.summary };
  const resolver = dnsResolverFromClient(deps.dns);
  const outcomes = await mapBounded(names, deps.endpointConcurrency ?? 4, async (name) => {
    const output = await runDnsTemplatesDetailed(
      run.runnable,
      { host: name },
      {
        resolver,
        concurrency: deps.templateConcurrency ?? 4,
        maxRequestsPerTemplate: deps.maxRequestsPerTemplate,
        signal: deps.signal,
        ...(deps.oast ? { oast: deps.oast, oastCooldownMs: deps.oast.cooldownMs } : {}),
      },
    );
    const asset: AssetRef = { type: 'host', key: hostAssetKey({ host: name }), host: name };
    return { asset, results: output.results, warnings: output.warnings, sent: output.stats.requestsSent, failed: output.stats.requestsFailed };
  });
  return collectRuns(run, outcomes, 'dns', FAILURE_WARNING);
}

/** ssl templates × TLS services: findings on service assets. */
export async function runTemplatesOnTlsServices(
  templates: readonly RunnableTemplate[],
  endpoints: readonly TlsEndpoint[],
  deps: TemplateScanDeps,
): Promise<TemplateScanResult> {
  const run = protocolRun(templates, hasSslBlocks, endpoints.length);
  if (!run.runnable.length || !endpoints.length) return { findings: [], errors: [], checkIds: run.checkIds, summary: run.summary };
  const outcomes = await mapBounded(endpoints, deps.endpointConcurrency ?? 4, async (endpoint) => {
    const host = endpoint.host ?? endpoint.address;
    const connector = createNodeTlsConnector({ lookup: pinnedLookup({ host, address: endpoint.address }, deps.guard) });
    const limiter = deps.limiter;
    const connect: typeof connector = limiter ? (request) => limiter.run(endpoint.address, () => connector(request)) : connector;
    // jarm_hash: ten plain TCP probes, through the same pinned scope-guard lookup and limiter
    const tcp = createNodeNetworkConnector({ lookup: pinnedLookup({ host, address: endpoint.address }, deps.guard) });
    const jarmConnect: typeof tcp = limiter ? (request) => limiter.run(endpoint.address, () => tcp(request)) : tcp;
    const asset: AssetRef = {
      type: 'service',
      key: serviceAssetKey({ address: endpoint.address, port: endpoint.port, transport: 'tcp' }),
      host,
      address: endpoint.address,
      port: endpoint.port,
    };
    const output = await runSslTemplatesDetailed(
      run.runnable,
      { host, port: endpoint.port },
      {
        connect,
        jarmConnect,
        timeoutMs: deps.timeoutMs,
        concurrency: deps.templateConcurrency ?? 4,
        maxRequestsPerTemplate: deps.maxRequestsPerTemplate,
        signal: deps.signal,
        ...(deps.oast ? { oast: deps.oast, oastCooldownMs: deps.oast.cooldownMs } : {}),
      },
    );
    return { asset, results: output.results, warnings: output.warnings, sent: output.stats.requestsSent, failed: output.stats.requestsFailed };
  });
  return collectRuns(run, outcomes, 'ssl', FAILURE_WARNING);
}
