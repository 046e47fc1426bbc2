import { Readable } from 'node:stream';
import { AppError, ConflictError, ValidationError } from '../../errors.js';
import type { ServiceContext } from '../../context.js';
import { assertCan, requireViewer } from '../../auth/authz.js';
import { mapBounded } from '../../concurrency.js';
import type { Prisma } from '../../db.js';
import { publishWorkspaceEvent } from '../workspaces/events.js';
import { archiveEntries, type ArchiveFormat, type ArchiveLimits } from './archive.js';
import { ArchiveHelperFiles } from './import-files.js';
import { judgeContent, judgeEntry, type Judged, type StoredTemplate } from './import-judge.js';
import { planImport, type ImportedFile, type ImportPlan } from './import-plan.js';
import { templatePayloadFilesKey, templateStorageKey } from './schemas.js';
import { UPLOAD_LOCK_NAMESPACE, warningsOf } from './service.js';

/**
 * Imports a whole template library from one archive (owners): every nuclei template in it is judged as an
 * upload is (content.ts), then the workspace's templates are created or updated in one transaction, under the
 * upload lock, with their contents written to the blob store alongside. Files that are not templates are
 * skipped and not reported; refused entries are reported with why, and the rest is imported.
 */

/** Entries of any kind (folders included) read from one archive; the public library has about 12,000. */
export const MAX_IMPORT_ENTRIES = 50_000;
/** A .tar.gz may expand to this many times TEMPLATE_IMPORT_MAX_BYTES (decompression-bomb bound). */
export const MAX_EXPANSION_RATIO = 8;
/** Blob writes in flight at once. */
const BLOB_CONCURRENCY = 16;
/** The transaction writes thousands of blobs and rows: Prisma's 5 s default is for short transactions. */
const TRANSACTION_TIMEOUT_MS = 10 * 60_000;

export interface ImportInput {
  format: ArchiveFormat;
  /** The archive's bytes, read once, as they arrive. */
  body: Readable;
}

export interface ImportTotals {
  /** Templates and refused entries reported in `files` (files that are not templates are not counted). */
  files: number;
  loaded: number;
  warnings: number;
  rejected: number;
  created: number;
  updated: number;
  unchanged: number;
}

export interface ImportResult {
  totals: ImportTotals;
  files: ImportedFile[];
}

export function importLimits(maxBytes: number): ArchiveLimits {
  return { maxBytes, maxEntries: MAX_IMPORT_ENTRIES, maxExpandedBytes: maxBytes * MAX_EXPANSION_RATIO };
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * GraphQL's archive: base64 text, decoded when the import first reads it (so a caller who may not import
 * gets 403/404 first, as over REST). Its length bounds the decoded size: 413 is decided before decoding.
 */
export function archiveFromBase64(text: string, maxBytes: number): Readable {
  return Readable.from(
    (function* decode() {
      if (text.length > Math.ceil(maxBytes / 3) * 4)
        throw new AppError('PAYLOAD_TOO_LARGE', `The archive is larger than ${maxBytes} bytes (TEMPLATE_IMPORT_MAX_BYTES)`);
      if (!BASE64.test(text) || text.length % 4 === 1) {
        throw new ValidationError('Invalid input: archiveBase64: must be base64 (A-Z, a-z, 0-9, +, /, = padding)', [
          { field: 'archiveBase64', message: 'must be base64' },
        ]);
      }
      yield Buffer.from(text, 'base64');
    })(),
  );
}

type Tx = Prisma.TransactionClient;

/** A unique index refused a row: P2002 from Prisma's own queries, P2010 with PostgreSQL's 23505 from raw ones. */
function isUniqueViolation(error: unknown): boolean {
  const { code, meta } = (error ?? {}) as { code?: unknown; meta?: { code?: unknown } };
  return code === 'P2002' || (code === 'P2010' && meta?.code === '23505') || /\b23505\b|unique constraint/i.test(String((error as Error)?.message ?? ''));
}

