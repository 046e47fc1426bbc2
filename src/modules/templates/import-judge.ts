import { AppError, ValidationError } from '../../errors.js';
import { BUILTIN_CHECKS } from '../../scanner/index.js';
import { MAX_PAYLOAD_FILE_BYTES, type TemplateIssue } from '../../scanner/nuclei/index.js';
import type { ArchiveEntry } from './archive.js';
import { type ArchiveHelperFiles, payloadFilesBlob, type PayloadFilesBlob } from './import-files.js';
import { checkTemplateContent, issueField, sha256 } from './content.js';
import { describe } from './pack.js';
import { MAX_TEMPLATE_BYTES } from './schemas.js';

/**
 * What one archive entry is, before anything is stored: not a template (skipped, not counted), a refused
 * entry, a template already stored unchanged, or a template to store. Pure apart from reading the entry.
 */

/** Bytes read from a YAML file over the size bound, to tell a template (then rejected) from some other YAML file (skipped). */
const OVERSIZED_PEEK_BYTES = 16 * 1024;
/** Longest path reported back (a hostile archive may name an entry with kilobytes). */
const MAX_REPORTED_PATH = 512;

/** A stored template of the workspace, as the import compares against it. */
export interface StoredTemplate {
  id: string;
  fileName: string;
  templateKey: string | null;
  checksum: string | null;
  /** sha256 of the payload files stored beside it (null: none). */
  payloadFilesChecksum: string | null;
  warnings: TemplateIssue[];
  userVariables: string[];
}

export type Judged =
  | { kind: 'skip' }
  | { kind: 'rejected'; path: string; errors: string[] }
  /** Same bytes as a stored template: nothing to parse or write. */
  | { kind: 'unchanged'; path: string; stored: StoredTemplate }
  /** A template with payloads: judged once the whole archive (its helper files) has been read. */
  | { kind: 'deferred'; path: string; content: string }
  | {
      kind: 'template';
      path: string;
      content: string;
      nucleiId: string;
      fields: ReturnType<typeof describe>;
      warnings: TemplateIssue[];
      payloadFiles?: PayloadFilesBlob;
    };

/** Templates that may name payload files wait for the end of the archive (helper files may come after them). */
const HAS_PAYLOADS = /^[ \t-]*["']?payloads["']?[ \t]*:/m;

export function issueText(issue: TemplateIssue): string {
  return `${issueField(issue)}: ${issue.message}`;
}

/** `path` as reported: control characters shown as U+FFFD, cut to a bounded length. */
export function reportedPath(path: string): string {
  const shown = path.replace(/[\u0000-\u001f\u007f-\u009f]/g, '\ufffd');
  return shown.length > MAX_REPORTED_PATH ? `${shown.slice(0, MAX_REPORTED_PATH)}…` : shown;
}

/** Why an entry's name is refused: it would leave the archive's folder, or it is not a portable name. */
export function unsafePathProblem(path: string): string | undefined {
  if (path === '') return 'the entry has no name';
  if (/[\u0000-\u001f\u007f]/.test(path)) return 'the name holds control characters';
  if (path.includes('\\')) return 'the name holds a backslash (not a portable archive path)';
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) return 'absolute path: entries must be relative to the archive';
  if (path.split('/').includes('..')) return "the path leaves the archive's folder (..)";
  return undefined;
}

const LINK_PROBLEM: Record<'symlink' | 'hardlink' | 'other', string> = {
  symlink: 'symbolic link: not imported (an archive must hold the templates themselves)',
  hardlink: 'hard link: not imported (an archive must hold the templates themselves)',
  other: 'not a regular file (device, FIFO or encrypted entry): not imported',
};

/** Hidden files and folders (.github, .git, ._AppleDouble) and macOS zip metadata: never templates. */
function isHidden(path: string): boolean {
  return path.split('/').some((segment) => (segment.startsWith('.') && segment !== '.') || segment === '__MACOSX');
}

/**
 * nuclei's rule: a template is a YAML document with top-level `id` and `info`. Unindented keys are what a
 * top-level block mapping is made of; quoted keys are accepted too.
 */
