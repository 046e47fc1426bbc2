import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { loadEnv } from '../../src/env.js';
import { createApp, type App } from '../../src/app.js';
import { openDatabase, type Database } from '../../src/db.js';
import type { Logger } from '../../src/logger.js';
import { loadTemplate } from './template.js';

/**
 * Tests run on PGlite by default. With TEST_DATABASE_URL (a PostgreSQL server URL; CI sets it) each test
 * app gets a fresh database on that server; with TEST_REDIS_URL pub/sub goes through Redis.
 */
export const usingPostgres = Boolean(process.env.TEST_DATABASE_URL);
export const redisUrl = process.env.TEST_REDIS_URL;

async function createFreshPostgresDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const adminUrl = new URL(process.env.TEST_DATABASE_URL!);
  const name = `perimeter_t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl.toString() });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: adminUrl.toString() });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

export interface TestDatabase {
  db: Database;
  dispose: () => Promise<void>;
  /** The PostgreSQL URL of this database (absent on PGlite), for processes that must share it. */
  url?: string;
}

export async function createTestDatabase(options: { logQueries?: boolean } = {}): Promise<TestDatabase> {
  if (usingPostgres) {
    const fresh = await createFreshPostgresDatabase();
    const db = await openDatabase({ url: fresh.url, logQueries: options.logQueries, poolSize: 5 });
    return { db, dispose: fresh.drop, url: fresh.url };
  }
  const db = await openDatabase({ pgliteTemplate: loadTemplate(), logQueries: options.logQueries });
  return { db, dispose: async () => {} };
}

export interface TestApp {
  app: App;
  url: string;
  db: Database;
  /** The PostgreSQL URL of the app's database (absent on PGlite), e.g. for a separate worker process. */
  databaseUrl?: string;
  stop: () => Promise<void>;
}

/** A real server on 127.0.0.1 with a random port, on its own database. */
export async function startTestApp(
  envOverrides: Record<string, string> = {},
  options: { logQueries?: boolean; database?: TestDatabase; log?: Logger } = {},
): Promise<TestApp> {
  const dataDir = mkdtempSync(join(tmpdir(), 'perimeter-test-'));
  const testDb = options.database ?? (await createTestDatabase({ logQueries: options.logQueries }));
  const env = loadEnv({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    DATA_DIR: dataDir,
    AUTH_SECRET: 'test-secret-that-is-long-enough-0123456789',
    AUTH_RATE_LIMIT_MAX: '10000',
    AUTH_ACCOUNT_RATE_LIMIT_MAX: '10000',
    // Tests sign up many users; the default (invite once an account exists) is tested in test/signup.test.ts.
    SIGNUP: 'open',
    SHUTDOWN_DRAIN_MS: '0',
    // Tests never reach beyond loopback: no certificate-transparency service (a test starts its own and sets the URL).
    DISCOVERY_CT_URL: '',
    // Every document compiled from its first execution, so the suite runs what production runs after it
    // (test/graphql-compiled.test.ts compares both executors).
    GRAPHQL_COMPILE_AFTER: '0',
    ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
    ...envOverrides,
  });
  // A database passed in belongs to whoever created it (e.g. another app sharing it): this app leaves it open.
  // A logger passed in (tests that read log lines) replaces the one LOG_LEVEL would make.
  const app = await createApp({ env, database: testDb.db, ownsDatabase: !options.database, log: options.log });
  const url = await app.listen(0, '127.0.0.1');
  return {
    app,
    url,
    db: testDb.db,
    databaseUrl: testDb.url,
    stop: async () => {
      await app.stop();
      if (!options.database) await testDb.dispose();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
