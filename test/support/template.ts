import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync, renameSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDatabase } from '../../src/db.js';
import { JobQueue } from '../../src/queue.js';
import { createLogger } from '../../src/logger.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The template is keyed by the migrations and the job-queue version, so a schema change makes a new one. */
export function templatePath(): string {
  const hash = createHash('sha256');
  const migrations = join(root, 'prisma/migrations');
  for (const dir of readdirSync(migrations).sort()) {
    const file = join(migrations, dir, 'migration.sql');
    if (existsSync(file)) hash.update(dir).update(readFileSync(file));
  }
  hash.update(readFileSync(join(root, 'node_modules/pg-boss/package.json')));
  return join(root, 'node_modules/.cache/perimeter', `pglite-${hash.digest('hex').slice(0, 16)}.tgz`);
}

/**
 * A fresh PGlite boots in seconds (initdb in wasm); loading a migrated dump takes well under one.
 * Built once per migration set: migrations applied and the pg-boss schema created.
 */
export async function ensureTemplate(): Promise<string> {
  const path = templatePath();
  if (existsSync(path)) return path;
  const db = await openDatabase({});
  await db.migrate();
  const queue = new JobQueue(db, createLogger('silent'));
  await queue.start();
  await queue.stop(1000);
  const dump = await db.embedded!.dump();
  mkdirSync(dirname(path), { recursive: true });
  const partial = `${path}.${process.pid}.tmp`;
  writeFileSync(partial, Buffer.from(await dump.arrayBuffer()));
  renameSync(partial, path);
  await db.close();
  return path;
}

export function loadTemplate(): Blob {
  return new Blob([readFileSync(templatePath())]);
}
