import { z } from 'zod';
import { isoString } from '../iso-string.js';

/**
 * Dates leave as ISO 8601 strings, documented as date-time. The output check turns them into text itself (tRPC
 * sends what the output schema returns): JSON.stringify leaves its fast path at every object with a toJSON, and
 * a list page holds a few hundred dates, so stringifying Dates cost about four times as much as the same text.
 */
export const dateTime = z
  .date()
  .transform(isoString)
  .meta({ override: { type: 'string', format: 'date-time' } });

export const uuidParam = z.string().uuid({ message: 'must be a UUID' });

export const idParam = z.object({ id: uuidParam }).strict();

export const errorSchema = z
  .object({
    statusCode: z.number().int(),
    error: z.string(),
    code: z.string(),
    message: z.string(),
    details: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
    retryAfterSeconds: z.number().int().optional(),
  })
  .meta({ id: 'Error', description: 'Every REST error has this shape.' });

export function pageSchema<T extends z.ZodType>(item: T) {
  return z.object({
    data: z.array(item),
    total: z.number().int(),
    page: z.number().int(),
    limit: z.number().int(),
    hasNextPage: z.boolean(),
    pageCount: z.number().int(),
  });
}

export const emptyInput = z.object({}).strict().optional();
export const successOutput = z.object({ success: z.boolean() });
export const idOutput = z.object({ id: z.string() });
