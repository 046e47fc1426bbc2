import { z } from 'zod';

/**
 * Offset paging shared by every REST list: the query pieces (page, limit, sortOrder), the envelope the seed
 * describes (2.3) and the small helpers every list service needs.
 */

export const SORT_ORDERS = ['ASC', 'DESC'] as const;
export type SortOrder = (typeof SORT_ORDERS)[number];
export const MAX_PAGE_SIZE = 100;

/** Spread into a list's zod object: `z.object({ ...pageQuery, sortBy: ... })`. */
export const pageQuery = {
  page: z.coerce
    .number({ message: 'must be a number' })
    .int({ message: 'must be a whole number' })
    .min(1, { message: 'must be at least 1' })
    .max(1_000_000)
    .default(1),
  limit: z.coerce
    .number({ message: 'must be a number' })
    .int({ message: 'must be a whole number' })
    .min(1, { message: 'must be at least 1' })
    .max(MAX_PAGE_SIZE, { message: `must be at most ${MAX_PAGE_SIZE}` })
    .default(10),
  sortOrder: z
    .string()
    .transform((value) => value.toUpperCase())
    .pipe(z.enum(SORT_ORDERS, { message: `must be one of: ${SORT_ORDERS.join(', ')}` }))
    .default('DESC'),
};

/** A `sortBy` query field over the given columns. */
export function sortByQuery<const T extends readonly [string, ...string[]]>(fields: T, fallback: T[number]) {
  return z.enum(fields, { message: `must be one of: ${fields.join(', ')}` }).default(fallback as never);
}

/** Query strings arrive as text: booleans are spelled out, never coerced from any non-empty string. */
export const booleanQuery = z.preprocess(
  (value) => (value === 'true' ? true : value === 'false' ? false : value),
  z.boolean({ message: 'must be true or false' }),
);

/** A free-text filter: trimmed, bounded, and absent when blank. */
export const searchQuery = z
  .string()
  .trim()
  .max(200, { message: 'must be at most 200 characters' })
  .transform((value) => value || undefined);

export interface Page<T> {
  data: T[];
  total: number;
  page: number;
  limit: number;
  hasNextPage: boolean;
  pageCount: number;
}

export function pageEnvelope<T>(data: T[], total: number, page: number, limit: number): Page<T> {
  const pageCount = Math.ceil(total / limit);
  return { data, total, page, limit, hasNextPage: page < pageCount, pageCount };
}

/**
 * A REST page whose items a statement already wrote as JSON text, in the route's item schema (see
 * agents/messages-page-json.ts): the REST facade writes the envelope through the route's serializer and sends
 * the text as `data` (rest/served-procedure.ts). `T` is the item type the text stands for.
 */
export class SerializedPage<T> {
  /** Type only (never set): what the text stands for. */
  declare readonly items: T;
  constructor(
    /** A JSON array. */
    readonly itemsJson: string,
    /** The envelope's other fields, `data` empty. */
    readonly envelope: Page<never>,
  ) {}
}

export function serializedPage<T>(itemsJson: string, total: number, page: number, limit: number): SerializedPage<T> {
  return new SerializedPage<T>(itemsJson, pageEnvelope([], total, page, limit));
}

/** Prisma's skip/take for a 1-based page. */
export function pageWindow(page: number, limit: number): { skip: number; take: number } {
  return { skip: (page - 1) * limit, take: limit };
}

export function prismaDirection(sortOrder: SortOrder): 'asc' | 'desc' {
  return sortOrder === 'ASC' ? 'asc' : 'desc';
}

/** Prisma's `contains` is ILIKE '%' || value || '%' with the value as is: escape LIKE's own wildcards. */
export function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, '\\$&');
}
