import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { assertBlobKey, toBuffer, type BlobStore } from './blob-store.js';

export interface S3BlobStoreOptions {
  bucket: string;
  region: string;
  /** An S3-compatible server (MinIO, Ceph, R2, …); unset means AWS. */
  endpoint?: string;
  forcePathStyle: boolean;
  /** Both or neither: neither uses the SDK's default credential chain (environment, profile, instance role). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

/** The SDK reports a missing key as NoSuchKey (GET) or a bare 404 NotFound (HEAD, which has no body). */
function isMissing(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === 'NoSuchKey' || error.name === 'NotFound') return true;
  return (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404 && error.name !== 'NoSuchBucket';
}

/** Blobs as objects in one S3 bucket, under the same keys the local driver uses as paths. */
export class S3BlobStore implements BlobStore {
  readonly kind = 's3' as const;
  readonly bucket: string;
  readonly client: S3Client;

  constructor(options: S3BlobStoreOptions) {
    this.bucket = options.bucket;
    this.client = new S3Client({
      region: options.region,
      endpoint: options.endpoint,
      forcePathStyle: options.forcePathStyle,
      credentials: options.credentials,
      // Many S3-compatible servers do not know the SDK's newer default checksum headers: send and check them
      // only where the operation requires it when talking to anything but AWS itself.
      ...(options.endpoint ? { requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' } : {}),
    });
  }

  async put(key: string, body: Buffer | string, options: { contentType?: string } = {}): Promise<void> {
    assertBlobKey(key);
    await this.client.send(
      new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: toBuffer(body), ContentType: options.contentType ?? 'application/octet-stream' }),
    );
  }

  async get(key: string): Promise<Buffer | null> {
    assertBlobKey(key);
    try {
      const object = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      if (!object.Body) return Buffer.alloc(0);
      return Buffer.from(await object.Body.transformToByteArray());
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  async exists(key: string): Promise<boolean> {
    assertBlobKey(key);
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return true;
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    assertBlobKey(key);
    // S3 answers 204 whether or not the key held anything.
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  /** Closes the client's idle sockets. */
  destroy(): void {
    this.client.destroy();
  }
}
