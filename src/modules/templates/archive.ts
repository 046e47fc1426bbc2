import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { Parser, type ReadEntry } from 'tar';
import yauzl from 'yauzl';
import { AppError } from '../../errors.js';

/**
 * Reading a template archive entry by entry, never whole: a .tar.gz is gunzipped and parsed as it arrives
 * (the next entry is read once the previous one is consumed or skipped); a .zip, whose table of contents is
 * at its end, is spooled to a temporary file (bounded like the body) and read from there one entry at a time.
 * Nothing is ever written under an entry's name: names are only reported, so traversal cannot reach the disk,
 * but entries that try it are still refused by the caller (import.ts).
 */

export const ARCHIVE_FORMATS = ['tar.gz', 'zip'] as const;
export type ArchiveFormat = (typeof ARCHIVE_FORMATS)[number];

export type EntryKind = 'file' | 'directory' | 'symlink' | 'hardlink' | 'other';

export interface ArchiveEntry {
  /** The name the archive gives it, decoded (UTF-8, or CP437 for old zips). */
  path: string;
  kind: EntryKind;
  /** Declared size of a file's content in bytes. */
  size: number;
  /** A file's first `limit` bytes (the rest is skipped). Call at most once; an entry not read is skipped. */
  read(limit: number): Promise<Buffer>;
}

export interface ArchiveLimits {
  /** Bytes of the archive itself (the request body): 413 beyond. */
  maxBytes: number;
  /** Entries of any kind, directories included: 400 beyond. */
  maxEntries: number;
  /** Bytes a .tar.gz may expand to (every entry's content is decompressed to reach the next): 400 beyond. */
  maxExpandedBytes: number;
}

function tooLarge(maxBytes: number): AppError {
  return new AppError('PAYLOAD_TOO_LARGE', `The archive is larger than ${maxBytes} bytes (TEMPLATE_IMPORT_MAX_BYTES)`);
}

function unreadable(format: ArchiveFormat, error: unknown): AppError {
  if (error instanceof AppError) return error;
  const reason = (error as Error | undefined)?.message?.split('\n')[0] ?? 'unknown error';
  return new AppError('BAD_REQUEST', `The body is not a readable ${format === 'zip' ? 'zip' : 'gzip-compressed tar'} archive: ${reason}`);
}

/** Passes bytes through, failing once more than `max` went by (the body's cap, the expansion's bound). */
function byteBound(max: number, error: () => AppError): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      done(seen > max ? error() : null, chunk);
    },
  });
}

/**
 * First `limit` bytes of a stream. `drain`: the rest is read and dropped (a tar stream must move past it to
 * reach the next entry); otherwise reading stops there (leaving the loop destroys the stream).
 */
async function firstBytes(stream: AsyncIterable<Buffer>, limit: number, drain: boolean): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let kept = 0;
  for await (const chunk of stream) {
    if (kept < limit) {
      const part = chunk.subarray(0, limit - kept);
      chunks.push(part);
      kept += part.length;
    }
    if (kept >= limit && !drain) break;
  }
  return Buffer.concat(chunks);
}

function tarKind(type: ReadEntry['type']): EntryKind {
  if (type === 'File' || type === 'OldFile' || type === 'ContiguousFile') return 'file';
  if (type === 'Directory' || type === 'GNUDumpDir') return 'directory';
  if (type === 'SymbolicLink') return 'symlink';
  if (type === 'Link') return 'hardlink';
  return 'other';
}

