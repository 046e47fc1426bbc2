import { Histogram } from 'prom-client';

/**
 * How long scan steps take, per step and outcome. Steps run in this process's workers, which belong to
 * no one app: the histogram is the process's, and each app's registry exposes it at /metrics.
 * (A standalone `npm run worker` process has no /metrics endpoint; its steps are not seen here.)
 */
export const scanStepDuration = new Histogram({
  name: 'perimeter_scan_step_duration_seconds',
  help: 'Time a scan step took in a worker of this process, by step and outcome (completed, failed, retried)',
  labelNames: ['step', 'outcome'] as const,
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900],
  registers: [],
});

export type ScanStepOutcome = 'completed' | 'failed' | 'retried';

/** Records a step that finished (or failed) `startedAt` (a performance.now() reading) ago. */
export function observeScanStep(step: string, outcome: ScanStepOutcome, startedAt: number): void {
  scanStepDuration.observe({ step, outcome }, (performance.now() - startedAt) / 1000);
}
