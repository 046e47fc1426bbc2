import { afterEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { DataDirInUseError, lockDataDir } from '../src/ops/data-dir-lock.js';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, programStderr, projectRoot, spawnServer, type ServerProcess } from './support/process.js';
import { templatePath } from './support/template.js';
import { waitFor } from './support/wait.js';

/**
 * The embedded deployment's data directory, through the real server process: owner-only, one server at
 * a time, and no server left behind when `npm start` is stopped.
 */

/** Each test starts server processes (tens of seconds each on a loaded machine); not a bound on behaviour. */
const PROCESS_TEST_TIMEOUT = 240_000;

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A data directory holding the migrated PGlite template (a wasm initdb would take far longer). */
function dataDirectory(mode = 0o755): string {
  const dir = mkdtempSync(join(tmpdir(), 'perimeter-datadir-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'pglite'));
  execFileSync('tar', ['xzf', templatePath(), '-C', join(dir, 'pglite')], { stdio: ['ignore', 'ignore', 'pipe'] });
  chmodSync(dir, mode);
  return dir;
}

function serverEnv(dataDir: string, port: number): Record<string, string> {
  return { PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info', SHUTDOWN_DRAIN_MS: '0', SIGNUP: 'open' };
}

async function startServer(dataDir: string): Promise<{ server: ServerProcess; url: string }> {
  const port = await freePort();
  const server = spawnServer(serverEnv(dataDir, port));
  cleanups.push(() => server.kill());
  await waitFor(() => server.stdout().includes('Perimeter is listening') || server.child.exitCode !== null, {
    timeoutMs: 90_000,
    what: 'the server to listen',
  });
  expect(server.child.exitCode, programStderr(server.stderr())).toBeNull();
  return { server, url: `http://127.0.0.1:${port}` };
}

async function signUp(url: string, email: string): Promise<number> {
  const response = await fetch(`${url}/api/v1/api/auth/sign-up/email`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Someone', email, password: 'correct horse battery' }),
  });
  await response.arrayBuffer();
  return response.status;
}

async function signIn(url: string, email: string): Promise<number> {
  const response = await fetch(`${url}/api/v1/api/auth/sign-in/email`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: 'correct horse battery' }),
  });
  await response.arrayBuffer();
  return response.status;
}

/** Whether a process has exited (a zombie not yet reaped counts as exited). */
function exited(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

async function portFree(url: string): Promise<boolean> {
  try {
    await fetch(`${url}/health`);
    return false;
  } catch {
    return true;
  }
}

describe('DATA_DIR', () => {
  it(
    'is made owner-only (0700) at start even when it existed world-readable, and the files the server creates are owner-only',
    async () => {
      const dataDir = dataDirectory(0o755);
      const { server, url } = await startServer(dataDir);
      expect(statSync(dataDir).mode & 0o777).toBe(0o700);
      // The generated auth secret and the lock file: nobody else may read them.
      expect(statSync(join(dataDir, 'auth-secret')).mode & 0o077).toBe(0);
      expect(statSync(join(dataDir, 'pglite.lock')).mode & 0o077).toBe(0);
      expect((await fetch(`${url}/health`)).status).toBe(200);
      server.child.kill('SIGTERM');
      expect(await server.exited).toEqual({ code: 0, signal: null });
    },
    PROCESS_TEST_TIMEOUT,
  );

  it(
    'a second server on the same DATA_DIR refuses to start, naming the directory; the first keeps its accounts',
    async () => {
      const dataDir = dataDirectory();
      const first = await startServer(dataDir);
      expect(await signUp(first.url, 'first@example.test')).toBe(200);

      const port = await freePort();
      const second = spawnServer(serverEnv(dataDir, port));
      cleanups.push(() => second.kill());
      expect(await second.exited).toEqual({ code: 1, signal: null });
      expect(second.stderr()).toContain(`The data directory ${dataDir} (DATA_DIR) is in use by another Perimeter process (pid ${first.server.child.pid}`);
      expect(second.stdout()).not.toContain('Perimeter is listening');

      // The first server is untouched: it still serves, with the account it made.
      expect(await signUp(first.url, 'later@example.test')).toBe(200);
      expect(await signIn(first.url, 'first@example.test')).toBe(200);
      first.server.child.kill('SIGTERM');
      expect(await first.server.exited).toEqual({ code: 0, signal: null });
      // Stopped cleanly, it leaves no lock; the next server starts and still has both accounts.
      expect(existsSync(join(dataDir, 'pglite.lock'))).toBe(false);
      const next = await startServer(dataDir);
      expect(await signIn(next.url, 'first@example.test')).toBe(200);
      expect(await signIn(next.url, 'later@example.test')).toBe(200);
    },
    PROCESS_TEST_TIMEOUT,
  );

  it(
    'the lock of a server that was killed (SIGKILL) does not stop the next one',
    async () => {
      const dataDir = dataDirectory();
      const first = await startServer(dataDir);
      first.server.child.kill('SIGKILL');
      await first.server.exited;
      expect(existsSync(join(dataDir, 'pglite.lock'))).toBe(true);
      const next = await startServer(dataDir);
      expect((await fetch(`${next.url}/health`)).status).toBe(200);
      expect(JSON.parse(readFileSync(join(dataDir, 'pglite.lock'), 'utf8'))).toMatchObject({ pid: next.server.child.pid });
    },
    PROCESS_TEST_TIMEOUT,
  );
});

describe('npm start', () => {
  it(
    'SIGTERM to npm stops the server too: the port is freed and no node process is left',
    async () => {
      const dataDir = dataDirectory();
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      const npm = spawn('npm', ['start'], {
        cwd: projectRoot,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...serverEnv(dataDir, port) },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      });
      let out = '';
      let err = '';
      npm.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
      npm.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
      const npmExited = new Promise((resolve) => npm.once('exit', resolve));
      cleanups.push(() => {
        try {
          process.kill(-npm.pid!, 'SIGKILL');
        } catch {
          // the group is gone
        }
      });
      await waitFor(() => out.includes('Perimeter is listening') || npm.exitCode !== null, { timeoutMs: 90_000, what: 'the server under npm to listen' });
      expect(npm.exitCode, programStderr(err)).toBeNull();
      // The server's own pid, from the lock it holds: npm runs it through a shell, it is not npm's child.
      const serverPid = JSON.parse(readFileSync(join(dataDir, 'pglite.lock'), 'utf8')).pid as number;
      expect(serverPid).not.toBe(npm.pid);
      cleanups.push(() => {
        try {
          process.kill(serverPid, 'SIGKILL');
        } catch {
          // gone, as it should be
        }
      });
      expect((await fetch(`${url}/health`)).status).toBe(200);

      npm.kill('SIGTERM');
      await npmExited;
      await waitFor(() => exited(serverPid), { timeoutMs: 20_000, what: 'the server to exit after npm' });
      expect(await portFree(url)).toBe(true);
      // It stopped cleanly, not killed: the lock is gone.
      expect(existsSync(join(dataDir, 'pglite.lock'))).toBe(false);
    },
    PROCESS_TEST_TIMEOUT,
  );
});

