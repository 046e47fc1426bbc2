import { z } from 'zod';
import { resolve } from 'node:path';
import { parseCidrList } from './scanner/scope.js';
import { parseDnsServerList } from './scanner/dns-servers.js';

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

/** A comma-separated list (empty by default), parsed and checked by `parse`, whose error message is the variable's. */
const commaList = (parse: (text: string) => string[], fallback: string) =>
  z
    .string()
    .default('')
    .transform((value, ctx) => {
      try {
        return parse(value);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: error instanceof Error ? error.message : fallback });
        return z.NEVER;
      }
    });

const postgresUrl = z.string().refine((value) => /^postgres(ql)?:\/\//.test(value), { message: 'must be a postgres:// or postgresql:// URL' });

const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: integer(0, 65535).default(3000),
  HOST: z.string().min(1).default('0.0.0.0'),
  DATA_DIR: z.string().min(1).default('./data'),
  DATABASE_URL: postgresUrl.optional(),
  DATABASE_PREPARED_STATEMENTS: booleanString.default(true),
  REDIS_URL: z
    .string()
    .refine((value) => /^rediss?:\/\//.test(value), { message: 'must be a redis:// or rediss:// URL' })
    .optional(),
  AUTH_SECRET: z.string().min(32, { message: 'must be at least 32 characters (use a random value)' }).optional(),
  PUBLIC_URL: z.string().url({ message: 'must be an absolute URL such as https://asm.example.com' }).optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  AUTH_RATE_LIMIT_MAX: integer(1).default(10),
  AUTH_RATE_LIMIT_WINDOW_SECONDS: integer(1).default(60),
  AUTH_CACHE_TTL_MS: integer(0, 60_000).default(5_000),
  SHUTDOWN_TIMEOUT_MS: integer(100).default(10_000),
  GRAPHQL_MAX_DEPTH: integer(2, 100).default(12),
  GRAPHQL_MAX_ALIASES: integer(1, 1000).default(30),
  GRAPHQL_MAX_COST: integer(100).default(5000),
  /** Executions of a document on graphql-js before it is compiled (graphql/execute-engine.ts); `off` never compiles. */
  GRAPHQL_COMPILE_AFTER: z
    .string()
    .default('1')
    .transform((value, ctx) => {
      if (value === 'off') return 'off' as const;
      if (/^\d{1,7}$/.test(value) && Number(value) <= 1_000_000) return Number(value);
      ctx.addIssue({ code: 'custom', message: 'must be a whole number from 0 to 1000000, or off' });
      return z.NEVER;
    }),
  WORKERS: booleanString.default(true),
  WORKER_CONCURRENCY: integer(1, 32).default(2),
  QUEUE_SUPERVISE_SECONDS: integer(1, 3600).default(30),
  SCAN_STEP_TIMEOUT_SECONDS: integer(2, 86_400).default(900),
  SCAN_STEP_RETRIES: integer(0, 10).default(2),
  SCAN_ALLOWED_NETWORKS: commaList(parseCidrList, 'must be a comma-separated list of CIDRs'),
  /** Webhook destinations allowed although a blocked range (loopback, private, link-local, metadata) contains them: CIDRs, comma-separated. */
  WEBHOOK_ALLOWED_NETWORKS: commaList(parseCidrList, 'must be a comma-separated list of CIDRs'),
  /** One webhook delivery attempt (connect, send, response headers); beyond it the attempt fails and is retried. */
  WEBHOOK_TIMEOUT_MS: integer(100, 120_000).default(10_000),
  /** Attempts per delivery (the first included) before it is marked failed. */
  WEBHOOK_MAX_ATTEMPTS: integer(1, 20).default(8),
  /** Backoff base: attempt n+1 waits base * 2^(n-1) seconds (10 s, 20 s, 40 s … ~21 min before the 8th). */
  WEBHOOK_RETRY_BASE_SECONDS: integer(1, 3_600).default(10),
  /** An endpoint is disabled after this many failed deliveries (attempts exhausted) in a row… */
  WEBHOOK_DISABLE_AFTER_FAILURES: integer(1, 10_000).default(10),
  /** …or once a delivery fails for good while it has been failing for this many hours without a success. */
  WEBHOOK_DISABLE_AFTER_HOURS: integer(1, 8_760).default(72),
  SCAN_MAX_REQUESTS_PER_SECOND: integer(1, 10_000).default(100),
  SCAN_MAX_CONCURRENCY_PER_HOST: integer(1, 1_000).default(64),
  /** Name servers for every DNS question of a scan (resolution, discovery, redirects): `ip`, `ip:port` or `[ipv6]:port`, comma-separated. Empty: the system's. */
  SCAN_DNS_SERVERS: commaList(parseDnsServerList, 'must be a comma-separated list of name servers'),
  /** Questions in flight per name server, across a scan's discovery. */
  SCAN_DNS_CONCURRENCY: integer(1, 1_000).default(64),
  /** Questions started per second per name server. */
  SCAN_DNS_QUERIES_PER_SECOND: integer(1, 100_000).default(2_000),
  /** Per DNS question attempt. */
  SCAN_DNS_TIMEOUT_MS: integer(100, 30_000).default(2_000),
  /** Port of a zone's authoritative servers for zone-transfer attempts (53; a test or lab may run them elsewhere). */
  SCAN_DNS_AUTHORITATIVE_PORT: integer(1, 65_535).default(53),
  /** Certificate-transparency search answering crt.sh's `?q=%.<domain>&output=json`; empty disables the source. */
  DISCOVERY_CT_URL: z
    .string()
    .default('https://crt.sh/')
    .refine((value) => value === '' || /^https?:\/\/[^\s]+$/.test(value), { message: 'must be an http(s) URL, or empty to disable certificate transparency' }),
  BODY_LIMIT_BYTES: integer(1024).default(1_048_576),
  /** Largest template archive POST /api/templates/import (and GraphQL importTemplates) accepts (413 beyond); 64 MiB by default. */
  TEMPLATE_IMPORT_MAX_BYTES: integer(1024, 1024 * 1024 * 1024).default(64 * 1024 * 1024),
  STORAGE_DRIVER: z.enum(['local', 's3'], { message: 'must be local or s3' }).default('local'),
  S3_ENDPOINT: z
    .string()
    .refine((value) => /^https?:\/\/[^/]/.test(value) && URL.canParse(value), { message: 'must be an http:// or https:// URL such as http://minio:9000' })
    .optional(),
  S3_REGION: z.string().min(1).default('us-east-1'),
  S3_BUCKET: z
    .string()
    .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, { message: 'must be a bucket name: 3-63 lowercase letters, digits, dots and hyphens' })
    .optional(),
  S3_ACCESS_KEY_ID: z.string().optional(),
  S3_SECRET_ACCESS_KEY: z.string().optional(),
  /** Unset: path-style (`endpoint/bucket/key`) when S3_ENDPOINT is set (MinIO and most S3-compatible servers), virtual-hosted otherwise. */
  S3_FORCE_PATH_STYLE: booleanString.optional(),
  // --- Hardening (issue 8). Each is read by one place; the README's configuration table says what it does.
  /** Extra origins (comma-separated, e.g. `https://console.example.com`) allowed for credentialed browser requests besides PUBLIC_URL's. */
  CORS_ORIGINS: z
    .string()
    .default('')
    .transform((value, ctx) => {
      const origins: string[] = [];
      for (const item of value
        .split(',')
        .map((part) => part.trim())
        .filter(Boolean)) {
        const parsed = URL.canParse(item) ? new URL(item) : undefined;
        if (!parsed || !/^https?:$/.test(parsed.protocol) || parsed.origin !== item.replace(/\/$/, '')) {
          ctx.addIssue({ code: 'custom', message: `"${item}" is not an origin such as https://console.example.com (scheme, host, optional port; no path)` });
          return z.NEVER;
        }
        origins.push(parsed.origin);
      }
      return origins;
    }),
  /** When set, /metrics requires `Authorization: Bearer <METRICS_TOKEN>`. */
  METRICS_TOKEN: z.string().min(16, { message: 'must be at least 16 characters' }).optional(),
  /** Who may create an account. Unset: `open` while no account exists (the first becomes admin), then `invite`. */
  SIGNUP: z.enum(['open', 'invite', 'closed'], { message: 'must be open, invite or closed' }).optional(),
  /** Proxies in front of the server: `false` (default; the socket address is the client), `true` (one), or how many hops of X-Forwarded-For to trust. */
  TRUST_PROXY: z
    .string()
    .default('false')
    .transform((value, ctx) => {
      if (/^(false|0|no)$/i.test(value)) return 0;
      if (/^(true|yes)$/i.test(value)) return 1;
      if (/^[1-9]\d?$/.test(value)) return Number(value);
      ctx.addIssue({ code: 'custom', message: 'must be true, false or a number of proxy hops (1-99)' });
      return z.NEVER;
    }),
  /** Days an audit-log entry is kept; the workers' periodic cleanup removes older ones (src/modules/audit/retention.ts). */
  AUDIT_RETENTION_DAYS: integer(1, 36_500).default(90),
  /** Sign-in attempts per account (e-mail) per AUTH_RATE_LIMIT_WINDOW_SECONDS, besides the per-address limit. */
  AUTH_ACCOUNT_RATE_LIMIT_MAX: integer(1).default(10),
  /** On SIGTERM: how long /ready answers 503 while requests are still served, before the listener closes (src/ops/drain.ts; the shutdown bound is this plus SHUTDOWN_TIMEOUT_MS). */
  SHUTDOWN_DRAIN_MS: integer(0, 600_000).default(3_000),
  /** GraphiQL in a browser at /graphql. Unset: on, except with NODE_ENV=production. */
  GRAPHIQL: booleanString.optional(),
  /** Introspection for anonymous requests. Unset: allowed, except with NODE_ENV=production (signed-in users may always introspect). */
  GRAPHQL_INTROSPECTION: booleanString.optional(),
  /** A websocket must authenticate in connection_init within this time, or it is closed (4408). */
  WS_CONNECTION_INIT_TIMEOUT_MS: integer(100, 60_000).default(5_000),
  /** Open websockets per client address at once (beyond: closed with 4429). */
  WS_MAX_CONNECTIONS_PER_CLIENT: integer(1, 10_000).default(50),
  /** Wall-clock budget of one template against one endpoint (matching and requests); beyond it the template is cut off with a warning. */
  TEMPLATE_BUDGET_MS: integer(100, 600_000).default(10_000),
  /** Scan schedules: the shortest gap allowed between two ticks of a cron expression (a floor against scanning someone every minute). */
  SCHEDULE_MIN_INTERVAL_SECONDS: integer(60, 31 * 86_400).default(300),
  // --- OAST (src/oast): self-hosted interactsh for templates using {{interactsh-url}}. Unset domain: off.
  /** Domain whose names the OAST listeners answer (`<id>.<domain>`); delegate it (NS) to this host. Unset: templates using OAST are skipped. */
  OAST_DOMAIN: z
    .string()
    .transform((value) => value.trim().toLowerCase().replace(/\.$/, ''))
    .refine((value) => /^(?=.{1,200}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]([a-z0-9-]{0,61}[a-z0-9])?$/.test(value), {
      message: 'must be a domain name such as oast.example.com',
    })
    .optional(),
  /** Address the OAST listeners bind (API process only). */
  OAST_LISTEN_HOST: z.string().min(1).default('127.0.0.1'),
  /** OAST HTTP listener port (0: any free port). Forward public port 80 here. */
  OAST_HTTP_PORT: integer(0, 65_535).default(8180),
  /** OAST DNS listener port, UDP and TCP (0: any free port). Forward public port 53 here. */
  OAST_DNS_PORT: integer(0, 65_535).default(8053),
  /** The address DNS answers give for names under OAST_DOMAIN (A records). Unset: 127.0.0.1. */
  OAST_PUBLIC_IP: z.ipv4({ message: 'must be an IPv4 address' }).optional(),
  /** How long a request that carried an OAST URL waits for its interactions (nuclei's interactions-cooldown-period). */
  OAST_COOLDOWN_MS: integer(0, 120_000).default(5_000),
  /** A correlation id not refreshed by its scan step (nor called back) for this long is forgotten by the listeners. */
  OAST_EVICTION_SECONDS: integer(10, 86_400).default(600),
  /** Interactions one correlation id (one scan step) may record; beyond, they are dropped. */
  OAST_MAX_INTERACTIONS_PER_ID: integer(1, 100_000).default(1_000),
  /** How often a process running workers looks for due schedules (tests use 1); a tick fires at most this late. */
  SCHEDULE_TICK_SECONDS: integer(1, 3_600).default(30),
});

