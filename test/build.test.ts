// `npm start` and `npm run worker` run the compiled JavaScript of scripts/build.mjs, which the rest of the suite
// (tsx) never touches: build it here, into a scratch directory, and start what it produced.
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPack } from '../src/modules/templates/pack.js';
import type { FromWorker, ToWorker } from '../src/scanner/nuclei/template-protocol.js';
import { startFlags } from '../scripts/start-flags.js';
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
  it('mirrors what the server reads at run time: the bundles, the generated client, migrations, assets', () => {
    for (const file of [
      'src/main.js',
      'src/worker.js',
      'src/scanner/nuclei/template-worker.js',
      // The embedded database's thread (src/db/embedded/thread.ts), which the start below runs.
      'src/db/embedded/worker.js',
      'prisma/generated/prisma/client.js',
      'prisma/migrations/migration_lock.toml',
      'src/scanner/discovery/data/subdomains-top5000.txt',
      'src/modules/templates/pack/phpinfo-exposed.yaml',
      'package.json',
      // The embedded database a first start unpacks instead of running initdb (src/ops/embedded-seed.ts).
      'embedded-db.tar.gz',
    ]) {
      expect(existsSync(join(outDir, file)), file).toBe(true);
    }
    // Source-only: they load tsx and a .ts file.
    expect(existsSync(join(outDir, 'src/scanner/nuclei/template-worker.boot.mjs'))).toBe(false);
    expect(existsSync(join(outDir, 'src/db/embedded/worker.boot.mjs'))).toBe(false);
  });

  it('is current right after a build: --if-stale does nothing', async () => {
    const { stderr } = await run(process.execPath, ['scripts/build.mjs', '--if-stale', '--out-dir', outDir], { cwd: projectRoot });
    expect(stderr).toBe('');
  });

  it('runs a template in the compiled template worker thread (no tsx), speaking the pool protocol', async () => {
    const template = (await loadPack()).find((entry) => entry.fileName === 'phpinfo-exposed.yaml')!.template;
    const worker = new Worker(join(outDir, 'src/scanner/nuclei/template-worker.js'));
    cleanups.push(() => void worker.terminate());
    const seen: FromWorker['type'][] = [];
    const finished = new Promise<FromWorker>((resolve, reject) => {
      worker.on('error', reject);
      worker.on('message', (message: FromWorker) => {
        seen.push(message.type);
        if (message.type === 'ready') {
          worker.postMessage({ type: 'run', taskId: 1, template, baseUrl: 'http://127.0.0.1:9' } satisfies ToWorker);
        } else if (message.type === 'send') {
          const response = { status: 404, headers: {}, body: 'not here', durationMs: 1, rawRequest: '', rawResponse: '', finalUrl: message.request.url };
          worker.postMessage({ type: 'response', requestId: message.requestId, response } satisfies ToWorker);
        } else if (message.type === 'done' || message.type === 'failed') {
          resolve(message);
        }
      });
    });
    const outcome = await finished;
    expect(outcome).toMatchObject({ type: 'done', taskId: 1, results: [] });
    expect(seen).toContain('send');
  }, 30_000);

  it('starts the server on a fresh data directory: it answers on every surface, SIGTERM stops it cleanly', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'perimeter-build-data-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const port = await freePort();
    // With `npm start`'s node flags (package.json): a flag node refuses fails here.
    const server = spawn(process.execPath, [...startFlags(projectRoot), join(outDir, 'src/main.js')], {
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
    const base = `http://127.0.0.1:${port}`;
    expect((await fetch(`${base}/ready`)).status, output).toBe(200);

    // The bundle's main surfaces: auth, REST, GraphQL, the OpenAPI document and the docs page.
    const json = { 'content-type': 'application/json' };
    const signUp = await fetch(`${base}/api/v1/api/auth/sign-up/email`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ name: 'Ada', email: 'ada@example.com', password: 'a long passphrase' }),
    });
    expect(signUp.status, output).toBe(200);
    const auth = { ...json, authorization: `Bearer ${((await signUp.json()) as { token: string }).token}` };
    const workspace = await fetch(`${base}/api/v1/api/workspaces`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'Built' }) });
    expect(workspace.status, output).toBe(201);
    const graphql = await fetch(`${base}/graphql`, { method: 'POST', headers: auth, body: JSON.stringify({ query: '{ viewer { __typename } }' }) });
    expect(await graphql.json(), output).toEqual({ data: { viewer: { __typename: 'Viewer' } } });
    const openapi = (await (await fetch(`${base}/api/v1/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(openapi.paths)).toContain('/api/workspaces');
    expect((await fetch(`${base}/api/v1/docs`)).headers.get('content-type')).toMatch(/text\/html/);

    server.kill('SIGTERM');
    expect(await exited, output).toBe(0);
  }, 60_000);
});
