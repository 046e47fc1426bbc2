import type { ServiceContext } from '../../context.js';
import { NotFoundError } from '../../errors.js';
import { assertCan, isUuid, requireViewer, visibleWorkspacesWhere } from '../../auth/authz.js';
import type { Prisma } from '../../db.js';
import { validate } from '../../validate.js';
import { escapeLike, pageEnvelope, pageWindow, prismaDirection, serializedPage, type Page, type SerializedPage } from '../../pagination.js';
import type { AgentDeltaEvent } from '../../pubsub.js';
import {
  createConversationInput,
  DERIVED_TITLE_CHARS,
  listConversationsInput,
  listMessagesInput,
  renameConversationInput,
  type CreateConversationInput,
  type ListConversationsInput,
  type ListMessagesInput,
  type RenameConversationInput,
} from './schemas.js';
import { findMessagePage } from './messages-page-sql.js';
import { findMessageItemsJson } from './messages-page-json.js';
import { servedByMessagePage } from './messages-connection.js';
import { messageInclude, toConversationResponse, type ConversationResponse, type MessageResponse, type MessageRow } from './response.js';

/** The nil UUID is never generated: a malformed id then simply finds nothing. */
const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/**
 * Row visibility: a conversation is its creator's alone, and only while they belong to its workspace. Another
 * member of the same workspace reads it exactly like one that does not exist.
 */
export function conversationWhere(ctx: ServiceContext, workspaceId?: string): Prisma.ConversationWhereInput {
  const viewer = requireViewer(ctx);
  return { createdById: viewer.id, workspace: visibleWorkspacesWhere(viewer), ...(workspaceId ? { workspaceId } : {}) };
}

export async function findOwnConversation(ctx: ServiceContext, id: string, workspaceId?: string) {
  const row = isUuid(id) ? await ctx.deps.prisma.conversation.findFirst({ where: { AND: [{ id }, conversationWhere(ctx, workspaceId)] } }) : null;
  if (!row) throw new NotFoundError('Conversation');
  await assertCan(ctx, 'agent:use', { workspaceId: row.workspaceId });
  return row;
}

/** A question as a title: one line, at most DERIVED_TITLE_CHARS characters. */
export function titleFrom(question: string): string {
  const line = question.replace(/\s+/g, ' ').trim();
  return line.length <= DERIVED_TITLE_CHARS ? line : `${line.slice(0, DERIVED_TITLE_CHARS - 1).trimEnd()}…`;
}

export async function listConversations(ctx: ServiceContext, workspaceId: string, input: ListConversationsInput): Promise<Page<ConversationResponse>> {
  const { page, limit, sortBy, sortOrder, search } = validate(listConversationsInput, input);
  await assertCan(ctx, 'agent:use', { workspaceId });
  const where: Prisma.ConversationWhereInput = {
    AND: [conversationWhere(ctx, workspaceId), ...(search ? [{ title: { contains: escapeLike(search), mode: 'insensitive' as const } }] : [])],
  };
  const direction = prismaDirection(sortOrder);
  const [rows, total] = await Promise.all([
    ctx.deps.prisma.conversation.findMany({ where, orderBy: [{ [sortBy]: direction }, { id: direction }], ...pageWindow(page, limit) }),
    ctx.deps.prisma.conversation.count({ where }),
  ]);
  return pageEnvelope(rows.map(toConversationResponse), total, page, limit);
}

export async function createConversation(ctx: ServiceContext, workspaceId: string, input: CreateConversationInput = {}): Promise<ConversationResponse> {
  const viewer = requireViewer(ctx);
  const { title } = validate(createConversationInput, input);
  await assertCan(ctx, 'agent:use', { workspaceId });
  const row = await ctx.deps.prisma.conversation.create({ data: { workspaceId, createdById: viewer.id, title: title ?? 'New conversation' } });
  return toConversationResponse(row);
}

export async function getConversation(ctx: ServiceContext, workspaceId: string, id: string): Promise<ConversationResponse> {
  await assertCan(ctx, 'agent:use', { workspaceId });
  return toConversationResponse(await findOwnConversation(ctx, id, workspaceId));
}

/** `workspaceId` absent (GraphQL names a conversation by its id alone): the conversation's own workspace. */
export async function renameConversation(
  ctx: ServiceContext,
  workspaceId: string | undefined,
  id: string,
  input: RenameConversationInput,
): Promise<ConversationResponse> {
  const { title } = validate(renameConversationInput, input);
  if (workspaceId) await assertCan(ctx, 'agent:use', { workspaceId });
  const row = await findOwnConversation(ctx, id, workspaceId);
  return toConversationResponse(await ctx.deps.prisma.conversation.update({ where: { id: row.id }, data: { title } }));
}

