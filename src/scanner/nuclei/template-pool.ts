/**
 * Runs templates in worker threads, each template against one endpoint within a wall-clock budget.
 *
 * Why threads: template regexes run on RE2 (linear time, see goregex.ts), but linear is not cheap. Measured on
 * this engine with a 1 MiB body (the sender's cap): `^(a+)+$` answers in ~10 ms, a submatch search with a
 * 200-instruction program takes ~2 s, one with a 3 000-instruction program (`(?:(a|b){100}){10}`) ~55 s, and a
 * template may hold dozens of such regexes plus DSL `regex()` calls. No cap on body size or yield between regexes
 * keeps that off the API's event loop: one call is synchronous. So matching happens in worker threads, and the
 * main thread keeps only what must be shared: sending requests (scope guard, per-host limiter, cluster cache).
 *
 * Budget: at `budgetMs` the main thread stops waiting for the task (its results are dropped), cancels its
 * requests and tells the worker to stop it. Tasks mostly wait on the network, so a worker carries many at once;
 * the price is that one stuck in a long synchronous match holds up the others. A heartbeat tells a stuck worker
 * from a busy one, and the worker names the task whose synchronous work it starts: when a task's budget ends
 * while its worker is stuck on another task, the task is not blamed; the culprit's own budget end (or a cancel
 * not acknowledged within a grace period) terminates the worker, and the tasks it held start again, with a
 * fresh budget, on a new worker (once; a second interruption fails them). The budget starts when the worker is
 * up (a new thread takes about a second to load the engine).
 */
import os from 'node:os';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { shippedPath } from '../../shipped-files.js';
import { STUCK_AFTER_MS, type FromWorker, type ToWorker } from './template-protocol.js';
import type { HttpSendRequest, HttpSender, NucleiTemplate, RunWarning, TemplateResult } from './types.js';
import type { SharedOastClient } from './oast.js';

export interface TemplateTask {
  template: NucleiTemplate;
  /** Absent: a self-contained template, run once with no target (its URLs are its own). */
  baseUrl?: string;
  /** Sends the template's requests (on the main thread). Gets the task's abort signal in `request.signal`. */
  send: HttpSender;
  onWarning?: (warning: RunWarning) => void;
  /** Wall-clock budget of this template on this endpoint, requests included. */
  budgetMs: number;
  timeoutMs?: number;
  maxRequestsPerTemplate?: number;
  signal?: AbortSignal;
  /** OAST for `{{interactsh-url}}`: the worker mints URLs on its domain and correlation id, waits happen here. */
  oast?: SharedOastClient;
}

export type TemplateTaskOutcome =
  | { status: 'done'; results: TemplateResult[]; requestsFailed: number }
  | { status: 'over-budget' }
  | { status: 'aborted' }
  | { status: 'failed'; message: string };

/** How long a worker may take to acknowledge a cancel before it counts as stuck. */
const CANCEL_GRACE_MS = 1_000;
/** A task whose budget ended while another task held its worker looks again this much later. */
const RECHECK_MS = 250;
/** Tasks mostly wait on the network, so a few threads carry many tasks; matching is what they are for. */
const POOL_SIZE = Math.max(2, Math.min(4, os.availableParallelism()));
/**
 * Compiled (dist/, `npm start`), the worker runs its own bundle, template-worker.js. From source (tsx: dev,
 * tests) a worker thread does not inherit the loader, so it starts through a file that registers tsx first.
 */
const WORKER_ENTRY = import.meta.url.endsWith('.ts')
  ? new URL('./template-worker.boot.mjs', import.meta.url)
  : pathToFileURL(shippedPath('src/scanner/nuclei/template-worker.js'));

interface Task {
  id: number;
  spec: TemplateTask;
  slot?: Slot;
  attempts: number;
  controller: AbortController;
  settle: (outcome: TemplateTaskOutcome) => void;
  settled: boolean;
  budgetTimer?: NodeJS.Timeout;
}

interface Slot {
  worker: Worker;
  tasks: Map<number, Task>;
  dead: boolean;
  ready: boolean;
  lastSeen: number;
  /** The task whose synchronous work the worker last started. */
  busyWith?: number;
}

const slots: Slot[] = [];
let nextTaskId = 1;

function spawn(): Slot {
  const worker = new Worker(WORKER_ENTRY);
  worker.unref();
  const slot: Slot = { worker, tasks: new Map(), dead: false, ready: false, lastSeen: Date.now() };
  worker.on('message', (message: FromWorker) => onMessage(slot, message));
  worker.on('error', (err) => retire(slot, `template worker failed: ${err.message}`));
  worker.on('exit', () => retire(slot, 'template worker exited'));
  return slot;
}

/** The live worker with the fewest tasks (a new one while the pool is not full). */
function pickSlot(): Slot {
  for (let i = slots.length - 1; i >= 0; i--) if (slots[i].dead) slots.splice(i, 1);
  const idle = slots.find((slot) => slot.tasks.size === 0);
  if (idle) return idle;
  if (slots.length < POOL_SIZE) {
    const slot = spawn();
    slots.push(slot);
    return slot;
  }
  return slots.reduce((best, slot) => (slot.tasks.size < best.tasks.size ? slot : best));
}

function dispatch(task: Task): void {
  const slot = pickSlot();
  task.slot = slot;
  task.attempts += 1;
  clearTimeout(task.budgetTimer);
  task.budgetTimer = undefined;
  slot.tasks.set(task.id, task);
  if (slot.ready) startBudget(task, task.spec.budgetMs);
  const { template, baseUrl, timeoutMs, maxRequestsPerTemplate, oast } = task.spec;
  slot.worker.postMessage({
    type: 'run',
    taskId: task.id,
    template: withoutCompiledRegexes(template),
    baseUrl,
    timeoutMs,
    maxRequestsPerTemplate,
    ...(oast ? { oast: { domain: oast.domain, correlationId: oast.correlationId, cooldownMs: oast.cooldownMs } } : {}),
  } satisfies ToWorker);
}

