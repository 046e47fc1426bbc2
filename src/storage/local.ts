import { mkdir, open, readFile, rename, rm, stat, unlink } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { basename, dirname, resolve, sep } from 'node:path';
import { assertBlobKey, InvalidBlobKeyError, toBuffer, type BlobStore } from './blob-store.js';

function isErrno(error: unknown, ...codes: string[]): boolean {
  return error instanceof Error && codes.includes((error as NodeJS.ErrnoException).code ?? '');
}

/** Blobs as files under one root directory (`${DATA_DIR}/blobs` by default): the embedded deployment's store. */
export class LocalBlobStore implements BlobStore {
  readonly kind = 'local' as const;
  readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
  }

  /** The file of a key; the key rules already keep it inside the root, the prefix check is the second lock. */
  pathOf(key: string): string {
    assertBlobKey(key);
    const path = resolve(this.root, key);
    if (!path.startsWith(this.root + sep)) throw new InvalidBlobKeyError('must stay inside the storage root');
    return path;
  }

  async put(key: string, body: Buffer | string): Promise<void> {
    const path = this.pathOf(key);
    await mkdir(dirname(path), { recursive: true });
    // Written beside the target and renamed over it: rename is atomic within a directory, so readers never
    // see a half-written file, and a crash leaves at worst a stray temp file, never a truncated blob.
    // (The name is shortened: a long key segment plus the suffix would pass the file system's name limit.)
    const temp = resolve(dirname(path), `.${basename(path).slice(0, 64)}.${randomUUID()}.tmp`);
    const handle = await open(temp, 'wx', 0o640);
    try {
      await handle.writeFile(toBuffer(body));
      await handle.datasync();
    } catch (error) {
      await handle.close();
      await rm(temp, { force: true });
      throw error;
    }
    await handle.close();
    try {
      await rename(temp, path);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
  }

  async get(key: string): Promise<Buffer | null> {
    const path = this.pathOf(key);
    try {
      return await readFile(path);
    } catch (error) {
      // A key naming a directory (`logos`) holds no object either.
      if (isErrno(error, 'ENOENT', 'ENOTDIR', 'EISDIR')) return null;
      throw error;
    }
  }

  async exists(key: string): Promise<boolean> {
    const path = this.pathOf(key);
    try {
      return (await stat(path)).isFile();
    } catch (error) {
      if (isErrno(error, 'ENOENT', 'ENOTDIR')) return false;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    const path = this.pathOf(key);
    try {
      await unlink(path);
    } catch (error) {
      if (isErrno(error, 'ENOENT', 'ENOTDIR')) return;
      throw error;
    }
  }
}
