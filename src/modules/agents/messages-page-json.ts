import { Prisma } from '../../db.js';
import type { PreparedRead } from '../../db/prepared-read.js';
import { visibleConversation, type MessagePageQuery } from './messages-page-sql.js';

/**
 * The REST message page's items written as JSON text by the statement itself, as the REST facade sends them:
 * the message schema's properties in its order (rest.ts, messageSchema), with what toMessageResponse does to
 * the stored JSON done here (metadata and tool-call args that are not objects are `{}`, parts that are not an
 * array are `[]`, parts that are not objects are `{}`), dates as JSON.stringify writes them.
 *
 * Why: a message is mostly JSON already (metadata, parts, tool calls). Read as rows, the driver parsed each
 * value, toMessageResponse rebuilt the objects, and the serializer wrote them back out, with the dates in between:
 * per message about as much CPU as the rest of the request, and the page stayed at a third of the hand-written
 * statement's requests/s (`npm run bench:api`, messages). Here the app only carries the text.
 * test/agents.messages-page.test.ts compares this text, parsed, with the typed path's answer on awkward values.
 */
export interface MessageItemsJson {
  /** A JSON array of the page's messages, in the page's order (`direction`). */
  itemsJson: string;
  /** Every message of the conversation. */
  total: number;
}

/** ISO 8601 in UTC with milliseconds, as Date's toJSON (the columns are `timestamp(3)` holding UTC). */
const isoText = (column: Prisma.Sql) => Prisma.sql`to_char(${column}, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const objectOrEmpty = (column: Prisma.Sql) => Prisma.sql`CASE WHEN jsonb_typeof(${column}) = 'object' THEN ${column} ELSE '{}'::jsonb END`;

/** Parts as stored when they are an array of objects (the common case, checked without unnesting), else rebuilt. */
const PARTS = Prisma.sql`CASE
  WHEN jsonb_typeof(p.parts) <> 'array' THEN '[]'::jsonb
  WHEN NOT (p.parts @? '$[*] ? (@.type() != "object")') THEN p.parts
  ELSE (SELECT jsonb_agg(${objectOrEmpty(Prisma.sql`part`)} ORDER BY position) FROM jsonb_array_elements(p.parts) WITH ORDINALITY AS x(part, position))
END`;

/** Null when the conversation is not visible to the viewer (as findMessagePage). */
export async function findMessageItemsJson(read: PreparedRead, query: MessagePageQuery): Promise<MessageItemsJson | null> {
  const direction = Prisma.raw(query.direction === 'ASC' ? 'ASC' : 'DESC');
  const [row] = await read<MessageItemsJson>(Prisma.sql`
    WITH conv AS (SELECT c.id FROM "conversation" c WHERE ${visibleConversation(query)})
    SELECT (SELECT count(*)::int FROM "message" n WHERE n."conversationId" = conv.id) AS total,
           '[' || COALESCE((
             SELECT string_agg(row_to_json(item)::text, ',' ORDER BY p."createdAt" ${direction}, p.id ${direction})
             FROM (
               SELECT msg.* FROM "message" msg WHERE msg."conversationId" = conv.id
               ORDER BY msg."createdAt" ${direction}, msg.id ${direction}
               LIMIT ${query.limit} OFFSET ${query.offset}
             ) p
             CROSS JOIN LATERAL (
               SELECT p.id, p."conversationId", p.role, p.content, p."messageType", ${isoText(Prisma.sql`p."createdAt"`)} AS "createdAt",
                      ${objectOrEmpty(Prisma.sql`p.metadata`)} AS metadata, ${PARTS} AS parts,
                      COALESCE((
                        SELECT json_agg(json_build_object('toolCallId', tc."toolCallId", 'toolName', tc."toolName",
                                                          'args', ${objectOrEmpty(Prisma.sql`tc.args`)}, 'result', tc.result, 'isError', tc."isError")
                                        ORDER BY tc.position)
                        FROM "tool_call" tc WHERE tc."messageId" = p.id
                      ), '[]'::json) AS "toolCalls"
             ) item
           ), '') || ']' AS "itemsJson"
    FROM conv`);
  return row ?? null;
}
