// The benchmark data set, inserted straight into the database with pg (one transaction, set-based SQL):
// 50 extra users; 1,000 workspaces owned by the signed-up user, each with the owner plus 3 members drawn from the
// extra users, and 1–5 targets. createdAt is a permutation of the insertion order (so ordering matters) with
// varied milliseconds; descriptions carry quotes, a backslash and non-ASCII text so JSON escaping is compared too.
import pg from 'pg';

export const WORKSPACES = 1000;
export const EXTRA_USERS = 50;
export const EXTRA_MEMBERS_PER_WORKSPACE = 3;

export async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** What the seed needs of a connection: pg.Client and PGlite both have it. */
export interface Queryable {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

/** Extra users, 1,000 workspaces with the owner + 3 members each, and 1–5 targets each, in one transaction. */
export async function seed(databaseUrl: string, ownerId: string): Promise<void> {
  await withClient(databaseUrl, (db) => seedInto(db, ownerId));
}

/** seed() on an open connection (PGlite in the bench process, for the embedded-default run). */
export async function seedInto(db: Queryable, ownerId: string): Promise<void> {
  await db.query('BEGIN');
  try {
    await db.query(
      `INSERT INTO "user" (id, name, email, "emailVerified", image, role, "createdAt", "updatedAt")
       SELECT 'bench-user-' || lpad(i::text, 3, '0'), 'Bench User ' || i, 'bench-user-' || i || '@example.com', true,
              CASE WHEN i % 3 = 0 THEN NULL ELSE 'https://avatars.example.com/' || i || '.png' END,
              'user', timestamp '2023-06-01' + i * interval '1 hour', timestamp '2023-06-01' + i * interval '1 hour'
       FROM generate_series(1, ${EXTRA_USERS}) i`,
    );
    // createdAt is a permutation of the insertion order (7919 is prime to 1000), with varied milliseconds.
    await db.query(
      `CREATE TEMP TABLE bench_ws ON COMMIT DROP AS
       SELECT i, gen_random_uuid() AS id,
              timestamp '2024-01-01' + ((i * 7919) % ${WORKSPACES}) * interval '53 minutes' + ((i * 613) % 1000) * interval '1 millisecond' AS created
       FROM generate_series(1, ${WORKSPACES}) i`,
    );
    await db.query(
      `INSERT INTO workspace (id, name, description, "isAssetsDiscovery", "isAutoEnableAssetAfterDiscovered", "archivedAt", "ownerId", "createdAt", "updatedAt")
       SELECT id, 'Workspace ' || lpad(i::text, 4, '0'),
              CASE WHEN i % 4 = 0 THEN NULL ELSE 'Attack surface of business unit ' || i || E' \\u2014 "quoted", back\\\\slash, ünïcode' END,
              i % 2 = 0, i % 3 <> 0,
              CASE WHEN i % 10 = 0 THEN created + interval '30 days' END,
              $1, created, created + (i % 17) * interval '1 hour' + (i % 7) * interval '1 millisecond'
       FROM bench_ws`,
      [ownerId],
    );
    await db.query(
      `INSERT INTO workspace_member (id, "workspaceId", "userId", role, "createdAt", "updatedAt")
       SELECT gen_random_uuid(), id, $1, 'owner'::"WorkspaceRole", created, created FROM bench_ws
       UNION ALL
       SELECT gen_random_uuid(), w.id, 'bench-user-' || lpad((((w.i * 7 + j * 17) % ${EXTRA_USERS}) + 1)::text, 3, '0'),
              (CASE WHEN j = 1 AND w.i % 5 = 0 THEN 'owner' ELSE 'member' END)::"WorkspaceRole",
              w.created + j * interval '1 day' + j * interval '7 milliseconds', w.created + j * interval '2 days'
       FROM bench_ws w CROSS JOIN generate_series(1, ${EXTRA_MEMBERS_PER_WORKSPACE}) j`,
      [ownerId],
    );
    await db.query(
      `INSERT INTO target (id, "workspaceId", value, type, "createdAt", "updatedAt")
       SELECT gen_random_uuid(), w.id, 'host' || k || '.unit' || w.i || '.example.com', 'domain', w.created, w.created
       FROM bench_ws w CROSS JOIN LATERAL generate_series(1, 1 + w.i % 5) k`,
    );
    await db.query('COMMIT');
  } catch (error) {
    await db.query('ROLLBACK');
    throw error;
  }
  await db.query('ANALYZE');
}
