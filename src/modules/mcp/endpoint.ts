import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { AppDeps } from '../../context.js';
import { AppError, errorBody, NotFoundError } from '../../errors.js';
import { clientAddress } from '../../auth/client-address.js';
import { sendError, toHeaders } from '../../rest/handler.js';
import { authenticateWorkspaceApiKey, serviceContextForKey, workspaceKeyFromHeaders, type WorkspaceKeyPrincipal } from '../workspace-api-keys/service.js';
import { buildMcpServer } from './server.js';

/**
 * Our MCP endpoint, authenticated by a workspace API key (x-service-api-key header, or `Bearer pwk_…`):
 * - `POST /api/v1/api/mcp`: streamable HTTP, stateless (a new server and transport per request, JSON
 *   responses). GET and DELETE answer 405: there is no session to stream on or to end.
 * - `GET /api/v1/api/mcp/sse` + `POST /api/v1/api/mcp/messages?sessionId=…`: the older HTTP+SSE transport.
 *   Its sessions live in this process (a deployment with several instances needs sticky sessions for it);
 *   every POST presents the key again and must be the session's key.
 */
export const MCP_PATH = '/api/v1/api/mcp';
export const MCP_SSE_PATH = `${MCP_PATH}/sse`;
export const MCP_MESSAGES_PATH = `${MCP_PATH}/messages`;
/** Open SSE sessions per process; more are refused with 503 rather than exhausting sockets. */
const MAX_SSE_SESSIONS = 200;
/** Proxies close idle streams: a comment line every so often keeps an SSE session open. */
const SSE_KEEP_ALIVE_MS = 15_000;

interface SseSession {
  transport: SSEServerTransport;
  server: McpServer;
  keyId: string;
  keepAlive: NodeJS.Timeout;
}

function jsonRpcError(res: ServerResponse, status: number, code: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

async function readJson(req: IncomingMessage, limit: number): Promise<{ ok: true; body: unknown } | { ok: false }> {
  if (Number(req.headers['content-length'] ?? 0) > limit) throw new AppError('PAYLOAD_TOO_LARGE', `The request body is larger than ${limit} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new AppError('PAYLOAD_TOO_LARGE', `The request body is larger than ${limit} bytes`);
    chunks.push(chunk);
  }
  try {
    return { ok: true, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
  } catch {
    return { ok: false };
  }
}

export interface McpEndpoint {
  /** Serves the request when `path` is one of ours; false otherwise. */
  handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean>;
  /** Ends every open SSE session (at shutdown). */
  close(): Promise<void>;
}

export function createMcpEndpoint(deps: AppDeps): McpEndpoint {
  const sessions = new Map<string, SseSession>();
  const bodyLimit = deps.env.BODY_LIMIT_BYTES;

  function contextFactory(req: IncomingMessage, principal: WorkspaceKeyPrincipal) {
    const requestId = typeof req.headers['x-request-id'] === 'string' ? req.headers['x-request-id'] : randomUUID();
    const clientIp = clientAddress(req, deps.env);
    // A fresh context per tool call: its role memo never outlives the call.
    return () => serviceContextForKey(deps, principal, { requestId, clientIp });
  }

  async function streamable(req: IncomingMessage, res: ServerResponse, principal: WorkspaceKeyPrincipal): Promise<void> {
    if (req.method !== 'POST')
      return jsonRpcError(res, 405, -32000, 'Method not allowed: this endpoint is stateless, POST JSON-RPC messages to it', { allow: 'POST' });
    const parsed = await readJson(req, bodyLimit);
    if (!parsed.ok) return jsonRpcError(res, 400, -32700, 'Parse error: the body is not valid JSON');
    const server = buildMcpServer(contextFactory(req, principal), deps.log);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.once('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, parsed.body);
  }

  async function openSse(req: IncomingMessage, res: ServerResponse, principal: WorkspaceKeyPrincipal): Promise<void> {
    if (req.method !== 'GET') return sendError(res, errorBody(new AppError('METHOD_NOT_ALLOWED', 'Open the SSE stream with GET')), { allow: 'GET' });
    if (sessions.size >= MAX_SSE_SESSIONS)
      return sendError(res, errorBody(new AppError('UNAVAILABLE', 'Too many open MCP SSE sessions; use the streamable HTTP endpoint')));
    const transport = new SSEServerTransport(MCP_MESSAGES_PATH, res);
    const server = buildMcpServer(contextFactory(req, principal), deps.log);
    const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), SSE_KEEP_ALIVE_MS);
    keepAlive.unref();
    sessions.set(transport.sessionId, { transport, server, keyId: principal.keyId, keepAlive });
    res.once('close', () => {
      clearInterval(keepAlive);
      sessions.delete(transport.sessionId);
      void server.close();
    });
    await server.connect(transport);
  }

  async function postMessage(req: IncomingMessage, res: ServerResponse, principal: WorkspaceKeyPrincipal): Promise<void> {
    if (req.method !== 'POST') return sendError(res, errorBody(new AppError('METHOD_NOT_ALLOWED', 'POST messages here')), { allow: 'POST' });
    const sessionId = new URL(req.url ?? '/', 'http://localhost').searchParams.get('sessionId') ?? '';
    const session = sessions.get(sessionId);
    // Another key's session answers like no session: a key cannot talk into a stream it did not open.
    if (!session || session.keyId !== principal.keyId) return sendError(res, errorBody(new NotFoundError('MCP session')));
    const parsed = await readJson(req, bodyLimit);
    if (!parsed.ok) return jsonRpcError(res, 400, -32700, 'Parse error: the body is not valid JSON');
    await session.transport.handlePostMessage(req, res, parsed.body);
  }

  return {
    async handle(req, res, path) {
      if (path !== MCP_PATH && path !== MCP_SSE_PATH && path !== MCP_MESSAGES_PATH) return false;
      try {
        const principal = await authenticateWorkspaceApiKey(deps, workspaceKeyFromHeaders(toHeaders(req)));
        if (path === MCP_PATH) await streamable(req, res, principal);
        else if (path === MCP_SSE_PATH) await openSse(req, res, principal);
        else await postMessage(req, res, principal);
      } catch (error) {
        if (!(error instanceof AppError) || res.headersSent) throw error;
        sendError(res, errorBody(error));
      }
      return true;
    },
    async close() {
      for (const session of sessions.values()) {
        clearInterval(session.keepAlive);
        // Closing the server closes its transport, which ends the SSE response.
        await session.server.close().catch(() => undefined);
      }
      sessions.clear();
    },
  };
}
