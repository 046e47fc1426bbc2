import { z } from 'zod';
import { pageQuery, searchQuery, booleanQuery } from '../../pagination.js';

/** Uploaded template files live in the blob store under this prefix, one object per template record. */
export const TEMPLATE_KEY_PREFIX = 'nuclei-templates/';

/** A template is a small YAML file; the biggest public nuclei templates are a few tens of KiB. Beyond: 413. */
export const MAX_TEMPLATE_BYTES = 256 * 1024;

export function templateStorageKey(templateId: string): string {
  return `${TEMPLATE_KEY_PREFIX}${templateId}.yaml`;
}

/** The payload files an imported template reads, stored beside it (import-files.ts). */
export function templatePayloadFilesKey(templateId: string): string {
  return `${TEMPLATE_KEY_PREFIX}${templateId}.payloads.json`;
}

/** A JSON body boolean, never coerced (see tools/schemas.ts: a coercing boolean would read "false" as true). */
const jsonBoolean = () => z.boolean({ message: 'must be true or false' }).pipe(z.boolean());

/** A plain file name: no directories, a YAML extension, characters that are safe in any file system and log. */
const fileName = z
  .string({ message: 'must be a string' })
  .trim()
  .min(1, { message: 'must not be empty' })
  .max(128, { message: 'must be at most 128 characters' })
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*\.ya?ml$/, {
    message: 'must be a file name ending in .yaml or .yml, made of letters, digits, dot, dash and underscore (no folders)',
  });

export const createTemplateInput = z.object({ fileName }).strict();

export const uploadTemplateInput = z
  .object({
    templateId: z
      .string({ message: 'must be a string' })
      .uuid({ message: 'must be a UUID' })
      .meta({ description: 'The template record (POST /api/templates) the content belongs to.' }),
    // No length limit here: oversized content is a 413, decided by the service, not a 400.
    fileContent: z
      .string({ message: 'must be a string' })
      .meta({ description: `The nuclei template, YAML text, at most ${MAX_TEMPLATE_BYTES} bytes (UTF-8).` }),
  })
  .strict();

export const updateTemplateInput = z
  .object({
    fileName: fileName.optional().meta({ description: "Renames the template (the workspace's own templates only)." }),
    enabled: jsonBoolean().optional().meta({ description: "Whether scans of this workspace run the template (built-in templates: this workspace's choice)." }),
  })
  .strict();

export const setTemplateEnabledInput = z.object({ enabled: jsonBoolean() }).strict();

export const TEMPLATE_SORT_FIELDS = ['fileName', 'createdAt', 'updatedAt'] as const;

export const listTemplatesInput = z
  .object({
    ...pageQuery,
    limit: pageQuery.limit.default(100),
    sortBy: z.enum(TEMPLATE_SORT_FIELDS, { message: `must be one of: ${TEMPLATE_SORT_FIELDS.join(', ')}` }).default('fileName'),
    sortOrder: pageQuery.sortOrder.default('ASC'),
    search: searchQuery.optional().meta({ description: 'Matches the file name, the nuclei id or the name (case-insensitive).' }),
    builtin: booleanQuery.optional().meta({ description: "true: only the built-in pack; false: only the workspace's own." }),
  })
  .strict();

export type CreateTemplateInput = z.input<typeof createTemplateInput>;
export type UploadTemplateInput = z.input<typeof uploadTemplateInput>;
export type UpdateTemplateInput = z.input<typeof updateTemplateInput>;
export type ListTemplatesInput = z.input<typeof listTemplatesInput>;
