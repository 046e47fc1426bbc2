import { mapBounded } from '../../concurrency.js';
import {
  runStep,
  ScopeError,
  type CertificateObservation,
  type FindingObservation,
  type HostObservation,
  type HostRateLimiter,
  type ScopeGuard,
  type ServiceObservation,
  type StepError,
  type WebObservation,
} from '../../scanner/index.js';
import { BUILTIN_CHECKS, parsePortSpec, TOP_PORTS } from '../../scanner/index.js';
import { DEFAULT_SCAN_OPTIONS, type ScanOptions } from './schemas.js';
import { hostsOfTarget, portOfUrl } from './expand.js';
import { runTemplatesOnWeb, type RunnableTemplate, type TemplateScanSummary } from '../../scanner/nuclei/run-on-web.js';
import { runTemplatesOnServices } from '../../scanner/nuclei/run-on-services.js';
import { runSelfContainedTemplates } from '../../scanner/nuclei/run-self-contained.js';
import { runTemplatesOnHostNames, runTemplatesOnTlsServices } from '../../scanner/nuclei/run-on-hosts.js';
import type { DiscoveryDnsClient } from '../../scanner/discovery/index.js';
import { runDiscoveryStep, runPivotStep, type DiscoveryInputs, type DiscoveryStepOutput, type PivotStepOutput } from './discovery-steps.js';
import type { SharedOastClient } from '../../scanner/nuclei/oast.js';

/** What each step keeps in ScanStep.output: the next steps (and a retry) read it back. */
export interface StepOutputs {
  discovery?: DiscoveryStepOutput;
  pivot?: PivotStepOutput;
  dns?: { hosts: HostObservation[] };
  ports?: { services: ServiceObservation[]; hosts: HostObservation[] };
  http?: { web: WebObservation[]; errors: StepError[] };
  tls?: { certificates: CertificateObservation[]; errors: StepError[] };
  /** `checkIds`: built-in checks and the nuclei templates that ran; `templates`: counters of the template run. */
  checks?: {
    findings: FindingObservation[];
    errors: StepError[];
    /** Checks that ran on the web endpoints and certificates (a finding of one not seen again there is fixed). */
    checkIds: string[];
    /** Templates that ran on the port scan's services (network and ssl blocks): the same, on service assets. */
    serviceCheckIds?: string[];
    /** Templates whose dns blocks asked about the scan's host names: the same, on host assets. */
    hostCheckIds?: string[];
    templates?: TemplateScanSummary;
    /** Templates not run and why (an unsupported feature, template variables no value was given for); at most SKIPPED_LIMIT. */
    skippedTemplates?: { templateId: string; reason: string }[];
  };
}

/** Skipped templates a checks step lists at most (an imported library may skip thousands; the step output stays small). */
export const SKIPPED_LIMIT = 200;

export interface StepContext {
  target: { type: string; value: string };
  options: ScanOptions;
  previous: StepOutputs;
  guard: ScopeGuard;
  limiter: HostRateLimiter;
  /** The workspace's enabled nuclei templates (built-in pack and its own), loaded when the checks step runs. */
  templates?: () => Promise<RunnableTemplate[]>;
  /** False when the workspace switched the built-in checks tool off (templates may still run). */
  builtinChecks?: boolean;
  /** Wall-clock budget of one template on one endpoint (TEMPLATE_BUDGET_MS). */
  templateBudgetMs?: number;
  /** The step's OAST client (OAST_DOMAIN set): `{{interactsh-url}}` values and their interactions. */
  oast?: SharedOastClient;
  /** SCAN_DNS_SERVERS: every name a step resolves goes there (the system's resolvers when empty). */
  dnsServers?: string[];
  /** The discovery steps' DNS client (SCAN_DNS_SERVERS with per-server limits). */
  dns?: DiscoveryDnsClient;
  /** Loaded for the discovery steps: the workspace's scope and wordlist, the CT endpoint, earlier observations. */
  discovery?: DiscoveryInputs;
  /** Which of these discovered names may be probed now: enabled hosts, and new ones when the workspace auto-enables. */
  scannable?: (names: string[]) => Promise<Set<string>>;
}

