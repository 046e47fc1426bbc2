import { createHash } from 'node:crypto';
import { MAX_PAYLOAD_FILE_BYTES, type NucleiTemplate, type PayloadFileReader } from '../../scanner/nuclei/index.js';

/**
 * The helper files of an imported archive (wordlists, one-line version files) that its templates name in
 * `payloads:`. They are only ever read from the archive the template came in: a reference is looked up the
 * way nuclei looks it up on disk (the template's folder, then each folder above it, up to the archive's root:
 * `helpers/wordlists/x.txt` from `nuclei-templates/http/default-logins/a.yaml` finds
 * `nuclei-templates/helpers/wordlists/x.txt`), never outside it. The files a template uses are stored beside it
 * (`nuclei-templates/<id>.payloads.json`, see payloadFilesBlob) so a scan reads them back with the template.
 */

/** Bytes of helper files one import keeps in memory while the archive streams (the public library has ~3 MB usable). */
export const MAX_ARCHIVE_HELPER_BYTES = 32 * 1024 * 1024;
/** Bytes of payload files one template may carry (its blob beside the YAML). */
export const MAX_TEMPLATE_PAYLOAD_BYTES = 2 * 1024 * 1024;

export class ArchiveHelperFiles {
  private readonly files = new Map<string, string>();
  private kept = 0;
  /** Files left out because the archive's helper budget was spent (a template naming one is told so). */
  private readonly overBudget = new Set<string>();

  /** Keeps a regular file's first bytes (one byte past the per-file bound, so an oversized file is reported as such). */
  async offer(path: string, read: (limit: number) => Promise<Buffer>): Promise<void> {
    if (this.kept >= MAX_ARCHIVE_HELPER_BYTES) {
      this.overBudget.add(path);
      return;
    }
    const bytes = await read(MAX_PAYLOAD_FILE_BYTES + 1);
    this.keep(path, bytes.toString('utf8'));
  }

  keep(path: string, text: string): void {
    if (this.kept + text.length > MAX_ARCHIVE_HELPER_BYTES) {
      this.overBudget.add(path);
      return;
    }
    this.kept += text.length;
    this.files.set(path, text);
  }

  /** nuclei's lookup from the template at `templatePath` (archive path), restricted to the archive. */
  readerFor(templatePath: string): PayloadFileReader {
    const folders = templatePath.split('/').slice(0, -1);
    return (reference) => {
      const ref = reference.replace(/^(\.\/)+/, '');
      for (let depth = folders.length; depth >= 0; depth--) {
        const candidate = [...folders.slice(0, depth), ref].join('/');
        const text = this.files.get(candidate);
        if (text !== undefined) return text;
        if (this.overBudget.has(candidate)) {
          throw new Error(`the archive's helper files exceed ${MAX_ARCHIVE_HELPER_BYTES} bytes; ${candidate} was not kept`);
        }
      }
      return undefined;
    };
  }
}

export interface PayloadFilesBlob {
  /** JSON `{ "<reference as the template writes it>": "<file text>" }`. */
  json: string;
  checksum: string;
  sizeBytes: number;
}

/** What is stored beside a template that reads payload files, or undefined when it reads none. */
export function payloadFilesBlob(template: NucleiTemplate, read: PayloadFileReader): PayloadFilesBlob | undefined {
  if (!template.payloadFiles?.length) return undefined;
  const files: Record<string, string> = {};
  for (const reference of template.payloadFiles) files[reference] = read(reference) ?? '';
  const json = JSON.stringify(files);
  const sizeBytes = Buffer.byteLength(json, 'utf8');
  if (sizeBytes > MAX_TEMPLATE_PAYLOAD_BYTES) {
    throw new Error(`the payload files this template reads hold ${sizeBytes} bytes; at most ${MAX_TEMPLATE_PAYLOAD_BYTES} are kept with one template`);
  }
  return { json, checksum: createHash('sha256').update(json, 'utf8').digest('hex'), sizeBytes };
}

/** The reader over a stored payload-files blob (scans). */
export function readerOfBlob(json: string): PayloadFileReader {
  const files = JSON.parse(json) as Record<string, string>;
  return (reference) => (Object.hasOwn(files, reference) ? files[reference] : undefined);
}
