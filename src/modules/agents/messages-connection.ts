import { isRecord, onlyKeys } from '../../graphql/prisma-query-shape.js';

/**
 * When GraphQL's `conversation(id) { messages(...) }` can be read by the message page statement
 * (messages-page-sql.ts) instead of Prisma's relation query. Pothos hands the conversation field the Prisma
 * query its selection needs; the statement serves it when that query asks for nothing beyond what the
 * statement returns:
 *   - the conversation's row (include mode: every column, which the statement returns),
 *   - `messages` in the connection's order (createdAt, then id, ascending), every column, optionally with the
 *     tool calls in position order,
 *   - `_count` of messages (totalCount),
 *   - a page from either end without a cursor (`first: n`, or `last: n`, which Pothos asks as `take: -n`).
 * Anything else (a cursor, another relation) goes to Prisma as before; test/agents.messages-page.test.ts
 * compares both answers.
 */
export interface ServedMessagePage {
  direction: 'ASC' | 'DESC';
  limit: number;
  /** What the query asked for beside the rows (the answer carries nothing it did not ask for, as Prisma's). */
  withToolCalls: boolean;
  withTotal: boolean;
}

function inConnectionOrder(orderBy: unknown): boolean {
  if (!Array.isArray(orderBy) || orderBy.length !== 2) return false;
  const [first, second] = orderBy as unknown[];
  return isRecord(first) && onlyKeys(first, ['createdAt']) && first.createdAt === 'asc' && isRecord(second) && onlyKeys(second, ['id']) && second.id === 'asc';
}

function servesToolCalls(include: unknown): boolean {
  if (include === undefined) return true;
  if (!isRecord(include) || !onlyKeys(include, ['toolCalls'])) return false;
  const { toolCalls } = include;
  return (
    isRecord(toolCalls) &&
    onlyKeys(toolCalls, ['orderBy']) &&
    isRecord(toolCalls.orderBy) &&
    onlyKeys(toolCalls.orderBy, ['position']) &&
    toolCalls.orderBy.position === 'asc'
  );
}

/** The page the statement reads for this query (then returned oldest first), or null when Prisma must. */
export function servedByMessagePage(query: object): ServedMessagePage | null {
  const { include, ...rest } = query as Record<string, unknown>;
  if (Object.keys(rest).length > 0 || !isRecord(include) || !onlyKeys(include, ['messages', '_count'])) return null;
  const { messages, _count: count } = include;
  if (
    count !== undefined &&
    !(isRecord(count) && onlyKeys(count, ['select']) && isRecord(count.select) && onlyKeys(count.select, ['messages']) && count.select.messages === true)
  ) {
    return null;
  }
  if (!isRecord(messages) || !onlyKeys(messages, ['orderBy', 'take', 'skip', 'include'])) return null;
  const { orderBy, take, skip, include: nested } = messages;
  if (!inConnectionOrder(orderBy) || skip !== 0 || !servesToolCalls(nested)) return null;
  if (typeof take !== 'number' || !Number.isInteger(take) || take === 0) return null;
  const asked = { withToolCalls: nested !== undefined, withTotal: count !== undefined };
  return take > 0 ? { direction: 'ASC', limit: take, ...asked } : { direction: 'DESC', limit: -take, ...asked };
}
