import { z } from 'zod';
import { resolve } from 'node:path';

/**
 * The one parsed configuration. Every setting comes from the environment and is validated at start:
 * a bad value stops the process with a message naming the variable and what it must be.
 */
const booleanString = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'], { message: 'must be true or false' })
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

const postgresUrl = z
  .string()
  .refine((value) => /^postgres(ql)?:\/\//.test(value), { message: 'must be a postgres:// or postgresql:// URL' });

const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: z.coerce.number({ message: 'must be a number' }).int().min(0).max(65535).default(3000),
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
  AUTH_RATE_LIMIT_MAX: z.coerce.number({ message: 'must be a number' }).int().min(1).default(10),
  AUTH_RATE_LIMIT_WINDOW_SECONDS: z.coerce.number({ message: 'must be a number' }).int().min(1).default(60),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number({ message: 'must be a number' }).int().min(100).default(10_000),
  GRAPHQL_MAX_DEPTH: z.coerce.number({ message: 'must be a number' }).int().min(2).max(100).default(12),
  GRAPHQL_MAX_ALIASES: z.coerce.number({ message: 'must be a number' }).int().min(1).max(1000).default(30),
  GRAPHQL_MAX_COST: z.coerce.number({ message: 'must be a number' }).int().min(100).default(5000),
  BODY_LIMIT_BYTES: z.coerce.number({ message: 'must be a number' }).int().min(1024).default(1_048_576),
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
