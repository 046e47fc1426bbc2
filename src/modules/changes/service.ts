/**
 * Reading the change feed: the workspace's list (REST and GraphQL, same filters, newest first, cursor paging)
 * and a scan's diff. Writing is record.ts, inside the transactions that make the changes.
 */
import type { ServiceContext } from '../../context.js';
import type { Prisma } from '../../db.js';
import { assertCan } from '../../auth/authz.js';
import { ValidationError } from '../../errors.js';
import { validate } from '../../validate.js';
import { getScan } from '../scans/service.js';
import { exportChangesInput, listChangesInput, type ExportChangesInput, type ListChangesInput } from './schemas.js';
import type { ChangeDataByType, ChangeEventRecord, ChangeType, FieldChange } from './types.js';

export interface ChangePage {
  data: ChangeEventRecord[];
  /** Pass as `cursor` for the next (older) page; null on the last page. */
  nextCursor: string | null;
}

type Row = Prisma.ChangeEventGetPayload<object>;
export const toChangeRecord = (row: Row): ChangeEventRecord => ({
  ...row,
  type: row.type as ChangeType,
  data: row.data as unknown as ChangeEventRecord['data'],
});

/** A cursor is the (at, id) of the last row of a page: opaque to clients, stable while rows are added. */
function encodeCursor(row: { at: Date; id: string }): string {
  return Buffer.from(`${row.at.toISOString()}|${row.id}`).toString('base64url');
}

function decodeCursor(cursor: string): { at: Date; id: string } {
  const [at, id, rest] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  const date = new Date(at ?? '');
  if (rest !== undefined || !id || !/^[0-9a-f-]{36}$/i.test(id) || Number.isNaN(date.getTime())) {
    throw new ValidationError('Invalid cursor', [{ field: 'cursor', message: 'is not a cursor of this feed: pass nextCursor as it came' }]);
  }
  return { at: date, id };
}

/** The filters both the list and the export apply. */
function changeFilterWhere(
  workspaceId: string,
  query: { types?: string[]; since?: Date; until?: Date; assetId?: string; targetId?: string; scanId?: string },
): Prisma.ChangeEventWhereInput[] {
  const and: Prisma.ChangeEventWhereInput[] = [{ workspaceId }];
  if (query.types?.length) and.push({ type: { in: [...new Set(query.types)] } });
  if (query.since) and.push({ at: { gte: query.since } });
  if (query.until) and.push({ at: { lt: query.until } });
  if (query.assetId) and.push({ assetId: query.assetId });
  if (query.targetId) and.push({ targetId: query.targetId });
  if (query.scanId) and.push({ scanId: query.scanId });
  return and;
}

/**
 * Every matching change, oldest first (a replayable log), in batches read by (at, id) as they are consumed: the
 * export's rows. Validation and the permission check happen before the first batch is read.
 */
export async function changeExportBatches(ctx: ServiceContext, workspaceId: string, input: ExportChangesInput, batchSize: number) {
  const query = validate(exportChangesInput, input);
  await assertCan(ctx, 'workspace:read', { workspaceId });
  const filters = changeFilterWhere(workspaceId, query);
  async function* batches(): AsyncGenerator<ChangeEventRecord[]> {
    let after: { at: Date; id: string } | undefined;
    for (;;) {
      const where = after ? [...filters, { OR: [{ at: { gt: after.at } }, { at: after.at, id: { gt: after.id } }] }] : filters;
      const rows = await ctx.deps.prisma.changeEvent.findMany({ where: { AND: where }, orderBy: [{ at: 'asc' }, { id: 'asc' }], take: batchSize });
      if (rows.length) yield rows.map(toChangeRecord);
      if (rows.length < batchSize) return;
      after = rows[rows.length - 1]!;
    }
  }
  return batches();
}

/** Newest first, ties by id; `since` inclusive, `until` exclusive. */
export async function listChanges(ctx: ServiceContext, workspaceId: string, input: ListChangesInput): Promise<ChangePage> {
  const query = validate(listChangesInput, input);
  await assertCan(ctx, 'workspace:read', { workspaceId });
  const and = changeFilterWhere(workspaceId, query);
  if (query.cursor) {
    const after = decodeCursor(query.cursor);
    and.push({ OR: [{ at: { lt: after.at } }, { at: after.at, id: { lt: after.id } }] });
  }
  const rows = await ctx.deps.prisma.changeEvent.findMany({
    where: { AND: and },
    orderBy: [{ at: 'desc' }, { id: 'desc' }],
    take: query.limit + 1,
  });
  const page = rows.slice(0, query.limit);
  return { data: page.map(toChangeRecord), nextCursor: rows.length > query.limit ? encodeCursor(page[page.length - 1]!) : null };
}

