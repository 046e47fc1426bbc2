import { z } from 'zod';
import { uuidParam } from '../../rest/schemas.js';
import { CHANGE_TYPES } from './types.js';

export const MAX_CHANGES_PAGE = 200;
export const DEFAULT_CHANGES_PAGE = 50;

const changeType = z.enum(CHANGE_TYPES, { message: `must be one of: ${CHANGE_TYPES.join(', ')}` });

/** `?types=asset.gone,finding.opened` or `?types=asset.gone&types=finding.opened` (or both). */
const typesQuery = z
  .union([z.string(), z.array(z.string()).max(CHANGE_TYPES.length * 2)])
  .transform((value) =>
    (Array.isArray(value) ? value : [value])
      .flatMap((item) => item.split(','))
      .map((item) => item.trim())
      .filter(Boolean),
  )
  .pipe(z.array(changeType).max(CHANGE_TYPES.length * 2));

const instant = z.coerce.date({ message: 'must be an ISO 8601 date-time' }).refine((date) => !Number.isNaN(date.getTime()), 'must be an ISO 8601 date-time');

/** The feed's filters: the list's and the export's. */
export const changeFilters = z.object({
  types: typesQuery.optional(),
  /** Inclusive. */
  since: instant.optional(),
  /** Exclusive. */
  until: instant.optional(),
  assetId: uuidParam.optional(),
  targetId: uuidParam.optional(),
  scanId: uuidParam.optional(),
});

const sinceBeforeUntil = (input: { since?: Date; until?: Date }) => !input.since || !input.until || input.since < input.until;

export const listChangesInput = changeFilters
  .extend({
    cursor: z.string().max(200, { message: 'is not a cursor of this feed' }).optional(),
    limit: z.coerce
      .number({ message: 'must be a number' })
      .int({ message: 'must be a whole number' })
      .min(1, { message: 'must be at least 1' })
      .max(MAX_CHANGES_PAGE, { message: `must be at most ${MAX_CHANGES_PAGE}` })
      .default(DEFAULT_CHANGES_PAGE),
  })
  .strict()
  .refine(sinceBeforeUntil, { message: 'must be after since', path: ['until'] });

/** Every matching change, oldest first, one JSON object per line (`format=jsonl`). */
export const exportChangesInput = changeFilters
  .extend({ format: z.enum(['jsonl'], { message: 'must be one of: jsonl' }) })
  .strict()
  .refine(sinceBeforeUntil, { message: 'must be after since', path: ['until'] });

export type ExportChangesInput = z.input<typeof exportChangesInput>;
export type ListChangesInput = z.input<typeof listChangesInput>;
export type ListChangesQuery = z.output<typeof listChangesInput>;
