import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startTestApp, type TestApp } from './support/app.js';
import { clientFor, type TestUser } from './support/client.js';
import { findMessagePage, type MessagePageQuery } from '../src/modules/agents/messages-page-sql.js';
import { messageInclude, toMessageResponse } from '../src/modules/agents/response.js';
import { findMessageItemsJson } from '../src/modules/agents/messages-page-json.js';
import { pageEnvelope } from '../src/pagination.js';
import { servedByMessagePage } from '../src/modules/agents/messages-connection.js';
import { findVisibleConversation } from '../src/modules/agents/conversations.js';
import { contextOf } from './support/service-context.js';

/**
 * The REST message page is one hand-written statement (modules/agents/messages-page-sql.ts). It must return
 * exactly what the typed Prisma read returns (every column, JSON values, tool calls in order, UTC dates), and
 * nothing at all for a conversation the caller may not see.
 */
let server: TestApp;
let owner: TestUser;
let colleague: TestUser;
let workspaceId: string;
let conversationId: string;
let emptyConversationId: string;

const MESSAGES = 7;

beforeAll(async () => {
  server = await startTestApp();
  const client = clientFor(server);
  owner = await client.signUp('Pager');
  colleague = await client.signUp('Colleague');
  const prisma = server.db.prisma;
  workspaceId = randomUUID();
  await prisma.workspace.create({ data: { id: workspaceId, name: 'Messages', ownerId: owner.id } });
  await prisma.workspaceMember.createMany({
    data: [
      { workspaceId, userId: owner.id, role: 'owner' },
      { workspaceId, userId: colleague.id, role: 'member' },
    ],
  });
  conversationId = randomUUID();
  emptyConversationId = randomUUID();
  await prisma.conversation.createMany({
    data: [
      { id: conversationId, workspaceId, createdById: owner.id, title: 'Paged' },
      { id: emptyConversationId, workspaceId, createdById: owner.id, title: 'Empty' },
    ],
  });
  // Two messages share a timestamp: the id breaks the tie in both directions.
  const base = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
  const messages = Array.from({ length: MESSAGES }, (_, i) => ({
    id: randomUUID(),
    conversationId,
    role: i % 2 ? 'assistant' : 'user',
    content: `Message ${i} "quoted" ü\n`,
    messageType: i === 3 ? 'tool-call' : 'text',
    // Stored JSON the answer shapes: metadata and parts that are not what the schema says are answered as {} and [].
    metadata: i === 1 ? { model: 'local', tokens: 12.5, big: 2 ** 60, nested: { ok: true, list: [null, 'ü'] } } : i === 5 ? ['not', 'an object'] : {},
    parts: i === 2 ? [{ type: 'text', text: 'part \u0001\t\u2028 😀' }, 'plain', 3, [1]] : i === 6 ? { not: 'an array' } : [],
    createdAt: new Date(base + Math.min(i, 5) * 1000),
  }));
  await prisma.message.createMany({ data: messages });
  await prisma.toolCall.createMany({
    data: [
      { messageId: messages[3]!.id, toolCallId: 'b', toolName: 'count', args: { kind: 'host' }, result: { count: 3 }, position: 1 },
      { messageId: messages[3]!.id, toolCallId: 'a', toolName: 'list', args: {}, isError: true, position: 0 },
      { messageId: messages[4]!.id, toolCallId: 'c', toolName: 'list', args: { q: [1, 2] }, result: 'text result', position: 0 },
      { messageId: messages[6]!.id, toolCallId: 'd', toolName: 'odd', args: [1, 2], result: [{ a: null }, false], position: 0 },
    ],
  });
});
afterAll(() => server?.stop());

function query(fields: Partial<MessagePageQuery> = {}): MessagePageQuery {
  return { conversationId, workspaceId, viewerId: owner.id, direction: 'DESC', offset: 0, limit: 10, ...fields };
}

async function typedPage(q: MessagePageQuery) {
  const direction = q.direction === 'ASC' ? 'asc' : 'desc';
  const rows = await server.db.prisma.message.findMany({
    where: { conversationId: q.conversationId },
    include: messageInclude,
    orderBy: [{ createdAt: direction }, { id: direction }],
    skip: q.offset,
    take: q.limit,
  });
  const conversation = await server.db.prisma.conversation.findUniqueOrThrow({ where: { id: q.conversationId } });
  return { conversation, rows, total: await server.db.prisma.message.count({ where: { conversationId: q.conversationId } }) };
}

/** Both directions, a page holding everything, and pages of 3 up to one past the end. */
function everyPage(): MessagePageQuery[] {
  const windows = [
    [0, 10],
    [0, 3],
    [3, 3],
    [6, 3],
    [9, 3],
  ] as const;
  return (['ASC', 'DESC'] as const).flatMap((direction) => windows.map(([offset, limit]) => query({ direction, offset, limit })));
}