/** Settings that only make sense together. */
const checkedEnvSchema = envSchema.superRefine(
  (env, ctx) => {
    if (env.STORAGE_DRIVER === 's3' && !env.S3_BUCKET) {
      ctx.addIssue({ code: 'custom', path: ['S3_BUCKET'], message: 'is required when STORAGE_DRIVER=s3' });
    }
    if (Boolean(env.S3_ACCESS_KEY_ID) !== Boolean(env.S3_SECRET_ACCESS_KEY)) {
      const [missing, present] = env.S3_ACCESS_KEY_ID ? ['S3_SECRET_ACCESS_KEY', 'S3_ACCESS_KEY_ID'] : ['S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY'];
      ctx.addIssue({ code: 'custom', path: [missing], message: `is required when ${present} is set (leave both unset for the default AWS credential chain)` });
    }
    // Reported alongside other bad variables, not only once they are fixed.
  },
  { when: () => true },
);

export type Env = z.infer<typeof envSchema> & { dataDir: string };

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parses `source` (default: process.env); throws ConfigError listing every bad variable. */
export function loadEnv(source: Record<string, string | undefined> = process.env): Env {
  const cleaned = Object.fromEntries(Object.entries(source).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = checkedEnvSchema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return { ...parsed.data, dataDir: resolve(parsed.data.DATA_DIR) };
}