// ------------------------------------------------------------------------------------------------ scan diff

/** Items per list of a diff; the counts are always complete. */
export const MAX_DIFF_ITEMS = 1000;

export interface DiffAsset {
  changeId: string;
  assetId: string | null;
  kind: string;
  key: string;
  value: string;
  /** Seen again after it had gone (asset.discovered with reappeared). */
  reappeared: boolean;
}

export interface DiffChangedAsset extends Omit<DiffAsset, 'reappeared'> {
  changes: FieldChange[];
}

export interface DiffFinding {
  changeId: string;
  findingId: string | null;
  assetId: string | null;
  name: string;
  severity: string;
  checkId: string;
  /** A fixed finding this scan saw again (finding.reopened), rather than a first sighting. */
  reopened: boolean;
}

export interface ScanDiff {
  scanId: string;
  targetId: string;
  status: string;
  /** The newest COMPLETED scan of the same target created before this one; null for a first scan. */
  previousScanId: string | null;
  newAssets: DiffAsset[];
  goneAssets: DiffAsset[];
  changedAssets: DiffChangedAsset[];
  newFindings: DiffFinding[];
  fixedFindings: DiffFinding[];
  counts: { newAssets: number; goneAssets: number; changedAssets: number; newFindings: number; fixedFindings: number };
  /** True when a list holds only the first MAX_DIFF_ITEMS of its count. */
  truncated: boolean;
}

const DIFF_TYPES = ['asset.discovered', 'asset.gone', 'asset.changed', 'finding.opened', 'finding.reopened', 'finding.fixed'] as const;

/**
 * What a scan changed, read from the change events it wrote (scanId = this scan). Each event was computed
 * against the inventory as stored when the step ran — what the previous scans of this target left, plus any
 * other writer in between (an overlapping target's scan, a tool report) — so for a target only its own scans
 * touch, this is exactly "against the previous completed scan". A scan still running shows what it changed so far.
 */
export async function getScanDiff(ctx: ServiceContext, scanId: string, workspaceId?: string): Promise<ScanDiff> {
  const scan = await getScan(ctx, scanId, workspaceId);
  const { prisma } = ctx.deps;
  const [previous, rows, grouped] = await Promise.all([
    prisma.scan.findFirst({
      where: { targetId: scan.targetId, status: 'COMPLETED', createdAt: { lt: scan.createdAt }, id: { not: scan.id } },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      select: { id: true },
    }),
    Promise.all(
      DIFF_TYPES.map((type) =>
        prisma.changeEvent.findMany({ where: { scanId: scan.id, type }, orderBy: [{ at: 'asc' }, { id: 'asc' }], take: MAX_DIFF_ITEMS }),
      ),
    ),
    prisma.changeEvent.groupBy({ by: ['type'], where: { scanId: scan.id, type: { in: [...DIFF_TYPES] } }, _count: { _all: true } }),
  ]);
  const count = (...types: string[]) => grouped.filter((group) => types.includes(group.type)).reduce((sum, group) => sum + group._count._all, 0);
  const [discovered, gone, changed, opened, reopened, fixed] = rows as [Row[], Row[], Row[], Row[], Row[], Row[]];
  const asset = (row: Row): DiffAsset => {
    const data = row.data as unknown as ChangeDataByType['asset.discovered'];
    return { changeId: row.id, assetId: row.assetId, kind: data.kind, key: data.key, value: data.value, reappeared: data.reappeared === true };
  };
  const finding = (row: Row): DiffFinding => {
    const data = row.data as unknown as ChangeDataByType['finding.opened'];
    return {
      changeId: row.id,
      findingId: row.findingId,
      assetId: row.assetId,
      name: data.name,
      severity: data.severity,
      checkId: data.checkId,
      reopened: row.type === 'finding.reopened',
    };
  };
  const newFindings = [...opened, ...reopened].slice(0, MAX_DIFF_ITEMS).map(finding);
  const counts = {
    newAssets: count('asset.discovered'),
    goneAssets: count('asset.gone'),
    changedAssets: count('asset.changed'),
    newFindings: count('finding.opened', 'finding.reopened'),
    fixedFindings: count('finding.fixed'),
  };
  return {
    scanId: scan.id,
    targetId: scan.targetId,
    status: scan.status,
    previousScanId: previous?.id ?? null,
    newAssets: discovered.map(asset),
    goneAssets: gone.map(asset),
    changedAssets: changed.map((row) => {
      const { reappeared: _reappeared, ...rest } = asset(row);
      return { ...rest, changes: (row.data as unknown as ChangeDataByType['asset.changed']).changes };
    }),
    newFindings,
    fixedFindings: fixed.map(finding),
    counts,
    truncated: Object.values(counts).some((total) => total > MAX_DIFF_ITEMS),
  };
}
