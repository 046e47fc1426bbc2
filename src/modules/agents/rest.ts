import { z } from 'zod';
import { router } from '../../rest/trpc.js';
import { adminProcedure, requestHeaders, workspaceProcedure } from '../../rest/procedures.js';
import { writtenByStatement } from '../../rest/served-procedure.js';
import { dateTime, idOutput, idParam, pageSchema, uuidParam } from '../../rest/schemas.js';
import { AppError } from '../../errors.js';
import * as conversations from './conversations.js';
import * as modelConfig from './model-config.js';
import { sendMessage } from './send.js';
import {
  createConversationInput,
  listConversationsInput,
  listMessagesInput,
  MESSAGE_ROLES,
  MESSAGE_TYPES,
  putModelConfigInput,
  renameConversationInput,
  sendMessageInput,
} from './schemas.js';

const conversationSchema = z
  .object({
    id: z.string(),
    nodeId: z.string().meta({ description: 'Its GraphQL global id (`id` there), for node(id:) and the subscriptions; id arguments take either.' }),
    workspaceId: z.string(),
    title: z.string(),
    createdById: z.string(),
    createdAt: dateTime,
    updatedAt: dateTime,
  })
  .meta({ id: 'AgentConversation', description: 'A conversation with the assistant; only its creator sees it.' });

const toolCallSchema = z
  .object({
    toolCallId: z.string(),
    toolName: z.string(),
    args: z.record(z.string(), z.unknown()).meta({ description: 'The arguments the tool was called with.' }),
    result: z.unknown().meta({ description: 'What the tool returned (a JSON object; `{error}` when isError).' }),
    isError: z.boolean(),
  })
  .meta({ id: 'AgentToolCall' });

const messageSchema = z
  .object({
    id: z.string(),
    conversationId: z.string(),
    role: z.enum(MESSAGE_ROLES).meta({ description: '`user` for questions, `assistant` for replies; `system` and `tool` are reserved.' }),
    content: z.string(),
    messageType: z
      .enum(MESSAGE_TYPES)
      .meta({ description: '`text` for questions and answers, `error` when the model could not answer; `thinking` and `tool-call` are reserved.' }),
    createdAt: dateTime,
    metadata: z.record(z.string(), z.unknown()).meta({ description: 'For replies: `source` (`model` or `fallback`), model, rounds, error code.' }),
    parts: z
      .array(z.record(z.string(), z.unknown()))
      .meta({ description: 'The reply in order: `text`, `thinking`, `tool-call`, `tool-result`, `error` parts.' }),
    toolCalls: z.array(toolCallSchema),
  })
  .meta({ id: 'AgentMessage' });

const streamEventSchema = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('conversation'), conversationId: z.string(), title: z.string(), created: z.boolean() }),
    z.object({ type: z.literal('message'), message: messageSchema }),
    z.object({ type: z.literal('text-delta'), messageId: z.string(), delta: z.string() }),
    z.object({ type: z.literal('thinking-delta'), messageId: z.string(), delta: z.string() }),
    z.object({ type: z.literal('tool-call'), messageId: z.string(), toolCallId: z.string(), toolName: z.string(), args: z.record(z.string(), z.unknown()) }),
    z.object({
      type: z.literal('tool-result'),
      messageId: z.string(),
      toolCallId: z.string(),
      toolName: z.string(),
      result: z.unknown(),
      isError: z.boolean(),
    }),
    z.object({ type: z.literal('error'), messageId: z.string().nullable(), code: z.string(), message: z.string() }),
    z.object({ type: z.literal('done'), conversationId: z.string(), messageId: z.string() }),
  ])
  .meta({ id: 'AgentStreamEvent', description: 'The `data` of one server-sent event; its `event:` field repeats `type`.' });

const modelConfigSchema = z
  .object({
    scope: z.enum(['workspace', 'instance']),
    workspaceId: z.string().nullable(),
    baseUrl: z.string(),
    model: z.string(),
    hasApiKey: z.boolean().meta({ description: 'Whether a key is stored. The key itself is never returned.' }),
    apiKeyHint: z.string().nullable().meta({ description: 'First three and last four characters of a key of 16 or more, to recognise it.' }),
    updatedById: z.string().nullable(),
    createdAt: dateTime,
    updatedAt: dateTime,
  })
  .meta({ id: 'AgentModelConfig' });

const tags = ['Agents'];

export const STREAM_DESCRIPTION =
  'Answers `text/event-stream`: one event per step, `event: <type>` and `data: <JSON>` (AgentStreamEvent): `conversation`, ' +
  '`message` (the stored question), `text-delta` / `thinking-delta`, `tool-call` and `tool-result` for each tool the assistant runs, ' +
  '`error` when the model fails, `message` (the stored reply), then `done`, after which the stream ends. The `X-Conversation-Id` ' +
  'header names the conversation. Errors before the stream starts (401, 400, 404) answer JSON as everywhere else.';

