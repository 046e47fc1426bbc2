import { z } from 'zod';
import { parsePortSpec } from '../../scanner/ports.js';
import { pageQuery } from '../../pagination.js';
import { discoveryOptionsInput, type DiscoveryOptions, resolveDiscoveryOptions } from './discovery-options.js';
import { normalizeSelection, templateSelectionInput, type TemplateSelection } from '../templates/selection.js';
import { scanTemplateVariablesInput } from '../templates/variables.js';

export const SCAN_STATUSES = ['PENDING', 'IN_PROGRESS', 'COMPLETED', 'FAILED', 'CANCELLED'] as const;
export type ScanStatusName = (typeof SCAN_STATUSES)[number];
export const TERMINAL_STATUSES: ReadonlySet<string> = new Set(['COMPLETED', 'FAILED', 'CANCELLED']);

/**
 * A scan's steps in pipeline order. `discovery` finds host names under a domain target before the others;
 * `pivot` follows the names the http and tls steps saw (certificate SANs, links) and probes the new ones.
 */
export const SCAN_STEP_NAMES = ['discovery', 'dns', 'ports', 'http', 'tls', 'pivot', 'checks'] as const;
export type ScanStepName = (typeof SCAN_STEP_NAMES)[number];

/** A step needs what the steps before it observed. */
const REQUIRES: Record<ScanStepName, ScanStepName[]> = {
  discovery: [],
  dns: [],
  ports: ['dns'],
  http: ['ports'],
  tls: ['ports'],
  pivot: ['discovery', 'dns'],
  checks: ['http'],
};

/** Adds what the chosen steps depend on and puts them in pipeline order. */
export function closeSteps(chosen: readonly ScanStepName[]): ScanStepName[] {
  const wanted = new Set<ScanStepName>();
  const add = (step: ScanStepName) => {
    if (wanted.has(step)) return;
    wanted.add(step);
    REQUIRES[step].forEach(add);
  };
  chosen.forEach(add);
  // Discovery carries on from what the probes see: names in certificates and pages are followed too.
  if (wanted.has('discovery') && (wanted.has('http') || wanted.has('tls'))) wanted.add('pivot');
  return SCAN_STEP_NAMES.filter((step) => wanted.has(step));
}

/**
 * Bound of `maxRequestsPerTemplatePerEndpoint`: a template that would send more (payload attacks: default logins,
 * wordlists) stops there and says so; the default keeps a default-login template from flooding a login form.
 */
export const MAX_REQUESTS_PER_TEMPLATE_PER_ENDPOINT = 10_000;

/** Scan settings, within safe bounds. Absent fields take the workspace's default profile. */
export const scanOptionsInput = z
  .object({
    steps: z.array(z.enum(SCAN_STEP_NAMES)).min(1).max(SCAN_STEP_NAMES.length).optional(),
    ports: z
      .union([z.string().max(2000), z.array(z.number().int().min(1).max(65_535)).min(1).max(10_000)])
      .optional()
      .superRefine((value, ctx) => {
        if (typeof value !== 'string') return;
        try {
          parsePortSpec(value);
        } catch (error) {
          ctx.addIssue({ code: 'custom', message: (error as Error).message });
        }
      }),
    timeoutMs: z.number().int().min(100).max(30_000).optional(),
    portConcurrency: z.number().int().min(1).max(500).optional(),
    requestsPerSecond: z.number().int().min(1).max(1_000).optional(),
    maxRedirects: z.number().int().min(0).max(10).optional(),
    maxRequestsPerTemplatePerEndpoint: z
      .number()
      .int()
      .min(1)
      .max(MAX_REQUESTS_PER_TEMPLATE_PER_ENDPOINT)
      .optional()
      .meta({ description: 'Requests one nuclei template may send to one endpoint, payload combinations included (default 100).' }),
    discovery: discoveryOptionsInput.optional(),
    templateSelection: templateSelectionInput.optional().meta({
      description: "Narrows the workspace's template selection for this scan (a template runs when both select it); useDefaultPack, when given, decides.",
    }),
    templateVariables: scanTemplateVariablesInput.optional(),
  })
  .strict();

