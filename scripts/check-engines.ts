/**
 * Fails when an installed package declares a Node range (`engines.node`) that excludes the Node running
 * this script, so the README's and package.json's Node claim stays true. CI runs it right after `npm ci`.
 *
 *   npm run check:engines
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import semver from 'semver';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));

/**
 * Packages allowed to declare a newer Node, each with the reason it cannot matter here. Keep it short:
 * anything added needs a reason a reviewer can check.
 */
const ALLOWED: Record<string, string> = {
  // Only the `prisma dev` command (a local Prisma Postgres server) loads it; Perimeter runs its own PGlite
  // or a PostgreSQL URL, and every Prisma 7.6+ CLI pins it. The prisma CLI itself declares ^20.19.
  '@prisma/streams-local': 'loaded only by `prisma dev`, which Perimeter never runs',
};

interface Mismatch {
  name: string;
  version: string;
  range: string;
  path: string;
}

function* packageDirs(nodeModules: string): Generator<string> {
  if (!existsSync(nodeModules)) return;
  for (const entry of readdirSync(nodeModules, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
    const dir = join(nodeModules, entry.name);
    if (entry.name.startsWith('@')) {
      for (const scoped of readdirSync(dir, { withFileTypes: true })) if (scoped.isDirectory()) yield* withNested(join(dir, scoped.name));
    } else {
      yield* withNested(dir);
    }
  }
}

function* withNested(dir: string): Generator<string> {
  yield dir;
  yield* packageDirs(join(dir, 'node_modules'));
}

const running = process.version;
const mismatches: Mismatch[] = [];
const allowed: Mismatch[] = [];
let checked = 0;
const own = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines?: { node?: string } };
if (own.engines?.node && !semver.satisfies(running, own.engines.node, { includePrerelease: true })) {
  mismatches.push({ name: '(this project)', version: '', range: own.engines.node, path: 'package.json' });
}
for (const dir of packageDirs(join(root, 'node_modules'))) {
  const manifest = join(dir, 'package.json');
  if (!existsSync(manifest)) continue;
  const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string; version?: string; engines?: { node?: unknown } };
  checked += 1;
  const range = pkg.engines?.node;
  if (typeof range !== 'string' || !pkg.name) continue;
  // An unparsable range is npm's to judge too (it does not warn): skip rather than guess.
  if (!semver.validRange(range)) continue;
  if (semver.satisfies(running, range, { includePrerelease: true })) continue;
  const mismatch = { name: pkg.name, version: pkg.version ?? '?', range, path: relative(root, dir) };
  (pkg.name in ALLOWED ? allowed : mismatches).push(mismatch);
}

for (const m of allowed) console.log(`allowed: ${m.name}@${m.version} wants node ${m.range} (${ALLOWED[m.name]})`);
if (mismatches.length) {
  console.error(`${mismatches.length} installed package(s) exclude Node ${running}:`);
  for (const m of mismatches) console.error(`  ${m.name}@${m.version} wants node ${m.range}  (${m.path})`);
  process.exit(1);
}
console.log(`engines: ${checked} packages checked, all accept Node ${running}`);
