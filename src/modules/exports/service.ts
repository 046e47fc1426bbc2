import type { ServiceContext } from '../../context.js';
import { assertCan } from '../../auth/authz.js';
import { NotFoundError } from '../../errors.js';
import type { Prisma } from '../../db.js';
import { validate } from '../../validate.js';
import { findingWhere, toFindingResponse } from '../vulnerabilities/service.js';
import { assetResponseInclude, assetWhere, toAssetResponse } from '../assets/service.js';
import { changeExportBatches } from '../changes/service.js';
import type { ExportChangesInput } from '../changes/schemas.js';
import { csvHeader, csvLine } from './csv.js';
import { SARIF_CLOSING, sarifOpening, sarifResult, type SarifRuleSource } from './sarif.js';
import { ASSET_CSV_COLUMNS, exportFindingInclude, FINDING_CSV_COLUMNS, keysetBatches, type ExportFindingRow } from './rows.js';
import { EXPORT_BATCH_SIZE, exportAssetsInput, exportFindingsInput, type ExportAssetsInput, type ExportFindingsInput } from './schemas.js';

/** A download: its headers, and its body as text pieces produced only as they are read (one batch of rows each). */
export interface ExportDownload {
  contentType: string;
  /** `perimeter-<workspace>-<what>-<YYYY-MM-DD>.<ext>`, ASCII only. */
  filename: string;
  body: AsyncIterable<string>;
}

export interface ExportOptions {
  /** Rows per database read (default EXPORT_BATCH_SIZE). */
  batchSize?: number;
  /** The date the file name carries (default now). */
  now?: Date;
}

const CONTENT_TYPES = {
  jsonl: 'application/jsonl; charset=utf-8',
  csv: 'text/csv; charset=utf-8; header=present',
  json: 'application/json; charset=utf-8',
  sarif: 'application/sarif+json; charset=utf-8',
} as const;

const EXTENSIONS = { csv: 'csv', json: 'json', sarif: 'sarif', jsonl: 'jsonl' } as const;

/** The workspace's name as a file-name piece: lower-case ASCII letters, digits and dashes. */
function slug(name: string): string {
  const ascii = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
    .replace(/-+$/, '');
  return ascii || 'workspace';
}

async function workspaceOf(ctx: ServiceContext, workspaceId: string): Promise<{ id: string; name: string }> {
  const workspace = await ctx.deps.prisma.workspace.findUnique({ where: { id: workspaceId }, select: { id: true, name: true } });
  if (!workspace) throw new NotFoundError('Workspace');
  return workspace;
}

function filenameOf(workspaceName: string, what: string, format: keyof typeof EXTENSIONS, now: Date): string {
  return `perimeter-${slug(workspaceName)}-${what}-${now.toISOString().slice(0, 10)}.${EXTENSIONS[format]}`;
}

/** A JSON array written element by element: `[`, elements separated by commas, `]`. */
async function* jsonArray<T>(batches: AsyncIterable<T[]>, serialize: (row: T) => string): AsyncGenerator<string> {
  let first = true;
  yield '[';
  for await (const rows of batches) {
    const text = rows.map(serialize).join(',');
    yield first ? text : `,${text}`;
    first = false;
  }
  yield ']';
}

async function* csvDocument<T>(batches: AsyncIterable<T[]>, columns: Parameters<typeof csvHeader<T>>[0]): AsyncGenerator<string> {
  yield csvHeader(columns);
  for await (const rows of batches) yield rows.map((row) => csvLine(columns, row)).join('');
}

/** One rule per check among the exported findings (a grouped count; checks are few next to findings). */
async function sarifRules(ctx: ServiceContext, where: Prisma.FindingWhereInput): Promise<SarifRuleSource[]> {
  const groups = await ctx.deps.prisma.finding.groupBy({ by: ['checkId'], where, _max: { name: true, severity: true }, orderBy: { checkId: 'asc' } });
  return groups.map((group) => ({ checkId: group.checkId, name: group._max.name ?? group.checkId, severity: group._max.severity ?? 'info' }));
}

