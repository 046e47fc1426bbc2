import type { ServiceContext } from '../../context.js';
import { groupBuiltinAndOwn } from '../builtin-or-own.js';
import { ConflictError, ForbiddenError, NotFoundError } from '../../errors.js';
import { assertCan, isUuid, requireViewer } from '../../auth/authz.js';
import type { Prisma } from '../../db.js';
import { validate } from '../../validate.js';
import { escapeLike, pageEnvelope, pageWindow, prismaDirection, type Page } from '../../pagination.js';
import type { TemplateIssue } from '../../scanner/nuclei/index.js';
import { BUILTIN_CHECKS } from '../../scanner/index.js';
import { publishWorkspaceEvent } from '../workspaces/events.js';
import { checkTemplateContent } from './content.js';
import { describe, loadPack } from './pack.js';
import {
  createTemplateInput,
  listTemplatesInput,
  setTemplateEnabledInput,
  templatePayloadFilesKey,
  templateStorageKey,
  updateTemplateInput,
  uploadTemplateInput,
  type CreateTemplateInput,
  type ListTemplatesInput,
  type UpdateTemplateInput,
  type UploadTemplateInput,
} from './schemas.js';

type TemplateRow = Prisma.TemplateGetPayload<object>;
type Severity = 'info' | 'low' | 'medium' | 'high' | 'critical';

