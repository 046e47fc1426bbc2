import { z } from 'zod';
import { listFindingsInput } from '../vulnerabilities/schemas.js';
import { listAssetsInput } from '../assets/schemas.js';

export const FINDING_EXPORT_FORMATS = ['csv', 'json', 'sarif'] as const;
export const ASSET_EXPORT_FORMATS = ['csv', 'json'] as const;
export type FindingExportFormat = (typeof FINDING_EXPORT_FORMATS)[number];
export type AssetExportFormat = (typeof ASSET_EXPORT_FORMATS)[number];

/** Rows read per database round trip: the most an export holds in memory at once. */
export const EXPORT_BATCH_SIZE = 1000;

function formatField<const T extends readonly [string, ...string[]]>(formats: T) {
  return z.enum(formats, { message: `must be one of: ${formats.join(', ')}` });
}

/**
 * The list's own filters (same names, same rules, same defaults: open findings unless `status` says otherwise)
 * without its paging and sorting: an export is every matching row, in id order. `format` is required.
 */
export const exportFindingsInput = listFindingsInput.omit({ page: true, limit: true, sortBy: true, sortOrder: true }).extend({
  format: formatField(FINDING_EXPORT_FORMATS),
});

export const exportAssetsInput = listAssetsInput.omit({ page: true, limit: true, sortBy: true, sortOrder: true }).extend({
  format: formatField(ASSET_EXPORT_FORMATS),
});

export type ExportFindingsInput = z.input<typeof exportFindingsInput>;
export type ExportAssetsInput = z.input<typeof exportAssetsInput>;