describe('the data directory lock', () => {
  function lockDir(): { dir: string; lockPath: string } {
    const dir = mkdtempSync(join(tmpdir(), 'perimeter-lock-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    return { dir, lockPath: join(dir, 'pglite.lock') };
  }

  it('is refused while held, in this process or another live one; released, it can be taken again', () => {
    const { dir, lockPath } = lockDir();
    const held = lockDataDir(dir, lockPath);
    expect(() => lockDataDir(dir, lockPath)).toThrow(DataDirInUseError);
    held.release();
    expect(existsSync(lockPath)).toBe(false);
    // A live process on this host (our parent), started when the lock says.
    const parentStat = readFileSync(`/proc/${process.ppid}/stat`, 'utf8');
    const startTicks = Number(parentStat.slice(parentStat.lastIndexOf(')') + 2).split(' ')[19]);
    writeFileSync(lockPath, JSON.stringify({ pid: process.ppid, host: hostname(), startTicks, since: 'earlier' }));
    expect(() => lockDataDir(dir, lockPath)).toThrow(`The data directory ${dir} (DATA_DIR) is in use by another Perimeter process (pid ${process.ppid}`);
  });

  it('takes over a stale lock: a dead pid, a reused pid, or another host that stopped refreshing it', () => {
    const { dir, lockPath } = lockDir();
    const stale = [
      { pid: 2 ** 22 + 17, host: hostname(), since: 'dead' },
      { pid: process.ppid, host: hostname(), startTicks: 1, since: 'reused pid' },
      { pid: 1234, host: 'another-host', since: 'long ago' },
    ];
    for (const owner of stale) {
      writeFileSync(lockPath, JSON.stringify(owner));
      if (owner.host === 'another-host') utimesSync(lockPath, new Date(Date.now() - 120_000), new Date(Date.now() - 120_000));
      const lock = lockDataDir(dir, lockPath);
      expect(JSON.parse(readFileSync(lockPath, 'utf8'))).toMatchObject({ pid: process.pid, host: hostname() });
      lock.release();
    }
    // Another host's lock that is still being refreshed is respected.
    writeFileSync(lockPath, JSON.stringify({ pid: 1234, host: 'another-host', since: 'now' }));
    expect(() => lockDataDir(dir, lockPath)).toThrow(/pid 1234 on host another-host/);
  });
});
