import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { shippedPath } from '../../shipped-files.js';
import type { AppDeps } from '../../context.js';
import type { Prisma } from '../../db.js';
import type { NucleiTemplate, TemplateIssue } from '../../scanner/nuclei/index.js';
import { checkTemplateContent, sha256 } from './content.js';

/**
 * The default template pack: the YAML files in ./pack, shipped with the release. Every workspace runs them
 * unless it switches one off (WorkspaceTemplateSetting). Their rows (workspaceId null, builtin) carry the
 * metadata the registry lists; the content is read from the files, never from the blob store.
 */

const PACK_DIR = shippedPath('src/modules/templates/pack');

export interface PackTemplate {
  fileName: string;
  content: string;
  template: NucleiTemplate;
  warnings: TemplateIssue[];
  userVariables: string[];
  checksum: string;
  sizeBytes: number;
}

interface PackFile {
  fileName: string;
  content: string;
  checksum: string;
}

let filesPromise: Promise<PackFile[]> | undefined;
let packPromise: Promise<PackTemplate[]> | undefined;

/** The pack's files and their checksums, read once per process (no parsing: start-up compares checksums only). */
function readPackFiles(): Promise<PackFile[]> {
  filesPromise ??= (async () => {
    const names = (await readdir(PACK_DIR)).filter((name) => /\.ya?ml$/.test(name)).sort();
    return Promise.all(
      names.map(async (fileName) => {
        const content = await readFile(join(PACK_DIR, fileName), 'utf8');
        return { fileName, content, checksum: sha256(content) };
      }),
    );
  })();
  filesPromise.catch(() => (filesPromise = undefined));
  return filesPromise;
}

/** A pack file parsed and checked. One that does not parse is a bug of the release: it throws. */
function parsePackFile(file: PackFile): PackTemplate {
  try {
    return { fileName: file.fileName, content: file.content, ...checkTemplateContent(file.content) };
  } catch (error) {
    throw new Error(`built-in template ${file.fileName} is invalid: ${(error as Error).message}`);
  }
}

/** The pack, read and parsed once per process. */
export function loadPack(): Promise<PackTemplate[]> {
  packPromise ??= readPackFiles().then((files) => files.map(parsePackFile));
  packPromise.catch(() => (packPromise = undefined));
  return packPromise;
}

/** nuclei's `unknown` severity has no counterpart in findings: it is reported as info (as tool results are). */
export function severityOf(template: NucleiTemplate): 'info' | 'low' | 'medium' | 'high' | 'critical' {
  return template.info.severity === 'unknown' ? 'info' : template.info.severity;
}

/** Row fields that describe a parsed template (shared with uploads). */
export function describe(checked: { template: NucleiTemplate; warnings: TemplateIssue[]; userVariables: string[]; checksum: string; sizeBytes: number }) {
  return {
    templateKey: checked.template.id,
    name: checked.template.info.name,
    severity: severityOf(checked.template),
    tags: checked.template.info.tags.slice(0, 50),
    checksum: checked.checksum,
    sizeBytes: checked.sizeBytes,
    warnings: checked.warnings as unknown as Prisma.InputJsonValue,
    userVariables: checked.userVariables,
  };
}

/** Any constant works: it only has to be the same in every process of this instance (and differ from the tools' one). */
const PACK_LOCK = 7_303_002;

/**
 * Creates, refreshes or removes the built-in template rows to match the pack; run at every start after
 * migrations. `@@unique([workspaceId, fileName])` does not hold for NULL workspaceId in PostgreSQL, so a
 * transaction advisory lock serialises two processes starting at once (as the tool catalogue does).
 */
export async function ensureBuiltinTemplates(deps: Pick<AppDeps, 'prisma' | 'log'>): Promise<void> {
  const files = await readPackFiles();
  const changes = await deps.prisma.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(${PACK_LOCK}::bigint)`;
    const existing = await tx.template.findMany({ where: { builtin: true, workspaceId: null } });
    const created: string[] = [];
    const removed: string[] = [];
    for (const file of files) {
      const row = existing.find((candidate) => candidate.fileName === file.fileName);
      // A row whose checksum matches was written from this very content: nothing to parse or write. (Parsing
      // the whole pack took a good part of a warm start; scans parse it when they first need it.)
      if (row?.checksum === file.checksum) continue;
      const fields = describe(parsePackFile(file));
      if (!row) {
        await tx.template.create({ data: { ...fields, fileName: file.fileName, builtin: true, workspaceId: null, enabled: true } });
        created.push(file.fileName);
      } else {
        await tx.template.update({ where: { id: row.id }, data: fields });
      }
    }
    for (const row of existing) {
      if (!files.some((file) => file.fileName === row.fileName)) {
        // Gone from this release: its findings stay (they belong to the workspaces), its switches go with it.
        await tx.template.delete({ where: { id: row.id } });
        removed.push(row.fileName);
      }
    }
    return { created, removed };
  });
  if (changes.created.length || changes.removed.length) deps.log.info(changes, 'built-in templates registered');
}
