import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { applyMigrations, defaultMigrationsDir, pgExecutor } from '../src/db/migrations.js';
import { openDatabase } from '../src/db.js';
import { startTestApp } from './support/app.js';
import { clientFor } from './support/client.js';

const PG_URL = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const HASHING_MIGRATION = '20261124025638_auth_invitations_hashed_sessions';

async function postgresAnswers(): Promise<boolean> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}
const available = await postgresAnswers();

describe.skipIf(!available)('the migration that hashes session tokens', () => {
  it('keeps the users who were signed in before it signed in', async () => {
    const name = `perimeter_t_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    const url = new URL(PG_URL);
    url.pathname = `/${name}`;
    const before = await mkdtemp(path.join(tmpdir(), 'perimeter-mig-'));
    try {
      // The schema as it was before the migration, with a session whose token is stored as given.
      for (const dir of (await readdir(defaultMigrationsDir)).filter((dir) => dir < HASHING_MIGRATION)) {
        await cp(path.join(defaultMigrationsDir, dir), path.join(before, dir), { recursive: true });
      }
      const client = new pg.Client({ connectionString: url.toString() });
      await client.connect();
      await applyMigrations(pgExecutor(client), { migrationsDir: before });
      const token = randomBytes(24).toString('base64url');
      await client.query(`INSERT INTO "user" (id, name, email, "updatedAt") VALUES ('u1', 'Old Timer', 'old@example.test', now())`);
      await client.query(`INSERT INTO "session" (id, "expiresAt", token, "updatedAt", "userId") VALUES ('s1', now() + interval '6 days', $1, now(), 'u1')`, [
        token,
      ]);
      await client.end();

      // The app applies the rest at start.
      const db = await openDatabase({ url: url.toString() });
      const server = await startTestApp({}, { database: { db, dispose: () => db.close() } });
      try {
        const me = await clientFor(server).api('GET', '/api/v1/api/users/me', { as: { token } });
        expect(me.status).toBe(200);
        expect(me.body.email).toBe('old@example.test');
        const stored = await db.prisma.session.findUniqueOrThrow({ where: { id: 's1' } });
        expect(stored.token).not.toBe(token);
      } finally {
        await server.stop();
        await db.close();
      }
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
      await rm(before, { recursive: true, force: true });
    }
  }, 120_000);
});
