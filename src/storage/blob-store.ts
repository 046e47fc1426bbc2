import { AppError } from '../errors.js';

/**
 * Object storage for files the database only points at (nuclei templates, the instance logo, …). Keys are
 * relative, slash-separated paths such as `nuclei-templates/<id>.yaml`; the same key names the same object
 * on every driver, so a deployment can move from local files to S3 by copying the tree.
 */
export interface BlobStore {
  readonly kind: 'local' | 's3';
  /** Writes the whole object; a reader sees the old content or the new, never a mix. */
  put(key: string, body: Buffer | string, options?: { contentType?: string }): Promise<void>;
  /** The object's bytes, or null when there is none under this key. */
  get(key: string): Promise<Buffer | null>;
  exists(key: string): Promise<boolean>;
  /** Removes the object; deleting a key that holds nothing is not an error. */
  delete(key: string): Promise<void>;
}

/** A key that is not a plain relative path inside the store (e.g. `../x`, `/etc/passwd`, a NUL byte). */
export class InvalidBlobKeyError extends AppError {
  constructor(reason: string) {
    super('BAD_REQUEST', `Invalid storage key: ${reason}`);
    this.name = 'InvalidBlobKeyError';
  }
}

export const MAX_KEY_BYTES = 1024;

/**
 * Why `key` is refused, or null when it is acceptable. Both drivers apply the same rules, so a key that
 * works on one works on the other: relative, forward slashes only, no empty, `.` or `..` segments, no
 * control characters, at most 1024 bytes (the S3 limit).
 */
export function blobKeyProblem(key: unknown): string | null {
  if (typeof key !== 'string' || key.length === 0) return 'must be a non-empty string';
  if (Buffer.byteLength(key) > MAX_KEY_BYTES) return `must be at most ${MAX_KEY_BYTES} bytes`;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(key)) return 'must not contain NUL or other control characters';
  if (key.includes('\\')) return 'must use forward slashes';
  if (key.startsWith('/') || /^[a-z]:/i.test(key)) return 'must be a relative path';
  for (const segment of key.split('/')) {
    if (segment === '') return 'must not contain empty path segments';
    if (segment === '.' || segment === '..') return 'must not contain . or .. segments';
  }
  return null;
}

export function assertBlobKey(key: string): string {
  const problem = blobKeyProblem(key);
  if (problem) throw new InvalidBlobKeyError(problem);
  return key;
}

export function toBuffer(body: Buffer | string): Buffer {
  return typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
}
