import { z } from 'zod';
import { booleanQuery, pageQuery } from '../../pagination.js';

export const WORKSPACE_SORT_FIELDS = ['createdAt', 'updatedAt', 'name'] as const;
export type WorkspaceSortField = (typeof WORKSPACE_SORT_FIELDS)[number];
export const listWorkspacesInput = z
  .object({
    search: z.string().trim().max(200).optional(),
    ...pageQuery,
    sortBy: z.enum(WORKSPACE_SORT_FIELDS, { message: `must be one of: ${WORKSPACE_SORT_FIELDS.join(', ')}` }).default('createdAt'),
    isArchived: booleanQuery.optional(),
  })
  .strict();

const name = z.string().trim().min(1, { message: 'must not be empty' }).max(100, { message: 'must be at most 100 characters' });
const description = z.string().trim().max(1000, { message: 'must be at most 1000 characters' }).nullable();

export const createWorkspaceInput = z
  .object({
    name,
    description: description.optional(),
    isAssetsDiscovery: z.boolean({ message: 'must be true or false' }).optional(),
    isAutoEnableAssetAfterDiscovered: z.boolean({ message: 'must be true or false' }).optional(),
  })
  .strict();

export const updateWorkspaceInput = z
  .object({
    name: name.optional(),
    description: description.optional(),
    isAssetsDiscovery: z.boolean({ message: 'must be true or false' }).optional(),
    isAutoEnableAssetAfterDiscovered: z.boolean({ message: 'must be true or false' }).optional(),
  })
  .strict();

export const setArchivedInput = z.object({ isArchived: z.boolean({ message: 'must be true or false' }) }).strict();

export const memberRole = z.enum(['owner', 'member'], { message: 'must be owner or member' });

export const addMemberInput = z
  .object({ email: z.string().trim().toLowerCase().email({ message: 'must be a valid email address' }), role: memberRole.default('member') })
  .strict();

export const updateMemberInput = z.object({ role: memberRole }).strict();

export type ListWorkspacesInput = z.input<typeof listWorkspacesInput>;
export type CreateWorkspaceInput = z.infer<typeof createWorkspaceInput>;
export type UpdateWorkspaceInput = z.infer<typeof updateWorkspaceInput>;
export type AddMemberInput = z.input<typeof addMemberInput>;
