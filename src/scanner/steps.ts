/**
 * Step dispatch for a job queue: a step name plus plain JSON input in, plain JSON observations out.
 *
 * Error policy, so the queue knows what to retry:
 * - bad input (StepInputError) and out-of-scope targets (ScopeError) throw and are permanent;
 * - infrastructure trouble (DNS server unreachable, local socket exhaustion) throws and is worth a retry;
 * - "nothing there" (port not speaking HTTP, no TLS, a check that could not finish) is a normal
 *   result: no observations, and an entry in `errors` saying why.
 */
import { z } from 'zod';
import { runChecks } from './checks/index.js';
import type { Check } from './checks/check.js';
import { normalizeHostName, resolveDns } from './dns.js';
import { probeHttp } from './http-probe.js';
import { parsePortSpec, scanPorts, TOP_PORTS } from './ports.js';
import type { HostRateLimiter } from './rate-limit.js';
import { isScopeError, type ScopeGuard } from './scope.js';
import { inspectTls } from './tls.js';
import type { CertificateObservation, FindingObservation, HostObservation, ServiceObservation, WebObservation } from './types.js';

export const STEP_NAMES = ['dns', 'ports', 'http', 'tls', 'checks'] as const;
export type StepName = (typeof STEP_NAMES)[number];

const timeoutMs = z.number().int().min(1).max(120_000).optional();
const port = z.number().int().min(1).max(65_535);
const ipAddress = z.string().refine((value) => z.ipv4().safeParse(value).success || z.ipv6().safeParse(value).success, 'must be an IP address');
const hostName = z.string().min(1).max(255);
const webObservation = z.custom<WebObservation>((value) => isKind(value, 'web'), 'must be a web observation from the http step');
const certificateObservation = z.custom<CertificateObservation>((value) => isKind(value, 'certificate'), 'must be a certificate observation from the tls step');

/** Input schemas, exported so a producer can validate before enqueueing. */
export const stepInputSchemas = {
  dns: z.object({ host: hostName, timeoutMs }),
  ports: z.object({
    address: ipAddress,
    host: hostName.optional(),
    /** A spec like "80,443,8000-8100" or a list; omitted means TOP_PORTS. */
    ports: z.union([z.string(), z.array(port).max(65_535)]).optional(),
    concurrency: z.number().int().min(1).max(1_000).optional(),
    timeoutMs,
    grabBanner: z.boolean().optional(),
  }),
  http: z.object({
    address: ipAddress,
    host: hostName.optional(),
    port,
    tls: z.union([z.literal('auto'), z.boolean()]).optional(),
    timeoutMs,
    maxRedirects: z.number().int().min(0).max(20).optional(),
  }),
  tls: z.object({ address: ipAddress, host: hostName.optional(), port, timeoutMs }),
  checks: z.object({
    web: z.array(webObservation).optional(),
    certificates: z.array(certificateObservation).optional(),
    checkIds: z.array(z.string()).optional(),
    timeoutMs,
  }),
} satisfies Record<StepName, z.ZodType>;

export type StepInputs = { [S in StepName]: z.input<(typeof stepInputSchemas)[S]> };

export interface StepObservations {
  dns: HostObservation;
  ports: ServiceObservation;
  http: WebObservation;
  tls: CertificateObservation;
  checks: FindingObservation;
}

/** A soft failure: the step ran, but some target or check gave no answer. */
export interface StepError {
  code: string;
  message: string;
  /** What it was about: `host:port`, a check id plus asset key, ... */
  target?: string;
}

export interface StepResult<S extends StepName> {
  step: S;
  observations: Array<StepObservations[S]>;
  errors: StepError[];
}

export interface StepDeps {
  guard: ScopeGuard;
  limiter?: HostRateLimiter;
  /** Name servers for the dns step (`ip` or `ip:port`); the system's when omitted. */
  dnsServers?: string[];
  /** Checks for the checks step; BUILTIN_CHECKS when omitted. */
  checks?: readonly Check[];
}

