import type { AppDeps } from '../../context.js';
import type { SqlRunner } from '../../queue.js';
import type { Env } from '../../env.js';
import type { JobQueue } from '../../queue.js';

export const SCAN_STEP_QUEUE = 'scan-step';
/** Jobs whose retries are spent land here, so their scan is marked failed instead of left running. */
export const SCAN_STEP_DEAD_QUEUE = 'scan-step-dead';

export interface ScanStepJob {
  scanId: string;
  stepId: string;
}

export function defineScanQueues(queue: JobQueue, env: Env): void {
  queue.define({ name: SCAN_STEP_DEAD_QUEUE, expireInSeconds: 60, retryLimit: 2 });
  queue.define({
    name: SCAN_STEP_QUEUE,
    // The lease: a step not finished within this time (its worker died) is retried by another worker.
    expireInSeconds: env.SCAN_STEP_TIMEOUT_SECONDS,
    retryLimit: env.SCAN_STEP_RETRIES,
    retryDelay: 1,
    deadLetter: SCAN_STEP_DEAD_QUEUE,
  });
}

export async function enqueueStep(deps: Pick<AppDeps, 'queue'>, job: ScanStepJob, tx?: SqlRunner): Promise<void> {
  await deps.queue.send(SCAN_STEP_QUEUE, job, {}, tx);
}
