import { builder } from '../../graphql/builder.js';
import { decodeId, decodeQueryId } from '../../graphql/ids.js';
import { WorkspaceRef } from '../workspaces/graphql.js';
import { SeverityEnum } from '../vulnerabilities/graphql.js';
import type { TemplateIssue } from '../../scanner/nuclei/index.js';
import * as templates from './service.js';
import { archiveFromBase64, importTemplates, type ImportResult, type ImportTotals } from './import.js';
import type { ImportedFile } from './import-plan.js';

const TemplateIssueRef = builder.objectRef<TemplateIssue>('TemplateIssue').implement({
  description: 'A feature of a template the engine does not run, or a problem with it.',
  fields: (t) => ({
    path: t.exposeString('path', {
      description: "Where in the template, in nuclei's field names (e.g. http[0].matchers[1].type); empty for the whole document.",
    }),
    message: t.exposeString('message'),
    line: t.exposeInt('line', { nullable: true }),
    column: t.exposeInt('column', { nullable: true }),
  }),
});

export const TemplateRef = builder.objectRef<templates.TemplateResponse>('Template').implement({
  description: 'A nuclei template: one of the built-in pack or one the workspace uploaded, as one workspace sees it.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The UUID the REST API uses.' }),
    fileName: t.exposeString('fileName'),
    nucleiId: t.exposeString('nucleiId', { nullable: true, description: "The template's own id, once content is uploaded: the check id of its findings." }),
    name: t.exposeString('name', { nullable: true }),
    severity: t.expose('severity', { type: SeverityEnum, nullable: true, description: "info.severity (nuclei's `unknown` is reported as info)." }),
    tags: t.exposeStringList('tags'),
    builtin: t.exposeBoolean('builtin'),
    enabled: t.exposeBoolean('enabled', { description: 'In this workspace: whether its scans run the template.' }),
    uploaded: t.exposeBoolean('uploaded', { description: 'Whether the template has content to run.' }),
    path: t.exposeString('path', { nullable: true, description: 'Storage location of the content; null for built-in templates and before an upload.' }),
    checksum: t.exposeString('checksum', { nullable: true }),
    sizeBytes: t.exposeInt('sizeBytes', { nullable: true }),
    warnings: t.field({ type: [TemplateIssueRef], resolve: (template) => template.warnings }),
    userVariables: t.exposeStringList('userVariables', {
      description:
        "Variables the template needs from the user ({{username}}, {{token}}...): give them in the workspace's template settings or a scan's templateVariables; until then scans skip it.",
    }),
    content: t.loadable({
      type: 'String',
      nullable: true,
      description: 'The YAML text (read from storage); null before the first upload.',
      load: (keys: templates.TemplateResponse[], ctx) => templates.contentsOfTemplates(ctx, keys),
      resolve: (template) => template,
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

const TemplateUploadRef = builder.objectRef<templates.UploadResult>('TemplateUpload').implement({
  fields: (t) => ({
    path: t.exposeString('path', { description: 'The storage location: nuclei-templates/<templateId>.yaml.' }),
    warnings: t.field({ type: [TemplateIssueRef], resolve: (upload) => upload.warnings }),
    template: t.field({ type: TemplateRef, resolve: (upload) => upload.template }),
  }),
});

const TemplateArchiveFormatEnum = builder.enumType('TemplateArchiveFormat', {
  values: {
    tar_gz: { value: 'tar.gz', description: 'A gzip-compressed tar (.tar.gz, .tgz).' },
    zip: { value: 'zip', description: 'A .zip archive.' },
  } as const,
});
const TemplateImportStatusEnum = builder.enumType('TemplateImportStatus', { values: ['loaded', 'warnings', 'rejected'] as const });
const TemplateImportChangeEnum = builder.enumType('TemplateImportChange', { values: ['created', 'updated', 'unchanged'] as const });

const TemplateImportFileRef = builder.objectRef<ImportedFile>('TemplateImportFile').implement({
  description: 'One template (or refused entry) of an imported archive.',
  fields: (t) => ({
    path: t.exposeString('path', { description: 'The entry inside the archive.' }),
    status: t.expose('status', { type: TemplateImportStatusEnum }),
    templateId: t.exposeID('templateId', { nullable: true, description: 'The template record, for a stored file.' }),
    nucleiId: t.exposeString('nucleiId', { nullable: true }),
    change: t.expose('change', { type: TemplateImportChangeEnum, nullable: true }),
    warnings: t.stringList({ resolve: (file) => file.warnings ?? [] }),
    userVariables: t.stringList({
      description: "Variables the template needs from the user: give them in the workspace's template settings or a scan's templateVariables.",
      resolve: (file) => file.userVariables ?? [],
    }),
    errors: t.stringList({ resolve: (file) => file.errors ?? [] }),
  }),
});

const TemplateImportTotalsRef = builder.objectRef<ImportTotals>('TemplateImportTotals').implement({
  fields: (t) => ({
    files: t.exposeInt('files', { description: 'Templates and refused entries (files that are not templates are not counted).' }),
    loaded: t.exposeInt('loaded'),
    warnings: t.exposeInt('warnings'),
    rejected: t.exposeInt('rejected'),
    created: t.exposeInt('created'),
    updated: t.exposeInt('updated'),
    unchanged: t.exposeInt('unchanged'),
  }),
});

const TemplateImportRef = builder.objectRef<ImportResult>('TemplateImport').implement({
  fields: (t) => ({
    totals: t.field({ type: TemplateImportTotalsRef, resolve: (result) => result.totals }),
    files: t.field({ type: [TemplateImportFileRef], resolve: (result) => result.files }),
  }),
});

// The module that owns templates adds them to workspaces.
builder.prismaObjectField('Workspace', 'templates', (t) =>
  t.loadableList({
    type: TemplateRef,
    description: "The built-in templates and the workspace's own, with whether each is enabled here.",
    load: (ids: string[], ctx) => templates.templatesOfWorkspaces(ctx, ids),
    resolve: (workspace) => workspace.id,
  }),
);

builder.queryFields((t) => ({
  template: t.field({
    type: TemplateRef,
    nullable: true,
    description: 'One template of a workspace (built-in or its own); null when there is none.',
    args: { workspaceId: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => {
      const workspaceId = decodeQueryId(args.workspaceId, WorkspaceRef, 'workspaceId');
      const id = decodeQueryId(args.id, null, 'id');
      try {
        return await templates.getTemplate(ctx, workspaceId, id);
      } catch (error) {
        if ((error as { code?: unknown }).code === 'NOT_FOUND') return null;
        throw error;
      }
    },
  }),
}));

builder.mutationFields((t) => ({
  createTemplate: t.field({
    type: TemplateRef,
    errors: {},
    description: 'Registers a template in the workspace (owners); upload its content with uploadTemplate.',
    args: { workspaceId: t.arg.id({ required: true }), fileName: t.arg.string({ required: true }) },
    resolve: (_root, { workspaceId, fileName }, ctx) => templates.createTemplate(ctx, decodeId(workspaceId, WorkspaceRef, 'workspaceId'), { fileName }),
  }),
  uploadTemplate: t.field({
    type: TemplateUploadRef,
    errors: {},
    description:
      "Validates and stores a template's content (owners). Invalid content is a ValidationError whose details give each problem's field, line and column.",
    args: {
      workspaceId: t.arg.id({ required: true }),
      templateId: t.arg.id({ required: true }),
      fileContent: t.arg.string({ required: true }),
    },
    resolve: (_root, { workspaceId, templateId, fileContent }, ctx) =>
      templates.uploadTemplate(ctx, decodeId(workspaceId, WorkspaceRef, 'workspaceId'), { templateId: decodeId(templateId, null, 'templateId'), fileContent }),
  }),
  importTemplates: t.field({
    type: TemplateImportRef,
    errors: {},
    description:
      'Imports a template library from an archive (owners), as POST /api/v1/api/templates/import does: the archive base64-encoded, ' +
      'at most TEMPLATE_IMPORT_MAX_BYTES decoded. Templates are created or updated by nuclei id; refused entries are listed with their errors.',
    args: {
      workspaceId: t.arg.id({ required: true }),
      format: t.arg({ type: TemplateArchiveFormatEnum, required: true }),
      archiveBase64: t.arg.string({ required: true }),
    },
    resolve: (_root, { workspaceId, format, archiveBase64 }, ctx) =>
      importTemplates(ctx, decodeId(workspaceId, WorkspaceRef, 'workspaceId'), {
        format,
        body: archiveFromBase64(archiveBase64, ctx.deps.env.TEMPLATE_IMPORT_MAX_BYTES),
      }),
  }),
  renameTemplate: t.field({
    type: TemplateRef,
    errors: {},
    description: "Renames one of the workspace's own templates (owners).",
    args: { workspaceId: t.arg.id({ required: true }), id: t.arg.id({ required: true }), fileName: t.arg.string({ required: true }) },
    resolve: (_root, { workspaceId, id, fileName }, ctx) =>
      templates.renameTemplate(ctx, decodeId(workspaceId, WorkspaceRef, 'workspaceId'), decodeId(id, null, 'id'), fileName),
  }),
  setTemplateEnabled: t.field({
    type: TemplateRef,
    errors: {},
    description: 'Enables or disables a template (built-in or the workspace’s own) for the workspace’s scans (owners).',
    args: { workspaceId: t.arg.id({ required: true }), id: t.arg.id({ required: true }), enabled: t.arg.boolean({ required: true }) },
    resolve: (_root, { workspaceId, id, enabled }, ctx) =>
      templates.setTemplateEnabled(ctx, decodeId(workspaceId, WorkspaceRef, 'workspaceId'), decodeId(id, null, 'id'), { enabled }),
  }),
  deleteTemplate: t.field({
    type: 'ID',
    errors: {},
    description: "Deletes one of the workspace's own templates and its content (owners); returns its id. Its findings stay.",
    args: { workspaceId: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
    resolve: async (_root, { workspaceId, id }, ctx) =>
      (await templates.deleteTemplate(ctx, decodeId(workspaceId, WorkspaceRef, 'workspaceId'), decodeId(id, null, 'id'))).id,
  }),
}));
