/** Messages between the template worker pool (template-pool.ts) and its threads (template-worker.ts). */
import type { HttpSendRequest, HttpSendResponse, NucleiTemplate, RunWarning, TemplateResult } from './types.js';
import type { OastInteraction } from './oast.js';

/** What a worker needs to mint OAST URLs itself; interactions are asked of the main thread. */
export interface WorkerOast {
  domain: string;
  correlationId: string;
  cooldownMs: number;
}

/** A worker says it is alive this often; silence for STUCK_AFTER_MS means it is stuck in synchronous work. */
export const HEARTBEAT_MS = 100;
export const STUCK_AFTER_MS = 500;

export type ToWorker =
  | { type: 'run'; taskId: number; template: NucleiTemplate; baseUrl?: string; timeoutMs?: number; maxRequestsPerTemplate?: number; oast?: WorkerOast }
  | { type: 'interactions'; requestId: number; interactions: OastInteraction[]; error?: string }
  | { type: 'cancel'; taskId: number }
  | { type: 'response'; requestId: number; response?: HttpSendResponse; error?: string; code?: string };

export type FromWorker =
  | { type: 'ready' }
  | { type: 'alive' }
  /** The worker is about to run this task's synchronous work (matching the response it just received). */
  | { type: 'busy'; taskId: number }
  | { type: 'send'; taskId: number; requestId: number; request: Omit<HttpSendRequest, 'signal'> }
  | { type: 'warning'; taskId: number; warning: RunWarning }
  /** Interactions of these OAST URLs within the cooldown, answered by an `interactions` message. */
  | { type: 'oast'; taskId: number; requestId: number; urls: string[]; cooldownMs: number }
  | { type: 'done'; taskId: number; results: TemplateResult[]; requestsFailed: number }
  | { type: 'failed'; taskId: number; message: string };
