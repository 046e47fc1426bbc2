import { join } from 'node:path';
import type { Env } from '../env.js';
import type { BlobStore } from './blob-store.js';
import { LocalBlobStore } from './local.js';
import { S3BlobStore } from './s3.js';

export { type BlobStore, InvalidBlobKeyError, assertBlobKey, blobKeyProblem } from './blob-store.js';
export { LocalBlobStore } from './local.js';
export { S3BlobStore, type S3BlobStoreOptions } from './s3.js';

/** The configured store: local files under `${DATA_DIR}/blobs` (default), or an S3 bucket (STORAGE_DRIVER=s3). */
export function createBlobStore(env: Env): BlobStore {
  if (env.STORAGE_DRIVER === 's3') {
    return new S3BlobStore({
      // loadEnv refuses STORAGE_DRIVER=s3 without a bucket.
      bucket: env.S3_BUCKET!,
      region: env.S3_REGION,
      endpoint: env.S3_ENDPOINT,
      forcePathStyle: env.S3_FORCE_PATH_STYLE ?? Boolean(env.S3_ENDPOINT),
      credentials:
        env.S3_ACCESS_KEY_ID && env.S3_SECRET_ACCESS_KEY ? { accessKeyId: env.S3_ACCESS_KEY_ID, secretAccessKey: env.S3_SECRET_ACCESS_KEY } : undefined,
    });
  }
  return new LocalBlobStore(join(env.dataDir, 'blobs'));
}

/** Releases what the store holds open (the S3 client's sockets); the local store holds nothing. */
export function closeBlobStore(store: BlobStore): void {
  if (store instanceof S3BlobStore) store.destroy();
}
