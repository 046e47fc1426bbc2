import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Env } from '../env.js';
import type { Logger } from '../logger.js';

/**
 * AUTH_SECRET signs session cookies. Embedded installs get one generated on first start and kept in the
 * data directory (mode 0600), so sessions survive restarts; several instances must share AUTH_SECRET.
 */
export function resolveAuthSecret(env: Env, log: Logger): string {
  if (env.AUTH_SECRET) return env.AUTH_SECRET;
  const file = join(env.dataDir, 'auth-secret');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(env.dataDir, { recursive: true });
  const secret = randomBytes(32).toString('base64url');
  writeFileSync(file, secret, { mode: 0o600 });
  if (env.DATABASE_URL) log.warn('AUTH_SECRET is not set: generated one in the data directory; set the same AUTH_SECRET on every instance');
  return secret;
}
