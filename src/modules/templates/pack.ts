import { readdir, readFile } from 'node:fs/promises';
import type { AppDeps } from '../../context.js';
import type { Prisma } from '../../db.js';
import type { NucleiTemplate, TemplateIssue } from '../../scanner/nuclei/index.js';
import { checkTemplateContent } from './content.js';

/**
 * The default template pack: the YAML files in ./pack, shipped with the release. Every workspace runs them
 * unless it switches one off (WorkspaceTemplateSetting). Their rows (workspaceId null, builtin) carry the
 * metadata the registry lists; the content is read from the files, never from the blob store.
 */

const PACK_DIR = new URL('./pack/', import.meta.url);

export interface PackTemplate {
  fileName: string;
  content: string;
  template: NucleiTemplate;
  warnings: TemplateIssue[];
  checksum: string;
  sizeBytes: number;
}

let packPromise: Promise<PackTemplate[]> | undefined;

/** The pack, read and parsed once per process. A file that does not parse is a bug of the release: it throws. */
export function loadPack(): Promise<PackTemplate[]> {
  packPromise ??= (async () => {
    const names = (await readdir(PACK_DIR)).filter((name) => /\.ya?ml$/.test(name)).sort();
    return Promise.all(
      names.map(async (fileName) => {
        const content = await readFile(new URL(fileName, PACK_DIR), 'utf8');
        try {
          return { fileName, content, ...checkTemplateContent(content) };
        } catch (error) {
          throw new Error(`built-in template ${fileName} is invalid: ${(error as Error).message}`);
        }
      }),
    );
  })();
  packPromise.catch(() => (packPromise = undefined));
  return packPromise;
}

/** nuclei's `unknown` severity has no counterpart in findings: it is reported as info (as tool results are). */
export function severityOf(template: NucleiTemplate): 'info' | 'low' | 'medium' | 'high' | 'critical' {
  return template.info.severity === 'unknown' ? 'info' : template.info.severity;
}

/** Row fields that describe a parsed template (shared with uploads). */
export function describe(checked: { template: NucleiTemplate; warnings: TemplateIssue[]; checksum: string; sizeBytes: number }) {
  return {
    templateKey: checked.template.id,
    name: checked.template.info.name,
    severity: severityOf(checked.template),
    tags: checked.template.info.tags.slice(0, 50),
    checksum: checked.checksum,
    sizeBytes: checked.sizeBytes,
    warnings: checked.warnings as unknown as Prisma.InputJsonValue,
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
  const pack = await loadPack();
  const changes = await deps.prisma.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(${PACK_LOCK}::bigint)`;
    const existing = await tx.template.findMany({ where: { builtin: true, workspaceId: null } });
    const created: string[] = [];
    const removed: string[] = [];
    for (const entry of pack) {
      const row = existing.find((candidate) => candidate.fileName === entry.fileName);
      const fields = describe(entry);
      if (!row) {
        await tx.template.create({ data: { ...fields, fileName: entry.fileName, builtin: true, workspaceId: null, enabled: true } });
        created.push(entry.fileName);
      } else if (row.checksum !== fields.checksum) {
        await tx.template.update({ where: { id: row.id }, data: fields });
      }
    }
    for (const row of existing) {
      if (!pack.some((entry) => entry.fileName === row.fileName)) {
        // Gone from this release: its findings stay (they belong to the workspaces), its switches go with it.
        await tx.template.delete({ where: { id: row.id } });
        removed.push(row.fileName);
      }
    }
    return { created, removed };
  });
  if (changes.created.length || changes.removed.length) deps.log.info(changes, 'built-in templates registered');
}
