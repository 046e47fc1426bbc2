import type { AppDeps } from '../../context.js';
import type { Prisma } from '../../db.js';
import { hostAssetKey, type ScopeGuard } from '../../scanner/index.js';
import { createHostRateLimiter, createScopeGuard, isScopeError, StepInputError, type HostRateLimiter } from '../../scanner/index.js';
import { createDnsClient } from '../../scanner/discovery/index.js';
import { assetFromObservation, upsertAssets, type AssetInput } from '../assets/ingest.js';
import { inventoryObservations, recordProvenance, scannableDiscoveredNames } from '../assets/discovery.js';
import { discoverySettingsOf } from '../workspaces/discovery-settings.js';
import { recordFindings, resolveUnseenFindings } from '../vulnerabilities/ingest.js';
import { templatesForScan, TemplateVariablesUnreadable, withoutVariableValues } from './scan-templates.js';
import { disabledBuiltinTools } from '../tools/service.js';
import { TERMINAL_STATUSES, type ScanOptions, type ScanStepName as StepName } from './schemas.js';
import { hostsOfTarget } from './expand.js';
import { domainOfTarget, type DiscoveryInputs } from './discovery-steps.js';
import { ingestDiscovery, ingestPivot } from './discovery-ingest.js';
import { STEP_RUNNERS, ScopeRefusal, type StepOutputs } from './steps.js';
import { enqueueStep, type ScanStepJob } from './queue.js';
import { scanArtefactKey } from './artefacts.js';
import { publishScanUpdate } from './events.js';
import { coverageChanges } from './change-coverage.js';
import { publishChanges, recordChanges, trackChanges } from '../changes/record.js';
import { observeScanStep } from '../../ops/scan-step-metrics.js';
import { createOastClient } from '../../oast/client.js';
import { oastServiceRunning } from '../../oast/service.js';
import { OAST_NOT_CONFIGURED, OAST_UNREACHABLE } from '../../scanner/nuclei/oast.js';

type Tx = Prisma.TransactionClient;

