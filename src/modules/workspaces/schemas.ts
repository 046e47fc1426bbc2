import { z } from 'zod';

export const WORKSPACE_SORT_FIELDS = ['createdAt', 'updatedAt', 'name'] as const;
export const SORT_ORDERS = ['ASC', 'DESC'] as const;
export const MAX_PAGE_SIZE = 100;

/** Query strings arrive as text: booleans are spelled out, never coerced from any non-empty string. */
const booleanQuery = z.preprocess(
  (value) => (value === 'true' ? true : value === 'false' ? false : value),
  z.boolean({ message: 'must be true or false' }),
);

export const pageQuery = {
  page: z.coerce.number({ message: 'must be a number' }).int({ message: 'must be a whole number' }).min(1, { message: 'must be at least 1' }).max(1_000_000).default(1),
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
