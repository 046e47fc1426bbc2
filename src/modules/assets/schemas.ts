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

/**
 * A JSON body boolean, never coerced: trpc-to-openapi marks bare z.boolean() fields of REST inputs `coerce`
 * (meant for query strings), which would read "false" as true. It leaves a pipe alone.
 */
const jsonBoolean = () => z.boolean({ message: 'must be true or false' }).pipe(z.boolean());

export const updateAssetInput = z.object({ enabled: jsonBoolean() }).strict();

export type ListAssetsInput = z.input<typeof listAssetsInput>;
export type UpdateAssetInput = z.input<typeof updateAssetInput>;
