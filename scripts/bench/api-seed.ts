// The data behind `npm run bench:api` beyond seed.ts's 1,000 workspaces, inserted set-based (INSERT … SELECT
// generate_series: one statement per table, no round trip per row) into two of those workspaces:
//   small  'Workspace 0001': 100 targets, 1,000 assets, 1,000 findings (+ their target links), and one conversation
//          of the owner with 200 messages: the list pages and the 1,000-row side of the large-workspace case;
//   large  'Workspace 0002': the same 100 targets, 20,000 assets and 100,000 findings.
// Kinds, severities and statuses cycle so that the filters select a realistic share; timestamps vary so order matters.
import type { Queryable } from './seed.js';

export const TARGETS_PER_WORKSPACE = 100;
export const SMALL = { assets: 1_000, findings: 1_000 };
export const LARGE = { assets: 20_000, findings: 100_000 };
export const MESSAGES = 200;

export interface ApiData {
  smallWorkspaceId: string;
  largeWorkspaceId: string;
  conversationId: string;
}

async function workspaceNamed(db: Queryable, name: string): Promise<string> {
  const { rows } = await db.query(`SELECT id FROM workspace WHERE name = $1`, [name]);
  const row = rows[0] as { id: string } | undefined;
  if (!row) throw new Error(`seed: no workspace named ${name} (run seed.ts first)`);
  return row.id;
}

/** Targets, assets, findings and their target links for one workspace. */
async function fillWorkspace(db: Queryable, workspaceId: string, sizes: { assets: number; findings: number }): Promise<void> {
  await db.query(
    `INSERT INTO target (id, "workspaceId", value, type, "lastScannedAt", "createdAt", "updatedAt")
     SELECT gen_random_uuid(), $1, 'api' || k || '.bench.example.com', 'domain',
            CASE WHEN k % 3 = 0 THEN NULL ELSE timestamp '2024-03-01' + k * interval '37 minutes' END,
            timestamp '2024-02-01' + ((k * 31) % ${TARGETS_PER_WORKSPACE}) * interval '1 hour', timestamp '2024-02-02'
     FROM generate_series(1, ${TARGETS_PER_WORKSPACE}) k`,
    [workspaceId],
  );
  // Numbered targets, so assets and findings can be spread over them by index.
  await db.query(
    `CREATE TEMP TABLE bench_targets ON COMMIT DROP AS
     SELECT row_number() OVER (ORDER BY id) - 1 AS n, id FROM target WHERE "workspaceId" = $1`,
    [workspaceId],
  );
  const targetCount = ((await db.query(`SELECT count(*)::int AS n FROM bench_targets`)).rows[0] as { n: number }).n;
  await db.query(
    `INSERT INTO asset (id, "workspaceId", kind, key, value, data, enabled, "targetId", "firstSeenAt", "lastSeenAt", "dismissedAt", "references")
     SELECT gen_random_uuid(), $1, (ARRAY['host','service','web','certificate'])[1 + i % 4]::"AssetKind",
            'host:a' || i || '.bench.example.com', 'a' || i || '.bench.example.com',
            json_build_object('ips', json_build_array('10.0.' || (i / 250) % 250 || '.' || i % 250), 'source', 'bench'),
            i % 5 <> 0, t.id,
            timestamp '2024-04-01' + i * interval '1 minute',
            timestamp '2024-05-01' + ((i * 7919) % $2::int) * interval '1 second' + (i % 997) * interval '1 millisecond',
            CASE WHEN i % 50 = 0 THEN timestamp '2024-06-01' END,
            CASE WHEN i % 10 = 0 THEN ARRAY['partner' || i || '.example.net'] ELSE ARRAY[]::text[] END
     FROM generate_series(1, $2::int) i JOIN bench_targets t ON t.n = i % ${targetCount}`,
    [workspaceId, sizes.assets],
  );
  await db.query(
    `INSERT INTO asset_target ("assetId", "targetId", "firstSeenAt", "lastSeenAt")
     SELECT id, "targetId", "firstSeenAt", "lastSeenAt" FROM asset WHERE "workspaceId" = $1`,
    [workspaceId],
  );
  // Provenance for the hosts (the list reads it per row): 'ct' for all of them, 'link' from another asset for every third.
  await db.query(
    `INSERT INTO asset_discovery (id, "assetId", "workspaceId", source, "from", "firstSeenAt", "lastSeenAt")
     SELECT gen_random_uuid(), id, "workspaceId", 'ct', NULL, "firstSeenAt", "lastSeenAt" FROM asset WHERE "workspaceId" = $1 AND kind = 'host'
     UNION ALL
     SELECT gen_random_uuid(), id, "workspaceId", 'link', 'https://partner.example.net/', "firstSeenAt" + interval '1 hour', "lastSeenAt"
     FROM asset WHERE "workspaceId" = $1 AND kind = 'host' AND abs(hashtext(key)) % 3 = 0`,
    [workspaceId],
  );
  await db.query(
    `CREATE TEMP TABLE bench_assets ON COMMIT DROP AS
     SELECT row_number() OVER (ORDER BY id) - 1 AS n, id, "targetId" FROM asset WHERE "workspaceId" = $1`,
    [workspaceId],
  );
  await db.query(
    `INSERT INTO finding (id, "workspaceId", fingerprint, "checkId", source, name, severity, description, remediation, matcher, status,
                          evidence, classification, "assetId", "targetId", occurrences, "firstSeenAt", "lastSeenAt", "fixedAt", "updatedAt")
     SELECT gen_random_uuid(), $1, md5('finding' || i), 'check-' || i % 300, 'nuclei', 'Finding ' || i % 300 || ' "quoted"',
            (ARRAY['info','low','medium','high','critical'])[1 + (i * 7) % 5]::"Severity",
            'What check ' || i % 300 || E' saw \\u2014 on the asset', 'Patch it', 'word',
            (CASE WHEN i % 10 < 7 THEN 'open' WHEN i % 10 < 9 THEN 'fixed' ELSE 'dismissed' END)::"FindingStatus",
            json_build_object('matched', 'https://a' || i || '.bench.example.com/'),
            CASE WHEN i % 4 = 0 THEN json_build_object('cve', json_build_array('CVE-2024-' || (1000 + i % 9000))) END,
            a.id, a."targetId", 1 + i % 3,
            timestamp '2024-04-01' + i * interval '1 second',
            timestamp '2024-05-01' + ((i * 7919) % $2::int) * interval '1 second' + (i % 997) * interval '1 millisecond',
            CASE WHEN i % 10 IN (7, 8) THEN timestamp '2024-06-01' END, timestamp '2024-06-02'
     FROM generate_series(1, $2::int) i JOIN bench_assets a ON a.n = i % (SELECT count(*) FROM bench_assets)`,
    [workspaceId, sizes.findings],
  );
  await db.query(
    `INSERT INTO finding_target ("findingId", "targetId", "firstSeenAt", "lastSeenAt")
     SELECT id, "targetId", "firstSeenAt", "lastSeenAt" FROM finding WHERE "workspaceId" = $1 AND "targetId" IS NOT NULL`,
    [workspaceId],
  );
}

