import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * A loopback webhook receiver: every request is recorded; `answer(path)` picks the response (status and
 * headers) for each request to a path, so a test scripts e.g. 500, 500, 200.
 */
export async function startWebhookReceiver() {
  const received: ReceivedRequest[] = [];
  const scripts = new Map<string, { status: number; headers?: Record<string, string> }[]>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const script = scripts.get(path);
      const next = script && script.length > 1 ? script.shift()! : (script?.[0] ?? { status: 200 });
      res.writeHead(next.status, next.headers).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    received,
    /** Responses for `path`, in order; the last one repeats. */
    script(path: string, responses: { status: number; headers?: Record<string, string> }[]) {
      scripts.set(path, [...responses]);
    },
    requestsTo(path: string) {
      return received.filter((request) => request.path === path);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