export function looksLikeTemplate(text: string): boolean {
  return /^["']?id["']?[ \t]*:/m.test(text) && /^["']?info["']?[ \t]*:/m.test(text);
}

function errorsOf(error: AppError): string[] {
  if (error instanceof ValidationError && error.details?.length) return error.details.map((detail) => `${detail.field}: ${detail.message}`);
  return [error.message];
}

const BUILTIN_CHECK_IDS = new Set(BUILTIN_CHECKS.map((check) => check.id));

/**
 * Reads and judges one entry. `storedByChecksum`: the workspace's own templates, by content hash; `helpers`
 * keeps the files that are not templates (payload files templates may name).
 */
export async function judgeEntry(entry: ArchiveEntry, storedByChecksum: Map<string, StoredTemplate>, helpers?: ArchiveHelperFiles): Promise<Judged> {
  const unsafe = unsafePathProblem(entry.path);
  const path = reportedPath(entry.path.replace(/^(\.\/)+/, ''));
  if (unsafe) return { kind: 'rejected', path, errors: [unsafe] };
  if (entry.kind === 'symlink' || entry.kind === 'hardlink' || entry.kind === 'other') return { kind: 'rejected', path, errors: [LINK_PROBLEM[entry.kind]] };
  if (entry.kind === 'directory' || isHidden(path)) return { kind: 'skip' };
  if (!/\.ya?ml$/i.test(path)) {
    await helpers?.offer(path, (limit) => entry.read(limit));
    return { kind: 'skip' };
  }
  if (entry.size > MAX_TEMPLATE_BYTES) {
    // With helpers wanted, a big YAML list is read whole (up to the payload-file bound) so a template may use it.
    const bytes = await entry.read(helpers ? MAX_PAYLOAD_FILE_BYTES + 1 : OVERSIZED_PEEK_BYTES);
    const head = bytes.subarray(0, OVERSIZED_PEEK_BYTES).toString('utf8');
    if (!looksLikeTemplate(head)) {
      helpers?.keep(path, bytes.toString('utf8'));
      return { kind: 'skip' };
    }
    return { kind: 'rejected', path, errors: [`A template may be at most ${MAX_TEMPLATE_BYTES} bytes; this one has ${entry.size}`] };
  }
  const content = (await entry.read(MAX_TEMPLATE_BYTES + 1)).toString('utf8');
  if (!looksLikeTemplate(content)) {
    // a YAML payload list is a helper file like any other
    helpers?.keep(path, content);
    return { kind: 'skip' };
  }
  if (helpers && HAS_PAYLOADS.test(content)) return { kind: 'deferred', path, content };
  const stored = storedByChecksum.get(sha256(content));
  if (stored && !stored.payloadFilesChecksum) return { kind: 'unchanged', path, stored };
  return judgeContent(path, content);
}

/** Judges a template's text; `helpers`: the archive's helper files, for its payload files. */
export function judgeContent(path: string, content: string, helpers?: ArchiveHelperFiles): Judged {
  const reader = helpers?.readerFor(path);
  let checked: ReturnType<typeof checkTemplateContent>;
  let payloadFiles: PayloadFilesBlob | undefined;
  try {
    checked = checkTemplateContent(content, reader);
    payloadFiles = reader ? payloadFilesBlob(checked.template, reader) : undefined;
  } catch (error) {
    if (error instanceof AppError) return { kind: 'rejected', path, errors: errorsOf(error) };
    return { kind: 'rejected', path, errors: [(error as Error).message] };
  }
  if (BUILTIN_CHECK_IDS.has(checked.template.id)) {
    return { kind: 'rejected', path, errors: [`The id ${checked.template.id} belongs to a built-in check; give the template another id`] };
  }
  return {
    kind: 'template',
    path,
    content,
    nucleiId: checked.template.id,
    fields: describe(checked),
    warnings: [...checked.warnings],
    ...(payloadFiles ? { payloadFiles } : {}),
  };
}
