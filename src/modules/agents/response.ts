import type { Prisma } from '../../db.js';
import type { MessageRole, MessageType } from './schemas.js';
import { nodeIdOf } from '../../graphql/ids.js';

export const messageInclude = { toolCalls: { orderBy: { position: 'asc' } } } satisfies Prisma.MessageInclude;
export type MessageRow = Prisma.MessageGetPayload<{ include: typeof messageInclude }>;
type ConversationRow = Prisma.ConversationGetPayload<object>;

export interface ConversationResponse {
  id: string;
  /** The GraphQL global id. */
  nodeId: string;
  workspaceId: string;
  title: string;
  createdById: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface ToolCallResponse {
  toolCallId: string;
  toolName: string;
  args: Record<string, unknown>;
  result: unknown;
  isError: boolean;
}

/** The seed's agent message (2.4). */
export interface MessageResponse {
  id: string;
  conversationId: string;
  role: MessageRole;
  content: string;
  messageType: MessageType;
  createdAt: Date;
  metadata: Record<string, unknown>;
  parts: Record<string, unknown>[];
  toolCalls: ToolCallResponse[];
}

export function toConversationResponse(row: ConversationRow): ConversationResponse {
  return {
    id: row.id,
    nodeId: nodeIdOf('Conversation', row.id),
    workspaceId: row.workspaceId,
    title: row.title,
    createdById: row.createdById,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

const asObject = (value: Prisma.JsonValue): Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

export function toMessageResponse(row: MessageRow): MessageResponse {
  return {
    id: row.id,
    conversationId: row.conversationId,
    role: row.role as MessageRole,
    content: row.content,
    messageType: row.messageType as MessageType,
    createdAt: row.createdAt,
    metadata: asObject(row.metadata),
    parts: Array.isArray(row.parts) ? row.parts.map((part) => asObject(part)) : [],
    toolCalls: row.toolCalls.map((call) => ({
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      args: asObject(call.args),
      result: call.result,
      isError: call.isError,
    })),
  };
}
