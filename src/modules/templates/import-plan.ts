import { randomUUID } from 'node:crypto';
import type { TemplateIssue } from '../../scanner/nuclei/index.js';
import type { describe } from './pack.js';
import type { PayloadFilesBlob } from './import-files.js';
import { issueText, type Judged, type StoredTemplate } from './import-judge.js';

/**
 * Turns the judged entries into what the import writes and answers, against the workspace's templates as they
 * are under the upload lock. A template is known by its nuclei id: a file whose id the workspace already has
 * updates that template (its file name and enabled state stay), a new id creates one. Pure.
 */

export type ImportFileStatus = 'loaded' | 'warnings' | 'rejected';

export interface ImportedFile {
  /** The entry's path inside the archive. */
  path: string;
  status: ImportFileStatus;
  /** The template record (what GET /api/templates/{id} takes), for files that loaded. */
  templateId?: string;
  /** The template's own id (nuclei's `id`). */
  nucleiId?: string;
  /** What happened to the record: created, updated, or left alone because its content is the same. */
  change?: 'created' | 'updated' | 'unchanged';
  warnings?: string[];
  /** Variables the template needs from the user (workspace template settings or a scan's templateVariables); absent when none. */
  userVariables?: string[];
  errors?: string[];
}

type Fields = ReturnType<typeof describe>;

export interface RowToWrite {
  id: string;
  content: string;
  fields: Fields;
  /** The payload files stored beside the template (absent: it reads none). */
  payloadFiles?: PayloadFilesBlob;
}

export interface ImportPlan {
  files: ImportedFile[];
  creates: (RowToWrite & { fileName: string })[];
  updates: RowToWrite[];
}

const MAX_FILE_NAME = 128;

/** A file name the registry accepts (schemas.ts: letters, digits, dot, dash, underscore; .yaml/.yml; 128 characters). */
function cleanFileName(name: string): string {
  const extension = /\.yml$/i.test(name) ? '.yml' : '.yaml';
  const stem =
    name
      .replace(/\.ya?ml$/i, '')
      .replace(/[^A-Za-z0-9._-]+/g, '-')
      .replace(/^[^A-Za-z0-9]+/, '')
      .slice(0, MAX_FILE_NAME - extension.length - 8) || 'template';
  return `${stem}${extension}`;
}

/**
 * The file's own name when it is free in the workspace, else its folder's name before it
 * (`cves-2021-x.yaml`), else a counter (`x-2.yaml`): file names are unique per workspace, paths are not.
 */
function allocateFileName(path: string, taken: Set<string>): string {
  const segments = path.split('/');
  const own = cleanFileName(segments.at(-1)!);
  const folder = segments.at(-2);
  const candidates = [own, ...(folder ? [cleanFileName(`${folder}-${segments.at(-1)}`)] : [])];
  let chosen = candidates.find((candidate) => !taken.has(candidate));
  for (let n = 2; !chosen; n += 1) {
    const numbered = own.replace(/(\.ya?ml)$/, `-${n}$1`);
    if (!taken.has(numbered)) chosen = numbered;
  }
  taken.add(chosen);
  return chosen;
}

function outcome(
  path: string,
  judged: { warnings: TemplateIssue[]; userVariables: string[] },
  extra: Pick<ImportedFile, 'templateId' | 'nucleiId' | 'change'>,
): ImportedFile {
  const needs = judged.userVariables.length ? { userVariables: judged.userVariables } : {};
  return judged.warnings.length
    ? { path, status: 'warnings', ...extra, warnings: judged.warnings.map(issueText), ...needs }
    : { path, status: 'loaded', ...extra, ...needs };
}

/**
 * `stored`: the workspace's own templates now; `builtinByKey`: nuclei id → file name of the built-in pack
 * (a workspace template with such an id replaces the built-in one in its scans: a warning, as for uploads).
 */
export function planImport(judged: Judged[], stored: StoredTemplate[], builtinByKey: Map<string, string>): ImportPlan {
  const byId = new Map(stored.map((row) => [row.id, row]));
  const byKey = new Map(stored.filter((row) => row.templateKey).map((row) => [row.templateKey!, row]));
  const taken = new Set(stored.map((row) => row.fileName));
  /** nuclei id → the path that claimed it first in this archive. */
  const claimed = new Map<string, string>();
  const plan: ImportPlan = { files: [], creates: [], updates: [] };
  const claim = (path: string, nucleiId: string): ImportedFile | undefined => {
    const first = claimed.get(nucleiId);
    if (first !== undefined) {
      return {
        path,
        status: 'rejected',
        nucleiId,
        errors: [`same id (${nucleiId}) as ${first}, earlier in the archive: template ids must be unique (they name the findings)`],
      };
    }
    claimed.set(nucleiId, path);
    return undefined;
  };
  for (const entry of judged) {
    // deferred entries are judged (import.ts) before planning
    if (entry.kind === 'skip' || entry.kind === 'deferred') continue;
    if (entry.kind === 'rejected') {
      plan.files.push({ path: entry.path, status: 'rejected', errors: entry.errors });
      continue;
    }
    if (entry.kind === 'unchanged') {
      const current = byId.get(entry.stored.id);
      if (!current || current.checksum !== entry.stored.checksum || !current.templateKey) {
        plan.files.push({ path: entry.path, status: 'rejected', errors: ['the stored template was changed or deleted while this import ran; import again'] });
        continue;
      }
      const duplicate = claim(entry.path, current.templateKey);
      plan.files.push(duplicate ?? outcome(entry.path, current, { templateId: current.id, nucleiId: current.templateKey, change: 'unchanged' }));
      continue;
    }
    const duplicate = claim(entry.path, entry.nucleiId);
    if (duplicate) {
      plan.files.push(duplicate);
      continue;
    }
    const builtin = builtinByKey.get(entry.nucleiId);
    const warnings = builtin
      ? [
          ...entry.warnings,
          { path: 'id', message: `same id as the built-in template ${builtin}: this workspace runs this template instead of the built-in one` },
        ]
      : entry.warnings;
    const fields: Fields = { ...entry.fields, warnings: warnings as unknown as Fields['warnings'] };
    const existing = byKey.get(entry.nucleiId);
    const payloadFiles = entry.payloadFiles ? { payloadFiles: entry.payloadFiles } : {};
    if (existing?.checksum === fields.checksum && (existing.payloadFilesChecksum ?? undefined) === entry.payloadFiles?.checksum) {
      plan.files.push(outcome(entry.path, existing, { templateId: existing.id, nucleiId: entry.nucleiId, change: 'unchanged' }));
    } else if (existing) {
      plan.updates.push({ id: existing.id, content: entry.content, fields, ...payloadFiles });
      plan.files.push(
        outcome(entry.path, { warnings, userVariables: entry.fields.userVariables }, { templateId: existing.id, nucleiId: entry.nucleiId, change: 'updated' }),
      );
    } else {
      const id = randomUUID();
      plan.creates.push({ id, content: entry.content, fields, fileName: allocateFileName(entry.path, taken), ...payloadFiles });
      plan.files.push(
        outcome(entry.path, { warnings, userVariables: entry.fields.userVariables }, { templateId: id, nucleiId: entry.nucleiId, change: 'created' }),
      );
    }
  }
  return plan;
}