/** The small and large workspaces' data and the conversation; one transaction per workspace, then VACUUM ANALYZE. */
export async function seedApiData(db: Queryable, ownerId: string, options: { large?: boolean } = {}): Promise<ApiData> {
  const smallWorkspaceId = await workspaceNamed(db, 'Workspace 0001');
  const largeWorkspaceId = await workspaceNamed(db, 'Workspace 0002');
  const fills: Array<[string, { assets: number; findings: number }]> = [[smallWorkspaceId, SMALL]];
  if (options.large !== false) fills.push([largeWorkspaceId, LARGE]);
  for (const [workspaceId, sizes] of fills) {
    await db.query('BEGIN');
    try {
      await fillWorkspace(db, workspaceId, sizes);
      await db.query('COMMIT');
    } catch (error) {
      await db.query('ROLLBACK');
      throw error;
    }
  }
  const { rows } = await db.query(
    `INSERT INTO conversation (id, "workspaceId", "createdById", title, "createdAt", "updatedAt")
     VALUES (gen_random_uuid(), $1, $2, 'Bench conversation', timestamp '2024-07-01', timestamp '2024-07-02') RETURNING id`,
    [smallWorkspaceId, ownerId],
  );
  const conversationId = (rows[0] as { id: string }).id;
  await db.query(
    `INSERT INTO message (id, "conversationId", role, content, "messageType", metadata, parts, "createdAt")
     SELECT gen_random_uuid(), $1, CASE WHEN i % 2 = 0 THEN 'user' ELSE 'assistant' END,
            'Message ' || i || E' about the \\u201cattack surface\\u201d, with a "quote"', 'text',
            CASE WHEN i % 2 = 0 THEN '{}'::jsonb ELSE jsonb_build_object('source', 'model', 'model', 'bench-1', 'rounds', 1) END,
            jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'Message ' || i)),
            timestamp '2024-07-01' + i * interval '1 minute' + (i % 13) * interval '1 millisecond'
     FROM generate_series(1, ${MESSAGES}) i`,
    [conversationId],
  );
  // VACUUM too: a steady-state database has its visibility map set (autovacuum), so counts can be index-only scans.
  await db.query('VACUUM ANALYZE');
  return { smallWorkspaceId, largeWorkspaceId, conversationId };
}
