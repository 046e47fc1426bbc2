import type { SqlExecutor } from '../../src/db/migrations.js';

/**
 * `count` findings of one workspace in a single INSERT … SELECT over generate_series (seconds for 100,000, where
 * one Prisma create per row would take minutes), for export tests and `npm run bench:exports`. Each row is about
 * the size of a real one: a description and remediation of a few hundred characters, evidence with a URL and an
 * excerpt, a CVE/CWE classification; severities cycle through all five. `prefix` keeps fingerprints unique.
 */
export async function insertFindings(sql: SqlExecutor, workspaceId: string, count: number, prefix = 'bulk'): Promise<void> {
  await sql.query(
    `INSERT INTO "finding" ("id", "workspaceId", "fingerprint", "checkId", "source", "name", "severity", "description", "remediation", "matcher",
       "status", "evidence", "classification", "updatedAt")
     SELECT gen_random_uuid(), $1::uuid, $2 || '-' || n, 'check-' || (n % 50), 'nuclei', 'Finding number ' || n,
       (ARRAY['info','low','medium','high','critical'])[1 + n % 5]::"Severity",
       repeat('A description of what was found and why it matters. ', 6), repeat('What to do about it. ', 8), 'matcher-' || (n % 7),
       'open', jsonb_build_object('url', 'https://host-' || (n % 1000) || '.example.com/path/' || n, 'response', repeat('x', 200)),
       jsonb_build_object('cveId', jsonb_build_array('CVE-2024-' || (10000 + n % 5000)), 'cweId', jsonb_build_array('CWE-79')),
       now()
     FROM generate_series(1, $3::int) AS n`,
    [workspaceId, prefix, count],
  );
}
