import type { RestMeta } from '../../rest/trpc.js';
import { EXPORT_BATCH_SIZE } from './schemas.js';
import { SARIF_SCHEMA_URI } from './sarif.js';

/** What the export operations say in the OpenAPI document (their procedures only document them: route.ts serves them). */

const COMMON =
  `Every matching row, in id order, streamed as it is read (${EXPORT_BATCH_SIZE} rows per database read), so any size exports in bounded memory. ` +
  'The file is an attachment named `perimeter-<workspace>-<what>-<YYYY-MM-DD>.<ext>`. Errors found before the first byte (401, 400 naming the field, ' +
  '404 for a workspace that is not yours) answer the Error shape; a failure after it cuts the response short (an unterminated chunked body). ' +
  'Rows written while an export runs may or may not be in it. CSV: RFC 4180 (header row, CRLF, quoted fields), UTF-8 without a byte order mark; ' +
  'a text cell starting with = + - @, a tab or a carriage return is prefixed with a single quote (OWASP: formula injection). ';

export const FINDINGS_EXPORT_DESCRIPTION =
  COMMON +
  "The filters are the list's (GET /api/vulnerabilities, open findings unless `status` says otherwise), without paging or sorting. " +
  'JSON: an array of the list\'s elements. SARIF 2.1.0: one run of the tool "Perimeter", a rule per check id, a result per finding ' +
  "(level from severity: critical/high error, medium warning, low/info note; the asset's URL as artifact location, its host as logical location; " +
  '`partialFingerprints["perimeterFingerprint/v1"]` our fingerprint; properties severity, status, cve, cwe; dismissed findings are suppressed).';

export const ASSETS_EXPORT_DESCRIPTION = `${COMMON}The filters are the list's (GET /api/assets), without paging or sorting. JSON: an array of the list's elements.`;

const CSV = { schema: { type: 'string', description: 'RFC 4180 CSV with a header row.' } };

export const FINDINGS_EXPORT_DOWNLOAD: NonNullable<RestMeta['download']> = {
  description: 'The findings, in the format asked for (Content-Type says which)',
  content: {
    'text/csv': CSV,
    'application/sarif+json': { schema: { type: 'object', description: `A SARIF 2.1.0 log, valid against ${SARIF_SCHEMA_URI}.` } },
  },
};

export const ASSETS_EXPORT_DOWNLOAD: NonNullable<RestMeta['download']> = {
  description: 'The assets, in the format asked for (Content-Type says which)',
  content: { 'text/csv': CSV },
};

export const CHANGES_EXPORT_DESCRIPTION =
  "Every change of the feed matching the list's filters (GET /api/changes: types, since, until, assetId, targetId, scanId), oldest first, " +
  `streamed as JSON lines (one change event per line, the list's element shape; ${EXPORT_BATCH_SIZE} rows per database read). ` +
  'The file is an attachment named `perimeter-<workspace>-changes-<YYYY-MM-DD>.jsonl`. Errors found before the first byte answer the Error shape.';

export const CHANGES_EXPORT_DOWNLOAD: NonNullable<RestMeta['download']> = {
  description: 'The change events, one JSON object per line',
  content: { 'application/jsonl': { schema: { type: 'string', description: 'JSON lines: one change event per line.' } } },
};