async function* tarEntries(body: Readable, limits: ArchiveLimits): AsyncGenerator<ArchiveEntry> {
  // strict: a checksum failure or a truncated archive is an error, not a warning to shrug off.
  const parser = new Parser({ strict: true });
  let current: ReadEntry | undefined;
  let failure: AppError | undefined;
  let ended = false;
  let wake: (() => void) | undefined;
  const signal = () => {
    wake?.();
    wake = undefined;
  };
  // Rejects once reading fails: an entry being read then gets no more data and would never end on its own.
  let rejectFailed: (error: AppError) => void = () => {};
  const failed = new Promise<never>((_resolve, reject) => (rejectFailed = reject));
  failed.catch(() => {});
  const fail = (error: unknown) => {
    failure ??= unreadable('tar.gz', error);
    rejectFailed(failure);
    signal();
  };
  // The parser emits the next entry only once the previous one has ended: at most one is pending here.
  parser.on('entry', (entry: ReadEntry) => {
    current = entry;
    signal();
  });
  parser.on('end', () => {
    ended = true;
    signal();
  });
  const aborter = new AbortController();
  const feeding = pipeline(
    body,
    byteBound(limits.maxBytes, () => tooLarge(limits.maxBytes)),
    createGunzip(),
    byteBound(limits.maxExpandedBytes, () => new AppError('BAD_REQUEST', `The archive expands to more than ${limits.maxExpandedBytes} bytes`)),
    async (source: AsyncIterable<Buffer>) => {
      for await (const chunk of source) if (!parser.write(chunk)) await once(parser, 'drain', { signal: aborter.signal });
      parser.end();
    },
    { signal: aborter.signal },
  );
  feeding.catch(fail);
  parser.on('error', fail);
  try {
    for (;;) {
      if (current) {
        const entry = current;
        current = undefined;
        let consumed = false;
        yield {
          path: entry.path,
          kind: tarKind(entry.type),
          size: entry.size,
          read: (limit) => {
            consumed = true;
            return Promise.race([firstBytes(entry as unknown as AsyncIterable<Buffer>, limit, true), failed]);
          },
        };
        if (!consumed) entry.resume();
        continue;
      }
      if (failure) throw failure;
      if (ended) return;
      await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    // Stops reading the body when the caller gives up early (too many entries, an error of its own).
    aborter.abort();
    await feeding.catch(() => {});
  }
}

/** A zip entry's file type, from the Unix mode in the external attributes when the archiver wrote one. */
function zipKind(entry: yauzl.Entry, path: string): EntryKind {
  const madeOnUnix = entry.versionMadeBy >> 8 === 3;
  const mode = madeOnUnix ? (entry.externalFileAttributes >>> 16) & 0o170000 : 0;
  if (mode === 0o120000) return 'symlink';
  if (mode === 0o040000 || path.endsWith('/')) return 'directory';
  if (mode === 0 || mode === 0o100000) return 'file';
  return 'other';
}

async function* zipEntries(body: Readable, limits: ArchiveLimits): AsyncGenerator<ArchiveEntry> {
  const dir = await mkdtemp(join(tmpdir(), 'perimeter-import-'));
  let zip: yauzl.ZipFile | undefined;
  try {
    const file = join(dir, 'archive.zip');
    await pipeline(
      body,
      byteBound(limits.maxBytes, () => tooLarge(limits.maxBytes)),
      createWriteStream(file, { mode: 0o600 }),
    );
    // decodeStrings off: yauzl would fail the whole archive on the first unsafe name; the caller lists it instead.
    zip = await yauzl.openPromise(file, { lazyEntries: true, autoClose: false, decodeStrings: false, validateEntrySizes: true }).catch((error: unknown) => {
      throw unreadable('zip', error);
    });
    if (zip.entryCount > limits.maxEntries) {
      throw new AppError('BAD_REQUEST', `The archive has ${zip.entryCount} entries; at most ${limits.maxEntries} are read`);
    }
    const opened = zip;
    const entries = opened.eachEntry();
    for (;;) {
      const next = await entries.next().catch((error: unknown) => {
        throw unreadable('zip', error);
      });
      if (next.done) return;
      const entry = next.value;
      const path = yauzl.getFileNameLowLevel(entry.generalPurposeBitFlag, entry.fileNameRaw, entry.extraFields, false);
      const kind = zipKind(entry, path);
      yield {
        path,
        kind: kind === 'file' && (entry.isEncrypted() || !entry.canDecodeFileData()) ? 'other' : kind,
        size: entry.uncompressedSize,
        read: async (limit) => {
          try {
            // Only the bytes asked for are decompressed: a zip needs no reading past an entry to reach the next.
            return await firstBytes(await opened.openReadStreamPromise(entry), limit, false);
          } catch (error) {
            throw unreadable('zip', error);
          }
        },
      };
    }
  } finally {
    zip?.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The archive's entries in order; fails with 413 past the body cap and 400 for an archive that cannot be read,
 * expands too far or has too many entries (the whole import is refused: nothing was stored yet).
 */
export async function* archiveEntries(body: Readable, format: ArchiveFormat, limits: ArchiveLimits): AsyncGenerator<ArchiveEntry> {
  let count = 0;
  for await (const entry of format === 'zip' ? zipEntries(body, limits) : tarEntries(body, limits)) {
    count += 1;
    if (count > limits.maxEntries) throw new AppError('BAD_REQUEST', `The archive has more than ${limits.maxEntries} entries`);
    yield entry;
  }
}

/** The format a request's Content-Type names, or undefined (415). */
export function archiveFormatOf(contentType: string | undefined): ArchiveFormat | undefined {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/gzip' || type === 'application/x-gzip' || type === 'application/x-gtar' || type === 'application/x-tar+gzip') return 'tar.gz';
  if (type === 'application/zip' || type === 'application/x-zip-compressed') return 'zip';
  return undefined;
}
