import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { ConfigError, loadEnv } from '../src/env.js';
import { createBlobStore, InvalidBlobKeyError, LocalBlobStore, S3BlobStore, type BlobStore } from '../src/storage/index.js';
import { HeadObjectCommand, startS3Server, type TestS3Server } from './support/s3.js';

let s3: TestS3Server;
let s3Store: S3BlobStore;
let localDir: string;
let localStore: LocalBlobStore;

beforeAll(async () => {
  s3 = await startS3Server();
  s3Store = createBlobStore(loadEnv({ ...s3.env(), DATA_DIR: tmpdir() })) as S3BlobStore;
  localDir = mkdtempSync(join(tmpdir(), 'perimeter-blobs-'));
  localStore = new LocalBlobStore(join(localDir, 'blobs'));
});
afterAll(async () => {
  s3Store?.destroy();
  await s3?.stop();
  if (localDir) rmSync(localDir, { recursive: true, force: true });
});

const HOSTILE_KEYS = [
  '',
  '../outside.txt',
  'a/../../outside.txt',
  'nuclei-templates/../../outside.txt',
  '/etc/passwd',
  'a\0b',
  'a//b',
  './a',
  'a/.',
  'C:/x',
  'a\\..\\b',
  'x'.repeat(1025),
];

describe.each([
  ['local', () => localStore as BlobStore],
  ['s3', () => s3Store as BlobStore],
])('the %s driver', (kind, store) => {
  it('names its kind', () => {
    expect(store().kind).toBe(kind);
  });

  it('round-trips text and binary content, and overwrites', async () => {
    const key = `nuclei-templates/${randomBytes(4).toString('hex')}.yaml`;
    expect(await store().exists(key)).toBe(false);
    await store().put(key, 'id: example\ninfo:\n  name: Ünïcode ✓\n', { contentType: 'application/yaml' });
    expect(await store().exists(key)).toBe(true);
    expect((await store().get(key))!.toString('utf8')).toBe('id: example\ninfo:\n  name: Ünïcode ✓\n');

    // Every byte value, plus a body large enough for several chunks.
    const binary = Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), randomBytes(300_000)]);
    await store().put(key, binary);
    expect((await store().get(key))!.equals(binary)).toBe(true);

    await store().put(key, Buffer.alloc(0));
    expect(await store().get(key)).toEqual(Buffer.alloc(0));
    expect(await store().exists(key)).toBe(true);
  });

  it('answers null and false for missing keys, and deletes idempotently', async () => {
    const key = `logos/${randomBytes(4).toString('hex')}.png`;
    expect(await store().get(key)).toBeNull();
    expect(await store().exists(key)).toBe(false);
    await store().delete(key);

    await store().put(key, Buffer.from([1, 2, 3]));
    await store().delete(key);
    expect(await store().get(key)).toBeNull();
    expect(await store().exists(key)).toBe(false);
    await store().delete(key);
  });

  it('treats a "directory" as no object', async () => {
    await store().put('dir-test/inner/file.txt', 'x');
    expect(await store().get('dir-test/inner')).toBeNull();
    expect(await store().exists('dir-test')).toBe(false);
  });

  it.each(HOSTILE_KEYS.map((key) => [JSON.stringify(key).slice(0, 40), key]))('refuses the key %s', async (_label, key) => {
    await expect(store().put(key, 'x')).rejects.toBeInstanceOf(InvalidBlobKeyError);
    await expect(store().get(key)).rejects.toBeInstanceOf(InvalidBlobKeyError);
    await expect(store().exists(key)).rejects.toBeInstanceOf(InvalidBlobKeyError);
    await expect(store().delete(key)).rejects.toBeInstanceOf(InvalidBlobKeyError);
  });
});

describe('the local driver', () => {
  it('keeps files under its root and never writes outside it', async () => {
    writeFileSync(join(localDir, 'outside.txt'), 'secret');
    await expect(localStore.get('../outside.txt')).rejects.toThrow(/Invalid storage key/);
    await expect(localStore.delete('../outside.txt')).rejects.toThrow(InvalidBlobKeyError);
    expect(existsSync(join(localDir, 'outside.txt'))).toBe(true);

    await localStore.put('nuclei-templates/abc.yaml', 'id: abc');
    expect(existsSync(join(localDir, 'blobs', 'nuclei-templates', 'abc.yaml'))).toBe(true);
    expect(localStore.pathOf('nuclei-templates/abc.yaml')).toBe(join(localDir, 'blobs', 'nuclei-templates', 'abc.yaml'));
  });

  it('writes atomically: concurrent writers leave one whole version and no temp files', async () => {
    const a = Buffer.alloc(2_000_000, 'a');
    const b = Buffer.alloc(2_000_000, 'b');
    const key = 'atomic/blob.bin';
    const reads: Promise<Buffer | null>[] = [];
    const writes = [localStore.put(key, a), localStore.put(key, b), localStore.put(key, a)];
    for (let i = 0; i < 20; i++) reads.push(localStore.get(key));
    await Promise.all(writes);
    // A reader sees nothing yet, or one whole version: never a mix or a truncated file.
    for (const read of await Promise.all(reads)) if (read) expect(read.equals(a) || read.equals(b)).toBe(true);
    const final = (await localStore.get(key))!;
    expect(final.equals(a) || final.equals(b)).toBe(true);
    expect(readdirSync(join(localDir, 'blobs', 'atomic'))).toEqual(['blob.bin']);
  });
});

