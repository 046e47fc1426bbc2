// npm run admin:create -- --email ada@example.com [--name "Ada Lovelace"]
//   Creates an administrator account on the configured database (DATABASE_URL, or the embedded PGlite in
//   DATA_DIR), whatever SIGNUP says: the way to make the first administrator of a public server without
//   ever opening sign-up. The password is never an argument (it would sit in the shell history and in
//   `ps`): ADMIN_PASSWORD, or standard input (piped, or typed without echo).
//   ADMIN_EMAIL and ADMIN_NAME may stand in for --email and --name. Exit 0 on success, 1 otherwise.
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { loadEnvOrExit } from '../src/lifecycle.js';
import { createLogger } from '../src/logger.js';
import { openDatabase } from '../src/db.js';
import { createAuth } from '../src/auth/better-auth.js';
import { resolveAuthSecret } from '../src/auth/secret.js';
import { createUserAccount } from '../src/modules/accounts/users.js';
import { AppError } from '../src/errors.js';

const usage = 'usage: npm run admin:create -- --email <email> [--name <name>]   (password: ADMIN_PASSWORD or standard input)';

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += String(chunk);
  return text;
}

/** A typed password is not echoed. */
async function prompt(question: string): Promise<string> {
  let muted = false;
  const output = new Writable({
    write(chunk, _encoding, done) {
      if (!muted) process.stdout.write(chunk);
      done();
    },
  });
  const rl = createInterface({ input: process.stdin, output, terminal: true });
  process.stdout.write(question);
  muted = true;
  const answer = await new Promise<string>((resolve) => rl.question('', resolve));
  rl.close();
  process.stdout.write('\n');
  return answer;
}

async function readPassword(): Promise<string> {
  if (process.env.ADMIN_PASSWORD) return process.env.ADMIN_PASSWORD;
  if (process.stdin.isTTY) return prompt('Password (at least 8 characters): ');
  // Piped: the first line is the password.
  return (await readAll(process.stdin)).split(/\r?\n/)[0] ?? '';
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { email: { type: 'string' }, name: { type: 'string' }, password: { type: 'string' }, help: { type: 'boolean' } },
    allowPositionals: false,
  });
  if (values.help) {
    console.log(usage);
    return 0;
  }
  if (values.password !== undefined) {
    console.error('Refusing --password: it would be visible in the shell history and the process list. Set ADMIN_PASSWORD or pipe it on standard input.');
    return 1;
  }
  const email = values.email ?? process.env.ADMIN_EMAIL;
  if (!email) {
    console.error(usage);
    return 1;
  }
  const name = values.name ?? process.env.ADMIN_NAME ?? email.split('@')[0] ?? 'Administrator';
  const env = loadEnvOrExit();
  const log = createLogger(env.LOG_LEVEL === 'info' ? 'warn' : env.LOG_LEVEL);
  const password = await readPassword();
  const db = await openDatabase({ url: env.DATABASE_URL, pgliteDir: `${env.dataDir}/pglite` });
  try {
    await db.migrate();
    const auth = createAuth({ prisma: db.prisma, secret: resolveAuthSecret(env, log), baseURL: env.PUBLIC_URL ?? `http://localhost:${env.PORT}` });
    const user = await createUserAccount({ prisma: db.prisma, auth }, { name, email, password, role: 'admin' });
    console.log(`Created administrator ${user.email} (${user.id}). Sign in with POST /api/v1/api/auth/sign-in/email or the signIn mutation.`);
    return 0;
  } catch (error) {
    if (error instanceof AppError) {
      console.error(`Could not create the administrator: ${error.message}`);
      return 1;
    }
    throw error;
  } finally {
    await db.close();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.stack : String(error));
    process.exit(1);
  },
);