/** A template as one workspace sees it: `enabled` is that workspace's effective choice. */
export interface TemplateResponse {
  id: string;
  /** Null for built-in templates. */
  workspaceId: string | null;
  fileName: string;
  /** The template's own `id` (nuclei's), once content is uploaded: the check id of its findings. */
  nucleiId: string | null;
  name: string | null;
  severity: Severity | null;
  tags: string[];
  builtin: boolean;
  enabled: boolean;
  /** Whether there is content to run (always true for built-in templates). */
  uploaded: boolean;
  /** Where the content is stored (`nuclei-templates/<id>.yaml`); null for built-in templates and before an upload. */
  path: string | null;
  checksum: string | null;
  sizeBytes: number | null;
  /** Features of the template the engine does not run, from the last upload. */
  warnings: TemplateIssue[];
  /** Variables the template needs from the user, from the last upload (not warnings: it runs once they are given). */
  userVariables: string[];
  createdById: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface TemplateWithContent extends TemplateResponse {
  /** The YAML text; null before the first upload. */
  content: string | null;
}

export interface UploadResult {
  path: string;
  warnings: TemplateIssue[];
  template: TemplateResponse;
}

/** The templates a workspace sees: the built-in pack and its own. */
export function templatesOfWorkspaceWhere(workspaceId: string): Prisma.TemplateWhereInput {
  return { OR: [{ builtin: true, workspaceId: null }, { workspaceId }] };
}

/** Built-in: the pack switch AND the workspace's choice (absent means enabled). The workspace's own: its flag. */
export function effectiveEnabled(template: Pick<TemplateRow, 'builtin' | 'enabled'>, setting: { enabled: boolean } | undefined): boolean {
  return template.enabled && (!template.builtin || (setting?.enabled ?? true));
}

export function warningsOf(value: Prisma.JsonValue | null): TemplateIssue[] {
  return Array.isArray(value) ? (value as unknown as TemplateIssue[]) : [];
}

export function toTemplateResponse(row: TemplateRow, setting: { enabled: boolean } | undefined): TemplateResponse {
  return {
    id: row.id,
    workspaceId: row.workspaceId,
    fileName: row.fileName,
    nucleiId: row.templateKey,
    name: row.name,
    severity: row.severity,
    tags: row.tags,
    builtin: row.builtin,
    enabled: effectiveEnabled(row, setting),
    uploaded: row.builtin || row.storageKey !== null,
    path: row.builtin ? null : row.storageKey,
    checksum: row.checksum,
    sizeBytes: row.sizeBytes,
    warnings: warningsOf(row.warnings),
    userVariables: row.userVariables,
    createdById: row.createdById,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

const settingsOf = (workspaceId: string) => ({ settings: { where: { workspaceId }, select: { enabled: true } } }) as const;

/** One template as the workspace sees it, or 404 (one of another workspace answers as one that does not exist). */
async function findTemplateOrThrow(ctx: ServiceContext, workspaceId: string, id: string) {
  const template = isUuid(id)
    ? await ctx.deps.prisma.template.findFirst({ where: { AND: [{ id }, templatesOfWorkspaceWhere(workspaceId)] }, include: settingsOf(workspaceId) })
    : null;
  if (!template) throw new NotFoundError('Template');
  return template;
}

function ownOnly(template: TemplateRow, what: string): void {
  if (template.builtin) throw new ForbiddenError(`A built-in template cannot be ${what}; only enabled can be set for this workspace`);
}

export async function listTemplates(ctx: ServiceContext, workspaceId: string, input: ListTemplatesInput = {}): Promise<Page<TemplateResponse>> {
  const { page, limit, sortBy, sortOrder, search, builtin } = validate(listTemplatesInput, input);
  await assertCan(ctx, 'template:read', { workspaceId });
  const contains = search ? escapeLike(search) : undefined;
  const where: Prisma.TemplateWhereInput = {
    AND: [
      templatesOfWorkspaceWhere(workspaceId),
      ...(builtin === undefined ? [] : [{ builtin }]),
      ...(contains ? [{ OR: (['fileName', 'templateKey', 'name'] as const).map((field) => ({ [field]: { contains, mode: 'insensitive' as const } })) }] : []),
    ],
  };
  const direction = prismaDirection(sortOrder);
  const [rows, total] = await Promise.all([
    ctx.deps.prisma.template.findMany({
      where,
      orderBy: [{ [sortBy]: direction }, { id: direction }],
      ...pageWindow(page, limit),
      include: settingsOf(workspaceId),
    }),
    ctx.deps.prisma.template.count({ where }),
  ]);
  return pageEnvelope(
    rows.map((row) => toTemplateResponse(row, row.settings[0])),
    total,
    page,
    limit,
  );
}

/** Batch for `Workspace.templates`: every requested workspace's templates in two queries (the workspace was checked). */
export async function templatesOfWorkspaces(ctx: ServiceContext, workspaceIds: readonly string[]): Promise<TemplateResponse[][]> {
  const viewer = requireViewer(ctx);
  const ids = [...workspaceIds];
  const [rows, memberships] = await Promise.all([
    ctx.deps.prisma.template.findMany({
      where: { OR: [{ builtin: true, workspaceId: null }, { workspaceId: { in: ids } }] },
      orderBy: [{ fileName: 'asc' }, { id: 'asc' }],
      include: { settings: { where: { workspaceId: { in: ids } }, select: { workspaceId: true, enabled: true } } },
    }),
    ctx.deps.prisma.workspaceMember.findMany({ where: { userId: viewer.id, workspaceId: { in: ids } }, select: { workspaceId: true } }),
  ]);
  return groupBuiltinAndOwn(ids, rows, new Set(memberships.map((row) => row.workspaceId)), toTemplateResponse);
}

/** A template's YAML: the pack file for a built-in one, the stored object otherwise (null before the first upload). */
async function contentOf(ctx: ServiceContext, template: TemplateRow): Promise<string | null> {
  if (template.builtin) return (await loadPack()).find((entry) => entry.fileName === template.fileName)?.content ?? null;
  if (!template.storageKey) return null;
  return (await ctx.deps.storage.get(template.storageKey))?.toString('utf8') ?? null;
}

export async function getTemplate(ctx: ServiceContext, workspaceId: string, id: string): Promise<TemplateWithContent> {
  await assertCan(ctx, 'template:read', { workspaceId });
  const template = await findTemplateOrThrow(ctx, workspaceId, id);
  return { ...toTemplateResponse(template, template.settings[0]), content: await contentOf(ctx, template) };
}

/** Contents for GraphQL's `Template.content`, batched: the caller already saw the templates through a checked read. */
export async function contentsOfTemplates(ctx: ServiceContext, templates: readonly TemplateResponse[]): Promise<(string | null)[]> {
  requireViewer(ctx);
  const pack = await loadPack();
  return Promise.all(
    templates.map(async (template) => {
      if (template.builtin) return pack.find((entry) => entry.fileName === template.fileName)?.content ?? null;
      return template.path ? ((await ctx.deps.storage.get(template.path))?.toString('utf8') ?? null) : null;
    }),
  );
}

function fileNameTaken(fileName: string): ConflictError {
  return new ConflictError(`A template named ${fileName} already exists in this workspace`);
}

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'P2002';
}

/** Registers a template of the workspace (owners); its content comes with uploadTemplate. */
export async function createTemplate(ctx: ServiceContext, workspaceId: string, input: CreateTemplateInput): Promise<TemplateResponse> {
  const { fileName } = validate(createTemplateInput, input);
  const viewer = requireViewer(ctx);
  await assertCan(ctx, 'template:manage', { workspaceId });
  const row = await ctx.deps.prisma.template.create({ data: { workspaceId, fileName, createdById: viewer.id } }).catch((error: unknown) => {
    throw isUniqueViolation(error) ? fileNameTaken(fileName) : error;
  });
  await publishWorkspaceEvent(ctx, workspaceId, 'template.created', row.id);
  return toTemplateResponse(row, undefined);
}

/** Any constant works: the first half of the (namespace, workspace) advisory lock that serialises uploads per workspace. */
export const UPLOAD_LOCK_NAMESPACE = 7_303_003;

/**
 * Validates the content (see content.ts) and stores it at `nuclei-templates/<templateId>.yaml` (owners).
 * Uploads of one workspace are serialised, so the "one template per nuclei id" rule holds under concurrency;
 * the blob and the row change together (the row is written in the same transaction, after the blob).
 */
export async function uploadTemplate(ctx: ServiceContext, workspaceId: string, input: UploadTemplateInput): Promise<UploadResult> {
  const { templateId, fileContent } = validate(uploadTemplateInput, input);
  await assertCan(ctx, 'template:manage', { workspaceId });
  const existing = await findTemplateOrThrow(ctx, workspaceId, templateId);
  ownOnly(existing, 'uploaded over');
  const checked = checkTemplateContent(fileContent);
  if (BUILTIN_CHECKS.some((check) => check.id === checked.template.id)) {
    throw new ConflictError(`The id ${checked.template.id} belongs to a built-in check; give the template another id`);
  }
  const warnings = [...checked.warnings];
  const key = templateStorageKey(existing.id);
  const { prisma, storage } = ctx.deps;
  const row = await prisma
    .$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(${UPLOAD_LOCK_NAMESPACE}::int, hashtext(${workspaceId}))`;
      const clash = await tx.template.findFirst({
        where: { AND: [templatesOfWorkspaceWhere(workspaceId), { templateKey: checked.template.id, id: { not: existing.id } }] },
        orderBy: { builtin: 'asc' },
        select: { builtin: true, fileName: true },
      });
      if (clash && !clash.builtin) {
        throw new ConflictError(
          `The template ${clash.fileName} of this workspace already has the id ${checked.template.id}; template ids must be unique (they name the findings)`,
        );
      }
      if (clash) {
        warnings.push({
          path: 'id',
          message: `same id as the built-in template ${clash.fileName}: this workspace runs this template instead of the built-in one`,
        });
      }
      await storage.put(key, fileContent, { contentType: 'application/yaml' });
      // Uploaded content reads no payload files (only an import provides them): drop any the template had.
      if (existing.payloadFilesChecksum) await storage.delete(templatePayloadFilesKey(existing.id)).catch(() => {});
      return tx.template.update({
        where: { id: existing.id },
        data: { ...describe({ ...checked, warnings }), storageKey: key, payloadFilesChecksum: null },
      });
    })
    .catch(async (error: unknown) => {
      if ((error as { code?: unknown } | null)?.code !== 'P2025') throw error;
      // Deleted while this upload ran: what was just written belongs to no template.
      await storage.delete(key).catch(() => {});
      throw new NotFoundError('Template');
    });
  await publishWorkspaceEvent(ctx, workspaceId, 'template.uploaded', row.id);
  return { path: key, warnings, template: toTemplateResponse(row, undefined) };
}

/**
 * Renames the workspace's own template and/or switches any template on or off for the workspace (owners).
 * A built-in template belongs to the release: a workspace may only switch it on or off for itself.
 */
export async function updateTemplate(ctx: ServiceContext, workspaceId: string, id: string, input: UpdateTemplateInput): Promise<TemplateResponse> {
  const { fileName, enabled } = validate(updateTemplateInput, input);
  await assertCan(ctx, 'template:manage', { workspaceId });
  const template = await findTemplateOrThrow(ctx, workspaceId, id);
  if (template.builtin) {
    if (fileName !== undefined) ownOnly(template, 'renamed');
    if (enabled === undefined) return toTemplateResponse(template, template.settings[0]);
    await ctx.deps.prisma.workspaceTemplateSetting.upsert({
      where: { workspaceId_templateId: { workspaceId, templateId: template.id } },
      create: { workspaceId, templateId: template.id, enabled },
      update: { enabled },
    });
    await publishWorkspaceEvent(ctx, workspaceId, 'template.updated', template.id);
    return toTemplateResponse(template, { enabled });
  }
  if (fileName === undefined && enabled === undefined) return toTemplateResponse(template, undefined);
  const row = await ctx.deps.prisma.template
    .update({ where: { id: template.id }, data: { ...(fileName === undefined ? {} : { fileName }), ...(enabled === undefined ? {} : { enabled }) } })
    .catch((error: unknown) => {
      throw isUniqueViolation(error) ? fileNameTaken(fileName ?? template.fileName) : error;
    });
  await publishWorkspaceEvent(ctx, workspaceId, 'template.updated', template.id);
  return toTemplateResponse(row, undefined);
}

export async function renameTemplate(ctx: ServiceContext, workspaceId: string, id: string, fileName: string): Promise<TemplateResponse> {
  return updateTemplate(ctx, workspaceId, id, { fileName });
}

export async function setTemplateEnabled(ctx: ServiceContext, workspaceId: string, id: string, input: { enabled: boolean }): Promise<TemplateResponse> {
  const { enabled } = validate(setTemplateEnabledInput, input);
  return updateTemplate(ctx, workspaceId, id, { enabled });
}

/** Deletes the workspace's own template and its stored content (owners). Its findings stay: they belong to the workspace. */
export async function deleteTemplate(ctx: ServiceContext, workspaceId: string, id: string): Promise<{ id: string }> {
  await assertCan(ctx, 'template:manage', { workspaceId });
  const template = await findTemplateOrThrow(ctx, workspaceId, id);
  ownOnly(template, 'deleted');
  await ctx.deps.prisma.template.deleteMany({ where: { id: template.id } });
  // Best effort: a blob left behind costs a few kilobytes and is never read again (the row is gone).
  const keys = [templateStorageKey(template.id), ...(template.payloadFilesChecksum ? [templatePayloadFilesKey(template.id)] : [])];
  for (const key of keys) {
    await ctx.deps.storage
      .delete(key)
      .catch((error: unknown) => ctx.deps.log.warn({ err: error, templateId: template.id }, 'could not delete the template content'));
  }
  await publishWorkspaceEvent(ctx, workspaceId, 'template.deleted', template.id);
  return { id: template.id };
}
