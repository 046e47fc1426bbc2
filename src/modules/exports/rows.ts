import type { Prisma } from '../../db.js';
import type { assetResponseInclude } from '../assets/service.js';
import type { CsvColumns } from './csv.js';

/** What an exported finding carries besides its columns: where it is, for CSV and SARIF. */
export const exportFindingInclude = {
  asset: { select: { kind: true, value: true, key: true } },
  target: { select: { value: true } },
} satisfies Prisma.FindingInclude;

export type ExportFindingRow = Prisma.FindingGetPayload<{ include: typeof exportFindingInclude }>;
export type ExportAssetRow = Prisma.AssetGetPayload<{ include: typeof assetResponseInclude }>;

/**
 * Every row, a batch at a time, by keyset on the primary key (`id > last id`, ascending): each batch is one
 * indexed query however deep into the table it is, and only one batch is held at a time. The rows are read as
 * they are at each batch (no snapshot across batches): a row written meanwhile may or may not be in the export.
 */
export async function* keysetBatches<T extends { id: string }>(readBatch: (afterId: string | undefined) => Promise<T[]>, batchSize: number) {
  let afterId: string | undefined;
  for (;;) {
    const rows = await readBatch(afterId);
    if (rows.length) yield rows;
    if (rows.length < batchSize) return;
    afterId = rows[rows.length - 1]!.id;
  }
}

interface Classification {
  cveId?: unknown;
  cweId?: unknown;
  cvssScore?: unknown;
}

const listOf = (value: unknown): string[] => (Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : []);
const classificationOf = (row: ExportFindingRow) => (row.classification ?? {}) as Classification;

export const FINDING_CSV_COLUMNS: CsvColumns<ExportFindingRow> = [
  ['id', (row) => row.id],
  ['fingerprint', (row) => row.fingerprint],
  ['checkId', (row) => row.checkId],
  ['source', (row) => row.source],
  ['name', (row) => row.name],
  ['severity', (row) => row.severity],
  ['status', (row) => row.status],
  ['asset', (row) => row.asset?.value],
  ['assetKind', (row) => row.asset?.kind],
  ['assetId', (row) => row.assetId],
  ['target', (row) => row.target?.value],
  ['targetId', (row) => row.targetId],
  ['cve', (row) => listOf(classificationOf(row).cveId)],
  ['cwe', (row) => listOf(classificationOf(row).cweId)],
  ['cvssScore', (row) => (typeof classificationOf(row).cvssScore === 'number' ? (classificationOf(row).cvssScore as number) : null)],
  ['description', (row) => row.description],
  ['remediation', (row) => row.remediation],
  ['matcher', (row) => row.matcher],
  ['evidenceUrl', (row) => ((row.evidence as { url?: unknown } | null)?.url as string | undefined) ?? null],
  ['occurrences', (row) => row.occurrences],
  ['firstSeenAt', (row) => row.firstSeenAt],
  ['lastSeenAt', (row) => row.lastSeenAt],
  ['fixedAt', (row) => row.fixedAt],
  ['dismissReason', (row) => row.dismissReason],
  ['dismissComment', (row) => row.dismissComment],
  ['dismissedAt', (row) => row.dismissedAt],
];

export const ASSET_CSV_COLUMNS: CsvColumns<ExportAssetRow> = [
  ['id', (row) => row.id],
  ['kind', (row) => row.kind],
  ['key', (row) => row.key],
  ['value', (row) => row.value],
  ['enabled', (row) => row.enabled],
  ['dismissed', (row) => row.dismissedAt !== null],
  ['discoverySources', (row) => row.discoveries.map((entry) => entry.source)],
  ['parentId', (row) => row.parentId],
  ['targetId', (row) => row.targetId],
  ['lastScanId', (row) => row.lastScanId],
  ['references', (row) => row.references],
  ['data', (row) => JSON.stringify(row.data)],
  ['firstSeenAt', (row) => row.firstSeenAt],
  ['lastSeenAt', (row) => row.lastSeenAt],
  ['dismissedAt', (row) => row.dismissedAt],
];
