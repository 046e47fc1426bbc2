import { randomUUID } from 'node:crypto';
import type { ServiceContext } from '../../context.js';
import { NotFoundError } from '../../errors.js';
import { assertCan, requireViewer } from '../../auth/authz.js';
import type { Prisma } from '../../db.js';
import { validate } from '../../validate.js';
import type { AgentDeltaEvent } from '../../pubsub.js';
import { findOwnConversation, titleFrom } from './conversations.js';
import { resolveModelEndpoint } from './model-config.js';
import { runTurn, type Reply, type ReplyListener } from './assistant.js';
import { publishDelta, publishMessageAdded, type AgentStreamSink } from './events.js';
import { messageInclude, toConversationResponse, toMessageResponse, type ConversationResponse, type MessageResponse } from './response.js';
import { sendMessageInput, type SendMessageInput } from './schemas.js';

/** Earlier exchanges given to the model: the latest this many messages, each cut to this many characters. */
const HISTORY_MESSAGES = 20;
const HISTORY_CHARS = 4000;

export interface SendMessageResult {
  conversation: ConversationResponse;
  /** Whether this send started the conversation. */
  created: boolean;
  userMessage: MessageResponse;
  assistantMessage: MessageResponse;
}

const json = (value: unknown) => value as Prisma.InputJsonValue;

/**
 * Stores the question, produces the reply (streamed to `sink` and to the conversation's subscribers as it is made),
 * stores the reply with its tool calls, and returns both. A reply the model could not give is stored as a message
 * of type `error`; the send itself only fails for the caller's mistakes (validation, access, unknown conversation).
 */
export async function sendMessage(
  ctx: ServiceContext,
  workspaceId: string,
  input: SendMessageInput,
  sink: AgentStreamSink = () => {},
): Promise<SendMessageResult> {
  const viewer = requireViewer(ctx);
  const { question, conversationId } = validate(sendMessageInput, input);
  await assertCan(ctx, 'agent:use', { workspaceId });
  const { prisma } = ctx.deps;

  const existing = conversationId ? await findOwnConversation(ctx, conversationId, workspaceId) : null;
  const history = existing ? await loadHistory(ctx, existing.id) : [];
  const asked = new Date();
  const { conversation, userRow } = await prisma
    .$transaction(async (tx) => {
      const conversation = existing
        ? await tx.conversation.update({ where: { id: existing.id }, data: { updatedAt: asked } })
        : await tx.conversation.create({ data: { workspaceId, createdById: viewer.id, title: titleFrom(question), createdAt: asked } });
      const userRow = await tx.message.create({
        data: { conversationId: conversation.id, role: 'user', content: question, messageType: 'text', createdAt: asked },
        include: messageInclude,
      });
      return { conversation, userRow };
    })
    .catch(goneAsNotFound);
  const userMessage = toMessageResponse(userRow);
  publishMessageAdded(ctx.deps, conversation.id, userRow.id);
  sink({ type: 'conversation', conversationId: conversation.id, title: conversation.title, created: !existing });
  sink({ type: 'message', message: userMessage });

  const replyId = randomUUID();
  const reply = await produceReply(ctx, workspaceId, question, history, listenerFor(ctx, conversation.id, replyId, sink));

  // Strictly after the question, so the two never tie on createdAt.
  const answered = new Date(Math.max(Date.now(), asked.getTime() + 1));
  const assistantRow = await prisma
    .$transaction(async (tx) => {
      const row = await tx.message.create({
        data: {
          id: replyId,
          conversationId: conversation.id,
          role: 'assistant',
          content: reply.content,
          messageType: reply.messageType,
          metadata: json(reply.metadata),
          parts: json(reply.parts),
          createdAt: answered,
          toolCalls: {
            create: reply.toolCalls.map((call, position) => ({
              toolCallId: call.toolCallId,
              toolName: call.toolName,
              args: json(call.args),
              result: json(call.result ?? {}),
              isError: call.isError,
              position,
            })),
          },
        },
        include: messageInclude,
      });
      await tx.conversation.update({ where: { id: conversation.id }, data: { updatedAt: answered } });
      return row;
    })
    // Deleted while the reply was being produced.
    .catch(goneAsNotFound);
  const assistantMessage = toMessageResponse(assistantRow);
  publishMessageAdded(ctx.deps, conversation.id, assistantRow.id);
  sink({ type: 'message', message: assistantMessage });
  sink({ type: 'done', conversationId: conversation.id, messageId: assistantRow.id });
  return { conversation: toConversationResponse({ ...conversation, updatedAt: answered }), created: !existing, userMessage, assistantMessage };
}

/** A conversation deleted meanwhile: its row is gone (P2025) or a message can no longer reference it (P2003). */
function goneAsNotFound(error: unknown): never {
  const code = (error as { code?: unknown } | null)?.code;
  throw code === 'P2003' || code === 'P2025' ? new NotFoundError('Conversation') : error;
}

async function loadHistory(ctx: ServiceContext, conversationId: string) {
  const rows = await ctx.deps.prisma.message.findMany({
    where: { conversationId, role: { in: ['user', 'assistant'] }, messageType: 'text' },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: HISTORY_MESSAGES,
    select: { role: true, content: true },
  });
  return rows.reverse().map((row) => ({ role: row.role as 'user' | 'assistant', content: row.content.slice(0, HISTORY_CHARS) }));
}

/** The reply, whatever happens: an unexpected failure is logged and answered as an error message. */
async function produceReply(
  ctx: ServiceContext,
  workspaceId: string,
  question: string,
  history: Awaited<ReturnType<typeof loadHistory>>,
  listener: ReplyListener,
): Promise<Reply> {
  try {
    const endpoint = await resolveModelEndpoint(ctx, workspaceId);
    return await runTurn({ ctx, workspaceId, question, history, endpoint }, listener);
  } catch (error) {
    ctx.deps.log.error({ err: error, reqId: ctx.requestId }, 'agent reply failed');
    const message = 'The assistant failed unexpectedly; please try again.';
    listener.error('INTERNAL', message);
    return {
      content: message,
      messageType: 'error',
      parts: [{ type: 'error', code: 'INTERNAL', message }],
      toolCalls: [],
      metadata: { error: { code: 'INTERNAL' } },
    };
  }
}

/** Each partial goes to the caller's stream and to the conversation's subscribers. */
function listenerFor(ctx: ServiceContext, conversationId: string, messageId: string, sink: AgentStreamSink): ReplyListener {
  const publish = (event: Omit<AgentDeltaEvent, 'conversationId' | 'messageId'>) => publishDelta(ctx.deps, { conversationId, messageId, ...event });
  return {
    text(delta) {
      publish({ kind: 'text', text: delta });
      sink({ type: 'text-delta', messageId, delta });
    },
    thinking(delta) {
      publish({ kind: 'thinking', text: delta });
      sink({ type: 'thinking-delta', messageId, delta });
    },
    toolCall(call) {
      publish({ kind: 'tool_call', toolCall: call });
      sink({ type: 'tool-call', messageId, ...call });
    },
    toolResult(call) {
      publish({ kind: 'tool_result', toolCall: call });
      sink({ type: 'tool-result', messageId, ...call });
    },
    error(code, message) {
      publish({ kind: 'error', text: message });
      sink({ type: 'error', messageId, code, message });
    },
  };
}