/** Deletes the conversation with its messages and their tool calls. */
export async function deleteConversation(ctx: ServiceContext, workspaceId: string | undefined, id: string): Promise<{ id: string }> {
  if (workspaceId) await assertCan(ctx, 'agent:use', { workspaceId });
  const row = await findOwnConversation(ctx, id, workspaceId);
  const { count } = await ctx.deps.prisma.conversation.deleteMany({ where: { id: row.id } });
  if (!count) throw new NotFoundError('Conversation');
  return { id: row.id };
}

/**
 * The caller's own conversation's messages, a page at a time, for REST: one prepared statement that also writes
 * the items as the JSON the facade sends (messages-page-json.ts).
 */
export async function listMessages(
  ctx: ServiceContext,
  workspaceId: string,
  conversationId: string,
  input: ListMessagesInput,
): Promise<SerializedPage<MessageResponse>> {
  const { page, limit, sortOrder } = validate(listMessagesInput, input);
  await assertCan(ctx, 'agent:use', { workspaceId });
  const viewer = requireViewer(ctx);
  const found = isUuid(conversationId)
    ? await findMessageItemsJson(ctx.deps.db.read, {
        conversationId,
        workspaceId,
        viewerId: viewer.id,
        direction: sortOrder,
        offset: (page - 1) * limit,
        limit,
      })
    : null;
  if (!found) throw new NotFoundError('Conversation');
  return serializedPage(found.itemsJson, found.total, page, limit);
}

/** node(id) lookups: a unique where that also carries the visibility rule. */
export function visibleConversationWhereUnique(ctx: ServiceContext, id: string): Prisma.ConversationWhereUniqueInput {
  return { id: isUuid(id) ? id : NIL_UUID, AND: [conversationWhere(ctx)] };
}

/** For conversation(id) on GraphQL: null when absent or not the caller's. */
export async function findVisibleConversation<Q extends object>(ctx: ServiceContext, id: string, query: Q) {
  if (!isUuid(id)) return null;
  // The common page (first or last n messages, with their tool calls and the total) in one prepared statement.
  const served = servedByMessagePage(query);
  if (served) {
    const { direction, limit, withToolCalls, withTotal } = served;
    const found = await findMessagePage(ctx.deps.db.read, { conversationId: id, viewerId: requireViewer(ctx).id, offset: 0, direction, limit });
    if (!found) return null;
    // The connection lists oldest first; `last: n` reads the newest n.
    const rows = direction === 'DESC' ? found.rows.reverse() : found.rows;
    const messages = withToolCalls ? rows : rows.map(({ toolCalls: _, ...message }) => message);
    const answer = { ...found.conversation, messages, ...(withTotal ? { _count: { messages: found.total } } : {}) };
    return answer as unknown as Prisma.ConversationGetPayload<Q>;
  }
  return ctx.deps.prisma.conversation.findFirst({ ...query, where: { AND: [{ id }, conversationWhere(ctx)] } });
}

/** The caller's conversations of one workspace, for the GraphQL connection (Pothos passes its query). */
export async function findConversationsForConnection<Q extends object>(ctx: ServiceContext, workspaceId: string, query: Q) {
  await assertCan(ctx, 'agent:use', { workspaceId });
  return ctx.deps.prisma.conversation.findMany({ ...query, where: conversationWhere(ctx, workspaceId), orderBy: [{ updatedAt: 'desc' }, { id: 'desc' }] });
}

export async function countConversations(ctx: ServiceContext, workspaceId: string): Promise<number> {
  await assertCan(ctx, 'agent:use', { workspaceId });
  return ctx.deps.prisma.conversation.count({ where: conversationWhere(ctx, workspaceId) });
}

/** Checks access once, then yields each message stored in the conversation (re-read, with its tool calls). */
export async function subscribeToMessages(ctx: ServiceContext, conversationId: string): Promise<AsyncIterable<MessageRow>> {
  const conversation = await findOwnConversation(ctx, conversationId);
  const { pubsub, prisma } = ctx.deps;
  const events = pubsub.subscribe('agent:message', conversation.id);
  return (async function* stream() {
    for await (const event of events) {
      const row = await prisma.message.findFirst({ where: { id: event.messageId, conversationId: conversation.id }, include: messageInclude });
      if (row) yield row;
    }
  })();
}

/** Checks access once, then yields the partials of replies as they stream. */
export async function subscribeToDeltas(ctx: ServiceContext, conversationId: string): Promise<AsyncIterable<AgentDeltaEvent>> {
  const conversation = await findOwnConversation(ctx, conversationId);
  return ctx.deps.pubsub.subscribe('agent:delta', conversation.id);
}