async function ownTemplates(prisma: Tx | ServiceContext['deps']['prisma'], workspaceId: string): Promise<StoredTemplate[]> {
  const rows = await prisma.template.findMany({
    where: { workspaceId, builtin: false },
    select: { id: true, fileName: true, templateKey: true, checksum: true, payloadFilesChecksum: true, warnings: true, userVariables: true },
  });
  return rows.map((row) => ({ ...row, warnings: warningsOf(row.warnings) }));
}

function totalsOf(files: ImportedFile[]): ImportTotals {
  const count = (test: (file: ImportedFile) => boolean) => files.filter(test).length;
  return {
    files: files.length,
    loaded: count((file) => file.status === 'loaded'),
    warnings: count((file) => file.status === 'warnings'),
    rejected: count((file) => file.status === 'rejected'),
    created: count((file) => file.change === 'created'),
    updated: count((file) => file.change === 'updated'),
    unchanged: count((file) => file.change === 'unchanged'),
  };
}

/** A row's described fields as one JSON array element: rows travel to PostgreSQL as one parameter, whatever their number. */
function rowValues(rows: ImportPlan['updates'] | ImportPlan['creates']): string {
  return JSON.stringify(
    rows.map(({ id, fields, ...rest }: ImportPlan['updates'][number] & { fileName?: string }) => ({
      id,
      fileName: rest.fileName ?? null,
      key: fields.templateKey,
      name: fields.name,
      severity: fields.severity,
      tags: fields.tags,
      checksum: fields.checksum,
      payloadFilesChecksum: rest.payloadFiles?.checksum ?? null,
      size: fields.sizeBytes,
      warnings: fields.warnings,
      userVariables: fields.userVariables,
      storage: templateStorageKey(id),
    })),
  );
}

/**
 * New rows in one INSERT and changed rows in one UPDATE, each reading its values from one JSON array
 * (jsonb_to_recordset): a single statement whatever the count (Prisma's createMany binds every value, and
 * took ~12 s for 10,000 rows on the embedded database; this takes about one).
 */
async function writeRows(tx: Tx, workspaceId: string, createdById: string, plan: ImportPlan): Promise<void> {
  const now = new Date();
  if (plan.creates.length) {
    await tx.$executeRaw`
      INSERT INTO "template" ("id", "workspaceId", "fileName", "templateKey", "name", "severity", "tags", "enabled", "builtin",
        "storageKey", "checksum", "payloadFilesChecksum", "sizeBytes", "warnings", "userVariables", "createdById", "createdAt", "updatedAt")
      SELECT v.id, ${workspaceId}::uuid, v."fileName", v.key, v.name, v.severity::"Severity", ARRAY(SELECT jsonb_array_elements_text(v.tags)),
        true, false, v.storage, v.checksum, v."payloadFilesChecksum", v.size, v.warnings, ARRAY(SELECT jsonb_array_elements_text(v."userVariables")), ${createdById}, ${now}::timestamp(3), ${now}::timestamp(3)
      FROM jsonb_to_recordset(${rowValues(plan.creates)}::jsonb)
        AS v(id uuid, "fileName" text, key text, name text, severity text, tags jsonb, checksum text, "payloadFilesChecksum" text, size int, warnings jsonb, "userVariables" jsonb, storage text)`;
  }
  if (plan.updates.length) {
    await tx.$executeRaw`
      UPDATE "template" AS t SET
        "templateKey" = v.key, "name" = v.name, "severity" = v.severity::"Severity",
        "tags" = ARRAY(SELECT jsonb_array_elements_text(v.tags)), "checksum" = v.checksum, "payloadFilesChecksum" = v."payloadFilesChecksum",
        "sizeBytes" = v.size, "warnings" = v.warnings, "userVariables" = ARRAY(SELECT jsonb_array_elements_text(v."userVariables")), "storageKey" = v.storage, "updatedAt" = ${now}::timestamp(3)
      FROM jsonb_to_recordset(${rowValues(plan.updates)}::jsonb)
        AS v(id uuid, key text, name text, severity text, tags jsonb, checksum text, "payloadFilesChecksum" text, size int, warnings jsonb, "userVariables" jsonb, storage text)
      WHERE t.id = v.id AND t."workspaceId" = ${workspaceId}::uuid AND t.builtin = false`;
  }
}

