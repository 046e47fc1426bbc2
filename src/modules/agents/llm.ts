import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { ScopeGuard } from '../../scanner/scope.js';
import { isScopeError } from '../../scanner/scope.js';

/**
 * A streaming client for OpenAI-compatible chat completions (`POST {baseUrl}/chat/completions`, `stream: true`,
 * function calling). node:http rather than fetch: the scope guard's lookup then runs when the socket connects,
 * against the address actually dialled (fetch would need a custom undici dispatcher), and redirects are never
 * followed, so the endpoint cannot bounce the request (and its key) elsewhere.
 */

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type ChatMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ChatToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface ChatTool {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export interface ChatRequest {
  baseUrl: string;
  model: string;
  apiKey: string | null;
  messages: ChatMessage[];
  tools?: ChatTool[];
  toolChoice?: 'auto' | 'none';
}

export interface ChatOptions {
  guard: ScopeGuard;
  /** Deadline for the whole exchange. */
  timeoutMs: number;
  /** Longest silence (connecting, or between two chunks). */
  idleTimeoutMs: number;
  /** The most bytes of response read before giving up. */
  maxBytes: number;
  onText(delta: string): void;
  onThinking?(delta: string): void;
}

export interface ChatCompletion {
  text: string;
  toolCalls: { id: string; name: string; arguments: string }[];
  finishReason: string | null;
}

export type ModelErrorCode = 'MODEL_HTTP_ERROR' | 'MODEL_BAD_RESPONSE' | 'MODEL_UNREACHABLE' | 'MODEL_TIMEOUT' | 'MODEL_OUT_OF_SCOPE';

/** An expected failure of the model endpoint; the message is safe to show (never the key). */
export class ModelError extends Error {
  constructor(
    readonly code: ModelErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ModelError';
  }
}

const USER_AGENT = 'Perimeter-Assistant/0.1';

/** Upstream error text, one line and short, with the key (and key-looking tokens) removed. */
function sanitize(text: string, apiKey: string | null): string {
  let clean = text;
  if (apiKey) clean = clean.split(apiKey).join('[redacted]');
  clean = clean.replace(/\b(sk|pk|rk|key|api|token)[-_][\w*.-]{6,}/gi, '[redacted]');
  clean = clean.replace(/\s+/g, ' ').trim();
  return clean.length > 300 ? `${clean.slice(0, 299)}…` : clean;
}

function upstreamMessage(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown };
    if (typeof parsed.error === 'string') return parsed.error;
    if (typeof parsed.error?.message === 'string') return parsed.error.message;
    if (typeof parsed.message === 'string') return parsed.message;
  } catch {
    // not JSON
  }
  return '';
}

/** Accumulates the chunks of a streamed completion: text, and tool calls whose arguments arrive in pieces per index. */
class CompletionAccumulator {
  text = '';
  finishReason: string | null = null;
  sawChoice = false;
  private readonly calls = new Map<number, { id: string; name: string; arguments: string }>();

  constructor(private readonly options: ChatOptions) {}

