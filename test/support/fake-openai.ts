import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An OpenAI-compatible chat-completions server on loopback for the assistant's tests. Each request is recorded
 * and answered by the test's handler: a streamed completion (text and/or tool calls), an HTTP error, or raw bytes.
 */
export interface FakeRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: {
    model: string;
    stream?: boolean;
    tool_choice?: string;
    tools?: { type: string; function: { name: string; description: string; parameters: Record<string, unknown> } }[];
    messages: { role: string; content: string | null; tool_calls?: { id: string; function: { name: string; arguments: string } }[]; tool_call_id?: string }[];
  };
}

export type FakeReply =
  /** Server-sent events: each chunk as `data: <json>`, then `data: [DONE]` unless `done: false`. */
  | { kind: 'stream'; chunks: unknown[]; done?: boolean; delayMs?: number }
  | { kind: 'status'; status: number; body: string; contentType?: string }
  | { kind: 'raw'; contentType: string; body: string };

export type FakeHandler = (request: FakeRequest, index: number) => FakeReply | Promise<FakeReply>;

export interface FakeOpenAI {
  /** The base URL to configure (requests go to `${url}/chat/completions`). */
  url: string;
  requests: FakeRequest[];
  handle(handler: FakeHandler): void;
  close(): Promise<void>;
}

function chunk(delta: Record<string, unknown>, finishReason: string | null = null) {
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: 'fake-model',
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
}

/** A text answer in pieces of `size` characters, then a stop chunk. */
export function textChunks(text: string, size = 7): unknown[] {
  const pieces: unknown[] = [chunk({ role: 'assistant', content: '' })];
  for (let at = 0; at < text.length; at += size) pieces.push(chunk({ content: text.slice(at, at + size) }));
  pieces.push(chunk({}, 'stop'));
  return pieces;
}

/** Tool calls the way OpenAI streams them: id and name first, then the arguments in several pieces, per index. */
export function toolCallChunks(calls: { id: string; name: string; args: Record<string, unknown> | string }[]): unknown[] {
  const pieces: unknown[] = [chunk({ role: 'assistant', content: null })];
  calls.forEach((call, index) => {
    pieces.push(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }));
    const args = typeof call.args === 'string' ? call.args : JSON.stringify(call.args);
    const third = Math.ceil(args.length / 3) || 1;
    for (let at = 0; at < args.length; at += third) pieces.push(chunk({ tool_calls: [{ index, function: { arguments: args.slice(at, at + third) } }] }));
  });
  pieces.push(chunk({}, 'tool_calls'));
  return pieces;
}

export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  const requests: FakeRequest[] = [];
  let handler: FakeHandler = () => ({ kind: 'stream', chunks: textChunks('Hello from the fake model.') });
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const piece of req) chunks.push(piece as Buffer);
    let body: FakeRequest['body'];
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      res.writeHead(400).end('{"error":{"message":"bad json"}}');
      return;
    }
    const request: FakeRequest = { path: req.url ?? '/', headers: req.headers, body };
    requests.push(request);
    const reply = await handler(request, requests.length - 1);
    if (reply.kind === 'status') {
      res.writeHead(reply.status, { 'content-type': reply.contentType ?? 'application/json' }).end(reply.body);
      return;
    }
    if (reply.kind === 'raw') {
      res.writeHead(200, { 'content-type': reply.contentType }).end(reply.body);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const [index, piece] of reply.chunks.entries()) {
      const frame = `data: ${JSON.stringify(piece)}\n\n`;
      // Odd frames arrive split in two writes (and with CRLF), as real proxies deliver them.
      if (index % 2) {
        const crlf = frame.replace(/\n/g, '\r\n');
        res.write(crlf.slice(0, 9));
        await new Promise((resolve) => setTimeout(resolve, 1));
        res.write(crlf.slice(9));
      } else {
        res.write(frame);
      }
      if (reply.delayMs) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
    }
    if (reply.done !== false) res.write('data: [DONE]\n\n');
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    handle(next) {
      handler = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