describe('the s3 driver', () => {
  it('stores the content type and writes under the configured bucket', async () => {
    await s3Store.put('logos/typed.png', Buffer.from([0x89, 0x50]), { contentType: 'image/png' });
    const head = await s3.client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: 'logos/typed.png' }));
    expect(head.ContentType).toBe('image/png');
    expect((await s3.readObject('logos/typed.png'))!.body).toEqual(Buffer.from([0x89, 0x50]));
  });

  it('reports a missing bucket as an error, not as a missing key', async () => {
    const wrong = new S3BlobStore({
      bucket: 'no-such-bucket',
      region: 'us-east-1',
      endpoint: s3.endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    });
    await expect(wrong.get('x')).rejects.toThrow();
    await expect(wrong.put('x', 'y')).rejects.toThrow();
    wrong.destroy();
  });
});

describe('storage configuration', () => {
  function configError(source: Record<string, string>): string {
    try {
      loadEnv(source);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as Error).message;
    }
    throw new Error(`loadEnv accepted ${JSON.stringify(source)}`);
  }

  it('defaults to local files under DATA_DIR/blobs', () => {
    const env = loadEnv({ DATA_DIR: '/tmp/perimeter-data' });
    expect(env.STORAGE_DRIVER).toBe('local');
    const store = createBlobStore(env);
    expect(store).toBeInstanceOf(LocalBlobStore);
    expect((store as LocalBlobStore).root).toBe('/tmp/perimeter-data/blobs');
  });

  it('builds the S3 driver with path-style addressing for a custom endpoint unless told otherwise', () => {
    const env = loadEnv({ STORAGE_DRIVER: 's3', S3_BUCKET: 'assets-1', S3_ENDPOINT: 'http://minio:9000' });
    expect(env).toMatchObject({ S3_REGION: 'us-east-1', S3_BUCKET: 'assets-1' });
    const store = createBlobStore(env) as S3BlobStore;
    expect(store.kind).toBe('s3');
    expect(store.client.config.forcePathStyle).toBe(true);
    store.destroy();
    const virtual = createBlobStore(
      loadEnv({ STORAGE_DRIVER: 's3', S3_BUCKET: 'assets-1', S3_ENDPOINT: 'http://minio:9000', S3_FORCE_PATH_STYLE: 'false' }),
    ) as S3BlobStore;
    expect(virtual.client.config.forcePathStyle).toBe(false);
    virtual.destroy();
    const aws = createBlobStore(loadEnv({ STORAGE_DRIVER: 's3', S3_BUCKET: 'assets-1', S3_REGION: 'eu-west-3' })) as S3BlobStore;
    expect(aws.client.config.forcePathStyle).toBe(false);
    aws.destroy();
  });

  it.each([
    [{ STORAGE_DRIVER: 's3' }, /^ {2}S3_BUCKET: is required when STORAGE_DRIVER=s3$/m],
    [{ STORAGE_DRIVER: 'ftp' }, /^ {2}STORAGE_DRIVER: must be local or s3$/m],
    [{ STORAGE_DRIVER: 's3', S3_BUCKET: 'Bad_Bucket' }, /^ {2}S3_BUCKET: must be a bucket name/m],
    [{ S3_ENDPOINT: 'minio:9000' }, /^ {2}S3_ENDPOINT: must be an http:\/\/ or https:\/\/ URL/m],
    [{ S3_FORCE_PATH_STYLE: 'maybe' }, /^ {2}S3_FORCE_PATH_STYLE: must be true or false$/m],
    [{ STORAGE_DRIVER: 's3', S3_BUCKET: 'b-1', S3_ACCESS_KEY_ID: 'AKIA' }, /^ {2}S3_SECRET_ACCESS_KEY: is required when S3_ACCESS_KEY_ID is set/m],
    [{ STORAGE_DRIVER: 's3', S3_BUCKET: 'b-1', S3_SECRET_ACCESS_KEY: 'x' }, /^ {2}S3_ACCESS_KEY_ID: is required when S3_SECRET_ACCESS_KEY is set/m],
  ])('refuses %j', (source, message) => {
    expect(configError(source)).toMatch(message);
  });

  it('reports a missing bucket together with other bad variables', () => {
    const message = configError({ STORAGE_DRIVER: 's3', PORT: 'x' });
    expect(message).toMatch(/PORT: must be a whole number/);
    expect(message).toMatch(/S3_BUCKET: is required when STORAGE_DRIVER=s3/);
  });

  it('never puts the secret key in a configuration error', () => {
    expect(configError({ STORAGE_DRIVER: 's3', S3_SECRET_ACCESS_KEY: 'very-secret-value' })).not.toContain('very-secret-value');
  });
});
