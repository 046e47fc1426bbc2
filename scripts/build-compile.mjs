// The compiling half of scripts/build.mjs (esbuild; the same compiler tsx uses, so dev, tests and dist/ run the
// same JavaScript). Plain JavaScript for the same reason as build.mjs.
//
// Each entry point becomes one bundle: src and its npm dependencies in one file. Loading the server file by file
// meant ~2,600 module files (resolution, reads, compiles): about 2.1 s of CPU before the first line of main ran.
// One bundle loads in about 0.9 s. Left out of the bundles, as imports of node_modules:
// - packages that read files of their own at run time (PGlite's and Prisma's WebAssembly and data files), or
//   that our code and an unbundled package must share as one instance (pg: our Pool goes to @prisma/adapter-pg),
//   or that look for files beside their own modules (ioredis, pino: `__dirname`);
// - the generated Prisma client, compiled file by file beside the bundles (it locates its runtime from its own
//   directory).
import path from 'node:path';

/** Bundled entry points; the template worker and the embedded database are entries of worker threads. */
export const ENTRIES = ['src/main.ts', 'src/worker.ts', 'src/scanner/nuclei/template-worker.ts', 'src/db/embedded/worker.ts', 'src/ops/embedded-seed.ts'];

const EXTERNAL_PACKAGES = [
  '@electric-sql/pglite',
  '@prisma/*',
  'pglite-prisma-adapter',
  'pg',
  'pg-boss',
  '@aws-sdk/*',
  'ioredis',
  'pino',
  // the flow sandbox (src/scanner/nuclei/engine/flow-sandbox.ts) reads the package's .wasm file
  '@jitl/quickjs-wasmfile-release-asyncify',
  'quickjs-emscripten-core',
];

const COMMON = {
  format: 'esm',
  platform: 'node',
  // package.json engines; before 20.10 esbuild would drop the `with { type: 'json' }` import attribute.
  target: 'node20.19',
  sourcemap: 'linked',
  logLevel: 'warning',
};

/** Bundled CommonJS modules call require() for node: builtins and the externals; ESM has none of its own. */
const REQUIRE_BANNER = "import { createRequire as __perimeterCreateRequire } from 'node:module'; const require = __perimeterCreateRequire(import.meta.url);";

/** Imports of prisma/generated/** stay imports, rewritten relative to where the bundle lands. */
function generatedClientStaysExternal(projectRoot, entryOut) {
  return {
    name: 'generated-client-stays-external',
    setup(build) {
      build.onResolve({ filter: /\/prisma\/generated\// }, (args) => {
        const target = path.relative(projectRoot, path.resolve(args.resolveDir, args.path));
        const relative = path.posix.relative(path.posix.dirname(entryOut), target.split(path.sep).join('/'));
        return { path: relative.startsWith('.') ? relative : `./${relative}`, external: true };
      });
    },
  };
}

/**
 * Writes the bundles and the compiled generated client into `outDir` (same layout as the repository).
 * `generated` are the root-relative .ts files under prisma/generated.
 */
export async function compile({ projectRoot, outDir, generated }) {
  const esbuild = await import('esbuild');
  const tsconfig = path.join(projectRoot, 'tsconfig.json');
  await esbuild.build({ ...COMMON, absWorkingDir: projectRoot, tsconfig, entryPoints: generated, outdir: outDir, outbase: '.', bundle: false });
  await Promise.all(
    ENTRIES.map((entry) => {
      const entryOut = entry.replace(/\.ts$/, '.js');
      return esbuild.build({
        ...COMMON,
        absWorkingDir: projectRoot,
        tsconfig,
        entryPoints: [entry],
        outfile: path.join(outDir, entryOut),
        bundle: true,
        external: EXTERNAL_PACKAGES,
        plugins: [generatedClientStaysExternal(projectRoot, entryOut)],
        banner: { js: REQUIRE_BANNER },
      });
    }),
  );
}
