import { readFileSync } from 'node:fs';

/**
 * `npm start` runs the server as `npm → sh -c "<script>" → node`. On SIGTERM npm passes the signal to
 * the shell, not to node; the shell dies, npm exits, and the server is left running as an orphan holding
 * the port. (SIGKILL to npm orphans it whatever the script says.) So a server started by an npm script
 * watches its launcher: when npm or the shell in between is gone, it stops as on SIGTERM.
 *
 * Only under npm (`npm_lifecycle_event` is set): a server started directly (systemd, a container's
 * `node dist/src/main.js`, `nohup node … &`) keeps running whatever its parent does.
 */
const CHECK_MS = 500;
/** Read at startup: by the time the watch begins, the shell in between may already be gone. */
const startupParent = process.ppid;

function readProc(pid: number, file: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return undefined;
  }
}

function parentOf(pid: number): number | undefined {
  const stat = readProc(pid, 'stat');
  if (!stat) return undefined;
  const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  return Number.isInteger(ppid) && ppid > 0 ? ppid : undefined;
}

/** Gone, or a zombie nobody has reaped yet (it still answers signal 0). */
function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'EPERM';
  }
  const stat = readProc(pid, 'stat');
  return stat?.slice(stat.lastIndexOf(')') + 2).startsWith('Z') ?? false;
}

/**
 * The processes between this one and npm itself, npm included: npm sets `npm_lifecycle_event` for the
 * script it runs, so the first ancestor without it in its environment is npm. Without /proc: the parent.
 */
function launcherChain(): number[] {
  const chain: number[] = [];
  let pid: number | undefined = process.ppid;
  for (let depth = 0; pid && pid > 1 && depth < 5; depth++) {
    chain.push(pid);
    const environ = readProc(pid, 'environ');
    if (environ === undefined || !environ.split('\0').some((entry) => entry.startsWith('npm_lifecycle_event='))) break;
    pid = parentOf(pid);
  }
  return chain.length ? chain : [process.ppid];
}

/** Calls `onGone` once when the npm process that started this one (or a process in between) has exited. */
export function watchNpmLauncher(onGone: () => void): void {
  if (!process.env.npm_lifecycle_event) return;
  const chain = launcherChain();
  const timer = setInterval(() => {
    if (process.ppid === startupParent && !chain.some(isGone)) return;
    clearInterval(timer);
    onGone();
  }, CHECK_MS);
  timer.unref();
}
