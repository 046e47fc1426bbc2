import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ScopeGuard } from '../../scanner/scope.js';
import { createGuardedFetch } from './guarded-fetch.js';
import type { McpTransport } from './schemas.js';

/** A connectivity check never runs longer than this, whatever the configured timeout (a request waits for it). */
export const MAX_PING_SECONDS = 30;
const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;
const MAX_TOOL_PAGES = 10;
const MAX_TOOLS = 500;
const MAX_ERROR_LENGTH = 500;

export interface McpToolSummary {
  name: string;
  description: string | null;
  /** Whether the configuration's allowed_tools lets it through (an empty list allows every tool). */
  allowed: boolean;
}

export type McpPingResult =
  | { ok: true; latencyMs: number; server: { name: string; version: string } | null; tools: McpToolSummary[] }
  | { ok: false; latencyMs: number; error: string };

export interface ProbeOptions {
  url: string;
  transport: McpTransport;
  headers: Record<string, string>;
  allowedTools: readonly string[];
  timeoutMs: number;
  guard: ScopeGuard;
}

/**
 * Really connects to an MCP server with the SDK's client (initialize, then tools/list), over the configured
 * transport and headers, through a fetch that only dials in-scope addresses. Every failure is a result,
 * never a throw: unreachable, refused, out of scope, not MCP, too slow.
 */
export async function probeMcpServer(options: ProbeOptions): Promise<McpPingResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const deadline = new AbortController();
  const fetch = createGuardedFetch({ guard: options.guard, signal: deadline.signal, maxResponseBytes: MAX_RESPONSE_BYTES });
  const url = new URL(options.url);
  const requestInit = { headers: options.headers };
  const transport =
    options.transport === 'sse'
      ? new SSEClientTransport(url, { requestInit, fetch })
      : new StreamableHTTPClientTransport(url, {
          requestInit,
          fetch,
          reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 },
        });
  const client = new Client({ name: 'perimeter-mcp-ping', version: '1.0.0' }, { capabilities: {} });
  // Transport errors after the answer (e.g. the stream closing) are not the check's business.
  client.onerror = () => undefined;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      deadline.abort();
      reject(new Error(`No answer within ${options.timeoutMs / 1000} s`));
    }, options.timeoutMs);
  });
  const requestOptions = { timeout: options.timeoutMs, signal: deadline.signal };
  try {
    const tools = await Promise.race([
      (async () => {
        await client.connect(transport, requestOptions);
        return listAllTools(client, requestOptions);
      })(),
      timedOut,
    ]);
    const allowed = new Set(options.allowedTools);
    const version = client.getServerVersion();
    return {
      ok: true,
      latencyMs: elapsed(),
      server: version ? { name: version.name, version: version.version } : null,
      tools: tools.map((tool) => ({ name: tool.name, description: tool.description ?? null, allowed: allowed.size === 0 || allowed.has(tool.name) })),
    };
  } catch (error) {
    return { ok: false, latencyMs: elapsed(), error: describe(error) };
  } finally {
    clearTimeout(timer);
    deadline.abort();
    await client.close().catch(() => undefined);
  }
}

async function listAllTools(client: Client, requestOptions: { timeout: number; signal: AbortSignal }) {
  const tools: { name: string; description?: string }[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_TOOL_PAGES && tools.length < MAX_TOOLS; page += 1) {
    const result = await client.listTools(cursor ? { cursor } : undefined, requestOptions);
    tools.push(...result.tools);
    cursor = result.nextCursor;
    if (!cursor) break;
  }
  return tools.slice(0, MAX_TOOLS);
}

/** One line for the client: the cause's message (scope refusals name SCAN_ALLOWED_NETWORKS), bounded. */
function describe(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current && depth < 3; depth += 1) {
    const message = current instanceof Error ? current.message : String(current);
    if (message && !parts.some((part) => part.includes(message))) parts.push(message);
    current = current instanceof Error ? current.cause : undefined;
  }
  // The SDK's transport errors carry the HTTP status as a numeric code.
  const status = (error as { code?: unknown } | null)?.code;
  const prefix = typeof status === 'number' && status >= 100 && status <= 599 ? `HTTP ${status}: ` : '';
  const text = prefix + (parts.join(': ') || 'The connection failed');
  return text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH - 1)}…` : text;
}
