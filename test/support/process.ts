import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from './wait.js';

export const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** A port that was free a moment ago: bind 127.0.0.1:0, read the port, close. */
export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolvePort(port));
    });
  });
}

export interface ServerProcess {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the exit code and signal once the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILLs the process group if anything of it is still running (test cleanup). */
  kill: () => void;
}

/**
 * The server process: `node --import tsx src/main.ts`, with exactly `env` plus PATH and HOME (no inherited
 * DATABASE_URL, REDIS_URL or TEST_* settings). One process, so a signal reaches the server itself:
 * - `npx tsx …` runs through npm exec, which does not pass SIGTERM on: npm dies, the server keeps running.
 * - the `tsx` CLI relays signals to its node child, but SIGKILLs it (exit 143) when the child does not
 *   acknowledge within a few tens of milliseconds, which happens on a loaded machine.
 */
export function spawnServer(env: Record<string, string>): ServerProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: projectRoot,
    // No certificate-transparency service for spawned servers either: tests stay on loopback.
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DISCOVERY_CT_URL: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, so cleanup can kill anything it started.
    detached: true,
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolveExit) => {
    child.once('exit', (code, signal) => resolveExit({ code, signal }));
  });
  const kill = () => {
    if (!child.pid) return;
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // the group is gone already
    }
  };
  return { child, stdout: () => out, stderr: () => err, exited, kill };
}

/** Resolves once the spawned server answers /ready on `port`; throws with its output if it exited first. */
export async function serverReady(server: ServerProcess, port: number): Promise<ServerProcess> {
  await waitFor(
    async () =>
      server.child.exitCode !== null ||
      (await fetch(`http://127.0.0.1:${port}/ready`)
        .then((r) => r.ok)
        .catch(() => false)),
    { timeoutMs: 90_000, intervalMs: 100, what: 'the server to be ready' },
  );
  if (server.child.exitCode !== null) throw new Error(`server exited early:\n${server.stdout()}\n${server.stderr()}`);
  return server;
}

/** stderr without blank lines or npm configuration warnings (which npm prints when it is in the chain). */
export function programStderr(stderr: string): string {
  return stderr
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('npm warn'))
    .join('\n');
}

export interface WorkerProcess {
  child: ChildProcess;
  /** stdout and stderr together (the worker logs JSON lines). */
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const TEST_AUTH_SECRET = 'test-secret-that-is-long-enough-0123456789';

/**
 * Standalone workers (`node --import tsx src/worker.ts`) with the settings a deployment would give one: exactly
 * `env` over a test baseline (own DATA_DIR, info logs, no certificate-transparency service), nothing inherited.
 * `stop()` SIGKILLs what is still running and removes the data directories.
 */
export function workerProcesses() {
  const started: WorkerProcess[] = [];
  const dataDirs: string[] = [];
  return {
    spawn(env: Record<string, string>): WorkerProcess {
      const dataDir = mkdtempSync(join(tmpdir(), 'perimeter-worker-'));
      dataDirs.push(dataDir);
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/worker.ts'], {
        cwd: projectRoot,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          NODE_ENV: 'test',
          LOG_LEVEL: 'info',
          DATA_DIR: dataDir,
          AUTH_SECRET: TEST_AUTH_SECRET,
          DISCOVERY_CT_URL: '',
          ...env,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolveExit) => {
        child.once('exit', (code, signal) => resolveExit({ code, signal }));
      });
      const worker = { child, output: () => output, exited };
      started.push(worker);
      return worker;
    },
    /** Resolves once the worker logged that it is ready; throws with its output if it exited first. */
    async ready(worker: WorkerProcess): Promise<void> {
      await waitFor(() => worker.output().includes('worker ready') || worker.child.exitCode !== null, {
        timeoutMs: 60_000,
        intervalMs: 50,
        what: 'the worker to start',
      });
      if (!worker.output().includes('worker ready')) throw new Error(`worker exited early:\n${worker.output()}`);
    },
    async stop(): Promise<void> {
      for (const worker of started) if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
      await Promise.all(started.map((worker) => worker.exited));
      for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
    },
  };
}
