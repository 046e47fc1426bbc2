import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ServiceContext } from '../../context.js';
import { AppError, errorBody } from '../../errors.js';
import { requireViewer, requireWorkspaceId } from '../../auth/authz.js';
import { readJsonBody, sendError } from '../../rest/handler.js';
import { sendMessage } from './send.js';
import type { AgentStreamEvent } from './events.js';
import { entityIdsOf, recordRequestWrite } from '../audit/record.js';

/** POST /api/v1/api/agents/messages/stream. tRPC answers JSON only, hence a plain node handler beside the REST one. */
export const AGENT_STREAM_ROUTE = '/api/v1/api/agents/messages/stream';

const HEARTBEAT_MS = 15_000;

/**
 * Authenticates and validates like every REST route (errors before the first event answer JSON with their status),
 * then streams the send as server-sent events and ends the response after `done`. A client that goes away stops
 * receiving; the reply is still produced and stored.
 */
export async function serveAgentStream(ctx: ServiceContext, req: IncomingMessage, res: ServerResponse, bodyLimit: number): Promise<void> {
  let started = false;
  let heartbeat: NodeJS.Timeout | undefined;
  const open = () => !res.destroyed && !res.writableEnded;
  // Served beside the REST handler, so audited here: the conversation and reply ids, and how the send ended.
  let outcome = 'success';
  let done: unknown;
  let audited = false;
  // Recorded before the response ends (an error answer included), so a client that reads the log next sees it.
  const audit = async () => {
    if (audited) return;
    audited = true;
    await recordRequestWrite(ctx, { surface: 'rest', operation: `POST /api/agents/messages/stream`, entityIds: entityIdsOf(done), outcome });
  };
  const write = (event: AgentStreamEvent) => {
    if (event.type === 'done') done = { conversationId: event.conversationId, messageId: event.messageId };
    if (!started) {
      started = true;
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
        ...(event.type === 'conversation' ? { 'x-conversation-id': event.conversationId } : {}),
      });
      res.socket?.setNoDelay(true);
      // Comments keep proxies from closing a stream that is quiet while tools run.
      heartbeat = setInterval(() => open() && res.write(': keep-alive\n\n'), HEARTBEAT_MS);
    }
    if (open()) res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
  };
  try {
    requireViewer(ctx);
    const workspaceId = requireWorkspaceId(ctx);
    if (!/^application\/([\w.+-]+\+)?json\b/i.test(req.headers['content-type'] ?? '')) {
      throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send the request body as application/json');
    }
    const body = await readJsonBody(req, bodyLimit);
    await sendMessage(ctx, workspaceId, (body ?? {}) as never, write);
  } catch (error) {
    outcome = error instanceof AppError ? error.code : 'INTERNAL';
    if (!started) {
      await audit();
      if (error instanceof AppError) return sendError(res, errorBody(error));
      throw error;
    }
    ctx.deps.log.error({ err: error, reqId: ctx.requestId }, 'agent stream failed');
    write({
      type: 'error',
      messageId: null,
      code: error instanceof AppError ? error.code : 'INTERNAL',
      message: error instanceof AppError ? error.message : 'Internal server error',
    });
  } finally {
    clearInterval(heartbeat);
    await audit();
    if (started && open()) res.end();
  }
}
