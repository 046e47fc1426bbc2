import { z } from 'zod';
import { pageQuery } from '../../pagination.js';
import { scanOptionsInput as anyScanOptions } from '../scans/schemas.js';

/** A schedule's options are stored as given and read back: no template variables (secrets) there, the workspace's apply. */
const scanOptionsInput = anyScanOptions.omit({ templateVariables: true });

/** Shapes only: whether the cron expression and zone make sense, and how often they fire, is cadence.ts's. */
const cron = z
  .string({ message: 'must be a string such as "0 3 * * *"' })
  .trim()
  .min(1, { message: 'must not be empty' })
  .max(200, { message: 'must be at most 200 characters' });
const timeZone = z
  .string({ message: 'must be an IANA time zone such as Europe/Paris' })
  .trim()
  .min(1, { message: 'must not be empty' })
  .max(64, { message: 'must be at most 64 characters' });

export const createScheduleInput = z
  .object({
    targetId: z
      .string()
      .uuid({ message: 'must be a UUID' })
      .nullish()
      .meta({ description: 'The target to scan; absent or null scans every target of the workspace at each tick.' }),
    cron: cron.meta({ description: 'Five fields: minute hour day-of-month month day-of-week, e.g. "0 3 * * 1".' }),
    timeZone: timeZone.default('UTC').meta({ description: 'IANA time zone the cron expression is read in (default UTC).' }),
    options: scanOptionsInput.optional().meta({ description: "Scan options for every scan it starts; absent fields take the workspace's default profile." }),
    enabled: z.boolean({ message: 'must be true or false' }).default(true),
  })
  .strict();

export const updateScheduleInput = z
  .object({
    cron: cron.optional(),
    timeZone: timeZone.optional(),
    options: scanOptionsInput.optional().meta({ description: 'Replaces the scan options as a whole.' }),
    enabled: z.boolean({ message: 'must be true or false' }).optional(),
  })
  .strict();

export const listSchedulesInput = z
  .object({
    ...pageQuery,
    targetId: z.string().uuid({ message: 'must be a UUID' }).optional(),
  })
  .strict();

export const listRunsInput = z.object({ ...pageQuery }).strict();

export type CreateScheduleInput = z.input<typeof createScheduleInput>;
export type UpdateScheduleInput = z.input<typeof updateScheduleInput>;
export type ListSchedulesInput = z.input<typeof listSchedulesInput>;
export type ListRunsInput = z.input<typeof listRunsInput>;

/** What one firing did for one target. */
export type RunOutcome = { targetId: string; scanId: string } | { targetId: string; skipped: string };
export const RUN_TRIGGERS = ['schedule', 'manual'] as const;
export type RunTrigger = (typeof RUN_TRIGGERS)[number];
