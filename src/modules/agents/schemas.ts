import { z } from 'zod';
import { pageQuery, searchQuery, sortByQuery } from '../../pagination.js';

/** Who wrote a message. Replies are `assistant`; `system` and `tool` are reserved for prompts and tool output. */
export const MESSAGE_ROLES = ['user', 'assistant', 'system', 'tool'] as const;
/** What a message holds: an answer, the model's reasoning, a failure, or a tool invocation. */
export const MESSAGE_TYPES = ['text', 'thinking', 'error', 'tool-call'] as const;
export type MessageRole = (typeof MESSAGE_ROLES)[number];
export type MessageType = (typeof MESSAGE_TYPES)[number];

export const CONVERSATION_SORT_FIELDS = ['updatedAt', 'createdAt', 'title'] as const;
export const MESSAGE_SORT_FIELDS = ['createdAt'] as const;

export const MAX_QUESTION_CHARS = 8000;
export const MAX_TITLE_CHARS = 200;
/** A title made from a question keeps this many characters. */
export const DERIVED_TITLE_CHARS = 80;

const uuid = z.string().uuid({ message: 'must be a UUID' });
const title = z
  .string({ message: 'must be a string' })
  .trim()
  .min(1, { message: 'must not be empty' })
  .max(MAX_TITLE_CHARS, { message: `must be at most ${MAX_TITLE_CHARS} characters` });

export const listConversationsInput = z
  .object({ ...pageQuery, search: searchQuery.optional(), sortBy: sortByQuery(CONVERSATION_SORT_FIELDS, 'updatedAt') })
  .strict();

export const listMessagesInput = z.object({ ...pageQuery, sortBy: sortByQuery(MESSAGE_SORT_FIELDS, 'createdAt') }).strict();

export const createConversationInput = z.object({ title: title.optional() }).strict();
export const renameConversationInput = z.object({ title }).strict();

export const sendMessageInput = z
  .object({
    question: z
      .string({ message: 'must be a string' })
      .trim()
      .min(1, { message: 'must not be empty' })
      .max(MAX_QUESTION_CHARS, { message: `must be at most ${MAX_QUESTION_CHARS} characters` }),
    conversationId: uuid.nullish().meta({ description: 'Absent: a new conversation is started, titled after the question.' }),
  })
  .strict();

/**
 * The model endpoint: an OpenAI-compatible API root (the part before `/chat/completions`). No credentials in the
 * URL (the key has its own field, stored encrypted), no fragment; trailing slashes are dropped.
 */
const baseUrl = z
  .string({ message: 'must be a string' })
  .trim()
  .max(2048, { message: 'must be at most 2048 characters' })
  .refine((value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol), { message: 'must be an http:// or https:// URL' })
  .refine((value) => !URL.canParse(value) || (!new URL(value).username && !new URL(value).password), { message: 'must not contain credentials; use apiKey' })
  .refine((value) => !URL.canParse(value) || !new URL(value).hash, { message: 'must not contain a fragment' })
  .transform((value) => value.replace(/\/+$/, ''));

export const putModelConfigInput = z
  .object({
    baseUrl: baseUrl.meta({ description: 'API root of an OpenAI-compatible endpoint, e.g. https://api.openai.com/v1' }),
    model: z.string({ message: 'must be a string' }).trim().min(1, { message: 'must not be empty' }).max(200, { message: 'must be at most 200 characters' }),
    apiKey: z
      .string({ message: 'must be a string' })
      .trim()
      .min(1, { message: 'must not be empty' })
      .max(4096, { message: 'must be at most 4096 characters' })
      .nullish()
      .meta({ description: 'Stored encrypted, never returned. Absent keeps the current key; null removes it.' }),
  })
  .strict();

export type ListConversationsInput = z.input<typeof listConversationsInput>;
export type ListMessagesInput = z.input<typeof listMessagesInput>;
export type CreateConversationInput = z.input<typeof createConversationInput>;
export type RenameConversationInput = z.input<typeof renameConversationInput>;
export type SendMessageInput = z.input<typeof sendMessageInput>;
export type PutModelConfigInput = z.input<typeof putModelConfigInput>;