export type ScanOptionsInput = z.infer<typeof scanOptionsInput>;

export interface ScanOptions {
  steps: ScanStepName[];
  ports?: string | number[];
  timeoutMs: number;
  portConcurrency: number;
  requestsPerSecond: number;
  maxRedirects: number;
  /** Absent on scans stored before the option existed: DEFAULT_SCAN_OPTIONS applies. */
  maxRequestsPerTemplatePerEndpoint?: number;
  discovery: DiscoveryOptions;
  /** The scan's own template selection (normalised); absent: the workspace's alone. */
  templateSelection?: TemplateSelection;
  /** Names of the scan's own template variables; their values are sealed in Scan.templateVariables, never here. */
  templateVariableNames?: string[];
  /** Only these host names of the target (a scan of candidates a member enabled); set by the service, never by a client. */
  hosts?: string[];
}

export const DEFAULT_SCAN_OPTIONS: Required<Omit<ScanOptions, 'steps' | 'discovery' | 'hosts' | 'ports' | 'templateSelection' | 'templateVariableNames'>> = {
  timeoutMs: 3_000,
  portConcurrency: 100,
  requestsPerSecond: 50,
  maxRedirects: 5,
  maxRequestsPerTemplatePerEndpoint: 100,
};

/**
 * Options as stored on the scan. Without explicit steps a scan runs every step except discovery, which runs
 * when `defaultDiscovery` says so (the workspace's isAssetsDiscovery, for a domain target).
 */
export function resolveScanOptions(input: ScanOptionsInput = {}, defaultDiscovery = false): ScanOptions {
  // The variables' values never go into the options (clients read them back): only their names.
  const { discovery, templateSelection, templateVariables, ...rest } = input;
  const defaultSteps = SCAN_STEP_NAMES.filter((step) => step !== 'pivot' && (step !== 'discovery' || defaultDiscovery));
  const selection = normalizeSelection(templateSelection);
  const variableNames = Object.keys(templateVariables ?? {}).sort();
  return {
    ...DEFAULT_SCAN_OPTIONS,
    ...Object.fromEntries(Object.entries(rest).filter(([, value]) => value !== undefined)),
    discovery: resolveDiscoveryOptions(discovery),
    ...(Object.keys(selection).length ? { templateSelection: selection } : {}),
    ...(variableNames.length ? { templateVariableNames: variableNames } : {}),
    steps: closeSteps(input.steps ?? defaultSteps),
  };
}

export const startScanInput = z.object({ targetId: z.string().uuid({ message: 'must be a UUID' }), options: scanOptionsInput.optional() }).strict();

export const listScansInput = z
  .object({
    ...pageQuery,
    targetId: z.string().uuid({ message: 'must be a UUID' }).optional(),
    status: z.enum(SCAN_STATUSES, { message: `must be one of: ${SCAN_STATUSES.join(', ')}` }).optional(),
    sortBy: z.enum(['createdAt', 'finishedAt'], { message: 'must be one of: createdAt, finishedAt' }).default('createdAt'),
  })
  .strict();

export type ListScansInput = z.input<typeof listScansInput>;

/**
 * Leaves out steps whose built-in tool the workspace switched off, then any step that needs one left out.
 * The checks step stays while either of its engines (built-in checks, nuclei templates) is on.
 */
export function withoutDisabledTools(steps: readonly ScanStepName[], disabled: ReadonlySet<string>): ScanStepName[] {
  const kept: ScanStepName[] = [];
  for (const step of steps) {
    const tool = step === 'pivot' ? 'discovery' : step;
    const off = step === 'checks' ? disabled.has('checks') && disabled.has('nuclei-templates') : disabled.has(tool);
    if (!off && REQUIRES[step].every((needed) => kept.includes(needed))) kept.push(step);
  }
  return kept;
}
