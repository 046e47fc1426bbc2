import { chmodSync, mkdirSync, statSync } from 'node:fs';
import type { Env } from '../env.js';
import type { Logger } from '../logger.js';

/** Whether this process keeps anything in DATA_DIR: the embedded database, local blobs, or a generated auth secret. */
export function usesDataDir(env: Env): boolean {
  return !env.DATABASE_URL || env.STORAGE_DRIVER === 'local' || !env.AUTH_SECRET;
}

/**
 * DATA_DIR holds the database, uploaded blobs and the auth secret: only the server's own user may enter
 * it (0700). Created so, and fixed at every start when it was made wider (PGlite itself creates its
 * files 0666, so the directory is the barrier). Files this process creates are owner-only (umask 077).
 */
export function secureDataDir(env: Env, log: Logger): void {
  process.umask(0o077);
  if (!usesDataDir(env)) return;
  const dir = env.dataDir;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const mode = statSync(dir).mode & 0o777;
  if (mode === 0o700) return;
  try {
    chmodSync(dir, 0o700);
    log.info({ dataDir: dir, was: mode.toString(8) }, 'data directory made owner-only (0700)');
  } catch (error) {
    log.warn({ err: error, dataDir: dir, mode: mode.toString(8) }, 'could not make the data directory owner-only (0700): other users may read the database');
  }
}