function isPermanent(error: unknown): boolean {
  return error instanceof StepInputError || error instanceof ScopeRefusal || error instanceof TemplateVariablesUnreadable || isScopeError(error);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Both limits apply: the instance's per-host ceiling and the scan's own requested rate. */
function combine(outer: HostRateLimiter, inner: HostRateLimiter): HostRateLimiter {
  return { run: (host, fn) => inner.run(host, () => outer.run(host, fn)), active: (host) => outer.active(host), options: inner.options };
}

/**
 * Runs scan steps from the queue. A step reads what earlier steps stored, probes, then — in one
 * transaction — writes the inventory and findings, completes itself and enqueues the next step. Steps are
 * idempotent (upserts by natural key), so a retried or duplicated job never duplicates anything.
 */
export function createScanRunner(deps: AppDeps) {
  const { prisma, env, log } = deps;
  const guard = createScopeGuard({ allowedNetworks: env.SCAN_ALLOWED_NETWORKS, dnsServers: env.SCAN_DNS_SERVERS });
  const dnsClientOptions = {
    servers: env.SCAN_DNS_SERVERS,
    timeoutMs: env.SCAN_DNS_TIMEOUT_MS,
    concurrencyPerServer: env.SCAN_DNS_CONCURRENCY,
    queriesPerSecondPerServer: env.SCAN_DNS_QUERIES_PER_SECOND,
    authoritativePort: env.SCAN_DNS_AUTHORITATIVE_PORT,
  };

  /** What the discovery step reads besides the target: the workspace's scope and wordlist, CT, what earlier scans saw. */
  async function discoveryInputs(workspaceId: string, target: { type: string; value: string }, withInventory: boolean): Promise<DiscoveryInputs> {
    const settings = await discoverySettingsOf(prisma, workspaceId);
    const domain = domainOfTarget(target);
    const inventory = withInventory && domain ? await inventoryObservations(prisma, workspaceId, domain) : { hosts: [], web: [], certificates: [] };
    return { ...settings, ctUrl: env.DISCOVERY_CT_URL, inventory };
  }
  const instanceLimiter = createHostRateLimiter({
    maxConcurrentPerHost: env.SCAN_MAX_CONCURRENCY_PER_HOST,
    maxPerSecondPerHost: env.SCAN_MAX_REQUESTS_PER_SECOND,
  });

  async function failScan(scanId: string, stepId: string, message: string): Promise<void> {
    const now = new Date();
    const outcome = await prisma.$transaction(async (tx) => {
      const changes = trackChanges(tx);
      const current = await tx.scan.findUnique({ where: { id: scanId }, select: { status: true } });
      if (!current || TERMINAL_STATUSES.has(current.status)) return null;
      await tx.scanStep.update({ where: { id: stepId }, data: { status: 'FAILED', error: message, finishedAt: now } });
      const scan = await tx.scan.update({ where: { id: scanId }, data: { status: 'FAILED', error: message, finishedAt: now } });
      await recordChanges(tx, [{ type: 'scan.failed', workspaceId: scan.workspaceId, at: now, scanId, targetId: scan.targetId, data: { error: message } }]);
      return { scan, changes };
    });
    if (outcome) {
      publishScanUpdate(deps, outcome.scan);
      publishChanges(deps, outcome.changes);
    }
  }

  async function runStep(job: ScanStepJob, attempt: number): Promise<void> {
    const step = await prisma.scanStep.findUnique({
      where: { id: job.stepId },
      include: {
        scan: { include: { target: true, workspace: { select: { isAutoEnableAssetAfterDiscovered: true } }, steps: { orderBy: { position: 'asc' } } } },
      },
    });
    if (!step || step.status === 'COMPLETED' || step.status === 'CANCELLED' || TERMINAL_STATUSES.has(step.scan.status)) return;
    const { scan } = step;
    const startedAt = new Date();
    const running = await prisma.$transaction(async (tx) => {
      // Claimed only while still runnable: a cancel (or completion) that committed after the read above wins.
      const claimed = await tx.scanStep.updateMany({
        where: { id: step.id, status: { in: ['PENDING', 'IN_PROGRESS'] } },
        data: { status: 'IN_PROGRESS', attempts: { increment: 1 }, startedAt, error: null },
      });
      if (claimed.count === 0) return null;
      return tx.scan.update({ where: { id: scan.id }, data: { status: 'IN_PROGRESS', startedAt: scan.startedAt ?? startedAt } });
    });
    if (!running) return;
    publishScanUpdate(deps, running);

    const options = scan.options as unknown as ScanOptions;
    const previous: StepOutputs = {};
    for (const earlier of scan.steps) {
      if (earlier.position < step.position && earlier.output) (previous as Record<string, unknown>)[earlier.name] = earlier.output;
    }
    const scanLimiter = createHostRateLimiter({ maxPerSecondPerHost: options.requestsPerSecond, maxConcurrentPerHost: Math.max(options.portConcurrency, 1) });
    let output: NonNullable<StepOutputs[StepName]>;
    const began = performance.now();
    const usesDiscovery = step.name === 'discovery' || step.name === 'pivot';
    // The checks step asks DNS too: the dns templates' questions go through the same client and limits.
    const dns = usesDiscovery || step.name === 'checks' ? createDnsClient(dnsClientOptions) : undefined;
    // Templates using {{interactsh-url}} get URLs of this step's own correlation id (src/oast; the listeners run in
    // the API process and hear of the id over pub/sub).
    // Without Redis, interactions only reach a step that runs in the process holding the listeners.
    const oastReachable = Boolean(env.REDIS_URL) || oastServiceRunning();
    const oast =
      step.name === 'checks' && env.OAST_DOMAIN && oastReachable
        ? createOastClient({
            pubsub: deps.pubsub,
            domain: env.OAST_DOMAIN,
            cooldownMs: env.OAST_COOLDOWN_MS,
            refreshMs: (env.OAST_EVICTION_SECONDS * 1000) / 3,
          })
        : undefined;
    const autoEnable = scan.workspace.isAutoEnableAssetAfterDiscovered;
    try {
      const runner = STEP_RUNNERS[step.name as StepName];
      // Tools switched off after the scan started are honoured by the checks step too.
      const disabled = step.name === 'checks' ? await disabledBuiltinTools(prisma, scan.workspaceId) : new Set<string>();
      // The template variables given to the templates: their values are masked in what the step stores.
      let variables: Record<string, string> = {};
      const templates = async () => {
        if (disabled.has('nuclei-templates')) return [];
        const oastSkip = oast ? undefined : env.OAST_DOMAIN ? OAST_UNREACHABLE : OAST_NOT_CONFIGURED;
        const loaded = await templatesForScan(deps, { ...scan, options }, { oastSkip });
        variables = loaded.variables;
        return loaded.templates;
      };
      output = (await runner({
        target: scan.target,
        options,
        previous,
        guard,
        limiter: combine(instanceLimiter, scanLimiter),
        templates,
        builtinChecks: !disabled.has('checks'),
        templateBudgetMs: env.TEMPLATE_BUDGET_MS,
        oast,
        dnsServers: env.SCAN_DNS_SERVERS,
        dns,
        discovery: usesDiscovery ? await discoveryInputs(scan.workspaceId, scan.target, step.name === 'discovery') : undefined,
        scannable: (names) => scannableDiscoveredNames(prisma, scan.workspaceId, names, autoEnable),
      }))!;
      if (step.name === 'checks') output = withoutVariableValues(output, Object.values(variables));
    } catch (error) {
      const permanent = isPermanent(error) || attempt >= env.SCAN_STEP_RETRIES;
      observeScanStep(step.name, permanent ? 'failed' : 'retried', began);
      if (permanent) {
        log.warn({ scanId: scan.id, step: step.name, err: error }, 'scan step failed');
        await failScan(scan.id, step.id, `${step.name} step failed: ${messageOf(error)}`);
        return;
      }
      throw error; // the queue retries it
    } finally {
      dns?.close();
      await oast?.close();
    }
    await completeStep(job, step.name as StepName, output, attempt);
    observeScanStep(step.name, 'completed', began);
  }

  async function completeStep(job: ScanStepJob, name: StepName, output: NonNullable<StepOutputs[StepName]>, _attempt: number): Promise<void> {
    const now = new Date();
    // The step's full result is kept as a scan artefact in the blob store before the step counts as done;
    // a storage failure fails this attempt and the queue retries it.
    await deps.storage.put(scanArtefactKey(job.scanId, name), JSON.stringify(output), { contentType: 'application/json' });
    const outcome = await prisma.$transaction(async (tx) => {
      const changes = trackChanges(tx);
      const scan = await tx.scan.findUniqueOrThrow({
        where: { id: job.scanId },
        include: {
          workspace: { select: { isAutoEnableAssetAfterDiscovered: true } },
          target: { select: { type: true, value: true } },
          steps: { orderBy: { position: 'asc' }, select: { id: true, position: true, status: true } },
        },
      });
      // Cancelled (or finished elsewhere) while this step ran: its results are discarded.
      if (TERMINAL_STATUSES.has(scan.status)) return null;
      // Complete the step once, before ingesting anything: another run of it (its lease expired while it
      // was still running, so the queue started it again) may have completed it already, or a cancel may
      // have committed since the read above. Either way this run's results are discarded.
      const claimed = await tx.scanStep.updateMany({
        where: { id: job.stepId, status: 'IN_PROGRESS' },
        data: { status: 'COMPLETED', output: output as unknown as Prisma.InputJsonValue, finishedAt: now, error: softErrorSummary(name, output) },
      });
      if (claimed.count === 0) return null;
      const scope = {
        workspaceId: scan.workspaceId,
        targetId: scan.targetId,
        scanId: scan.id,
        autoEnable: scan.workspace.isAutoEnableAssetAfterDiscovered,
        now,
      };
      // Read before the step's results are stored: what it covered and no longer sees (see changes/gone.ts).
      const coverage = await coverageChanges(tx, { ...scope, target: scan.target, options: scan.options as unknown as ScanOptions }, name, output, guard);
      await ingestStepOutput(tx, { ...scope, target: scan.target }, name, output, guard);
      await recordChanges(tx, coverage);
      const current = scan.steps.find((s) => s.id === job.stepId)!;
      const next = scan.steps.find((s) => s.position > current.position && s.status !== 'COMPLETED');
      const counters = await countScanResults(tx, scan.id);
      const updated = await tx.scan.update({
        where: { id: scan.id },
        data: {
          ...counters,
          stepsDone: scan.steps.filter((s) => s.status === 'COMPLETED' || s.id === job.stepId).length,
          ...(next ? {} : { status: 'COMPLETED', finishedAt: now }),
        },
      });
      if (next) await enqueueStep(deps, { scanId: scan.id, stepId: next.id }, tx);
      else {
        await tx.target.update({ where: { id: scan.targetId }, data: { lastScannedAt: now } });
        const { assetsFound, findingsInfo, findingsLow, findingsMedium, findingsHigh, findingsCritical } = counters;
        const findings = { info: findingsInfo, low: findingsLow, medium: findingsMedium, high: findingsHigh, critical: findingsCritical };
        await recordChanges(tx, [
          { type: 'scan.completed', workspaceId: scan.workspaceId, at: now, scanId: scan.id, targetId: scan.targetId, data: { assetsFound, findings } },
        ]);
      }
      return { updated, changes };
    });
    if (!outcome) return;
    publishScanUpdate(deps, outcome.updated);
    // Every change this step made (asset.discovered, finding.opened, ..., scan.completed), once it committed.
    publishChanges(deps, outcome.changes);
  }

  /** Called for a job whose retries are spent (e.g. its worker kept dying): the scan fails, it never hangs. */
  async function giveUp(job: ScanStepJob): Promise<void> {
    const step = await prisma.scanStep.findUnique({ where: { id: job.stepId }, select: { status: true, name: true, attempts: true } });
    if (!step || step.status === 'COMPLETED' || step.status === 'CANCELLED') return;
    await failScan(job.scanId, job.stepId, `${step.name} step did not finish after ${step.attempts} attempt(s): worker stopped or timed out`);
  }

  return { runStep, giveUp };
}

interface Ingested {
  createdAssets: string[];
  opened: string[];
  reopened: string[];
  fixed: string[];
}

/** Soft errors of a completed discovery step, in its row's `error`: why discovery found little is visible without reading artefacts. */
function softErrorSummary(name: StepName, output: NonNullable<StepOutputs[StepName]>): string | null {
  if (name === 'checks') return missingVariablesSummary(output as NonNullable<StepOutputs['checks']>);
  if (name !== 'discovery') return null;
  const { errors } = (output as NonNullable<StepOutputs['discovery']>).report;
  if (!errors.length) return null;
  const text = errors.map((error) => `${error.code}: ${error.message}${error.target ? ` (${error.target})` : ''}`).join('; ');
  return text.length > 2_000 ? `${text.slice(0, 1_997)}...` : text;
}

/**
 * Templates a checks step skipped for want of template variables (the member can set them) or of OAST (the
 * instance's operator can set OAST_DOMAIN): someone can act on it, so it shows on the step.
 */
function missingVariablesSummary(output: NonNullable<StepOutputs['checks']>): string | null {
  const missing = (output.skippedTemplates ?? []).filter(
    (skipped) => skipped.reason.startsWith('missing variable') || skipped.reason === OAST_NOT_CONFIGURED || skipped.reason === OAST_UNREACHABLE,
  );
  if (!missing.length) return null;
  const text = `templates skipped: ${missing.map((skipped) => `${skipped.templateId} (${skipped.reason})`).join('; ')}`;
  return text.length > 2_000 ? `${text.slice(0, 1_997)}...` : text;
}

async function ingestStepOutput(
  tx: Tx,
  scope: { workspaceId: string; targetId: string; scanId: string; autoEnable: boolean; now: Date; target: { type: string; value: string } },
  name: StepName,
  output: NonNullable<StepOutputs[StepName]>,
  guard: ScopeGuard,
): Promise<Ingested> {
  const result: Ingested = { createdAssets: [], opened: [], reopened: [], fixed: [] };
  if (name === 'discovery') return ingestDiscovery(tx, scope, output as NonNullable<StepOutputs['discovery']>, guard);
  if (name === 'pivot') return ingestPivot(tx, scope, output as NonNullable<StepOutputs['pivot']>, guard);
  // isAutoEnableAssetAfterDiscovered is about discovered hosts; what probing an enabled host sees is enabled.
  const probedScope = { ...scope, autoEnable: true };
  let assets: AssetInput[] = [];
  if (name === 'dns') {
    // CIDR sweeps resolve every address; only those that answer later become assets (ports step).
    const { hosts } = output as NonNullable<StepOutputs['dns']>;
    assets = hosts.filter((host) => host.resolvedVia !== 'literal' || hosts.length === 1).map(assetFromObservation);
    const upserted = await upsertAssets(tx, probedScope, assets);
    result.createdAssets = upserted.created.map((asset) => asset.id);
    // The names the target itself gives are in the inventory because a member typed them in.
    const targetNames = new Set(scope.target.type === 'domain' || scope.target.type === 'url' ? hostsOfTarget(scope.target) : []);
    const provenance = [...targetNames]
      .map((host) => upserted.idByKey.get(hostAssetKey({ host })))
      .filter((id): id is string => !!id)
      .map((assetId) => ({ assetId, origin: { source: 'target' as const, from: scope.target.value } }));
    if (provenance.length) await recordProvenance(tx, scope, provenance);
    return result;
  } else if (name === 'ports') {
    const { services, hosts } = output as NonNullable<StepOutputs['ports']>;
    assets = [...hosts, ...services].map(assetFromObservation);
  } else if (name === 'http') {
    assets = (output as NonNullable<StepOutputs['http']>).web.map(assetFromObservation);
  } else if (name === 'tls') {
    assets = (output as NonNullable<StepOutputs['tls']>).certificates.map(assetFromObservation);
  }
  if (assets.length) result.createdAssets = (await upsertAssets(tx, probedScope, assets)).created.map((asset) => asset.id);
  if (name !== 'checks') return result;

  const { findings, errors, checkIds, serviceCheckIds = [], hostCheckIds = [] } = output as NonNullable<StepOutputs['checks']>;
  const covered = await tx.asset.findMany({
    where: { workspaceId: scope.workspaceId, lastScanId: scope.scanId, kind: { in: ['web', 'certificate', 'service', 'host'] } },
    select: { id: true, key: true, kind: true },
  });
  const idByKey = new Map(covered.map((asset) => [asset.key, asset.id]));
  const recorded = await recordFindings(tx, scope, findings, idByKey);
  // Check errors name "<checkId> <assetKey>"; such a pair did not really run, so its finding is not fixed.
  const erroredPairs = new Set(
    errors.map((error) => {
      const [checkId, assetKey] = (error.target ?? '').split(' ');
      return `${checkId} ${idByKey.get(assetKey ?? '') ?? ''}`;
    }),
  );
  // Web checks and templates fix on what was probed over HTTP/TLS; network and ssl templates on the services they
  // reached; dns templates on the names they asked about.
  const ofKinds = (kinds: string[]) => covered.filter((asset) => kinds.includes(asset.kind)).map((asset) => asset.id);
  result.fixed = [
    ...(await resolveUnseenFindings(tx, scope, { checkIds, assetIds: ofKinds(['web', 'certificate']), erroredPairs })),
    ...(await resolveUnseenFindings(tx, scope, { checkIds: serviceCheckIds, assetIds: ofKinds(['service']), erroredPairs })),
    ...(await resolveUnseenFindings(tx, scope, { checkIds: hostCheckIds, assetIds: ofKinds(['host']), erroredPairs })),
  ];
  result.opened = recorded.opened;
  result.reopened = recorded.reopened;
  return result;
}

async function countScanResults(tx: Tx, scanId: string) {
  const [assetsFound, bySeverity] = await Promise.all([
    tx.asset.count({ where: { lastScanId: scanId } }),
    tx.finding.groupBy({ by: ['severity'], where: { lastScanId: scanId, status: { not: 'fixed' } }, _count: { _all: true } }),
  ]);
  const count = (severity: string) => bySeverity.find((row) => row.severity === severity)?._count._all ?? 0;
  return {
    assetsFound,
    findingsInfo: count('info'),
    findingsLow: count('low'),
    findingsMedium: count('medium'),
    findingsHigh: count('high'),
    findingsCritical: count('critical'),
  };
}
