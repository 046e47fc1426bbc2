import { builder } from '../../graphql/builder.js';
import { rowFirst } from '../../graphql/row-first-plugin.js';
import { rechecked } from '../../graphql/live-access.js';
import { decodeId, decodeQueryId } from '../../graphql/ids.js';
import type { AgentDeltaEvent } from '../../pubsub.js';
import { WorkspaceRef } from '../workspaces/graphql.js';
import * as conversations from './conversations.js';
import * as modelConfig from './model-config.js';
import { sendMessage, type SendMessageResult } from './send.js';
import { MESSAGE_ROLES, type MessageType } from './schemas.js';
import type { ToolCallResponse } from './response.js';

const MessageRoleEnum = builder.enumType('MessageRole', { values: MESSAGE_ROLES });
const MessageTypeEnum = builder.enumType('MessageType', {
  description: '`text` for questions and answers, `error` when the model could not answer; `thinking` and `tool_call` are reserved.',
  values: { text: { value: 'text' }, thinking: { value: 'thinking' }, error: { value: 'error' }, tool_call: { value: 'tool-call' } } as const,
});

const ToolCallRef = builder.objectRef<ToolCallResponse>('AgentToolCall').implement({
  description: 'A tool the assistant ran while answering, with what it returned.',
  fields: (t) => ({
    toolCallId: t.exposeString('toolCallId'),
    toolName: t.exposeString('toolName'),
    args: t.field({ type: 'JSON', resolve: (call) => call.args }),
    result: t.field({ type: 'JSON', nullable: true, resolve: (call) => call.result ?? null }),
    isError: t.exposeBoolean('isError'),
  }),
});

