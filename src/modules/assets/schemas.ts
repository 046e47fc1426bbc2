import { z } from 'zod';
import { booleanQuery, pageQuery, searchQuery, sortByQuery } from '../../pagination.js';
import { uuidParam } from '../../rest/schemas.js';

export const ASSET_KINDS = ['host', 'service', 'web', 'certificate'] as const;
export const ASSET_SORT_FIELDS = ['lastSeenAt', 'firstSeenAt', 'value'] as const;
export type AssetKind = (typeof ASSET_KINDS)[number];

export const listAssetsInput = z
  .object({
    ...pageQuery,
    kind: z.enum(ASSET_KINDS, { message: `must be one of: ${ASSET_KINDS.join(', ')}` }).optional(),
    targetId: uuidParam.optional(),
    search: searchQuery.optional(),
    enabled: booleanQuery.optional(),
    sortBy: sortByQuery(ASSET_SORT_FIELDS, 'lastSeenAt'),
  })
  .strict();

export const updateAssetInput = z.object({ enabled: z.boolean({ message: 'must be true or false' }) }).strict();

export type ListAssetsInput = z.input<typeof listAssetsInput>;
export type UpdateAssetInput = z.input<typeof updateAssetInput>;