async function* sarifDocument(
  ctx: ServiceContext,
  where: Prisma.FindingWhereInput,
  workspace: { id: string; name: string },
  batches: AsyncIterable<ExportFindingRow[]>,
): AsyncGenerator<string> {
  const rules = await sarifRules(ctx, where);
  const ruleIndex = new Map(rules.map((rule, index) => [rule.checkId, index]));
  yield sarifOpening(rules, workspace);
  let first = true;
  for await (const rows of batches) {
    // A check first seen after the rules were read has no rule: its results carry the ruleId alone.
    const text = rows.map((row) => sarifResult(row, ruleIndex.get(row.checkId) ?? -1)).join(',');
    yield first ? text : `,${text}`;
    first = false;
  }
  yield SARIF_CLOSING;
}

/**
 * The workspace's findings with the list's filters (open ones unless `status` says otherwise), every one of them,
 * in id order, as CSV, a JSON array of the list's elements, or SARIF 2.1.0. Validation and the permission check
 * happen here, before any byte is written; the rows are read only as the body is consumed.
 */
export async function exportFindings(
  ctx: ServiceContext,
  workspaceId: string,
  input: ExportFindingsInput,
  options: ExportOptions = {},
): Promise<ExportDownload> {
  const { format, q, ...filters } = validate(exportFindingsInput, input);
  await assertCan(ctx, 'finding:read', { workspaceId });
  const workspace = await workspaceOf(ctx, workspaceId);
  const where = findingWhere(ctx, { ...filters, search: q, workspaceId });
  const batchSize = options.batchSize ?? EXPORT_BATCH_SIZE;
  const batches = keysetBatches(
    (afterId) =>
      ctx.deps.prisma.finding.findMany({
        where: afterId ? { AND: [where, { id: { gt: afterId } }] } : where,
        include: exportFindingInclude,
        orderBy: { id: 'asc' },
        take: batchSize,
      }),
    batchSize,
  );
  const body =
    format === 'csv'
      ? csvDocument(batches, FINDING_CSV_COLUMNS)
      : format === 'json'
        ? jsonArray(batches, ({ asset: _asset, target: _target, ...row }) => JSON.stringify(toFindingResponse(row)))
        : sarifDocument(ctx, where, workspace, batches);
  return { contentType: CONTENT_TYPES[format], filename: filenameOf(workspace.name, 'findings', format, options.now ?? new Date()), body };
}

/** The workspace's assets with the list's filters, every one of them, in id order, as CSV or a JSON array of the list's elements. */
export async function exportAssets(ctx: ServiceContext, workspaceId: string, input: ExportAssetsInput, options: ExportOptions = {}): Promise<ExportDownload> {
  const { format, ...filters } = validate(exportAssetsInput, input);
  await assertCan(ctx, 'asset:read', { workspaceId });
  const workspace = await workspaceOf(ctx, workspaceId);
  const where = assetWhere(ctx, { ...filters, workspaceId });
  const batchSize = options.batchSize ?? EXPORT_BATCH_SIZE;
  const batches = keysetBatches(
    (afterId) =>
      ctx.deps.prisma.asset.findMany({
        where: afterId ? { AND: [where, { id: { gt: afterId } }] } : where,
        include: assetResponseInclude,
        orderBy: { id: 'asc' },
        take: batchSize,
      }),
    batchSize,
  );
  const body = format === 'csv' ? csvDocument(batches, ASSET_CSV_COLUMNS) : jsonArray(batches, (row) => JSON.stringify(toAssetResponse(row)));
  return { contentType: CONTENT_TYPES[format], filename: filenameOf(workspace.name, 'assets', format, options.now ?? new Date()), body };
}

/** The workspace's change feed with the list's filters, oldest first, as JSON lines (one change event per line, the list's shape). */
export async function exportChanges(ctx: ServiceContext, workspaceId: string, input: ExportChangesInput, options: ExportOptions = {}): Promise<ExportDownload> {
  const batches = await changeExportBatches(ctx, workspaceId, input, options.batchSize ?? EXPORT_BATCH_SIZE);
  const workspace = await workspaceOf(ctx, workspaceId);
  async function* lines(): AsyncGenerator<string> {
    for await (const rows of batches) yield rows.map((row) => `${JSON.stringify(row)}\n`).join('');
  }
  return { contentType: CONTENT_TYPES.jsonl, filename: filenameOf(workspace.name, 'changes', 'jsonl', options.now ?? new Date()), body: lines() };
}
