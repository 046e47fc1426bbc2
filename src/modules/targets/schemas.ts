import { z } from 'zod';
import { pageQuery, searchQuery, sortByQuery } from '../../pagination.js';

export const TARGET_TYPES = ['domain', 'ip', 'cidr', 'url'] as const;
export const TARGET_SORT_FIELDS = ['createdAt', 'value', 'lastScannedAt'] as const;
export const MAX_BULK_TARGETS = 500;

/** The raw text a person typed; normalizeTarget() decides what it is and how it is spelled. */
const targetValue = z.string({ message: 'must be a string' }).max(2048, { message: 'must be at most 2048 characters' });

export const createTargetInput = z.object({ value: targetValue }).strict();

export const createTargetsInput = z
  .object({
    targets: z
      .array(z.object({ value: targetValue }).strict(), { message: 'must be a list of {value}' })
      .min(1, { message: 'must hold at least one target' })
      .max(MAX_BULK_TARGETS, { message: `must hold at most ${MAX_BULK_TARGETS} targets` }),
  })
  .strict();

export const listTargetsInput = z
  .object({
    ...pageQuery,
    search: searchQuery.optional(),
    type: z.enum(TARGET_TYPES, { message: `must be one of: ${TARGET_TYPES.join(', ')}` }).optional(),
    sortBy: sortByQuery(TARGET_SORT_FIELDS, 'createdAt'),
  })
  .strict();

export type CreateTargetInput = z.input<typeof createTargetInput>;
export type CreateTargetsInput = z.input<typeof createTargetsInput>;
export type ListTargetsInput = z.input<typeof listTargetsInput>;