/** Bad step name or input: permanent, do not retry. */
export class StepInputError extends Error {
  readonly code = 'INVALID_STEP_INPUT' as const;
  constructor(message: string) {
    super(message);
    this.name = 'StepInputError';
  }
}

/** Whether a queue should retry a step that threw this: not for bad input or out-of-scope targets. */
export function isRetryableStepError(err: unknown): boolean {
  return !(err instanceof StepInputError || isScopeError(err));
}

export async function runStep<S extends StepName>(step: S, input: unknown, deps: StepDeps): Promise<StepResult<S>> {
  if (!(STEP_NAMES as readonly string[]).includes(step))
    throw new StepInputError(`Unknown scan step "${String(step)}"; expected one of ${STEP_NAMES.join(', ')}`);
  const parsed = stepInputSchemas[step].safeParse(input);
  if (!parsed.success) throw new StepInputError(`Invalid input for scan step "${step}": ${z.prettifyError(parsed.error)}`);
  const run = RUNNERS[step] as (input: unknown, deps: StepDeps) => Promise<Omit<StepResult<S>, 'step'>>;
  return { step, ...(await run(parsed.data, deps)) };
}

type Parsed<S extends StepName> = z.output<(typeof stepInputSchemas)[S]>;
type Runner<S extends StepName> = (input: Parsed<S>, deps: StepDeps) => Promise<Omit<StepResult<S>, 'step'>>;

const RUNNERS: { [S in StepName]: Runner<S> } = {
  async dns(input, deps) {
    const host = validHost(input.host);
    const observation = await resolveDns(host, { timeoutMs: input.timeoutMs, servers: deps.dnsServers, guard: deps.guard });
    return { observations: [observation], errors: [] };
  },

  async ports(input, deps) {
    let ports: readonly number[] = TOP_PORTS;
    try {
      if (typeof input.ports === 'string') ports = parsePortSpec(input.ports);
      else if (input.ports) ports = input.ports;
    } catch (err) {
      throw new StepInputError((err as Error).message);
    }
    const found = await scanPorts({
      address: input.address,
      ports,
      concurrency: input.concurrency,
      timeoutMs: input.timeoutMs,
      grabBanner: input.grabBanner,
      guard: deps.guard,
      limiter: deps.limiter,
    });
    const host = input.host ? validHost(input.host) : undefined;
    return { observations: host ? found.map((service) => ({ ...service, host })) : found, errors: [] };
  },

  async http(input, deps) {
    const host = validHost(input.host ?? input.address);
    try {
      const web = await probeHttp({ ...input, host, guard: deps.guard, limiter: deps.limiter });
      return { observations: [web], errors: [] };
    } catch (err) {
      if (isScopeError(err)) throw err;
      return { observations: [], errors: [softError(err, `${host}:${input.port}`)] };
    }
  },

  async tls(input, deps) {
    const host = validHost(input.host ?? input.address);
    try {
      const certificate = await inspectTls({ ...input, host, guard: deps.guard, limiter: deps.limiter });
      return { observations: [certificate], errors: [] };
    } catch (err) {
      if (isScopeError(err)) throw err;
      return { observations: [], errors: [softError(err, `${host}:${input.port}`)] };
    }
  },

  async checks(input, deps) {
    const { findings, errors } = await runChecks(
      { web: input.web, certificates: input.certificates },
      { guard: deps.guard, limiter: deps.limiter, checks: deps.checks, checkIds: input.checkIds, timeoutMs: input.timeoutMs },
    );
    return {
      observations: findings,
      errors: errors.map((error) => ({ code: error.code, message: error.message, target: `${error.checkId} ${error.assetKey}` })),
    };
  },
};

function validHost(host: string): string {
  try {
    return normalizeHostName(host);
  } catch (err) {
    throw new StepInputError((err as Error).message);
  }
}

function softError(err: unknown, target: string): StepError {
  return { code: String((err as { code?: unknown }).code ?? 'FAILED'), message: (err as Error).message ?? String(err), target };
}

function isKind(value: unknown, kind: string): boolean {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === kind;
}
