import { builder } from '../../graphql/builder.js';
import { rechecked } from '../../graphql/live-access.js';
import { decodeId, decodeQueryId } from '../../graphql/ids.js';
import { TargetRef } from '../targets/graphql.js';
import * as scans from './service.js';
import { SCAN_STATUSES, SCAN_STEP_NAMES } from './schemas.js';
import { DISCOVERY_STEP_SOURCES } from './discovery-options.js';
import { TemplateSelectionInput, TemplateVariableInput, variablesRecord } from '../templates/selection-graphql.js';

const ScanStatus = builder.enumType('ScanStatus', { values: SCAN_STATUSES });
const ScanStepName = builder.enumType('ScanStepName', { values: SCAN_STEP_NAMES });

builder.prismaObject('ScanStep', {
  description: 'One job of a scan, run by a worker.',
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    position: t.exposeInt('position'),
    status: t.expose('status', { type: ScanStatus }),
    attempts: t.exposeInt('attempts'),
    error: t.exposeString('error', { nullable: true }),
    startedAt: t.expose('startedAt', { type: 'DateTime', nullable: true }),
    finishedAt: t.expose('finishedAt', { type: 'DateTime', nullable: true }),
  }),
});

const FindingCounts = builder.objectRef<{ info: number; low: number; medium: number; high: number; critical: number }>('FindingCounts').implement({
  fields: (t) => ({
    info: t.exposeInt('info'),
    low: t.exposeInt('low'),
    medium: t.exposeInt('medium'),
    high: t.exposeInt('high'),
    critical: t.exposeInt('critical'),
  }),
});

export const ScanRef = builder.prismaNode('Scan', {
  id: { field: 'id' },
  description: 'One run of the scan pipeline over one target.',
  findUnique: (id, ctx) => scans.visibleScanWhereUnique(ctx, id),
  // node(id) of one that is absent or not visible is null, not findUniqueOrThrow's masked INTERNAL error.
  nullable: true,
  fields: (t) => ({
    databaseId: t.exposeString('id', { description: 'The UUID the REST API uses.' }),
    status: t.expose('status', { type: ScanStatus }),
    options: t.expose('options', { type: 'JSON' }),
    stepsDone: t.exposeInt('stepsDone'),
    stepsTotal: t.exposeInt('stepsTotal'),
    progress: t.float({
      description: 'Share of steps done, from 0 to 1.',
      select: { stepsDone: true, stepsTotal: true },
      resolve: (scan) => (scan.stepsTotal ? scan.stepsDone / scan.stepsTotal : 0),
    }),
    assetsFound: t.exposeInt('assetsFound'),
    findingCounts: t.field({
      type: FindingCounts,
      select: { findingsInfo: true, findingsLow: true, findingsMedium: true, findingsHigh: true, findingsCritical: true },
      resolve: (scan) => ({
        info: scan.findingsInfo,
        low: scan.findingsLow,
        medium: scan.findingsMedium,
        high: scan.findingsHigh,
        critical: scan.findingsCritical,
      }),
    }),
    error: t.exposeString('error', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    startedAt: t.expose('startedAt', { type: 'DateTime', nullable: true }),
    finishedAt: t.expose('finishedAt', { type: 'DateTime', nullable: true }),
    target: t.relation('target', { type: TargetRef }),
    steps: t.relation('steps', { query: { orderBy: { position: 'asc' } } }),
  }),
});

// The module that owns scans adds them to workspaces and targets.
builder.prismaObjectField('Workspace', 'scans', (t) =>
  t.relatedConnection('scans', { cursor: 'id', totalCount: true, query: { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] } }),
);
builder.prismaObjectField('Target', 'scans', (t) =>
  t.relatedConnection('scans', { cursor: 'id', totalCount: true, query: { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] } }),
);

const DiscoverySource = builder.enumType('DiscoveryStepSource', { values: DISCOVERY_STEP_SOURCES });

const DiscoveryOptionsInput = builder.inputType('DiscoveryOptionsInput', {
  description: 'Bounds and sources of the discovery step; absent fields take the defaults.',
  fields: (t) => ({
    wordlist: t.stringList({ description: 'Labels tried besides the built-in list and the workspace list (at most 10,000).' }),
    builtinWordlist: t.boolean({ description: 'Whether the built-in list of the 4,989 most common labels is used (default true).' }),
    sources: t.field({ type: [DiscoverySource], description: 'Sources to use (default all).' }),
    maxDepth: t.int({ description: 'Rounds of recursion under found names, 1 to 3 (default 2).' }),
    maxNames: t.int({ description: 'Host names recorded per scan, 1 to 10,000 (default 1,000).' }),
    maxPermutations: t.int({ description: 'Permutation guesses per round, 0 to 20,000 (default 1,000).' }),
  }),
});