/**
 * Reads and judges the archive (no lock held: a slow upload blocks nobody), then plans and writes under the
 * workspace's upload lock, so the "one template per nuclei id" rule holds against concurrent uploads. Blobs
 * are written in the transaction, before it commits (as uploadTemplate does); if it fails, the new ones are removed.
 */
export async function importTemplates(ctx: ServiceContext, workspaceId: string, input: ImportInput): Promise<ImportResult> {
  const viewer = requireViewer(ctx);
  await assertCan(ctx, 'template:manage', { workspaceId });
  const { prisma, storage, env } = ctx.deps;
  const storedByChecksum = new Map<string, StoredTemplate>();
  for (const row of await ownTemplates(prisma, workspaceId)) if (row.checksum && row.templateKey) storedByChecksum.set(row.checksum, row);

  const judged: Judged[] = [];
  const helpers = new ArchiveHelperFiles();
  for await (const entry of archiveEntries(input.body, input.format, importLimits(env.TEMPLATE_IMPORT_MAX_BYTES))) {
    const verdict = await judgeEntry(entry, storedByChecksum, helpers);
    if (verdict.kind !== 'skip') judged.push(verdict);
  }
  // Templates with payloads are judged last: the helper files they name may come after them in the archive.
  for (const [index, entry] of judged.entries()) if (entry.kind === 'deferred') judged[index] = judgeContent(entry.path, entry.content, helpers);

  let written: string[] = [];
  const plan = await prisma
    .$transaction(
      async (tx) => {
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(${UPLOAD_LOCK_NAMESPACE}::int, hashtext(${workspaceId}))`;
        const builtins = await tx.template.findMany({ where: { builtin: true, workspaceId: null }, select: { templateKey: true, fileName: true } });
        const builtinByKey = new Map(builtins.filter((row) => row.templateKey).map((row) => [row.templateKey!, row.fileName]));
        const planned = planImport(judged, await ownTemplates(tx, workspaceId), builtinByKey);
        written = planned.creates.flatMap((row) => [templateStorageKey(row.id), ...(row.payloadFiles ? [templatePayloadFilesKey(row.id)] : [])]);
        // Blobs and rows at once: nothing is visible before the commit, which waits for both (settled, so no
        // write is still running when a failure removes the new blobs).
        const outcomes = await Promise.allSettled([
          mapBounded([...planned.creates, ...planned.updates], BLOB_CONCURRENCY, async (row) => {
            await storage.put(templateStorageKey(row.id), row.content, { contentType: 'application/yaml' });
            // An update that no longer reads payload files leaves no stale ones behind.
            if (row.payloadFiles) await storage.put(templatePayloadFilesKey(row.id), row.payloadFiles.json, { contentType: 'application/json' });
            else if (!('fileName' in row)) await storage.delete(templatePayloadFilesKey(row.id)).catch(() => {});
          }),
          writeRows(tx, workspaceId, viewer.id, planned),
        ]);
        for (const outcome of outcomes) if (outcome.status === 'rejected') throw outcome.reason;
        return planned;
      },
      { timeout: TRANSACTION_TIMEOUT_MS, maxWait: 30_000 },
    )
    .catch(async (error: unknown) => {
      // Rows never committed: the blobs written for new templates belong to nothing.
      await mapBounded(written, BLOB_CONCURRENCY, (key) => storage.delete(key).catch(() => {}));
      // POST /api/templates (a bare registration, outside the upload lock) took a file name this import chose.
      if (isUniqueViolation(error)) throw new ConflictError('A template was registered under one of these file names while the import ran; import again');
      throw error;
    });
  if (plan.creates.length || plan.updates.length) await publishWorkspaceEvent(ctx, workspaceId, 'templates.imported', workspaceId);
  return { totals: totalsOf(plan.files), files: plan.files };
}
