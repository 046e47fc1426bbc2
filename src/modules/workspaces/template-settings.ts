/**
 * What a workspace tells its scans about templates: which ones run (a template selection) and the values of the
 * template variables it gives them (`{{username}}`, `{{password}}`, `{{token}}`...). One row per workspace; an
 * absent row is the defaults (everything enabled runs, no variables).
 *
 * Variable values are secrets: sealed with the instance's SecretBox (AES-256-GCM) before they are stored, opened
 * only by the scan that sends them, and masked (MASK) on every read. A PATCH names the variables it sets (a
 * string), unsets (null) or keeps (MASK, so a client can send back what it read); the others stay.
 */
import { z } from 'zod';
import type { ServiceContext } from '../../context.js';
import type { Prisma, PrismaClient } from '../../db.js';
import { assertCan } from '../../auth/authz.js';
import type { SecretBox } from '../../crypto/secret-box.js';
import { ValidationError } from '../../errors.js';
import { validate } from '../../validate.js';
import { normalizeSelection, templateSelectionInput, type TemplateSelection } from '../templates/selection.js';
import { MAX_TEMPLATE_VARIABLES, openVariables, templateVariableName, templateVariableValue } from '../templates/variables.js';
import { publishWorkspaceEvent } from './events.js';

/** What every read shows instead of a value. */
export const MASK = '********';

export const templateSettingsBody = z
  .object({
    selection: templateSelectionInput.optional().meta({ description: 'Replaces the stored selection as a whole ({} selects everything again).' }),
    variables: z
      .record(templateVariableName, templateVariableValue.nullable(), { message: 'must be an object of variable names to values' })
      .optional()
      .meta({
        description: `Sets (a string), unsets (null) or keeps (the mask "${MASK}") each named variable; others stay. At most ${MAX_TEMPLATE_VARIABLES}.`,
      }),
  })
  .strict();

export const updateTemplateSettingsInput = templateSettingsBody.refine((value) => value.selection !== undefined || value.variables !== undefined, {
  message: 'send selection and/or variables',
});
export type UpdateTemplateSettingsInput = z.input<typeof updateTemplateSettingsInput>;

export interface TemplateSettingsResponse {
  workspaceId: string;
  selection: TemplateSelection;
  /** Name → MASK, names sorted. */
  variables: Record<string, string>;
  /** Null until the settings are first saved. */
  updatedAt: Date | null;
}

type Reader = PrismaClient | Prisma.TransactionClient;
type Sealed = Record<string, string>;
const settingsSelect = { workspaceId: true, selection: true, variables: true, updatedAt: true } as const;

/** The stored JSON, defensively: anything that is not an object of strings counts as none. */
function asSealed(stored: unknown): Sealed {
  if (!stored || typeof stored !== 'object' || Array.isArray(stored)) return {};
  return Object.fromEntries(Object.entries(stored).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
}

function asSelection(stored: unknown): TemplateSelection {
  const parsed = templateSelectionInput.safeParse(stored ?? {});
  return parsed.success ? normalizeSelection(parsed.data) : {};
}

function masked(sealed: Sealed): Record<string, string> {
  return Object.fromEntries(
    Object.keys(sealed)
      .sort()
      .map((name) => [name, MASK]),
  );
}

function toResponse(workspaceId: string, row: { selection: unknown; variables: unknown; updatedAt: Date } | null): TemplateSettingsResponse {
  return { workspaceId, selection: asSelection(row?.selection), variables: masked(asSealed(row?.variables)), updatedAt: row?.updatedAt ?? null };
}

/** Seals values to keep; MASK keeps the stored one (400 when there is none); null removes. */
function patchVariables(box: SecretBox, stored: Sealed, patch: Record<string, string | null>): Sealed {
  const next: Sealed = { ...stored };
  const issues: { field: string; message: string }[] = [];
  for (const [name, value] of Object.entries(patch)) {
    if (value === null) delete next[name];
    else if (value === MASK) {
      if (stored[name] === undefined) issues.push({ field: `variables.${name}`, message: `is the mask "${MASK}" but no value is stored for it` });
    } else next[name] = box.encrypt(value);
  }
  if (Object.keys(next).length > MAX_TEMPLATE_VARIABLES) {
    issues.push({ field: 'variables', message: `a workspace holds at most ${MAX_TEMPLATE_VARIABLES} variables` });
  }
  if (issues.length) throw new ValidationError(`Invalid input: ${issues.map((issue) => `${issue.field}: ${issue.message}`).join('; ')}`, issues);
  return next;
}

/** For the scan pipeline: the selection, and the variables opened (throws SecretBoxError if the instance secret changed). */
export async function templateRunSettingsOf(
  prisma: Reader,
  box: SecretBox,
  workspaceId: string,
): Promise<{ selection: TemplateSelection; variables: Record<string, string> }> {
  const row = await prisma.workspaceTemplateRunSettings.findUnique({ where: { workspaceId }, select: { selection: true, variables: true } });
  return { selection: asSelection(row?.selection), variables: openVariables(box, row?.variables) };
}

/** Members read them (values masked). */
export async function getTemplateSettings(ctx: ServiceContext, workspaceId: string): Promise<TemplateSettingsResponse> {
  await assertCan(ctx, 'workspace:read', { workspaceId });
  const row = await ctx.deps.prisma.workspaceTemplateRunSettings.findUnique({ where: { workspaceId }, select: settingsSelect });
  return toResponse(workspaceId, row);
}

/** Batch for GraphQL's Workspace.templateSettings: one query for many (already visible) workspaces. */
export async function templateSettingsOfWorkspaces(ctx: ServiceContext, workspaceIds: readonly string[]): Promise<TemplateSettingsResponse[]> {
  const rows = await ctx.deps.prisma.workspaceTemplateRunSettings.findMany({ where: { workspaceId: { in: [...workspaceIds] } }, select: settingsSelect });
  const byWorkspace = new Map(rows.map((row) => [row.workspaceId, row]));
  return workspaceIds.map((id) => toResponse(id, byWorkspace.get(id) ?? null));
}

/** Whoever may update the workspace changes them; the row is locked while the variables are merged. */
export async function updateTemplateSettings(ctx: ServiceContext, workspaceId: string, input: UpdateTemplateSettingsInput): Promise<TemplateSettingsResponse> {
  const patch = validate(updateTemplateSettingsInput, input);
  await assertCan(ctx, 'workspace:update', { workspaceId });
  const row = await ctx.deps.prisma.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT id FROM "workspace" WHERE id = ${workspaceId}::uuid FOR UPDATE`;
    const stored = await tx.workspaceTemplateRunSettings.findUnique({ where: { workspaceId }, select: { variables: true } });
    const data = {
      ...(patch.selection !== undefined ? { selection: normalizeSelection(patch.selection) as Prisma.InputJsonValue } : {}),
      ...(patch.variables !== undefined ? { variables: patchVariables(ctx.deps.secrets, asSealed(stored?.variables), patch.variables) } : {}),
    };
    return tx.workspaceTemplateRunSettings.upsert({ where: { workspaceId }, create: { ...data, workspaceId }, update: data, select: settingsSelect });
  });
  await publishWorkspaceEvent(ctx, workspaceId, 'workspace.updated', workspaceId);
  return toResponse(workspaceId, row);
}