  /** One chunk (streamed) or one whole completion (`message` instead of `delta`). */
  add(chunk: unknown, apiKey: string | null): void {
    if (chunk === null || typeof chunk !== 'object') throw new ModelError('MODEL_BAD_RESPONSE', 'The model endpoint sent something that is not a completion');
    const error = (chunk as { error?: unknown }).error;
    if (error) {
      const detail = sanitize(typeof error === 'string' ? error : upstreamMessage(JSON.stringify({ error })), apiKey);
      throw new ModelError('MODEL_HTTP_ERROR', `The model endpoint reported an error${detail ? `: ${detail}` : ''}`);
    }
    const choices = (chunk as { choices?: unknown }).choices;
    if (!Array.isArray(choices)) return; // e.g. a usage-only chunk
    const choice = choices[0] as { delta?: Record<string, unknown>; message?: Record<string, unknown>; finish_reason?: unknown } | undefined;
    if (!choice) return;
    this.sawChoice = true;
    const delta = choice.delta ?? choice.message ?? {};
    if (typeof delta.content === 'string' && delta.content) {
      this.text += delta.content;
      this.options.onText(delta.content);
    }
    const thinking = typeof delta.reasoning_content === 'string' ? delta.reasoning_content : typeof delta.reasoning === 'string' ? delta.reasoning : '';
    if (thinking) this.options.onThinking?.(thinking);
    if (Array.isArray(delta.tool_calls)) {
      delta.tool_calls.forEach((raw: unknown, position: number) => {
        const call = raw as { index?: unknown; id?: unknown; function?: { name?: unknown; arguments?: unknown } };
        const index = typeof call.index === 'number' ? call.index : position;
        const entry = this.calls.get(index) ?? { id: '', name: '', arguments: '' };
        if (typeof call.id === 'string' && call.id) entry.id = call.id;
        if (typeof call.function?.name === 'string' && call.function.name && !entry.name) entry.name = call.function.name;
        if (typeof call.function?.arguments === 'string') entry.arguments += call.function.arguments;
        this.calls.set(index, entry);
      });
    }
    if (typeof choice.finish_reason === 'string') this.finishReason = choice.finish_reason;
  }

  result(): ChatCompletion {
    const toolCalls = [...this.calls.entries()].sort(([a], [b]) => a - b).map(([index, call]) => ({ ...call, id: call.id || `call_${index}` }));
    return { text: this.text, toolCalls, finishReason: this.finishReason };
  }
}

/** Splits a server-sent event stream into the data of each event (multi-line data joined by newlines). */
class SseParser {
  private buffer = '';
  private data: string[] = [];

  constructor(private readonly onData: (data: string) => void) {}

  push(text: string): void {
    this.buffer += text;
    for (;;) {
      const newline = this.buffer.search(/\r\n|\n|\r(?=[^\n])/);
      if (newline === -1) break;
      const line = this.buffer.slice(0, newline);
      this.buffer = this.buffer.slice(newline + (this.buffer.startsWith('\r\n', newline) ? 2 : 1));
      this.line(line);
    }
  }

  end(): void {
    if (this.buffer) this.line(this.buffer.replace(/\r$/, ''));
    this.buffer = '';
    this.dispatch();
  }

  private line(line: string): void {
    if (line === '') {
      this.dispatch();
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'data') this.data.push(value);
  }

  private dispatch(): void {
    if (!this.data.length) return;
    const data = this.data.join('\n');
    this.data = [];
    this.onData(data);
  }
}

