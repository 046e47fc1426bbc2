import { z } from 'zod';
import type { RestMeta } from '../../rest/trpc.js';
import { MAX_IMPORT_ENTRIES, MAX_EXPANSION_RATIO } from './import.js';
import { MAX_TEMPLATE_BYTES } from './schemas.js';

/** What the import operation says in the OpenAPI document (its procedure only documents it: import-route.ts serves it). */

export const IMPORT_DESCRIPTION =
  'The request body is the archive itself: `Content-Type: application/gzip` for a .tar.gz, `application/zip` for a .zip (415 otherwise), ' +
  'at most TEMPLATE_IMPORT_MAX_BYTES (64 MiB by default; 413 beyond). The archive is read entry by entry. Every `.yaml`/`.yml` file ' +
  "with top-level `id` and `info` (nuclei's rule) is a template and is judged as an upload is (POST /api/templates/upload); other files " +
  '(READMEs, helpers, payload lists, hidden folders) are skipped and not counted. A template is known by its nuclei id: one the workspace ' +
  'already has is updated in place when its content changed (its file name and enabled state stay) and left alone when it did not; a new ' +
  "id creates a template, named after the file (then its folder, then a counter, when the name is taken). Entries whose path leaves the archive's " +
  'folder (`..`), is absolute or holds a backslash, symbolic and hard links, devices, templates larger than ' +
  `${MAX_TEMPLATE_BYTES} bytes, invalid templates and a second template with an id already seen are reported as \`rejected\` with their errors; ` +
  'the rest is imported, in one transaction. The whole import is refused (400) when the archive cannot be read, has more than ' +
  `${MAX_IMPORT_ENTRIES} entries or expands to more than ${MAX_EXPANSION_RATIO} times the size limit.`;

export const IMPORT_ERRORS = {
  400: `Not a readable archive of the declared type, more than ${MAX_IMPORT_ENTRIES} entries, or one that expands too far; or no X-Workspace-Id`,
  401: 'Authentication required',
  403: 'Not an owner of the workspace',
  404: 'The workspace is not one of yours',
  409: 'A template was registered (POST /api/templates) under a file name the import chose while it ran: import again',
  413: 'The archive is larger than TEMPLATE_IMPORT_MAX_BYTES',
  415: 'The body is not application/gzip or application/zip',
};

const BINARY = { type: 'string', format: 'binary' };

export const IMPORT_UPLOAD: NonNullable<RestMeta['upload']> = {
  description: 'The template archive: a gzip-compressed tar or a zip',
  content: {
    'application/gzip': { schema: { ...BINARY, description: 'A .tar.gz archive.' } },
    'application/zip': { schema: { ...BINARY, description: 'A .zip archive.' } },
  },
};

const importedFileSchema = z
  .object({
    path: z.string().meta({ description: 'The entry inside the archive.' }),
    status: z.enum(['loaded', 'warnings', 'rejected']).meta({
      description: 'loaded: stored, and the engine runs all of it; warnings: stored, with features the engine does not run; rejected: not stored.',
    }),
    templateId: z.string().optional().meta({ description: 'The template record (GET /api/templates/{id}), for a stored file.' }),
    nucleiId: z.string().optional().meta({ description: "The template's own id (nuclei's `id`)." }),
    change: z.enum(['created', 'updated', 'unchanged']).optional().meta({ description: 'What the import did to the template record.' }),
    warnings: z.array(z.string()).optional().meta({ description: 'Features the engine does not run: `<field> (line L, column C): message`.' }),
    userVariables: z.array(z.string()).optional().meta({
      description:
        "Variables the template needs from the user: give them in the workspace's template settings or a scan's templateVariables. Absent when none.",
    }),
    errors: z.array(z.string()).optional().meta({ description: 'Why the entry was not imported.' }),
  })
  .meta({ id: 'TemplateImportFile' });

export const importResultSchema = z
  .object({
    totals: z
      .object({
        files: z
          .number()
          .int()
          .meta({ description: 'Entries reported in `files`: templates and refused entries (files that are not templates are not counted).' }),
        loaded: z.number().int(),
        warnings: z.number().int(),
        rejected: z.number().int(),
        created: z.number().int(),
        updated: z.number().int(),
        unchanged: z.number().int(),
      })
      .meta({ id: 'TemplateImportTotals' }),
    files: z.array(importedFileSchema),
  })
  .meta({ id: 'TemplateImportResult' });