export const ScanOptionsInput = builder.inputType('ScanOptionsInput', {
  description: 'Steps and settings; absent fields take the default profile. Dependencies of chosen steps are added.',
  fields: (t) => ({
    steps: t.field({ type: [ScanStepName] }),
    ports: t.string({ description: 'A port list such as "22,80,443,8000-8100"; absent means the top 100 ports.' }),
    timeoutMs: t.int({ description: 'Per-connection timeout, 100 to 30000 ms.' }),
    portConcurrency: t.int({ description: 'Concurrent connection attempts, 1 to 500.' }),
    requestsPerSecond: t.int({ description: 'Per-host request rate, 1 to 1000.' }),
    maxRedirects: t.int({ description: 'Redirects followed by the HTTP probe, 0 to 10.' }),
    maxRequestsPerTemplatePerEndpoint: t.int({
      description:
        'Requests one nuclei template may send to one endpoint, payload combinations included, 1 to 10000 (default 100). A template that reaches it stops and is reported in the step errors (TEMPLATE_REQUEST_CAP_REACHED).',
    }),
    discovery: t.field({ type: DiscoveryOptionsInput }),
    templateSelection: t.field({
      type: TemplateSelectionInput,
      description: "Narrows the workspace's template selection for this scan (a template runs when both select it); useDefaultPack, when given, decides.",
    }),
    templateVariables: t.field({
      type: [TemplateVariableInput],
      description: "Template variables for this scan only (values required); they win over the workspace's. Stored encrypted, never returned.",
    }),
  }),
});

/** The GraphQL scan options as the service takes them: nulls dropped, the variables' list as a record. */
export function scanOptionsOf(input: Record<string, unknown> | null | undefined): Record<string, unknown> | undefined {
  const options = withoutNulls(input);
  if (options?.templateVariables) options.templateVariables = variablesRecord(options.templateVariables as { name: string; value?: string | null }[]);
  return options;
}

export function withoutNulls<T extends object>(input: T | null | undefined): Record<string, unknown> | undefined {
  if (!input) return undefined;
  return Object.fromEntries(
    Object.entries(input)
      .filter(([, value]) => value !== null && value !== undefined)
      // Nested inputs (discovery) drop their nulls too: null means "the default", as at the top level.
      .map(([key, value]) => [key, typeof value === 'object' && !Array.isArray(value) ? withoutNulls(value as object) : value]),
  );
}

builder.queryFields((t) => ({
  scan: t.prismaField({
    type: 'Scan',
    nullable: true,
    authScopes: { signedIn: true },
    args: { id: t.arg.id({ required: true }) },
    resolve: (query, _root, args, ctx) => scans.findVisibleScan(ctx, decodeQueryId(args.id, ScanRef, 'id'), query),
  }),
}));

builder.mutationFields((t) => ({
  startScan: t.prismaField({
    type: 'Scan',
    errors: {},
    args: { targetId: t.arg.id({ required: true }), options: t.arg({ type: ScanOptionsInput }) },
    resolve: (_query, _root, args, ctx) => scans.startScanOfTarget(ctx, decodeId(args.targetId, TargetRef, 'targetId'), scanOptionsOf(args.options)),
  }),
  cancelScan: t.prismaField({
    type: 'Scan',
    errors: {},
    args: { id: t.arg.id({ required: true }) },
    resolve: (_query, _root, args, ctx) => scans.cancelScan(ctx, decodeId(args.id, ScanRef, 'id')),
  }),
  retryScan: t.prismaField({
    type: 'Scan',
    errors: {},
    args: { id: t.arg.id({ required: true }) },
    resolve: (_query, _root, args, ctx) => scans.retryScan(ctx, decodeId(args.id, ScanRef, 'id')),
  }),
}));

builder.subscriptionFields((t) => ({
  scanUpdated: t.field({
    type: ScanRef,
    description:
      'The scan now, then each time its status, progress or counters change, until it ends. Access is checked when subscribing and again before each update.',
    args: { id: t.arg.id({ required: true }) },
    subscribe: (_root, args, ctx) => {
      const scanId = decodeQueryId(args.id, ScanRef, 'id');
      return rechecked(ctx, scans.subscribeToScan(ctx, scanId), () => scans.getScan(ctx, scanId));
    },
    resolve: (scan) => scan,
  }),
}));
