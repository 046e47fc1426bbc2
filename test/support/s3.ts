import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';
import { GetObjectCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';

export interface TestS3Server {
  endpoint: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** A client of its own, to look at what the app stored without going through the app. */
  client: S3Client;
  readObject(key: string): Promise<{ body: Buffer; contentType: string | undefined } | null>;
  /** The env that points an app at this server. */
  env(): Record<string, string>;
  stop(): Promise<void>;
}

/** A real S3-protocol server (s3rver) on 127.0.0.1, a random port, with one empty bucket, files in a temp dir. */
export async function startS3Server(bucket = 'perimeter-test'): Promise<TestS3Server> {
  const directory = mkdtempSync(join(tmpdir(), 'perimeter-s3-'));
  // s3rver accepts any credentials but checks the signature against the ones it knows: these are its defaults.
  const accessKeyId = 'S3RVER';
  const secretAccessKey = 'S3RVER';
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket, configs: [] }] });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId, secretAccessKey } });
  return {
    endpoint,
    bucket,
    accessKeyId,
    secretAccessKey,
    client,
    readObject: async (key) => {
      try {
        const object = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        return { body: Buffer.from(await object.Body!.transformToByteArray()), contentType: object.ContentType };
      } catch (error) {
        if ((error as Error).name === 'NoSuchKey') return null;
        throw error;
      }
    },
    env: () => ({ STORAGE_DRIVER: 's3', S3_ENDPOINT: endpoint, S3_BUCKET: bucket, S3_ACCESS_KEY_ID: accessKeyId, S3_SECRET_ACCESS_KEY: secretAccessKey }),
    stop: async () => {
      client.destroy();
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

export { HeadObjectCommand };
