import { z } from 'zod';
import { pageQuery, searchQuery, sortByQuery } from '../../pagination.js';
import { uuidParam } from '../../rest/schemas.js';

export const SEVERITIES = ['info', 'low', 'medium', 'high', 'critical'] as const;
export const FINDING_STATUSES = ['open', 'fixed', 'dismissed'] as const;
export const FINDING_STATUS_FILTERS = [...FINDING_STATUSES, 'all'] as const;
export const DISMISS_REASONS = ['false_positive', 'accepted_risk', 'not_applicable', 'mitigated', 'other'] as const;
export const FINDING_SORT_FIELDS = ['lastSeenAt', 'firstSeenAt', 'severity', 'name'] as const;
export const FINDING_EVENT_TYPES = ['opened', 'seen', 'fixed', 'reopened', 'dismissed'] as const;
export const MAX_TRIAGE_IDS = 500;

export type Severity = (typeof SEVERITIES)[number];
export type FindingStatus = (typeof FINDING_STATUSES)[number];
export type FindingStatusFilter = (typeof FINDING_STATUS_FILTERS)[number];
export type DismissReason = (typeof DISMISS_REASONS)[number];

const severity = z.enum(SEVERITIES, { message: `must be one of: ${SEVERITIES.join(', ')}` });

/** Repeatable query parameters (`?severity=high&severity=critical`): the REST adapter hands one value as a list of one. */
const targetIds = z.array(uuidParam).max(100, { message: 'must name at most 100 targets' });

export const listFindingsInput = z
  .object({
    ...pageQuery,
    severity: z.array(severity).max(SEVERITIES.length).optional(),
    status: z.enum(FINDING_STATUS_FILTERS, { message: `must be one of: ${FINDING_STATUS_FILTERS.join(', ')}` }).default('open'),
    targetIds: targetIds.optional(),
    assetId: uuidParam.optional(),
    q: searchQuery.optional(),
    sortBy: sortByQuery(FINDING_SORT_FIELDS, 'lastSeenAt'),
  })
  .strict();

export const findingStatisticsInput = z.object({ targetIds: targetIds.optional() }).strict();

const findingIds = z
  .array(uuidParam, { message: 'must be a list of finding ids' })
  .min(1, { message: 'must name at least one finding' })
  .max(MAX_TRIAGE_IDS, { message: `must name at most ${MAX_TRIAGE_IDS} findings` });

const comment = z.string().trim().max(2000, { message: 'must be at most 2000 characters' });

export const dismissFindingsInput = z
  .object({
    ids: findingIds,
    reason: z.enum(DISMISS_REASONS, { message: `must be one of: ${DISMISS_REASONS.join(', ')}` }),
    comment: comment.optional(),
  })
  .strict();

export const reopenFindingsInput = z.object({ ids: findingIds, comment: comment.optional() }).strict();

export type ListFindingsInput = z.input<typeof listFindingsInput>;
export type FindingStatisticsInput = z.input<typeof findingStatisticsInput>;
export type DismissFindingsInput = z.input<typeof dismissFindingsInput>;
export type ReopenFindingsInput = z.input<typeof reopenFindingsInput>;
