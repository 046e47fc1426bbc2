import type { AppDeps } from '../../context.js';
import { parseTemplate, type NucleiTemplate } from '../../scanner/nuclei/index.js';
import { sha256 } from './content.js';
import { readerOfBlob } from './import-files.js';
import { loadPack } from './pack.js';
import type { RunnableTemplate } from '../../scanner/nuclei/run-on-web.js';
import { templatePayloadFilesKey } from './schemas.js';
import { effectiveEnabled, templatesOfWorkspaceWhere } from './service.js';
import { selects, usesDefaultPack, type TemplateSelection } from './selection.js';

/**
 * The templates a scan of a workspace runs: the built-in pack (from the release's files) and the workspace's
 * own uploads (from the blob store), minus those switched off for it. When one of the workspace's templates has
 * the id of a built-in one, the workspace's replaces it: one id, one template, one set of findings. The
 * workspace's template selection and the scan's (selection.ts) then choose among them.
 */

/** Parsed uploads by content hash: parsing compiles regexes and DSL; the same content parses the same way. */
const parsedByChecksum = new Map<string, NucleiTemplate>();
const PARSED_CACHE_SIZE = 512;
const READ_CONCURRENCY = 8;

/** `payloadFiles`: the JSON stored beside a template that reads payload files (import-files.ts). */
function parseCached(content: string, payloadFiles?: string): NucleiTemplate | undefined {
  const checksum = payloadFiles === undefined ? sha256(content) : sha256(`${sha256(content)}\n${sha256(payloadFiles)}`);
  const cached = parsedByChecksum.get(checksum);
  if (cached) {
    parsedByChecksum.delete(checksum);
    parsedByChecksum.set(checksum, cached);
    return cached;
  }
  const { template } = parseTemplate(content, payloadFiles === undefined ? {} : { readPayloadFile: readerOfBlob(payloadFiles) });
  if (!template) return undefined;
  parsedByChecksum.set(checksum, template);
  if (parsedByChecksum.size > PARSED_CACHE_SIZE) parsedByChecksum.delete(parsedByChecksum.keys().next().value!);
  return template;
}

export interface ScanTemplateSelection {
  workspace?: TemplateSelection;
  scan?: TemplateSelection;
}

export async function loadScanTemplates(
  deps: Pick<AppDeps, 'prisma' | 'storage' | 'log'>,
  workspaceId: string,
  selection: ScanTemplateSelection = {},
): Promise<RunnableTemplate[]> {
  const withPack = usesDefaultPack(selection.workspace ?? {}, selection.scan);
  const rows = await deps.prisma.template.findMany({
    where: templatesOfWorkspaceWhere(workspaceId),
    orderBy: [{ builtin: 'asc' }, { updatedAt: 'desc' }, { id: 'asc' }],
    include: { settings: { where: { workspaceId }, select: { enabled: true } } },
  });
  // Without the pack nothing of it is parsed (a fresh process would parse all of it here).
  const pack = new Map(withPack ? (await loadPack()).map((entry) => [entry.fileName, entry.template]) : []);
  const own = rows.filter((row) => !row.builtin && row.storageKey && effectiveEnabled(row, undefined));
  const ownTemplates: NucleiTemplate[] = [];
  for (let start = 0; start < own.length; start += READ_CONCURRENCY) {
    const batch = await Promise.all(
      own.slice(start, start + READ_CONCURRENCY).map(async (row) => {
        const bytes = await deps.storage.get(row.storageKey!);
        const files = row.payloadFilesChecksum ? await deps.storage.get(templatePayloadFilesKey(row.id)) : undefined;
        const template = bytes && files !== null ? parseCached(bytes.toString('utf8'), files?.toString('utf8')) : undefined;
        // Uploads are validated before they are stored: this is a blob lost or changed behind our back.
        if (!template) deps.log.warn({ templateId: row.id, key: row.storageKey }, 'template content missing or invalid: not run');
        return template;
      }),
    );
    for (const template of batch) if (template) ownTemplates.push(template);
  }
  const byId = new Map<string, NucleiTemplate>();
  // The workspace's own first (most recently changed first): they win over a built-in template with their id.
  for (const template of ownTemplates) if (!byId.has(template.id)) byId.set(template.id, template);
  for (const row of rows) {
    if (!withPack || !row.builtin || !effectiveEnabled(row, row.settings[0])) continue;
    const template = pack.get(row.fileName);
    if (template && !byId.has(template.id)) byId.set(template.id, template);
  }
  const chosen = [selects(selection.workspace ?? {}), selects(selection.scan ?? {})];
  return [...byId.values()]
    .filter((template) => chosen.every((test) => test(template)))
    .sort((a, b) => a.id.localeCompare(b.id))
    .map((template) => ({ template }));
}
