import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, describe, expect, it } from 'vitest';
import { applyMigrations, defaultMigrationsDir, pgliteExecutor } from '../src/db/migrations.js';

/**
 * The migration that binds tool keys to workspaces and adds the target link tables, run over data written
 * before it: existing target ids become links, and instance-wide keys (which reached every workspace) go.
 */

const SLOW = 120_000;
const MIGRATION = '_tool_key_workspace_and_target_links';
const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

const ids = {
  workspace: '00000000-0000-4000-8000-000000000001',
  target: '00000000-0000-4000-8000-000000000002',
  asset: '00000000-0000-4000-8000-000000000003',
  unlinkedAsset: '00000000-0000-4000-8000-000000000004',
  finding: '00000000-0000-4000-8000-000000000005',
  tool: '00000000-0000-4000-8000-000000000006',
  instanceKey: '00000000-0000-4000-8000-000000000007',
  workspaceKey: '00000000-0000-4000-8000-000000000008',
};

describe(`the ${MIGRATION.slice(1)} migration`, () => {
  it(
    'links existing assets and findings to their target and removes instance-wide tool keys',
    async () => {
      const all = (await readdir(defaultMigrationsDir, { withFileTypes: true }))
        .filter((entry) => entry.isDirectory())
        .map((entry) => entry.name)
        .sort();
      const ours = all.find((name) => name.endsWith(MIGRATION));
      expect(ours).toBeDefined();
      const dir = await mkdtemp(path.join(tmpdir(), 'perimeter-mig-links-'));
      dirs.push(dir);
      for (const name of all.filter((name) => name < ours!)) await cp(path.join(defaultMigrationsDir, name), path.join(dir, name), { recursive: true });

      const pglite = new PGlite();
      try {
        const db = pgliteExecutor(pglite);
        await applyMigrations(db, { migrationsDir: dir });
        await pglite.exec(`
          INSERT INTO "user" (id, name, email, "updatedAt") VALUES ('u1', 'Owner', 'owner@example.com', now());
          INSERT INTO "workspace" (id, name, "ownerId", "updatedAt") VALUES ('${ids.workspace}', 'W', 'u1', now());
          INSERT INTO "target" (id, "workspaceId", value, type, "updatedAt") VALUES ('${ids.target}', '${ids.workspace}', 'example.com', 'domain', now());
          INSERT INTO "asset" (id, "workspaceId", kind, key, value, data, "targetId")
            VALUES ('${ids.asset}', '${ids.workspace}', 'host', 'host:example.com', 'example.com', '{}', '${ids.target}'),
                   ('${ids.unlinkedAsset}', '${ids.workspace}', 'host', 'host:pushed.example.org', 'pushed.example.org', '{}', NULL);
          INSERT INTO "finding" (id, "workspaceId", fingerprint, "checkId", source, name, severity, description, remediation, matcher, evidence, "targetId", "updatedAt")
            VALUES ('${ids.finding}', '${ids.workspace}', 'fp', 'check', 'builtin', 'Check', 'low', '', '', 'm', '{}', '${ids.target}', now());
          INSERT INTO "tool" (id, name, category, description, version, builtin, "updatedAt") VALUES ('${ids.tool}', 'dns', 'dns', '', '1', true, now());
          INSERT INTO "tool_key" (id, "toolId", "workspaceId", prefix, "keyHash")
            VALUES ('${ids.instanceKey}', '${ids.tool}', NULL, 'ptk_a', 'hash-a'), ('${ids.workspaceKey}', '${ids.tool}', '${ids.workspace}', 'ptk_b', 'hash-b');
        `);

        // Now the migration itself, over that data.
        await cp(path.join(defaultMigrationsDir, ours!), path.join(dir, ours!), { recursive: true });
        expect((await applyMigrations(db, { migrationsDir: dir })).applied).toEqual([ours]);

        expect((await pglite.query(`SELECT "assetId", "targetId" FROM "asset_target"`)).rows).toEqual([{ assetId: ids.asset, targetId: ids.target }]);
        expect((await pglite.query(`SELECT "findingId", "targetId" FROM "finding_target"`)).rows).toEqual([{ findingId: ids.finding, targetId: ids.target }]);
        expect((await pglite.query(`SELECT id FROM "tool_key"`)).rows).toEqual([{ id: ids.workspaceKey }]);
        await expect(
          pglite.query(`INSERT INTO "tool_key" (id, "toolId", prefix, "keyHash") VALUES (gen_random_uuid(), '${ids.tool}', 'p', 'h')`),
        ).rejects.toThrow(/null/i);
      } finally {
        await pglite.close();
      }
    },
    SLOW,
  );
});
