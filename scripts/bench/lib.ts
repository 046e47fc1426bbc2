// Small helpers for scripts/bench/*: loopback ports, child processes that always get stopped, readiness
// polling, and a deep comparison that names the first difference.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

export const LOOPBACK = '127.0.0.1';

/** A free TCP port on 127.0.0.1 (bind to port 0, read it, release it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, LOOPBACK, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error('could not read the port'))));
    });
  });
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export interface Child {
  name: string;
  process: ChildProcess;
  /** The last few KB the child wrote to stderr (for error messages). */
  stderrTail(): string;
  exited(): boolean;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
  stop(graceMs?: number): Promise<void>;
}

/** Spawns `node <args>` with stdout discarded and stderr kept (tail only). */
export function startNode(name: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Child {
  const child = spawn(process.execPath, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'ignore', 'pipe'] });
  let tail = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => {
    tail = (tail + chunk).slice(-8192);
  });
  let gone = false;
  const exit = new Promise<void>((resolve) => {
    child.once('exit', () => {
      gone = true;
      resolve();
    });
    child.once('error', (error) => {
      tail += `\n[spawn error] ${error.message}`;
      gone = true;
      resolve();
    });
  });
  return {
    name,
    process: child,
    stderrTail: () => tail.trim(),
    exited: () => gone,
    async stop(graceMs = 5000) {
      if (gone) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => {
        if (!gone) child.kill('SIGKILL');
      }, graceMs);
      await exit;
      clearTimeout(timer);
    },
  };
}

/** Polls `url` until it answers 200; fails early if the child dies, or after `timeoutMs`. */
export async function waitForReady(url: string, child: Child, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer yet';
  while (Date.now() < deadline) {
    if (child.exited()) {
      throw new Error(`${child.name} exited before it was ready (exit code ${child.process.exitCode ?? child.process.signalCode}).\n${child.stderrTail()}`);
    }
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (response.status === 200) return;
      last = `status ${response.status}`;
      await response.body?.cancel();
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    await sleep(200);
  }
  throw new Error(`${child.name} was not ready at ${url} within ${timeoutMs / 1000}s (${last}).\n${child.stderrTail()}`);
}

function describe(value: unknown): string {
  const text = JSON.stringify(value);
  return text === undefined ? String(value) : text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

/** The first place two JSON values differ, as `path: left vs right`; undefined when deep-equal. */
export function firstDifference(left: unknown, right: unknown, path = '$'): string | undefined {
  if (Object.is(left, right)) return undefined;
  if (Array.isArray(left) || Array.isArray(right)) {
    if (!Array.isArray(left) || !Array.isArray(right)) return `${path}: ${describe(left)} vs ${describe(right)}`;
    if (left.length !== right.length) return `${path}.length: ${left.length} vs ${right.length}`;
    for (let i = 0; i < left.length; i += 1) {
      const found = firstDifference(left[i], right[i], `${path}[${i}]`);
      if (found) return found;
    }
    return undefined;
  }
  if (left && right && typeof left === 'object' && typeof right === 'object') {
    const a = left as Record<string, unknown>;
    const b = right as Record<string, unknown>;
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (!(key in a)) return `${path}.${key}: missing vs ${describe(b[key])}`;
      if (!(key in b)) return `${path}.${key}: ${describe(a[key])} vs missing`;
      const found = firstDifference(a[key], b[key], `${path}.${key}`);
      if (found) return found;
    }
    return undefined;
  }
  return `${path}: ${describe(left)} vs ${describe(right)}`;
}
