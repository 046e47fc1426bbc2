// Helpers for scripts/bench/boot.ts: start a server or worker process the way a user does, time it until it
// answers, and stop it cleanly (SIGTERM), so the next start finds the data directory as a real restart would.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { LOOPBACK, freePort, sleep } from './lib.js';
import { startFlags } from '../start-flags.js';

export const projectRoot = new URL('../../', import.meta.url).pathname;

/** A start: wall-clock seconds until ready, and the CPU seconds the process used by then (threads included). */
export interface StartTiming {
  wall: number;
  cpu: number;
}

const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/**
 * utime + stime of a process (Linux /proc). On a shared machine wall-clock time swings with the load; the CPU
 * a start needs does not, so it is reported beside it.
 */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** How a process is launched: `npm start` goes through npm (and its prestart check), the others run node directly. */
export interface Launch {
  label: string;
  command: string;
  args: string[];
}

export const launches = {
  // With the flags `npm start` and `npm run worker` give node (package.json), as production starts them.
  compiled: { label: 'node dist/src/main.js', command: process.execPath, args: [...startFlags(projectRoot), 'dist/src/main.js'] },
  npmStart: { label: 'npm start', command: 'npm', args: ['start', '--silent'] },
  tsx: { label: 'node --import tsx src/main.ts', command: process.execPath, args: ['--import', 'tsx', 'src/main.ts'] },
  compiledWorker: { label: 'node dist/src/worker.js', command: process.execPath, args: [...startFlags(projectRoot, 'worker'), 'dist/src/worker.js'] },
  tsxWorker: { label: 'node --import tsx src/worker.ts', command: process.execPath, args: ['--import', 'tsx', 'src/worker.ts'] },
} satisfies Record<string, Launch>;

/** A fixed secret (at least 32 characters), so no start writes one into the data directory first. */
const AUTH_SECRET = 'bench-boot-secret-0123456789abcdef0123456789';

/** Only what the bench sets, plus PATH and HOME: no inherited DATABASE_URL, REDIS_URL or NODE_OPTIONS. */
export function processEnv(dataDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    DATA_DIR: dataDir,
    HOST: LOOPBACK,
    AUTH_SECRET,
    NODE_ENV: 'production',
    // No certificate-transparency lookups, and no drain pause on SIGTERM: stopping is not what is measured.
    DISCOVERY_CT_URL: '',
    SHUTDOWN_DRAIN_MS: '0',
    ...extra,
  };
}

interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function start(launch: Launch, env: NodeJS.ProcessEnv): Started {
  // Its own process group: whatever npm started can be killed with it if something goes wrong.
  const child = spawn(launch.command, launch.args, { cwd: projectRoot, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-16_384);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

function killGroup(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** Polls `ready` every 20 ms (start-up is what is measured: a coarse poll would add to it). */
async function until(started: Started, launch: Launch, ready: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let finished = false;
  void started.exited.then(() => (finished = true));
  while (Date.now() < deadline) {
    if (finished) throw new Error(`${launch.label} exited before it was ready:\n${started.output()}`);
    if (await ready()) return;
    await sleep(20);
  }
  throw new Error(`${launch.label} was not ready within ${timeoutMs / 1000} s:\n${started.output()}`);
}

/** SIGTERM, then the exit; a process that does not stop within `graceMs` is killed and the run fails. */
async function stop(started: Started, launch: Launch, signalPid: number, graceMs = 30_000): Promise<void> {
  process.kill(signalPid, 'SIGTERM');
  const timer = setTimeout(() => killGroup(started.child), graceMs);
  const code = await started.exited;
  clearTimeout(timer);
  if (code !== 0) throw new Error(`${launch.label} did not stop cleanly (exit ${code}):\n${started.output()}`);
}

/** From spawn until GET /health answers 200; then a clean stop. */
export async function timeServerStart(launch: Launch, dataDir: string, timeoutMs = 120_000): Promise<StartTiming> {
  const port = await freePort();
  const began = performance.now();
  const started = start(launch, processEnv(dataDir, { PORT: String(port) }));
  try {
    await until(
      started,
      launch,
      async () => {
        try {
          const response = await fetch(`http://${LOOPBACK}:${port}/health`, { signal: AbortSignal.timeout(2_000) });
          await response.body?.cancel();
          return response.status === 200;
        } catch {
          return false;
        }
      },
      timeoutMs,
    );
    const wall = (performance.now() - began) / 1000;
    // Under npm the server is not npm's child: its pid is in the data directory lock it holds. Signalled
    // directly it stops cleanly, and npm exits with it. (Its CPU leaves out npm's and the prestart check's.)
    const serverPid = launch === launches.npmStart ? (JSON.parse(readFileSync(join(dataDir, 'pglite.lock'), 'utf8')).pid as number) : started.child.pid!;
    const cpu = cpuSeconds(serverPid);
    await stop(started, launch, serverPid);
    return { wall, cpu };
  } finally {
    killGroup(started.child);
  }
}

/** From spawn until the worker logs `worker ready`; then a clean stop. */
export async function timeWorkerStart(launch: Launch, dataDir: string, databaseUrl: string, timeoutMs = 120_000): Promise<StartTiming> {
  const began = performance.now();
  const started = start(launch, processEnv(dataDir, { DATABASE_URL: databaseUrl }));
  try {
    await until(started, launch, async () => started.output().includes('"worker ready"'), timeoutMs);
    const wall = (performance.now() - began) / 1000;
    const cpu = cpuSeconds(started.child.pid!);
    await stop(started, launch, started.child.pid!);
    return { wall, cpu };
  } finally {
    killGroup(started.child);
  }
}

/** Seconds a command takes to run to completion (exit 0 required). */
export async function timeCommand(command: string, args: string[]): Promise<number> {
  const began = performance.now();
  const started = start({ label: [command, ...args].join(' '), command, args }, { ...process.env });
  const code = await started.exited;
  if (code !== 0) throw new Error(`${command} ${args.join(' ')} failed (exit ${code}):\n${started.output()}`);
  return (performance.now() - began) / 1000;
}
