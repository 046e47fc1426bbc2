// `npm run build`: the compiled JavaScript that `npm start` and `npm run worker` run (dist/).
//
// dist/ mirrors the repository root for what the server reads at run time, so root-relative paths
// (src/shipped-files.ts) and the `../../../package.json` import hold from dist/ as from the repository:
//   dist/src/main.js, worker.js, scanner/nuclei/template-worker.js   one bundle each (scripts/build-compile.mjs)
//   dist/src/**             src's other files (template pack, wordlist)
//   dist/prisma/generated/  the generated Prisma client (TypeScript), compiled file by file
//   dist/prisma/migrations/ copied: the migration runner reads them at start
//   dist/package.json       copied: marks the root (ESM, the version)
//   dist/embedded-db.tar.gz the embedded database with every migration applied, unpacked by a first start
//                           instead of PGlite's initdb (src/ops/embedded-seed.ts)
// Bare imports resolve from the repository's node_modules, one level up. Type checking stays with
// `npm run typecheck`.
//
// This file is plain JavaScript on purpose: `--if-stale` runs before every `npm start`, and must cost a few
// tens of milliseconds, not a TypeScript loader's start-up.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const projectRoot = fileURLToPath(new URL('..', import.meta.url));
export const defaultOutDir = path.join(projectRoot, 'dist');
const STAMP = '.build-stamp';

/** Root-relative inputs: what gets transpiled, what gets copied, and what else changes the output. */
const COMPILED_DIRS = ['src', 'prisma/generated'];
const COPIED_DIRS = ['prisma/migrations'];
const COPIED_FILES = ['package.json'];
const CONFIG_FILES = ['tsconfig.json', 'package-lock.json', 'scripts/build.mjs', 'scripts/build-compile.mjs'];

/**
 * A worker thread does not inherit tsx's loader, so under tsx the template pool starts its workers through
 * this file, which registers tsx first. Compiled, the pool starts template-worker.js directly (template-pool.ts).
 */
const SOURCE_ONLY = /\.boot\.mjs$/;
const isTypeScript = (file) => file.endsWith('.ts') && !file.endsWith('.d.ts');
const isTest = (file) => /\.test\.ts$/.test(file);

/** Files under `dir` (root-relative, sorted); a missing directory has none. */
function walk(dir) {
  const absolute = path.join(projectRoot, dir);
  let entries;
  try {
    entries = readdirSync(absolute, { withFileTypes: true });
  } catch (error) {
    if (error.code === 'ENOENT') return [];
    throw error;
  }
  const files = [];
  for (const entry of entries) {
    const relative = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) files.push(...walk(relative));
    else if (entry.isFile()) files.push(relative);
  }
  return files.sort();
}

/** Every input file of a build, root-relative. */
function inputFiles() {
  const compiledTrees = COMPILED_DIRS.flatMap(walk).filter((file) => !isTest(file));
  return {
    compile: compiledTrees.filter(isTypeScript),
    copy: [
      ...compiledTrees.filter((file) => !isTypeScript(file) && !file.endsWith('.d.ts') && !SOURCE_ONLY.test(file)),
      ...COPIED_DIRS.flatMap(walk),
      ...COPIED_FILES,
    ],
    config: CONFIG_FILES,
  };
}

/**
 * Names, sizes and modification times of all inputs: any added, removed, edited or regenerated file (npm run
 * generate, a new migration, a git checkout) changes it. Stat only, no reading: ~400 files in a few ms.
 */
export function fingerprint() {
  const { compile, copy, config } = inputFiles();
  const hash = createHash('sha256');
  hash.update(`node ${process.versions.node.split('.')[0]}\n`);
  for (const file of [...compile, ...copy, ...config]) {
    let stat;
    try {
      stat = statSync(path.join(projectRoot, file));
    } catch {
      hash.update(`${file} missing\n`);
      continue;
    }
    hash.update(`${file} ${stat.size} ${stat.mtimeMs}\n`);
  }
  return hash.digest('hex');
}

/** Whether `outDir` holds a complete build of the current inputs. */
export function isCurrent(outDir = defaultOutDir) {
  try {
    return readFileSync(path.join(outDir, STAMP), 'utf8').trim() === fingerprint();
  } catch {
    return false;
  }
}

/**
 * Builds into a sibling temporary directory and swaps it in, so an interrupted or failed build never leaves
 * a half-written dist/ behind, and files deleted from src/ do not linger in dist/.
 */
export async function build(outDir = defaultOutDir) {
  const started = performance.now();
  // Before reading anything: an input edited during the build then makes the stamp stale, not wrongly current.
  const stamp = fingerprint();
  const { compile: compileInputs, copy } = inputFiles();
  if (!compileInputs.includes('src/main.ts')) throw new Error(`${projectRoot}src/main.ts not found`);
  if (!compileInputs.some((file) => file.startsWith('prisma/generated/'))) {
    throw new Error('prisma/generated/ is empty: run `npm run generate` first');
  }
  const staging = `${outDir}.tmp-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  try {
    const { compile } = await import('./build-compile.mjs');
    await compile({ projectRoot, outDir: staging, generated: compileInputs.filter((file) => file.startsWith('prisma/generated/')) });
    for (const file of copy) {
      mkdirSync(path.dirname(path.join(staging, file)), { recursive: true });
      cpSync(path.join(projectRoot, file), path.join(staging, file));
    }
    // The embedded database's starting point (src/ops/embedded-seed.ts): a first start unpacks it instead of initdb.
    execFileSync(process.execPath, [path.join(staging, 'src/ops/embedded-seed.js'), path.join(staging, 'embedded-db.tar.gz')], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    writeFileSync(path.join(staging, STAMP), `${stamp}\n`);
    // Two renames, so a server already running from dist/ (its template workers load files later) finds
    // either the old build or the new one at every moment, never nothing.
    const previous = `${outDir}.old-${process.pid}`;
    try {
      renameSync(outDir, previous);
    } catch (error) {
      if (error.code !== 'ENOENT') throw error;
    }
    try {
      renameSync(staging, outDir);
    } catch (error) {
      // Two starts building at once: the other one's build of the same inputs is as good as ours.
      if (!isCurrent(outDir)) throw error;
      rmSync(staging, { recursive: true, force: true });
    }
    rmSync(previous, { recursive: true, force: true });
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    throw error;
  }
  return { files: compileInputs.length + copy.length, ms: performance.now() - started };
}

/** `node scripts/build.mjs [--if-stale] [--out-dir <dir>]` */
async function main(args) {
  const outIndex = args.indexOf('--out-dir');
  const outDir = outIndex >= 0 ? path.resolve(args[outIndex + 1]) : defaultOutDir;
  if (args.includes('--if-stale') && isCurrent(outDir)) return;
  const { files, ms } = await build(outDir);
  process.stderr.write(`built ${path.relative(process.cwd(), outDir) || '.'} (${files} files) in ${Math.round(ms)} ms\n`);
}

if (process.argv[1] && pathToFileURL(path.resolve(process.argv[1])).href === import.meta.url) {
  main(process.argv.slice(2)).catch((error) => {
    process.stderr.write(`build failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
