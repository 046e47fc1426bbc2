import type { Server } from 'node:http';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(ms, 0)));

/**
 * The drain before a listener closes: `drainMs` of normal service (the caller already answers /ready
 * with 503, so load balancers stop sending), then until connections stop arriving.
 *
 * Why the second part: closing a listening socket resets every connection still in the kernel's accept
 * queue, and a busy server accepts slowly (its event loop is taken by requests in progress), so clients
 * that connected just before the signal would get ECONNRESET. The listener closes only once no connection
 * was accepted for `quietMs`, and never later than `deadline` (a client that never stops connecting
 * cannot hold the shutdown).
 */
export async function drainListener(server: Server, options: { drainMs: number; quietMs: number; deadline: number }): Promise<void> {
  let lastAcceptedAt = Date.now();
  const accepted = () => (lastAcceptedAt = Date.now());
  server.on('connection', accepted);
  try {
    await sleep(options.drainMs);
    for (;;) {
      const quietFor = Date.now() - lastAcceptedAt;
      const left = options.deadline - Date.now();
      if (quietFor >= options.quietMs || left <= 0) return;
      await sleep(Math.min(options.quietMs - quietFor, left));
    }
  } finally {
    server.off('connection', accepted);
  }
}
