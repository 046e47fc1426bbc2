import { z } from 'zod';
import { booleanQuery, pageQuery, searchQuery, sortByQuery } from '../../pagination.js';
import { uuidParam } from '../../rest/schemas.js';
import { DISCOVERY_SOURCES } from '../../scanner/discovery/types.js';

export const ASSET_KINDS = ['host', 'service', 'web', 'certificate'] as const;
export const ASSET_SORT_FIELDS = ['lastSeenAt', 'firstSeenAt', 'value'] as const;
export type AssetKind = (typeof ASSET_KINDS)[number];
export { DISCOVERY_SOURCES };
/** Ids per bulk update. */
export const MAX_BULK_ASSET_IDS = 1000;

export const discoverySource = z.enum(DISCOVERY_SOURCES, { message: `must be one of: ${DISCOVERY_SOURCES.join(', ')}` });

export const listAssetsInput = z
  .object({
    ...pageQuery,
    kind: z.enum(ASSET_KINDS, { message: `must be one of: ${ASSET_KINDS.join(', ')}` }).optional(),
    targetId: uuidParam.optional(),
    search: searchQuery.optional(),
    enabled: booleanQuery.optional(),
    source: discoverySource.optional(),
    dismissed: booleanQuery.optional(),
    sortBy: sortByQuery(ASSET_SORT_FIELDS, 'lastSeenAt'),
  })
  .strict();

/**
 * The changes an update may ask for; at least one of them (see `requireAChange`). Fresh schemas per body: the
 * REST edge pins each body's boolean fields to non-coercing, once per field schema (src/rest/input-coercion.ts).
 */
function assetChangeFields() {
  return {
    enabled: z.boolean({ message: 'must be true or false' }).optional(),
    dismissed: z.boolean({ message: 'must be true or false' }).optional(),
  };
}

type Change = { enabled?: boolean; dismissed?: boolean };

/**
 * Rules across fields, checked by the service. The REST layer declares the plain strict objects: the OpenAPI
 * generator rebuilds a refined body schema without its strictness (additionalProperties) when documenting it.
 */
export function requireAChange<T extends z.ZodType<Change>>(schema: T) {
  return schema
    .refine((value) => value.enabled !== undefined || value.dismissed !== undefined, { message: 'send enabled and/or dismissed' })
    .refine((value) => !(value.enabled === true && value.dismissed === true), {
      message: 'a dismissed asset cannot be enabled: send enabled: true alone to take it back',
      path: ['dismissed'],
    });
}

export const updateAssetBody = z.object(assetChangeFields()).strict();
export const updateAssetInput = requireAChange(updateAssetBody);

export const assetIds = z
  .array(uuidParam, { message: 'must be a list of asset ids' })
  .min(1, { message: 'must name at least one asset' })
  .max(MAX_BULK_ASSET_IDS, { message: `must name at most ${MAX_BULK_ASSET_IDS} assets` });

export const updateAssetsBody = z.object({ ids: assetIds, ...assetChangeFields() }).strict();
export const updateAssetsInput = requireAChange(updateAssetsBody);

export type ListAssetsInput = z.input<typeof listAssetsInput>;
export type UpdateAssetInput = z.input<typeof updateAssetInput>;
export type UpdateAssetsInput = z.input<typeof updateAssetsInput>;