describe('the message page statement', () => {
  it('returns what the typed read returns, in both directions and on every page', async () => {
    for (const q of everyPage()) {
      expect(await findMessagePage(server.db.read, q), `${q.direction} ${q.offset}+${q.limit}`).toEqual(await typedPage(q));
    }
  });

  it('answers an empty page, not nothing, for a visible conversation without messages', async () => {
    expect(await findMessagePage(server.db.read, query({ conversationId: emptyConversationId }))).toEqual({
      conversation: await server.db.prisma.conversation.findUniqueOrThrow({ where: { id: emptyConversationId } }),
      rows: [],
      total: 0,
    });
  });

  it("finds nothing for another member's conversation, another workspace, an unknown id, or a former member", async () => {
    expect(await findMessagePage(server.db.read, query({ viewerId: colleague.id }))).toBeNull();
    expect(await findMessagePage(server.db.read, query({ workspaceId: randomUUID() }))).toBeNull();
    expect(await findMessagePage(server.db.read, query({ conversationId: randomUUID() }))).toBeNull();
    await server.db.prisma.workspaceMember.deleteMany({ where: { workspaceId, userId: owner.id } });
    try {
      expect(await findMessagePage(server.db.read, query())).toBeNull();
    } finally {
      await server.db.prisma.workspaceMember.create({ data: { workspaceId, userId: owner.id, role: 'owner' } });
    }
  });
});

describe("the REST page's JSON", () => {
  /** What the REST page answered before the statement wrote its JSON: the typed rows through toMessageResponse. */
  async function typedItems(q: MessagePageQuery) {
    const { rows, total } = await typedPage(q);
    return { items: JSON.parse(JSON.stringify(rows.map(toMessageResponse))), total };
  }

  it('is the typed answer, on awkward stored values, in both directions and on every page', async () => {
    for (const q of everyPage()) {
      const page = await findMessageItemsJson(server.db.read, q);
      const { items, total } = await typedItems(q);
      expect(page && { items: JSON.parse(page.itemsJson), total: page.total }, `${q.direction} ${q.offset}+${q.limit}`).toEqual({ items, total });
    }
    expect(await findMessageItemsJson(server.db.read, query({ conversationId: emptyConversationId }))).toEqual({ itemsJson: '[]', total: 0 });
  });

  it('is what GET .../messages sends, with the envelope', async () => {
    const client = clientFor(server);
    for (const [pageNumber, sortOrder] of [
      [1, 'DESC'],
      [2, 'ASC'],
      [3, 'DESC'],
    ] as const) {
      const response = await client.api(
        'GET',
        `/api/v1/api/agents/conversations/${conversationId}/messages?page=${pageNumber}&limit=3&sortOrder=${sortOrder}`,
        {
          as: owner,
          workspaceId,
        },
      );
      expect(response.status).toBe(200);
      const { items, total } = await typedItems(query({ direction: sortOrder, offset: (pageNumber - 1) * 3, limit: 3 }));
      expect(response.body).toEqual(pageEnvelope(items, total, pageNumber, 3));
    }
  });

  it('finds nothing for a conversation the caller may not see', async () => {
    expect(await findMessageItemsJson(server.db.read, query({ viewerId: colleague.id }))).toBeNull();
    expect(await findMessageItemsJson(server.db.read, query({ workspaceId: randomUUID() }))).toBeNull();
    expect(await findMessageItemsJson(server.db.read, query({ conversationId: randomUUID() }))).toBeNull();
  });
});

describe("GraphQL's conversation(id) { messages }", () => {
  const ordered = { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] };
  const toolCalls = { toolCalls: { orderBy: { position: 'asc' } } };
  const count = { _count: { select: { messages: true } } };
  // The queries Pothos builds for first/last pages, with and without the tool calls and the total.
  const served = [
    { include: { messages: { ...ordered, take: -21, skip: 0, include: toolCalls }, ...count } },
    { include: { messages: { ...ordered, take: 21, skip: 0, include: toolCalls }, ...count } },
    { include: { messages: { ...ordered, take: -4, skip: 0 } } },
    { include: { messages: { ...ordered, take: 3, skip: 0 }, ...count } },
  ];

  it('reads the first and last pages with the statement, answering as Prisma does', async () => {
    for (const q of served) {
      expect(servedByMessagePage(q), JSON.stringify(q)).not.toBeNull();
      const prismaAnswer = await server.db.prisma.conversation.findFirst({ ...(q as object), where: { id: conversationId } });
      expect(await findVisibleConversation(contextOf(server, owner), conversationId, q), JSON.stringify(q)).toEqual(prismaAnswer);
      expect(await findVisibleConversation(contextOf(server, owner), emptyConversationId, q)).toEqual(
        await server.db.prisma.conversation.findFirst({ ...(q as object), where: { id: emptyConversationId } }),
      );
      expect(await findVisibleConversation(contextOf(server, colleague), conversationId, q)).toBeNull();
    }
  });

  it('leaves cursors, other orders and other relations to Prisma', () => {
    const messages = { ...ordered, take: -6, skip: 0 };
    for (const q of [
      { include: { messages: { ...messages, cursor: { id: randomUUID() }, skip: 1 } } },
      { include: { messages: { ...messages, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] } } },
      { include: { messages: { ...messages, include: { toolCalls: true } } } },
      { include: { messages: { ...messages, where: { role: 'user' } } } },
      { include: { messages, workspace: true } },
      { include: { _count: { select: { messages: true } } } },
      { select: { id: true } },
      { include: { messages: { ...messages, take: 0 } } },
    ]) {
      expect(servedByMessagePage(q), JSON.stringify(q)).toBeNull();
    }
  });
});
