import type { AppDeps } from './context.js';
import type { Env } from './env.js';
import type { JobQueue } from './queue.js';
import { defineScanQueues, SCAN_STEP_DEAD_QUEUE, SCAN_STEP_QUEUE, type ScanStepJob } from './modules/scans/queue.js';
import { createScanRunner } from './modules/scans/pipeline.js';

/** Every queue the application uses; defined before the queue starts (API servers send, workers consume). */
export function defineQueues(queue: JobQueue, env: Env): void {
  defineScanQueues(queue, env);
}

/** Consumes the queues in this process: inside the API server by default, or in `npm run worker`. */
export async function startWorkers(deps: AppDeps): Promise<void> {
  const runner = createScanRunner(deps);
  await deps.queue.work<ScanStepJob>(SCAN_STEP_QUEUE, deps.env.WORKER_CONCURRENCY, (job, meta) => runner.runStep(job, meta.attempt));
  await deps.queue.work<ScanStepJob>(SCAN_STEP_DEAD_QUEUE, 1, (job) => runner.giveUp(job));
  deps.log.info({ concurrency: deps.env.WORKER_CONCURRENCY }, 'workers started');
}
