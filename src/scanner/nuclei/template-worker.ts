/**
 * Inside a template worker thread: runs one template against one endpoint per task with the ordinary engine.
 * Requests go back to the main thread (which owns the scope guard, the per-host limiter and the cluster cache);
 * matching (regexes, DSL, jq) happens here, off the API's event loop. See template-pool.ts for the protocol.
 */
import { parentPort } from 'node:worker_threads';
import { runTemplatesDetailed } from './engine/run-templates.js';
import { compileGoRegex } from './goregex.js';
import type { HttpSendRequest, HttpSendResponse, NucleiTemplate } from './types.js';
import { HEARTBEAT_MS, type FromWorker, type ToWorker, type WorkerOast } from './template-protocol.js';
import { oastUrlMinter, type OastClient, type OastInteraction } from './oast.js';

const port = parentPort!;
const tasks = new Map<number, AbortController>();
const pendingSends = new Map<number, { resolve: (r: HttpSendResponse) => void; reject: (e: Error) => void }>();
const pendingTask = new Map<number, number>();
const pendingInteractions = new Map<number, { resolve: (list: OastInteraction[]) => void; reject: (e: Error) => void; taskId: number }>();
let nextRequestId = 1;

function post(message: FromWorker): void {
  port.postMessage(message);
}

/** Compiled regexes do not cross threads: compile them again from their source (cached per pattern). */
function rehydrate(template: NucleiTemplate): NucleiTemplate {
  const compiled = (sources: string[]) => sources.flatMap((src) => compileGoRegex(src).regex ?? []);
  return {
    ...template,
    requests: template.requests.map((block) => ({
      ...block,
      matchers: block.matchers.map((m) => ({ ...m, regex: compiled(m.regexSource) })),
      extractors: block.extractors.map((e) => ({ ...e, regex: compiled(e.regexSource) })),
    })),
  };
}

/** URLs are minted here (no round trip per marker); the wait for their interactions happens on the main thread. */
function oastClient(taskId: number, oast: WorkerOast): OastClient {
  return {
    newUrl: oastUrlMinter(oast.domain, oast.correlationId),
    interactions: (urls, { cooldownMs }) =>
      new Promise((resolve, reject) => {
        const requestId = nextRequestId++;
        pendingInteractions.set(requestId, { resolve, reject, taskId });
        post({ type: 'oast', taskId, requestId, urls: [...urls], cooldownMs });
      }),
  };
}

async function run(message: Extract<ToWorker, { type: 'run' }>): Promise<void> {
  const { taskId } = message;
  const controller = new AbortController();
  tasks.set(taskId, controller);
  const send = (request: HttpSendRequest): Promise<HttpSendResponse> =>
    new Promise((resolve, reject) => {
      const requestId = nextRequestId++;
      pendingSends.set(requestId, { resolve, reject });
      pendingTask.set(requestId, taskId);
      const { signal: _signal, ...plain } = request;
      post({ type: 'send', taskId, requestId, request: plain });
    });
  try {
    const output = await runTemplatesDetailed(
      [rehydrate(message.template)],
      { baseUrl: message.baseUrl },
      {
        send,
        cluster: false,
        concurrency: 1,
        timeoutMs: message.timeoutMs,
        maxRequestsPerTemplate: message.maxRequestsPerTemplate,
        signal: controller.signal,
        ...(message.oast ? { oast: oastClient(taskId, message.oast), oastCooldownMs: message.oast.cooldownMs } : {}),
        onWarning: (warning) => post({ type: 'warning', taskId, warning }),
      },
    );
    post({ type: 'done', taskId, results: output.results, requestsFailed: output.stats.requestsFailed });
  } catch (err) {
    post({ type: 'failed', taskId, message: (err as Error).message });
  } finally {
    tasks.delete(taskId);
  }
}

port.on('message', (message: ToWorker) => {
  switch (message.type) {
    case 'run':
      void run(message);
      return;
    case 'cancel':
      tasks.get(message.taskId)?.abort();
      return;
    case 'interactions': {
      const pending = pendingInteractions.get(message.requestId);
      if (!pending) return;
      pendingInteractions.delete(message.requestId);
      post({ type: 'busy', taskId: pending.taskId });
      if (message.error) pending.reject(new Error(message.error));
      else pending.resolve(message.interactions);
      return;
    }
    case 'response': {
      const pending = pendingSends.get(message.requestId);
      if (!pending) return;
      pendingSends.delete(message.requestId);
      // The synchronous part of the task (matching this response) runs right after this handler: say whose it is,
      // so that if this thread gets stuck the main thread knows which task to blame.
      post({ type: 'busy', taskId: pendingTask.get(message.requestId)! });
      pendingTask.delete(message.requestId);
      if (message.response) pending.resolve(message.response);
      else pending.reject(Object.assign(new Error(message.error ?? 'request failed'), { code: message.code }));
      return;
    }
  }
});
post({ type: 'ready' });
// A heartbeat: silence means this thread is stuck in one long synchronous match.
setInterval(() => post({ type: 'alive' }), HEARTBEAT_MS).unref();
