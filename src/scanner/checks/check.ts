/**
 * The check contract. A check looks at one observation (a web endpoint or a certificate), may make
 * its own scope-guarded requests through the context, and returns zero or more results; the runner
 * (index.ts) turns results into FindingObservations with stable fingerprints.
 *
 * Checks never open sockets themselves: `ctx.request` / `ctx.fetchPath` go through the same scope
 * guard, rate limiter, timeout and body bound as the probes.
 */
import type { HttpRequestOptions, HttpResponse } from '../http-request.js';
import type { HostRateLimiter } from '../rate-limit.js';
import type { ScopeGuard } from '../scope.js';
import type { CertificateObservation, FindingEvidence, Severity, WebObservation } from '../types.js';

export interface CheckResult {
  /** What matched within the asset, stable across scans (e.g. `/.git/HEAD`); defaults to the check id. */
  matcher?: string;
  evidence: FindingEvidence;
  /** Overrides the check's severity for this result (e.g. a template with per-matcher severity). */
  severity?: Severity;
}

export type CheckRequest = Omit<HttpRequestOptions, 'guard' | 'limiter'>;

export interface CheckContextBase {
  guard: ScopeGuard;
  limiter?: HostRateLimiter;
  timeoutMs: number;
  now: Date;
  /** A scope-guarded, rate-limited, bounded HTTP request. */
  request(options: CheckRequest): Promise<HttpResponse>;
}

export interface WebCheckContext extends CheckContextBase {
  web: WebObservation;
  /** GET (or `method`) a path on the probed endpoint, dialling the address the probe used. */
  fetchPath(path: string, init?: Omit<CheckRequest, 'url' | 'address'>): Promise<HttpResponse>;
}

export interface CertificateCheckContext extends CheckContextBase {
  certificate: CertificateObservation;
}

interface CheckMetadata {
  /** Stable id: part of every finding fingerprint, so never rename a shipped check. */
  id: string;
  name: string;
  severity: Severity;
  description: string;
  remediation: string;
  /** Which check source this came from, recorded on findings; built-ins leave it unset (`builtin`). */
  source?: string;
}

export interface WebCheck extends CheckMetadata {
  appliesTo: 'web';
  run(ctx: WebCheckContext): Promise<CheckResult[]>;
}

export interface CertificateCheck extends CheckMetadata {
  appliesTo: 'certificate';
  run(ctx: CertificateCheckContext): Promise<CheckResult[]>;
}

export type Check = WebCheck | CertificateCheck;
