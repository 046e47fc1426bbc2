import { z } from 'zod';
import { booleanQuery } from '../../pagination.js';

/** At most this many keys may be valid at once in a workspace: a leak of many keys is a leak. */
export const MAX_ACTIVE_KEYS = 25;

export const createWorkspaceApiKeyInput = z
  .object({
    name: z.string({ message: 'must be a string' }).trim().min(1, { message: 'must not be empty' }).max(100, { message: 'must be at most 100 characters' }),
  })
  .strict();

export const listWorkspaceApiKeysInput = z
  .object({
    /** Revoked keys are history; listed only when asked for. */
    includeRevoked: booleanQuery.default(false),
  })
  .strict();

export type CreateWorkspaceApiKeyInput = z.input<typeof createWorkspaceApiKeyInput>;
export type ListWorkspaceApiKeysInput = z.input<typeof listWorkspaceApiKeysInput>;
