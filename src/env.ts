import { z } from 'zod';
import { resolve } from 'node:path';
import { parseCidrList } from './scanner/scope.js';

/**
 * The one parsed configuration. Every setting comes from the environment and is validated at start:
 * a bad value stops the process with a message naming the variable and what it must be.
 */
const booleanString = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'], { message: 'must be true or false' })
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

/**
 * A whole number in range. The message names the range for every failure: a schema-level message would
 * otherwise also replace the range checks' own, and PORT=70000 would be reported as "must be a number".
 */
const integer = (min: number, max?: number) =>
  z.coerce
    .number({ message: max === undefined ? `must be a whole number, at least ${min}` : `must be a whole number from ${min} to ${max}` })
    .int()
    .min(min)
    .max(max ?? Number.MAX_SAFE_INTEGER);

const postgresUrl = z
  .string()
  .refine((value) => /^postgres(ql)?:\/\//.test(value), { message: 'must be a postgres:// or postgresql:// URL' });

const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: integer(0, 65535).default(3000),
  HOST: z.string().min(1).default('0.0.0.0'),
  DATA_DIR: z.string().min(1).default('./data'),
  DATABASE_URL: postgresUrl.optional(),
  REDIS_URL: z
    .string()
    .refine((value) => /^rediss?:\/\//.test(value), { message: 'must be a redis:// or rediss:// URL' })
    .optional(),
  AUTH_SECRET: z.string().min(32, { message: 'must be at least 32 characters (use a random value)' }).optional(),
  PUBLIC_URL: z.string().url({ message: 'must be an absolute URL such as https://asm.example.com' }).optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  AUTH_RATE_LIMIT_MAX: integer(1).default(10),
  AUTH_RATE_LIMIT_WINDOW_SECONDS: integer(1).default(60),
  SHUTDOWN_TIMEOUT_MS: integer(100).default(10_000),
  GRAPHQL_MAX_DEPTH: integer(2, 100).default(12),
  GRAPHQL_MAX_ALIASES: integer(1, 1000).default(30),
  GRAPHQL_MAX_COST: integer(100).default(5000),
  WORKERS: booleanString.default(true),
  WORKER_CONCURRENCY: integer(1, 32).default(2),
  QUEUE_SUPERVISE_SECONDS: integer(1, 3600).default(30),
  SCAN_STEP_TIMEOUT_SECONDS: integer(2, 86_400).default(900),
  SCAN_STEP_RETRIES: integer(0, 10).default(2),
  SCAN_ALLOWED_NETWORKS: z
    .string()
    .default('')
    .transform((value, ctx) => {
      try {
        return parseCidrList(value);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: error instanceof Error ? error.message : 'must be a comma-separated list of CIDRs' });
        return z.NEVER;
      }
    }),
  SCAN_MAX_REQUESTS_PER_SECOND: integer(1, 10_000).default(100),
  SCAN_MAX_CONCURRENCY_PER_HOST: integer(1, 1_000).default(64),
  BODY_LIMIT_BYTES: integer(1024).default(1_048_576),
});

export type Env = z.infer<typeof envSchema> & { dataDir: string };

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parses `source` (default: process.env); throws ConfigError listing every bad variable. */
export function loadEnv(source: Record<string, string | undefined> = process.env): Env {
  const cleaned = Object.fromEntries(Object.entries(source).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return { ...parsed.data, dataDir: resolve(parsed.data.DATA_DIR) };
}