/** RE2JS objects do not survive structured cloning; the worker compiles the sources again. */
function withoutCompiledRegexes(template: NucleiTemplate): NucleiTemplate {
  return {
    ...template,
    requests: template.requests.map((block) => ({
      ...block,
      matchers: block.matchers.map((m) => ({ ...m, regex: [] })),
      extractors: block.extractors.map((e) => ({ ...e, regex: [] })),
    })),
  };
}

function startBudget(task: Task, ms: number): void {
  if (task.settled) return;
  task.budgetTimer = setTimeout(() => onBudgetEnd(task), ms);
}

function onBudgetEnd(task: Task): void {
  const slot = task.slot;
  if (task.settled || !slot) return;
  const stuck = Date.now() - slot.lastSeen > STUCK_AFTER_MS;
  if (!stuck) {
    stopTask(task, { status: 'over-budget' });
    return;
  }
  if (slot.busyWith === task.id || slot.busyWith === undefined || !slot.tasks.has(slot.busyWith)) {
    // This task's own synchronous work holds the worker: nothing else will stop it.
    finish(task, { status: 'over-budget' });
    retire(slot, 'template worker stopped: a template on it overran its time budget');
    return;
  }
  // Held up by another task: that task's budget (or this recheck) settles it.
  startBudget(task, RECHECK_MS);
}

function finish(task: Task, outcome: TemplateTaskOutcome): void {
  if (task.settled) return;
  task.settled = true;
  clearTimeout(task.budgetTimer);
  task.controller.abort();
  task.settle(outcome);
}

function onMessage(slot: Slot, message: FromWorker): void {
  slot.lastSeen = Date.now();
  if (message.type === 'alive') return;
  if (message.type === 'ready') {
    slot.ready = true;
    for (const task of slot.tasks.values()) if (!task.budgetTimer) startBudget(task, task.spec.budgetMs);
    return;
  }
  if (message.type === 'busy') {
    slot.busyWith = message.taskId;
    return;
  }
  const task = slot.tasks.get(message.taskId);
  if (!task) return;
  switch (message.type) {
    case 'send':
      void relaySend(slot, task, message.requestId, message.request);
      return;
    case 'oast':
      void relayInteractions(slot, task, message.requestId, message.urls, message.cooldownMs);
      return;
    case 'warning':
      if (!task.settled) task.spec.onWarning?.(message.warning);
      return;
    case 'done':
    case 'failed':
      slot.tasks.delete(task.id);
      if (message.type === 'done') finish(task, { status: 'done', results: message.results, requestsFailed: message.requestsFailed });
      else finish(task, { status: 'failed', message: message.message });
      return;
  }
}

async function relaySend(slot: Slot, task: Task, requestId: number, request: Omit<HttpSendRequest, 'signal'>): Promise<void> {
  let reply: ToWorker;
  try {
    const response = await task.spec.send({ ...request, signal: task.controller.signal });
    reply = { type: 'response', requestId, response };
  } catch (err) {
    reply = { type: 'response', requestId, error: (err as Error).message, code: (err as { code?: string }).code };
  }
  if (!slot.dead) slot.worker.postMessage(reply);
}

async function relayInteractions(slot: Slot, task: Task, requestId: number, urls: string[], cooldownMs: number): Promise<void> {
  let reply: ToWorker;
  try {
    if (!task.spec.oast) throw new Error('no OAST client');
    reply = { type: 'interactions', requestId, interactions: await task.spec.oast.interactions(urls, { cooldownMs, signal: task.controller.signal }) };
  } catch (err) {
    reply = { type: 'interactions', requestId, interactions: [], error: (err as Error).message };
  }
  if (!slot.dead) slot.worker.postMessage(reply);
}

/** A worker that died or was stopped: its unfinished tasks start again elsewhere (once) or fail. */
function retire(slot: Slot, reason: string): void {
  if (slot.dead) return;
  slot.dead = true;
  void slot.worker.terminate();
  const orphans = [...slot.tasks.values()].filter((task) => !task.settled);
  slot.tasks.clear();
  for (const task of orphans) {
    if (task.attempts < 2) dispatch(task);
    else finish(task, { status: 'failed', message: reason });
  }
}

function stopTask(task: Task, outcome: TemplateTaskOutcome): void {
  finish(task, outcome);
  const slot = task.slot;
  if (!slot || slot.dead || !slot.tasks.has(task.id)) return;
  slot.worker.postMessage({ type: 'cancel', taskId: task.id } satisfies ToWorker);
  setTimeout(() => {
    if (slot.tasks.has(task.id)) retire(slot, 'template worker stopped: a template on it did not stop at its time budget');
  }, CANCEL_GRACE_MS).unref();
}

/** Runs one template against one endpoint in the worker pool; never rejects. */
export function runTemplateTask(spec: TemplateTask): Promise<TemplateTaskOutcome> {
  return new Promise((resolve) => {
    if (spec.signal?.aborted) return resolve({ status: 'aborted' });
    const task: Task = { id: nextTaskId++, spec, attempts: 0, controller: new AbortController(), settle: resolve, settled: false };
    spec.signal?.addEventListener('abort', () => stopTask(task, { status: 'aborted' }), { once: true });
    dispatch(task);
  });
}
