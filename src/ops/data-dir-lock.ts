import { closeSync, linkSync, openSync, readFileSync, renameSync, unlinkSync, utimesSync, writeSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';

/**
 * One process per embedded database. Two PGlite instances on one directory each keep their own copy of
 * the data in memory and overwrite each other's files: accounts made on one vanish. The second process
 * must refuse to start.
 *
 * The lock is a file created atomically (written beside it, then hard-linked into place: link fails if
 * the name exists, and the file never appears half-written) holding the owner's pid, host and process
 * start time. It is removed on close and at process exit. A lock left by a process that died without
 * removing it (SIGKILL, power loss) is stale and taken over:
 * - on the same host, when its pid is gone, or is now another process (a different start time: pids are
 *   reused, and a restarted container's server often gets the same low pid);
 * - from another host (a volume shared between machines or containers), when it has not been refreshed
 *   for STALE_MS: the owner touches it every REFRESH_MS.
 * Node has no flock(); this is the portable equivalent without a native module.
 */
const REFRESH_MS = 10_000;
const STALE_MS = 60_000;

interface LockOwner {
  pid: number;
  host: string;
  /** The owner's start time in clock ticks since boot (Linux), to tell a reused pid apart. */
  startTicks?: number;
  since: string;
}

/** Locks this process holds: a lock file naming our own pid is stale unless it is one of these. */
const heldHere = new Set<string>();

export class DataDirInUseError extends Error {
  override name = 'DataDirInUseError';
}

export interface DataDirLock {
  path: string;
  release(): void;
}

/** Clock ticks since boot at which `pid` started (field 22 of /proc/<pid>/stat), where /proc exists. */
function startTicksOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces and parentheses: count fields after its closing one.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[19]);
    return Number.isFinite(ticks) ? ticks : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, it is just not ours to signal.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readOwner(path: string): { raw: string; owner?: LockOwner } | undefined {
  try {
    const raw = readFileSync(path, 'utf8');
    try {
      return { raw, owner: JSON.parse(raw) as LockOwner };
    } catch {
      return { raw };
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Why the lock's owner still holds it, or undefined when the lock is stale. */
function liveOwner(path: string, owner: LockOwner | undefined): string | undefined {
  if (!owner || typeof owner.pid !== 'number') return undefined; // not ours, or garbage: stale
  if (owner.host !== hostname()) {
    const age = Date.now() - statSync(path).mtimeMs;
    return age < STALE_MS ? `pid ${owner.pid} on host ${owner.host}, refreshed ${Math.round(age / 1000)} s ago` : undefined;
  }
  if (owner.pid === process.pid) return heldHere.has(path) ? 'this process' : undefined;
  if (!isAlive(owner.pid)) return undefined;
  const ticks = startTicksOf(owner.pid);
  if (owner.startTicks !== undefined && ticks !== undefined && ticks !== owner.startTicks) return undefined;
  return `pid ${owner.pid}, running since ${owner.since}`;
}

/**
 * Takes the lock `lockPath` for this process's life, or throws DataDirInUseError naming `dir` and the
 * process holding it.
 */
export function lockDataDir(dir: string, lockPath: string): DataDirLock {
  lockPath = resolve(lockPath);
  const owner: LockOwner = { pid: process.pid, host: hostname(), startTicks: startTicksOf(process.pid), since: new Date().toISOString() };
  const temp = `${lockPath}.${process.pid}.${randomBytes(4).toString('hex')}`;
  const ours = JSON.stringify(owner);
  const fd = openSync(temp, 'wx', 0o600);
  writeSync(fd, ours);
  closeSync(fd);
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        linkSync(temp, lockPath);
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 5) throw error;
      }
      const current = readOwner(lockPath);
      if (!current) continue; // removed meanwhile: try again
      const holder = liveOwner(lockPath, current.owner);
      if (holder) {
        throw new DataDirInUseError(
          `The data directory ${dir} (DATA_DIR) is in use by another Perimeter process (${holder}). ` +
            'Two servers on one embedded database overwrite each other: stop the other one, or give this one its own DATA_DIR.',
        );
      }
      // Stale. Move it aside atomically and check that what moved is the stale lock we judged, not a fresh
      // one another starting process put there meanwhile (then that one is put back, and it wins).
      const aside = `${lockPath}.stale.${process.pid}.${randomBytes(4).toString('hex')}`;
      try {
        renameSync(lockPath, aside);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw error;
      }
      if (readOwner(aside)?.raw !== current.raw) {
        try {
          linkSync(aside, lockPath);
        } catch {
          // a third process got there first; it holds the lock now
        }
      }
      unlinkSync(aside);
    }
  } finally {
    unlinkSync(temp);
  }

  heldHere.add(lockPath);
  // Other hosts judge the lock by its age: keep it fresh while we live.
  const refresh = setInterval(() => {
    try {
      const now = new Date();
      utimesSync(lockPath, now, now);
    } catch {
      // removed under us: nothing to refresh
    }
  }, REFRESH_MS);
  refresh.unref();
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    clearInterval(refresh);
    process.off('exit', release);
    heldHere.delete(lockPath);
    // Only our own lock: never remove one another process holds.
    if (readOwner(lockPath)?.raw === ours) {
      try {
        unlinkSync(lockPath);
      } catch {
        // gone already
      }
    }
  };
  process.on('exit', release);
  return { path: lockPath, release };
}