export const agentsRest = router({
  listConversations: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: '/api/agents/conversations', tags, summary: "The caller's conversations in the workspace", requestHeaders } })
    .input(listConversationsInput)
    .output(pageSchema(conversationSchema))
    .query(({ ctx, input }) => conversations.listConversations(ctx.svc, ctx.workspaceId, input)),

  createConversation: workspaceProcedure
    .meta({ successStatus: 201, openapi: { method: 'POST', path: '/api/agents/conversations', tags, summary: 'Start an empty conversation', requestHeaders } })
    .input(createConversationInput)
    .output(conversationSchema)
    .mutation(({ ctx, input }) => conversations.createConversation(ctx.svc, ctx.workspaceId, input)),

  getModelConfig: workspaceProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/agents/model-config', tags, summary: "The workspace's own language model (404 when it has none)", requestHeaders },
    })
    .input(z.object({}).strict().optional())
    .output(modelConfigSchema)
    .query(({ ctx }) => modelConfig.getWorkspaceModelConfig(ctx.svc, ctx.workspaceId)),

  putModelConfig: workspaceProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: '/api/agents/model-config',
        tags,
        summary: "Set the workspace's language model (owners)",
        description:
          'An OpenAI-compatible chat-completions endpoint. Its host must not resolve to loopback, private or metadata addresses unless SCAN_ALLOWED_NETWORKS allows them.',
        requestHeaders,
      },
    })
    .input(putModelConfigInput)
    .output(modelConfigSchema)
    .mutation(({ ctx, input }) => modelConfig.putWorkspaceModelConfig(ctx.svc, ctx.workspaceId, input)),

  deleteModelConfig: workspaceProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/api/agents/model-config',
        tags,
        summary: "Remove the workspace's language model (owners); the instance's applies again",
        requestHeaders,
      },
    })
    .input(z.object({}).strict().optional())
    .output(idOutput)
    .mutation(({ ctx }) => modelConfig.deleteWorkspaceModelConfig(ctx.svc, ctx.workspaceId)),

  getInstanceModelConfig: adminProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/agents/model-config/instance', tags, summary: 'The instance-wide language model (instance administrators)' },
    })
    .input(z.object({}).strict().optional())
    .output(modelConfigSchema)
    .query(({ ctx }) => modelConfig.getInstanceModelConfig(ctx.svc)),

  putInstanceModelConfig: adminProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: '/api/agents/model-config/instance',
        tags,
        summary: 'Set the language model of workspaces without their own (instance administrators)',
      },
    })
    .input(putModelConfigInput)
    .output(modelConfigSchema)
    .mutation(({ ctx, input }) => modelConfig.putInstanceModelConfig(ctx.svc, input)),

  deleteInstanceModelConfig: adminProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/api/agents/model-config/instance',
        tags,
        summary: 'Remove the instance-wide language model (instance administrators)',
      },
    })
    .input(z.object({}).strict().optional())
    .output(idOutput)
    .mutation(({ ctx }) => modelConfig.deleteInstanceModelConfig(ctx.svc)),

  sendMessage: workspaceProcedure
    .meta({
      successStatus: 201,
      openapi: {
        method: 'POST',
        path: '/api/agents/messages',
        tags,
        summary: 'Ask the assistant; answers the stored reply (with its conversationId) once it is complete',
        description:
          'Without conversationId a new conversation is started, titled after the question. A reply the model could not give is stored and returned with messageType `error`.',
        requestHeaders,
      },
    })
    .input(sendMessageInput)
    .output(messageSchema)
    .mutation(async ({ ctx, input }) => (await sendMessage(ctx.svc, ctx.workspaceId, input)).assistantMessage),

  // Served by the SSE route (stream-route.ts) before the REST handler; declared here for the OpenAPI document.
  streamMessage: workspaceProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/agents/messages/stream',
        tags,
        summary: 'Ask the assistant and receive the reply as server-sent events',
        description: STREAM_DESCRIPTION,
        requestHeaders,
      },
    })
    .input(sendMessageInput)
    .output(streamEventSchema)
    .mutation((): never => {
      throw new AppError('INTERNAL', 'The stream is served by its own route');
    }),

  getConversation: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: '/api/agents/conversations/{id}', tags, summary: "One of the caller's conversations", requestHeaders } })
    .input(idParam)
    .output(conversationSchema)
    .query(({ ctx, input }) => conversations.getConversation(ctx.svc, ctx.workspaceId, input.id)),

  renameConversation: workspaceProcedure
    .meta({ openapi: { method: 'PATCH', path: '/api/agents/conversations/{id}', tags, summary: 'Rename a conversation', requestHeaders } })
    .input(renameConversationInput.extend({ id: uuidParam }))
    .output(conversationSchema)
    .mutation(({ ctx, input: { id, ...body } }) => conversations.renameConversation(ctx.svc, ctx.workspaceId, id, body)),

  deleteConversation: workspaceProcedure
    .meta({ openapi: { method: 'DELETE', path: '/api/agents/conversations/{id}', tags, summary: 'Delete a conversation and its messages', requestHeaders } })
    .input(idParam)
    .output(idOutput)
    .mutation(({ ctx, input }) => conversations.deleteConversation(ctx.svc, ctx.workspaceId, input.id)),

  listMessages: workspaceProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/agents/conversations/{id}/messages', tags, summary: 'The messages of a conversation, paged', requestHeaders },
    })
    .input(listMessagesInput.extend({ id: uuidParam }))
    .output(pageSchema(messageSchema))
    .query(({ ctx, input: { id, ...query } }) => writtenByStatement(conversations.listMessages(ctx.svc, ctx.workspaceId, id, query))),
});
