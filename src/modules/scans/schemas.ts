import { z } from 'zod';
import { STEP_NAMES, type StepName } from '../../scanner/index.js';
import { parsePortSpec } from '../../scanner/ports.js';
import { pageQuery } from '../../pagination.js';

export const SCAN_STATUSES = ['PENDING', 'IN_PROGRESS', 'COMPLETED', 'FAILED', 'CANCELLED'] as const;
export type ScanStatusName = (typeof SCAN_STATUSES)[number];
export const TERMINAL_STATUSES: ReadonlySet<string> = new Set(['COMPLETED', 'FAILED', 'CANCELLED']);

/** A step needs what the steps before it observed. */
const REQUIRES: Record<StepName, StepName[]> = {
  dns: [],
  ports: ['dns'],
  http: ['ports'],
  tls: ['ports'],
  checks: ['http'],
};

/** Adds what the chosen steps depend on and puts them in pipeline order. */
export function closeSteps(chosen: readonly StepName[]): StepName[] {
  const wanted = new Set<StepName>();
  const add = (step: StepName) => {
    if (wanted.has(step)) return;
    wanted.add(step);
    REQUIRES[step].forEach(add);
  };
  chosen.forEach(add);
  return STEP_NAMES.filter((step) => wanted.has(step));
}

/** Scan settings, within safe bounds. Absent fields take the workspace's default profile. */
export const scanOptionsInput = z
  .object({
    steps: z.array(z.enum(STEP_NAMES)).min(1).max(STEP_NAMES.length).optional(),
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
  })
  .strict();

export type ScanOptionsInput = z.infer<typeof scanOptionsInput>;

export interface ScanOptions {
  steps: StepName[];
  ports?: string | number[];
  timeoutMs: number;
  portConcurrency: number;
  requestsPerSecond: number;
  maxRedirects: number;
}

export const DEFAULT_SCAN_OPTIONS: Omit<ScanOptions, 'steps'> = {
  timeoutMs: 3_000,
  portConcurrency: 100,
  requestsPerSecond: 50,
  maxRedirects: 5,
};

export function resolveScanOptions(input: ScanOptionsInput = {}): ScanOptions {
  return {
    ...DEFAULT_SCAN_OPTIONS,
    ...Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined)),
    steps: closeSteps(input.steps ?? STEP_NAMES),
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
export function withoutDisabledTools(steps: readonly StepName[], disabled: ReadonlySet<string>): StepName[] {
  const kept: StepName[] = [];
  for (const step of steps) {
    const off = step === 'checks' ? disabled.has('checks') && disabled.has('nuclei-templates') : disabled.has(step);
    if (!off && REQUIRES[step].every((needed) => kept.includes(needed))) kept.push(step);
  }
  return kept;
}