const MessageRef = builder.prismaObject('Message', {
  description: 'One message of a conversation: a question, or the reply with the tools it ran.',
  fields: (t) => ({
    id: t.exposeID('id'),
    conversationId: t.exposeString('conversationId'),
    role: t.field({ type: MessageRoleEnum, resolve: (message) => message.role as (typeof MESSAGE_ROLES)[number] }),
    content: t.exposeString('content'),
    messageType: t.field({ type: MessageTypeEnum, resolve: (message) => message.messageType as MessageType }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    metadata: t.expose('metadata', { type: 'JSON' }),
    parts: t.expose('parts', { type: 'JSON', description: 'The reply in order: text, thinking, tool-call, tool-result and error parts.' }),
    toolCalls: t.field({
      type: [ToolCallRef],
      select: { toolCalls: { orderBy: { position: 'asc' } } },
      resolve: (message) => message.toolCalls as ToolCallResponse[],
      extensions: rowFirst((message: { toolCalls?: unknown[] }) => message.toolCalls),
    }),
  }),
});

export const ConversationRef = builder.prismaNode('Conversation', {
  id: { field: 'id' },
  description: 'A conversation with the assistant. Only the person who started it can see it.',
  findUnique: (id, ctx) => conversations.visibleConversationWhereUnique(ctx, id),
  nullable: true,
  fields: (t) => ({
    databaseId: t.exposeString('id', { description: 'The UUID the REST API uses.' }),
    title: t.exposeString('title'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    workspace: t.relation('workspace', { type: WorkspaceRef }),
    messages: t.relatedConnection('messages', {
      cursor: 'id',
      totalCount: true,
      description: 'Oldest first.',
      query: { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] },
    }),
  }),
});

// The module that owns conversations adds them to workspaces: the caller's own, most recently active first.
builder.prismaObjectField('Workspace', 'conversations', (t) =>
  t.relatedConnection(
    'conversations',
    {
      cursor: 'id',
      totalCount: true,
      description: "The caller's conversations with the assistant in this workspace, most recently active first.",
      query: (_args, ctx) => ({ where: conversations.conversationWhere(ctx), orderBy: [{ updatedAt: 'desc' }, { id: 'desc' }] }),
    },
    { name: 'ConversationConnection' },
    { name: 'ConversationEdge' },
  ),
);

const ModelConfigRef = builder.objectRef<modelConfig.ModelConfigResponse>('ModelConfig').implement({
  description: "The assistant's language model: an OpenAI-compatible endpoint. The API key is never returned.",
  fields: (t) => ({
    scope: t.exposeString('scope', { description: '`workspace` or `instance`.' }),
    workspaceId: t.exposeString('workspaceId', { nullable: true }),
    baseUrl: t.exposeString('baseUrl'),
    model: t.exposeString('model'),
    hasApiKey: t.exposeBoolean('hasApiKey'),
    apiKeyHint: t.exposeString('apiKeyHint', { nullable: true }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

const ModelConfigInput = builder.inputType('ModelConfigInput', {
  fields: (t) => ({
    baseUrl: t.string({ required: true, description: 'API root, e.g. https://api.openai.com/v1 (requests go to {baseUrl}/chat/completions).' }),
    model: t.string({ required: true }),
    apiKey: t.string({ description: 'Stored encrypted. Absent keeps the current key; null removes it.' }),
  }),
});

const SendMessagePayload = builder.objectRef<SendMessageResult>('SendMessagePayload').implement({
  fields: (t) => ({
    conversation: t.field({ type: ConversationRef, resolve: (result) => result.conversation as never }),
    created: t.exposeBoolean('created', { description: 'Whether this message started the conversation.' }),
    userMessage: t.field({ type: MessageRef, resolve: (result) => result.userMessage as never }),
    assistantMessage: t.field({ type: MessageRef, resolve: (result) => result.assistantMessage as never }),
  }),
});

const MessageDeltaKind = builder.enumType('MessageDeltaKind', { values: ['text', 'thinking', 'tool_call', 'tool_result', 'error'] as const });

const MessageDeltaRef = builder.objectRef<AgentDeltaEvent>('MessageDelta').implement({
  description: 'A partial of a reply while it is produced; the complete reply follows on messageAdded with the same messageId.',
  fields: (t) => ({
    conversationId: t.exposeString('conversationId'),
    messageId: t.exposeString('messageId'),
    kind: t.field({ type: MessageDeltaKind, resolve: (delta) => delta.kind }),
    text: t.exposeString('text', { nullable: true, description: 'The next piece of text or thinking, or the error.' }),
    toolCall: t.field({
      type: ToolCallRef,
      nullable: true,
      resolve: (delta) => (delta.toolCall ? { ...delta.toolCall, result: delta.toolCall.result ?? null, isError: delta.toolCall.isError ?? false } : null),
    }),
  }),
});

builder.queryFields((t) => ({
  conversation: t.prismaField({
    type: 'Conversation',
    nullable: true,
    authScopes: { signedIn: true },
    args: { id: t.arg.id({ required: true }) },
    resolve: (query, _root, args, ctx) => conversations.findVisibleConversation(ctx, decodeQueryId(args.id, ConversationRef, 'id'), query),
  }),
  modelConfig: t.field({
    type: ModelConfigRef,
    nullable: true,
    authScopes: { signedIn: true },
    description: "A workspace's own language model, or (instance administrators, no workspaceId) the instance-wide one.",
    args: { workspaceId: t.arg.id() },
    resolve: (_root, args, ctx) => modelConfig.findModelConfig(ctx, decodeQueryId(args.workspaceId, WorkspaceRef, 'workspaceId') ?? null),
  }),
}));

builder.mutationFields((t) => ({
  createConversation: t.prismaField({
    type: 'Conversation',
    errors: {},
    args: { workspaceId: t.arg.id({ required: true }), title: t.arg.string() },
    resolve: async (_query, _root, args, ctx) =>
      (await conversations.createConversation(ctx, decodeId(args.workspaceId, WorkspaceRef, 'workspaceId'), { title: args.title ?? undefined })) as never,
  }),
  renameConversation: t.prismaField({
    type: 'Conversation',
    errors: {},
    args: { id: t.arg.id({ required: true }), title: t.arg.string({ required: true }) },
    resolve: async (_query, _root, args, ctx) =>
      (await conversations.renameConversation(ctx, undefined, decodeId(args.id, ConversationRef, 'id'), { title: args.title })) as never,
  }),
  deleteConversation: t.field({
    type: 'ID',
    errors: {},
    description: 'Deletes the conversation and its messages; returns its id.',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => (await conversations.deleteConversation(ctx, undefined, decodeId(args.id, ConversationRef, 'id'))).id,
  }),
  sendMessage: t.field({
    type: SendMessagePayload,
    errors: {},
    description:
      'Asks the assistant and resolves when the reply is stored. To watch it stream, subscribe to messageDelta and messageAdded of the conversation first (createConversation, then sendMessage with its id).',
    args: {
      workspaceId: t.arg.id({ required: true }),
      question: t.arg.string({ required: true }),
      conversationId: t.arg.id({ description: 'Absent: a new conversation, titled after the question.' }),
    },
    resolve: (_root, args, ctx) =>
      sendMessage(ctx, decodeId(args.workspaceId, WorkspaceRef, 'workspaceId'), {
        question: args.question,
        conversationId: decodeId(args.conversationId, ConversationRef, 'conversationId'),
      }),
  }),
  setModelConfig: t.field({
    type: ModelConfigRef,
    errors: {},
    description: "Sets a workspace's language model (owners), or without workspaceId the instance-wide one (instance administrators).",
    args: { workspaceId: t.arg.id(), input: t.arg({ type: ModelConfigInput, required: true }) },
    resolve: (_root, args, ctx) => {
      const workspaceId = decodeId(args.workspaceId, WorkspaceRef, 'workspaceId');
      return workspaceId ? modelConfig.putWorkspaceModelConfig(ctx, workspaceId, args.input) : modelConfig.putInstanceModelConfig(ctx, args.input);
    },
  }),
  deleteModelConfig: t.field({
    type: 'ID',
    errors: {},
    args: { workspaceId: t.arg.id() },
    resolve: async (_root, args, ctx) => {
      const workspaceId = decodeId(args.workspaceId, WorkspaceRef, 'workspaceId');
      return (workspaceId ? await modelConfig.deleteWorkspaceModelConfig(ctx, workspaceId) : await modelConfig.deleteInstanceModelConfig(ctx)).id;
    },
  }),
}));

builder.subscriptionFields((t) => ({
  messageAdded: t.field({
    type: MessageRef,
    description: 'Each message stored in the conversation (questions and complete replies). Access is checked when subscribing and again before each message.',
    args: { conversationId: t.arg.id({ required: true }) },
    subscribe: (_root, args, ctx) => {
      const conversationId = decodeQueryId(args.conversationId, ConversationRef, 'conversationId');
      return rechecked(ctx, conversations.subscribeToMessages(ctx, conversationId), () => conversations.findOwnConversation(ctx, conversationId));
    },
    resolve: (message) => message,
  }),
  messageDelta: t.field({
    type: MessageDeltaRef,
    description:
      'Partials of replies as they are produced: text, tool calls and their results, errors. Access is checked when subscribing and again before each partial.',
    args: { conversationId: t.arg.id({ required: true }) },
    subscribe: (_root, args, ctx) => {
      const conversationId = decodeQueryId(args.conversationId, ConversationRef, 'conversationId');
      return rechecked(ctx, conversations.subscribeToDeltas(ctx, conversationId), () => conversations.findOwnConversation(ctx, conversationId), {
        reuseForMs: 1000,
      });
    },
    resolve: (delta) => delta,
  }),
}));
