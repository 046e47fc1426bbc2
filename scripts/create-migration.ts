// npm run migration:create -- <name>   writes prisma/migrations/<UTC yyyymmddHHMMSS>_<name>/migration.sql
// npm run migration:create -- --check  writes nothing; exits 1 (printing the SQL) if schema.prisma has
//                                      changes that no migration covers, 0 otherwise.
// Replaces `prisma migrate dev --create-only`, which needs the native schema engine.
import { access, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { defaultMigrationsDir, diffMigrationsToSchema, LOCKFILE_CONTENT, LOCKFILE_NAME } from '../src/db/schema-diff.js';

const usage = 'usage: npm run migration:create -- <name> | --check';

/** Prisma's layout: a UTC timestamp then a snake_case name. */
function migrationDirName(name: string, now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return `${stamp}_${name}`;
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const check = args.includes('--check');
  const rawName = args.find((a) => !a.startsWith('--'));
  if (!check && !rawName) throw new Error(usage);
  const name = (rawName ?? '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 200);
  if (!check && !name) throw new Error(`invalid migration name "${rawName}"\n${usage}`);

  const sql = await diffMigrationsToSchema();
  if (check) {
    if (!sql) {
      console.log('prisma/migrations is in sync with prisma/schema.prisma');
      return 0;
    }
    console.error(`prisma/schema.prisma has changes no migration covers; run \`npm run migration:create -- <name>\`:\n\n${sql}`);
    return 1;
  }
  if (!sql) {
    console.log('No schema changes: nothing to create.');
    return 0;
  }

  const dir = path.join(defaultMigrationsDir, migrationDirName(name));
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'migration.sql'), sql, 'utf8');
  const lockfile = path.join(defaultMigrationsDir, LOCKFILE_NAME);
  if (
    !(await access(lockfile).then(
      () => true,
      () => false,
    ))
  )
    await writeFile(lockfile, LOCKFILE_CONTENT, 'utf8');
  console.log(`Created ${path.relative(process.cwd(), path.join(dir, 'migration.sql'))}`);
  return 0;
}

// process.exit is deliberate: the wasm engine leaves a 10 s timer behind, and PGlite.close() resets
// process.exitCode, so the code must be passed explicitly.
main().then(
  (code) => process.exit(code),
  (e: Error) => {
    console.error(`migration:create failed: ${e.message}`);
    process.exit(2);
  },
);
