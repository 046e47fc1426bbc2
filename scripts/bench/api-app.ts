// The app as the benchmarks run it (bench:api, bench:oasm): a child process per database, signed in over REST.
import { randomBytes } from 'node:crypto';
import { LOOPBACK, freePort, startNode, waitForReady, type Child } from './lib.js';
import { expectOk, fetchText, onCleanup } from './api-lib.js';
import { startFlags } from '../start-flags.js';

export const BENCH_PASSWORD = 'bench-password-123';
export const BENCH_EMAIL = 'bench-owner@example.com';

export interface AppOptions {
  /** The checkout whose src/main.ts runs. */
  appDir: string;
  logLevel: string;
  /** PostgreSQL; absent means the embedded default in `dataDir`. */
  databaseUrl?: string;
  dataDir: string;
  profileDir?: string;
}

/** The app as production runs it (NODE_ENV=production), on PostgreSQL or (no url) the embedded database. */
export async function startApp(name: string, options: AppOptions): Promise<{ url: string; child: Child }> {
  const port = await freePort();
  const url = `http://${LOOPBACK}:${port}`;
  const profile = options.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${options.profileDir}`] : [];
  // The checkout's `npm start` flags (package.json) on its sources: production's runtime settings, without a build.
  const child = startNode(name, [...startFlags(options.appDir), ...profile, '--import', 'tsx', 'src/main.ts'], {
    cwd: options.appDir,
    env: {
      ...process.env,
      DATABASE_URL: options.databaseUrl ?? '',
      PORT: String(port),
      HOST: LOOPBACK,
      DATA_DIR: options.dataDir,
      AUTH_SECRET: randomBytes(36).toString('base64url'),
      NODE_ENV: 'production',
      LOG_LEVEL: options.logLevel,
      REDIS_URL: '',
      PUBLIC_URL: '',
    },
  });
  onCleanup(`stop ${name}`, () => child.stop());
  const started = Date.now();
  await waitForReady(`${url}/ready`, child, 180_000);
  console.log(`  ${name} ready on ${url} in ${((Date.now() - started) / 1000).toFixed(1)}s`);
  return { url, child };
}

/** Signs the bench owner up (a fresh database) or in; the session token is a bearer credential. */
export async function signIn(appUrl: string, path: 'sign-up' | 'sign-in'): Promise<{ token: string; user: { id: string } }> {
  const body = path === 'sign-up' ? { name: 'Bench Owner', email: BENCH_EMAIL, password: BENCH_PASSWORD } : { email: BENCH_EMAIL, password: BENCH_PASSWORD };
  return expectOk(
    path,
    await fetchText(`${appUrl}/api/v1/api/auth/${path}/email`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  ) as { token: string; user: { id: string } };
}