/** Every address of the target is outside what this instance may scan: permanent, never retried. */
export class ScopeRefusal extends Error {
  override name = 'ScopeRefusal';
}

/**
 * The addresses later steps may touch, judged by this instance's scope guard now rather than by the
 * `outOfScope` the dns step stored: a retry after the operator widened SCAN_ALLOWED_NETWORKS (or a worker
 * configured differently) must see the scope that applies when it connects. A target all of whose
 * addresses are blocked fails with the reason and how to allow it.
 */
export function addressesInScope(hosts: HostObservation[], guard: ScopeGuard, { refuseAll = true } = {}): { address: string; host?: string }[] {
  const pairs: { address: string; host?: string }[] = [];
  const refused: string[] = [];
  for (const host of hosts) {
    const name = host.resolvedVia === 'literal' ? undefined : host.host;
    for (const address of host.addresses) {
      const decision = guard.check(address);
      if (decision.allowed) pairs.push({ address, host: name });
      else refused.push(new ScopeError(address, decision.range, decision.label, name).message);
    }
  }
  if (refuseAll && !pairs.length && refused.length) throw new ScopeRefusal(`Refused to scan: ${refused.join(' ')}`);
  return pairs;
}

function literalHost(address: string): HostObservation {
  const v6 = address.includes(':');
  return {
    kind: 'host',
    host: address,
    addresses: [address],
    a: v6 ? [] : [address],
    aaaa: v6 ? [address] : [],
    cname: [],
    resolvedVia: 'literal',
    outOfScope: [],
  };
}

const HOST_CONCURRENCY = 16;
const PROBE_CONCURRENCY = 8;

