import { z } from 'zod';
import { AppError } from '../../errors.js';
import { router } from '../../rest/trpc.js';
import { requestHeaders, workspaceProcedure } from '../../rest/procedures.js';
import { dateTime, idOutput, idParam, pageSchema, uuidParam } from '../../rest/schemas.js';
import * as templates from './service.js';
import { createTemplateInput, listTemplatesInput, MAX_TEMPLATE_BYTES, updateTemplateInput, uploadTemplateInput } from './schemas.js';
import { IMPORT_DESCRIPTION, IMPORT_ERRORS, IMPORT_UPLOAD, importResultSchema } from './import-openapi.js';

const issueSchema = z
  .object({
    path: z.string().meta({ description: "Where in the template, in nuclei's field names (e.g. http[0].matchers[1].type); empty for the whole document." }),
    message: z.string(),
    line: z.number().int().optional().meta({ description: '1-based line of the YAML text.' }),
    column: z.number().int().optional().meta({ description: '1-based column of the YAML text.' }),
  })
  .meta({ id: 'TemplateIssue' });

const templateSchema = z
  .object({
    id: z.string(),
    workspaceId: z.string().nullable().meta({ description: 'Null for a built-in template (the default pack of this release).' }),
    fileName: z.string(),
    nucleiId: z
      .string()
      .nullable()
      .meta({ description: "The template's own id (nuclei's `id` field), once content is uploaded: the check id of its findings." }),
    name: z.string().nullable().meta({ description: 'info.name' }),
    severity: z.enum(['info', 'low', 'medium', 'high', 'critical']).nullable().meta({ description: "info.severity (nuclei's `unknown` is reported as info)." }),
    tags: z.array(z.string()),
    builtin: z.boolean(),
    enabled: z.boolean().meta({ description: 'In this workspace: whether its scans run the template.' }),
    uploaded: z.boolean().meta({ description: 'Whether the template has content to run.' }),
    path: z
      .string()
      .nullable()
      .meta({ description: 'Storage location of the content (nuclei-templates/<id>.yaml); null for built-in templates and before an upload.' }),
    checksum: z.string().nullable().meta({ description: 'sha256 of the content, hex.' }),
    sizeBytes: z.number().int().nullable(),
    warnings: z.array(issueSchema).meta({ description: 'Features of the template the engine does not run (it runs the rest).' }),
    userVariables: z.array(z.string()).meta({
      description:
        "Variables the template needs from the user ({{username}}, {{token}}...): give them in the workspace's template settings or a scan's templateVariables; until then scans skip it. Not a warning.",
    }),
    createdById: z.string().nullable(),
    createdAt: dateTime,
    updatedAt: dateTime,
  })
  .meta({ id: 'Template' });

const templateWithContentSchema = templateSchema
  .extend({ content: z.string().nullable().meta({ description: 'The YAML text; null before the first upload.' }) })
  .meta({ id: 'TemplateWithContent' });

const uploadResultSchema = z
  .object({
    path: z.string().meta({ description: 'The storage location of the template: nuclei-templates/<templateId>.yaml.' }),
    warnings: z.array(issueSchema).meta({ description: 'Features the engine does not run (kept on the template).' }),
    template: templateSchema,
  })
  .meta({ id: 'TemplateUploadResult' });

const tags = ['Templates'];

/** Static paths first: the first procedure whose path matches serves the request. */
export const templatesRest = router({
  list: workspaceProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/templates',
        tags,
        summary: "List the built-in templates and the workspace's own, with whether each is enabled here",
        requestHeaders,
      },
    })
    .input(listTemplatesInput)
    .output(pageSchema(templateSchema))
    .query(({ ctx, input }) => templates.listTemplates(ctx.svc, ctx.workspaceId, input)),

  create: workspaceProcedure
    .meta({
      errors: { 409: 'The workspace already has a template with this file name' },
      successStatus: 201,
      openapi: {
        method: 'POST',
        path: '/api/templates',
        tags,
        summary: 'Register a template in the workspace (owners); its content comes with POST /api/templates/upload',
        requestHeaders,
      },
    })
    .input(createTemplateInput)
    .output(templateSchema)
    .mutation(({ ctx, input }) => templates.createTemplate(ctx.svc, ctx.workspaceId, input)),

  upload: workspaceProcedure
    .meta({
      // The service refuses content that is not text (NUL included) naming its line and column.
      textCheckedBy: ['fileContent'],
      openapi: {
        method: 'POST',
        path: '/api/templates/upload',
        tags,
        summary: "Upload a template's content to storage (owners)",
        description:
          `The content must be a nuclei template (YAML) the engine can read: id, info.name, info.severity, HTTP requests, valid matchers and extractors; at most ${MAX_TEMPLATE_BYTES} bytes (413 beyond). ` +
          'A 400 lists every problem in `details`, each `field` naming the template field and its line and column. Features the engine does not run come back as `warnings` and stay on the template.',
        requestHeaders,
        errorResponses: {
          400: 'Not a valid nuclei template (details give the field, line and column of each problem), or not text',
          401: 'Authentication required',
          403: 'Not an owner of the workspace, or a built-in template',
          404: 'No such template in this workspace',
          409: 'Another template of the workspace has the same id',
          413: `The content is larger than ${MAX_TEMPLATE_BYTES} bytes`,
        },
      },
    })
    .input(uploadTemplateInput)
    .output(uploadResultSchema)
    .mutation(({ ctx, input }) => templates.uploadTemplate(ctx.svc, ctx.workspaceId, input)),

  // Served by the import route (import-route.ts) before the REST handler: the body is the archive itself.
  import: workspaceProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/templates/import',
        tags,
        summary: 'Import a template library from a .tar.gz or .zip archive (owners)',
        description: IMPORT_DESCRIPTION,
        requestHeaders,
        errorResponses: IMPORT_ERRORS,
      },
      upload: IMPORT_UPLOAD,
    })
    .input(z.object({}).strict().optional())
    .output(importResultSchema)
    .mutation((): never => {
      throw new AppError('INTERNAL', 'The import is served by its own route');
    }),

  get: workspaceProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/templates/{id}', tags, summary: 'Get one template as the workspace sees it, with its content', requestHeaders },
    })
    .input(idParam)
    .output(templateWithContentSchema)
    .query(({ ctx, input }) => templates.getTemplate(ctx.svc, ctx.workspaceId, input.id)),

  update: workspaceProcedure
    .meta({
      errors: { 409: 'The workspace already has a template with this file name' },
      openapi: {
        method: 'PATCH',
        path: '/api/templates/{id}',
        tags,
        summary: "Rename the workspace's own template, or enable/disable any template for the workspace (owners; built-in templates take only enabled)",
        requestHeaders,
      },
    })
    .input(updateTemplateInput.extend({ id: uuidParam }))
    .output(templateSchema)
    .mutation(({ ctx, input: { id, ...patch } }) => templates.updateTemplate(ctx.svc, ctx.workspaceId, id, patch)),

  delete: workspaceProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/api/templates/{id}',
        tags,
        summary: "Delete the workspace's own template and its content (owners); its findings stay",
        requestHeaders,
      },
    })
    .input(idParam)
    .output(idOutput)
    .mutation(({ ctx, input }) => templates.deleteTemplate(ctx.svc, ctx.workspaceId, input.id)),
});