export async function streamChatCompletion(request: ChatRequest, options: ChatOptions): Promise<ChatCompletion> {
  // The path goes after the base's path; a query on the base (e.g. an api-version) stays a query.
  const url = new URL(request.baseUrl);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/chat/completions`;
  const isHttps = url.protocol === 'https:';
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
  let connect: { host: string; lookup?: net.LookupFunction };
  try {
    // A blocked IP literal throws now; a name is checked by the guard's lookup when the socket connects.
    connect = options.guard.connectOptions(hostname);
  } catch (error) {
    throw isScopeError(error) ? new ModelError('MODEL_OUT_OF_SCOPE', (error as Error).message) : error;
  }
  const payload = JSON.stringify({
    model: request.model,
    messages: request.messages,
    stream: true,
    ...(request.tools?.length ? { tools: request.tools, tool_choice: request.toolChoice ?? 'auto' } : {}),
  });
  const headers: Record<string, string> = {
    host: url.host,
    'content-type': 'application/json',
    accept: 'text/event-stream, application/json',
    'content-length': String(Buffer.byteLength(payload)),
    'user-agent': USER_AGENT,
  };
  if (request.apiKey) headers.authorization = `Bearer ${request.apiKey}`;

  const req = (isHttps ? https : http).request({
    ...connect,
    port: Number(url.port) || (isHttps ? 443 : 80),
    method: 'POST',
    path: `${url.pathname}${url.search}`,
    headers,
    setHost: false,
    // A fresh socket per request: a pooled one could have been opened under another scope decision.
    agent: false,
    servername: isHttps && !net.isIP(hostname) ? hostname : undefined,
  });
  // A timeout destroys the request; the read then fails with a socket error, and this says why.
  let timedOut: ModelError | undefined;
  const abort = (message: string) => {
    timedOut ??= new ModelError('MODEL_TIMEOUT', message);
    req.destroy(timedOut);
  };
  const deadline = setTimeout(() => abort(`The model endpoint did not finish within ${Math.round(options.timeoutMs / 1000)} s`), options.timeoutMs);
  req.setTimeout(options.idleTimeoutMs, () => abort(`The model endpoint was silent for ${Math.round(options.idleTimeoutMs / 1000)} s`));
  try {
    const response = await new Promise<http.IncomingMessage>((resolve, reject) => {
      req.once('response', resolve);
      req.on('error', reject);
      req.end(payload);
    });
    return await readCompletion(response, request.apiKey, options);
  } catch (error) {
    if (timedOut) throw timedOut;
    if (error instanceof ModelError) throw error;
    if (isScopeError(error)) throw new ModelError('MODEL_OUT_OF_SCOPE', (error as Error).message);
    const code = (error as { code?: unknown }).code;
    throw new ModelError('MODEL_UNREACHABLE', `The model endpoint could not be reached${typeof code === 'string' ? ` (${code})` : ''}`);
  } finally {
    clearTimeout(deadline);
    req.destroy();
  }
}

async function readCompletion(response: http.IncomingMessage, apiKey: string | null, options: ChatOptions): Promise<ChatCompletion> {
  const status = response.statusCode ?? 0;
  const contentType = String(response.headers['content-type'] ?? '').toLowerCase();
  const decoder = new TextDecoder();
  let bytes = 0;
  async function* text(limit: number): AsyncGenerator<string> {
    for await (const chunk of response as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      if (bytes > limit) throw new ModelError('MODEL_BAD_RESPONSE', `The model endpoint sent more than ${limit} bytes`);
      yield decoder.decode(chunk, { stream: true });
    }
    yield decoder.decode();
  }
  async function whole(limit: number): Promise<string> {
    let body = '';
    for await (const piece of text(limit)) body += piece;
    return body;
  }

  if (status < 200 || status >= 300) {
    let body = '';
    try {
      body = await whole(16_384);
    } catch {
      // a status is enough
    }
    const detail = sanitize(upstreamMessage(body), apiKey);
    throw new ModelError('MODEL_HTTP_ERROR', `The model endpoint answered HTTP ${status}${detail ? `: ${detail}` : ''}`);
  }

  const completion = new CompletionAccumulator(options);
  if (contentType.includes('text/event-stream')) {
    let done = false;
    const parser = new SseParser((data) => {
      if (done) return;
      if (data.trim() === '[DONE]') {
        done = true;
        return;
      }
      let chunk: unknown;
      try {
        chunk = JSON.parse(data);
      } catch {
        throw new ModelError('MODEL_BAD_RESPONSE', 'The model endpoint sent a stream event that is not JSON');
      }
      completion.add(chunk, apiKey);
    });
    for await (const piece of text(options.maxBytes)) {
      parser.push(piece);
      if (done) break;
    }
    if (!done) parser.end();
  } else if (contentType.includes('json')) {
    // A server that ignores `stream: true` answers one whole completion.
    let parsed: unknown;
    try {
      parsed = JSON.parse(await whole(options.maxBytes));
    } catch (error) {
      if (error instanceof ModelError) throw error;
      throw new ModelError('MODEL_BAD_RESPONSE', 'The model endpoint answered with malformed JSON');
    }
    completion.add(parsed, apiKey);
  } else {
    throw new ModelError('MODEL_BAD_RESPONSE', `The model endpoint answered ${contentType || 'without a content type'}, not a completion`);
  }
  if (!completion.sawChoice) throw new ModelError('MODEL_BAD_RESPONSE', 'The model endpoint ended without an answer');
  return completion.result();
}
