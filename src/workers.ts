import type { AppDeps } from './context.js';
import type { Env } from './env.js';
import type { JobQueue } from './queue.js';
import { defineScanQueues, SCAN_STEP_DEAD_QUEUE, SCAN_STEP_QUEUE, type ScanStepJob } from './modules/scans/queue.js';
import { createScanRunner } from './modules/scans/pipeline.js';
import { startScheduleTicker } from './modules/schedules/ticker.js';
import { startAuditRetention } from './modules/audit/retention.js';
import {
  defineWebhookQueues,
  runDeliveryAttempt,
  WEBHOOK_DELIVERY_BATCH,
  WEBHOOK_DELIVERY_QUEUE,
  type WebhookDeliveryJob,
} from './modules/webhooks/delivery.js';

/** Every queue the application uses; defined before the queue starts (API servers send, workers consume). */
export function defineQueues(queue: JobQueue, env: Env): void {
  defineScanQueues(queue, env);
  defineWebhookQueues(queue, env);
}

/** Consumes the queues in this process: inside the API server by default, or in `npm run worker`. */
export async function startWorkers(deps: AppDeps): Promise<void> {
  const runner = createScanRunner(deps);
  await deps.queue.work<ScanStepJob>(SCAN_STEP_QUEUE, deps.env.WORKER_CONCURRENCY, (job, meta) => runner.runStep(job, meta.attempt));
  await deps.queue.work<ScanStepJob>(SCAN_STEP_DEAD_QUEUE, 1, (job) => runner.giveUp(job));
  // Webhook deliveries: one attempt per job (delivery.ts queues the retries).
  // Deliveries mostly wait on the receiver: each poller runs a batch of them side by side.
  await deps.queue.work<WebhookDeliveryJob>(WEBHOOK_DELIVERY_QUEUE, deps.env.WORKER_CONCURRENCY, (job) => runDeliveryAttempt(deps, job), {
    batchSize: WEBHOOK_DELIVERY_BATCH,
  });
  // Scan schedules fire from every process that runs workers; they stop with the queue.
  const ticker = startScheduleTicker(deps);
  deps.queue.onStop(() => ticker.stop());
  // Expired audit-log entries (AUDIT_RETENTION_DAYS) are removed by the processes that run workers.
  startAuditRetention(deps);
  deps.log.info({ concurrency: deps.env.WORKER_CONCURRENCY }, 'workers started');
}
