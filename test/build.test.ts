// `npm start` and `npm run worker` run the compiled JavaScript of scripts/build.mjs, which the rest of the suite
// (tsx) never touches: build it here, into a scratch directory, and start what it produced.
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, projectRoot } from './support/process.js';

const run = promisify(execFile);
// Under node_modules so that the build's bare imports (pg, graphql, …) resolve, as they do from dist/.
const scratch = join(projectRoot, 'node_modules', '.cache');
let outDir: string;
const cleanups: (() => void)[] = [];

beforeAll(async () => {
  mkdirSync(scratch, { recursive: true });
  outDir = join(mkdtempSync(join(scratch, 'perimeter-build-test-')), 'dist');
  cleanups.push(() => rmSync(join(outDir, '..'), { recursive: true, force: true }));
  await run(process.execPath, ['scripts/build.mjs', '--out-dir', outDir], { cwd: projectRoot });
}, 60_000);

afterAll(() => {
  for (const cleanup of cleanups.reverse()) cleanup();
});

describe('the build', () => {
  it('mirrors what the server reads at run time: compiled src, the generated client, migrations, assets', () => {
    for (const file of [
      'src/main.js',
      'src/worker.js',
      'src/scanner/nuclei/template-worker.js',
      'prisma/generated/prisma/client.js',
      'prisma/migrations/migration_lock.toml',
      'src/scanner/discovery/data/subdomains-top5000.txt',
      'src/modules/templates/pack/phpinfo-exposed.yaml',
      'package.json',
    ]) {
      expect(existsSync(join(outDir, file)), file).toBe(true);
    }
    // Source-only: it loads tsx and a .ts file.
    expect(existsSync(join(outDir, 'src/scanner/nuclei/template-worker.boot.mjs'))).toBe(false);
  });

  it('is current until an input changes; --if-stale then does nothing', async () => {
    const { stderr } = await run(process.execPath, ['scripts/build.mjs', '--if-stale', '--out-dir', outDir], { cwd: projectRoot });
    expect(stderr).toBe('');
  });

  it('runs a template in a worker thread without tsx, and reads the pack and the wordlist from beside its modules', async () => {
    const script = `
      const dist = process.env.DIST;
      const { loadPack } = await import(dist + '/src/modules/templates/pack.js');
      const { builtinWordlist } = await import(dist + '/src/scanner/discovery/wordlist.js');
      const { runTemplateTask } = await import(dist + '/src/scanner/nuclei/template-pool.js');
      const pack = await loadPack();
      let sent = 0;
      const outcome = await runTemplateTask({
        template: pack.find((entry) => entry.fileName === 'phpinfo-exposed.yaml').template,
        baseUrl: 'http://127.0.0.1:9',
        send: async () => (sent++, { status: 404, headers: {}, body: 'not here' }),
        budgetMs: 20000,
      });
      console.log(JSON.stringify({ pack: pack.length, words: builtinWordlist().length, outcome: outcome.status, sent }));
      process.exit(0);
    `;
    // A file, not `node -e`: a worker thread inherits the parent's execArgv, and `--input-type` fails there.
    const scriptFile = join(outDir, '..', 'check-worker.mjs');
    writeFileSync(scriptFile, script);
    const { stdout } = await run(process.execPath, [scriptFile], {
      cwd: projectRoot,
      env: { PATH: process.env.PATH ?? '', DIST: outDir },
    });
    const result = JSON.parse(stdout);
    expect(result.pack).toBeGreaterThanOrEqual(20);
    expect(result.words).toBeGreaterThan(1000);
    expect(result.outcome).toBe('done');
    expect(result.sent).toBeGreaterThan(0);
  }, 30_000);

  it('starts the server on a fresh data directory: /health and /ready answer 200, SIGTERM stops it cleanly', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'perimeter-build-data-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const port = await freePort();
    const server = spawn(process.execPath, [join(outDir, 'src/main.js')], {
      cwd: projectRoot,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        DATA_DIR: dataDir,
        PORT: String(port),
        HOST: '127.0.0.1',
        AUTH_SECRET: 'build-test-secret-0123456789abcdef012345',
        DISCOVERY_CT_URL: '',
        SHUTDOWN_DRAIN_MS: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    cleanups.push(() => server.kill('SIGKILL'));
    let output = '';
    server.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    server.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => server.once('exit', resolve));

    const deadline = Date.now() + 50_000;
    let health = 0;
    while (Date.now() < deadline && server.exitCode === null) {
      health = await fetch(`http://127.0.0.1:${port}/health`).then(
        (response) => response.status,
        () => 0,
      );
      if (health === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(health, output).toBe(200);
    expect((await fetch(`http://127.0.0.1:${port}/ready`)).status, output).toBe(200);
    server.kill('SIGTERM');
    expect(await exited, output).toBe(0);
  }, 60_000);
});
