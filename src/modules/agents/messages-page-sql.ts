import { Prisma } from '../../db.js';
import { utcFromJson, type PreparedRead } from '../../db/prepared-read.js';
import type { MessageRow } from './response.js';

export interface MessagePageQuery {
  conversationId: string;
  /** REST names the workspace (X-Workspace-Id); GraphQL names the conversation alone. */
  workspaceId?: string;
  viewerId: string;
  direction: 'ASC' | 'DESC';
  offset: number;
  limit: number;
}

export type ConversationRow = Prisma.ConversationGetPayload<object>;

export interface MessagePage {
  conversation: ConversationRow;
  /** In the page's order (`direction`). */
  rows: MessageRow[];
  /** Every message of the conversation. */
  total: number;
}

type RawToolCall = Omit<MessageRow['toolCalls'][number], 'createdAt'> & { createdAt: string };
/** One row per message of the page; a visible conversation with no message on the page still gives one row, id null. */
type RawRow = Omit<MessageRow, 'toolCalls' | 'id'> & {
  id: string | null;
  toolCalls: RawToolCall[];
  total: number;
  cId: string;
  cWorkspaceId: string;
  cCreatedById: string;
  cTitle: string;
  cCreatedAt: Date;
  cUpdatedAt: Date;
};

/**
 * The conversation `c` is the one asked for and visible to the viewer: their own conversation, in a workspace they
 * still belong to (conversationWhere in conversations.ts), in the workspace REST names.
 */
export function visibleConversation(query: Pick<MessagePageQuery, 'conversationId' | 'workspaceId' | 'viewerId'>): Prisma.Sql {
  const inWorkspace = query.workspaceId ? Prisma.sql`AND c."workspaceId" = ${query.workspaceId}::uuid` : Prisma.empty;
  return Prisma.sql`c.id = ${query.conversationId}::uuid ${inWorkspace} AND c."createdById" = ${query.viewerId}
        AND EXISTS (SELECT 1 FROM "workspace_member" m WHERE m."workspaceId" = c."workspaceId" AND m."userId" = ${query.viewerId})`;
}

/**
 * A conversation's page of messages in one prepared statement: the visibility check (the caller's own
 * conversation, in a workspace they still belong to: conversationWhere in conversations.ts), the conversation's
 * row, the page with each message's tool calls, and the conversation's message count. Through the ORM the same
 * single statement spent most of the request's CPU in building and mapping it (`npm run bench:api`, messages).
 * Null when the conversation is not visible. test/agents.messages-page.test.ts compares it with the typed reads.
 */
export async function findMessagePage(read: PreparedRead, query: MessagePageQuery): Promise<MessagePage | null> {
  const direction = Prisma.raw(query.direction === 'ASC' ? 'ASC' : 'DESC');
  const rows = await read<RawRow>(Prisma.sql`
    WITH conv AS (
      SELECT c.*, (SELECT count(*)::int FROM "message" n WHERE n."conversationId" = c.id) AS total
      FROM "conversation" c
      WHERE ${visibleConversation(query)}
    )
    SELECT conv.total, conv.id::text AS "cId", conv."workspaceId"::text AS "cWorkspaceId", conv."createdById" AS "cCreatedById", conv.title AS "cTitle",
           conv."createdAt" AS "cCreatedAt", conv."updatedAt" AS "cUpdatedAt",
           p.id::text AS id, p."conversationId"::text AS "conversationId", p.role, p.content, p."messageType", p.metadata, p.parts, p."createdAt",
           COALESCE((
             SELECT json_agg(json_build_object(
                      'id', tc.id, 'messageId', tc."messageId", 'toolCallId', tc."toolCallId", 'toolName', tc."toolName",
                      'args', tc.args, 'result', tc.result, 'isError', tc."isError", 'position', tc.position, 'createdAt', tc."createdAt")
                    ORDER BY tc.position)
             FROM "tool_call" tc WHERE tc."messageId" = p.id
           ), '[]'::json) AS "toolCalls"
    FROM conv
    LEFT JOIN LATERAL (
      SELECT msg.* FROM "message" msg WHERE msg."conversationId" = conv.id
      ORDER BY msg."createdAt" ${direction}, msg.id ${direction}
      LIMIT ${query.limit} OFFSET ${query.offset}
    ) p ON true
    ORDER BY p."createdAt" ${direction}, p.id ${direction}`);
  const first = rows[0];
  if (!first) return null;
  const conversation: ConversationRow = {
    id: first.cId,
    workspaceId: first.cWorkspaceId,
    createdById: first.cCreatedById,
    title: first.cTitle,
    createdAt: first.cCreatedAt,
    updatedAt: first.cUpdatedAt,
  };
  const messages: MessageRow[] = [];
  for (const { id, conversationId, role, content, messageType, metadata, parts, createdAt, toolCalls } of rows) {
    if (id === null) continue;
    messages.push({
      id,
      conversationId,
      role,
      content,
      messageType,
      metadata,
      parts,
      createdAt,
      toolCalls: toolCalls.map((call) => ({ ...call, createdAt: utcFromJson(call.createdAt) })),
    });
  }
  return { conversation, rows: messages, total: first.total };
}