export const STEP_RUNNERS = {
  discovery: runDiscoveryStep,

  async dns(ctx: StepContext): Promise<StepOutputs['dns']> {
    const names = new Set(ctx.options.hosts ?? hostsOfTarget(ctx.target));
    // Hosts discovery found go through the same steps as the target, unless they wait as candidates (or were disabled).
    const discovered = (ctx.previous.discovery?.report.hosts ?? []).filter((host) => host.resolution.status === 'found').map((host) => host.name);
    const scannable = discovered.length && ctx.scannable ? await ctx.scannable(discovered) : new Set<string>();
    for (const name of discovered) if (scannable.has(name)) names.add(name);
    const hosts = await mapBounded([...names], HOST_CONCURRENCY, async (host) => {
      const deps = { guard: ctx.guard, limiter: ctx.limiter, dnsServers: ctx.dnsServers };
      const { observations } = await runStep('dns', { host, timeoutMs: ctx.options.timeoutMs }, deps);
      return observations[0] as HostObservation;
    });
    return { hosts };
  },

  async ports(ctx: StepContext): Promise<StepOutputs['ports']> {
    const pairs = addressesInScope(ctx.previous.dns?.hosts ?? [], ctx.guard);
    const services = await scanPairs(ctx, pairs);
    // Addresses scanned by number (IP and CIDR targets) become host assets once something answers there.
    const literalHosts = ctx.target.type === 'ip' || ctx.target.type === 'cidr' ? [...new Set(services.map((s) => s.address))].map(literalHost) : [];
    return { services, hosts: literalHosts };
  },

  async http(ctx: StepContext): Promise<StepOutputs['http']> {
    return probeHttp(ctx, ctx.previous.ports?.services ?? []);
  },

  async tls(ctx: StepContext): Promise<StepOutputs['tls']> {
    return inspectCertificates(ctx, ctx.previous.ports?.services ?? []);
  },

  pivot: (ctx: StepContext) =>
    runPivotStep(ctx, async (hosts) => {
      const services = await scanPairs(ctx, addressesInScope(hosts, ctx.guard, { refuseAll: false }));
      const [http, tls] = await Promise.all([probeHttp(ctx, services), inspectCertificates(ctx, services)]);
      return { services, web: http.web, certificates: tls.certificates, errors: [...http.errors, ...tls.errors] };
    }),

  async checks(ctx: StepContext): Promise<StepOutputs['checks']> {
    // What the pivot step probed is checked like what the http and tls steps probed.
    const web = [...(ctx.previous.http?.web ?? []), ...(ctx.previous.pivot?.web ?? [])];
    const certificates = [...(ctx.previous.tls?.certificates ?? []), ...(ctx.previous.pivot?.certificates ?? [])];
    const services = [...(ctx.previous.ports?.services ?? []), ...(ctx.previous.pivot?.services ?? [])];
    // dns templates ask about names (not addresses); ssl templates handshake with what answered TLS.
    const hostNames = [
      ...new Set([...(ctx.previous.dns?.hosts ?? []), ...(ctx.previous.pivot?.hosts ?? [])].filter((h) => h.resolvedVia !== 'literal').map((h) => h.host)),
    ];
    const tlsEndpoints = uniqueEndpoints(certificates);
    const anything = web.length || services.length || hostNames.length;
    const templates = ctx.templates && anything ? await ctx.templates() : [];
    // Built-in checks and templates run side by side; the limiter bounds what they send to each host together.
    const builtinChecks = ctx.builtinChecks ?? true;
    // A URL target's path and query reach the templates run on the endpoint it names (nuclei's input URL).
    const targetUrl = ctx.target.type === 'url' ? ctx.target.value : undefined;
    const templateDeps = {
      guard: ctx.guard,
      limiter: ctx.limiter,
      timeoutMs: ctx.options.timeoutMs,
      budgetMs: ctx.templateBudgetMs,
      oast: ctx.oast,
      targetUrl,
      maxRequestsPerTemplate: ctx.options.maxRequestsPerTemplatePerEndpoint ?? DEFAULT_SCAN_OPTIONS.maxRequestsPerTemplatePerEndpoint,
    };
    const noRun = {
      findings: [],
      errors: [],
      checkIds: [],
      summary: { templates: 0, endpoints: 0, requestsSent: 0, requestsSaved: 0, requestsFailed: 0, truncated: 0 },
    };
    // Self-contained templates run here once per scan (this step runs once per scan), on the hosts the scan reached.
    const hosts = [...(ctx.previous.dns?.hosts ?? []), ...(ctx.previous.ports?.hosts ?? []), ...(ctx.previous.pivot?.hosts ?? [])];
    const targetHost = ctx.target.type === 'cidr' ? undefined : hostsOfTarget(ctx.target)[0];
    const [builtin, onWeb, onServices, onNames, onTls, selfContained] = await Promise.all([
      builtinChecks
        ? runStep('checks', { web, certificates, timeoutMs: ctx.options.timeoutMs }, { guard: ctx.guard, limiter: ctx.limiter })
        : { observations: [], errors: [] },
      runTemplatesOnWeb(templates, web, templateDeps),
      runTemplatesOnServices(templates, services, templateDeps),
      ctx.dns ? runTemplatesOnHostNames(templates, hostNames, { ...templateDeps, dns: ctx.dns }) : noRun,
      runTemplatesOnTlsServices(templates, tlsEndpoints, templateDeps),
      runSelfContainedTemplates(templates, { web, hosts, services, targetHost }, templateDeps),
    ]);
    const runs = [onWeb, onServices, onNames, onTls, selfContained];
    return {
      findings: [...(builtin.observations as FindingObservation[]), ...runs.flatMap((run) => run.findings)],
      errors: [...builtin.errors, ...runs.flatMap((run) => run.errors)],
      // a self-contained template's findings sit on web endpoints or hosts: one that ran clean fixes them there
      checkIds: [...(builtinChecks ? BUILTIN_CHECKS.map((check) => check.id) : []), ...onWeb.checkIds, ...selfContained.checkIds],
      serviceCheckIds: [...new Set([...onServices.checkIds, ...onTls.checkIds])].sort(),
      hostCheckIds: [...onNames.checkIds, ...selfContained.checkIds],
      templates: addSummaries(
        templates,
        runs.map((run) => run.summary),
      ),
      skippedTemplates: templates
        .filter(({ template }) => template.skip)
        .slice(0, SKIPPED_LIMIT)
        .map(({ template }) => ({ templateId: template.id, reason: template.skip! })),
    };
  },
};

/** One summary of the template runs: each template counted once (one may have blocks of several protocols). */
function addSummaries(templates: readonly RunnableTemplate[], summaries: TemplateScanSummary[]): TemplateScanSummary {
  const runnable = templates.filter(
    ({ template }) => !template.skip && (template.requests.length > 0 || Boolean(template.network?.length || template.dns?.length || template.ssl?.length)),
  );
  const sum = (key: Exclude<keyof TemplateScanSummary, 'templates'>) => summaries.reduce((total, summary) => total + summary[key], 0);
  return {
    templates: runnable.length,
    endpoints: sum('endpoints'),
    requestsSent: sum('requestsSent'),
    requestsSaved: sum('requestsSaved'),
    requestsFailed: sum('requestsFailed'),
    truncated: sum('truncated'),
  };
}

/** One TLS endpoint per address and port (a certificate observation per name may repeat them). */
function uniqueEndpoints(certificates: readonly CertificateObservation[]): { host?: string; address: string; port: number }[] {
  const byKey = new Map<string, { host?: string; address: string; port: number }>();
  for (const certificate of certificates) {
    const key = `${certificate.address}:${certificate.port}`;
    if (!byKey.has(key)) byKey.set(key, { host: certificate.host, address: certificate.address, port: certificate.port });
  }
  return [...byKey.values()];
}

/** The ports the ports step probes on every address (the change feed's coverage reads it too). */
export function scannedPorts(options: Pick<ScanOptions, 'ports'>, target: { type: string; value: string }): readonly number[] {
  const spec = options.ports ?? (target.type === 'url' ? [portOfUrl(target.value)] : undefined);
  if (spec === undefined) return TOP_PORTS;
  return typeof spec === 'string' ? parsePortSpec(spec) : spec;
}

/** Open ports of each (address, name) pair; addresses scanned by number become host assets once something answers. */
async function scanPairs(ctx: StepContext, pairs: { address: string; host?: string }[]): Promise<ServiceObservation[]> {
  const ports = ctx.options.ports ?? (ctx.target.type === 'url' ? [portOfUrl(ctx.target.value)] : undefined);
  const found = await mapBounded(pairs, HOST_CONCURRENCY, async ({ address, host }) => {
    const input = { address, host, ports, concurrency: ctx.options.portConcurrency, timeoutMs: ctx.options.timeoutMs, grabBanner: true };
    return (await runStep('ports', input, { guard: ctx.guard, limiter: ctx.limiter })).observations as ServiceObservation[];
  });
  return found.flat();
}

async function probeHttp(ctx: StepContext, services: ServiceObservation[]): Promise<NonNullable<StepOutputs['http']>> {
  const results = await mapBounded(services, PROBE_CONCURRENCY, (service) =>
    runStep(
      'http',
      {
        address: service.address,
        host: service.host,
        port: service.port,
        tls: 'auto',
        timeoutMs: ctx.options.timeoutMs,
        maxRedirects: ctx.options.maxRedirects,
      },
      { guard: ctx.guard, limiter: ctx.limiter },
    ),
  );
  return { web: results.flatMap((r) => r.observations as WebObservation[]), errors: results.flatMap((r) => r.errors) };
}

async function inspectCertificates(ctx: StepContext, services: ServiceObservation[]): Promise<NonNullable<StepOutputs['tls']>> {
  const results = await mapBounded(services, PROBE_CONCURRENCY, (service) =>
    runStep(
      'tls',
      { address: service.address, host: service.host, port: service.port, timeoutMs: ctx.options.timeoutMs },
      { guard: ctx.guard, limiter: ctx.limiter },
    ),
  );
  return { certificates: results.flatMap((r) => r.observations as CertificateObservation[]), errors: results.flatMap((r) => r.errors) };
}
