/**
 * Built-in checks and the runner that applies checks to observations.
 *
 * EXTENSION SEAM (template engine): checks come from `CheckSource`s. The built-in ones are a
 * source; a template engine (e.g. src/scanner/nuclei/) becomes another by compiling each template
 * into a `Check` — `appliesTo: 'web'`, a stable `id` (the template id), metadata from the template
 * header, and a `run(ctx)` that sends the template's requests with `ctx.request` / `ctx.fetchPath`
 * (scope-guarded, rate-limited, bounded) and returns one `CheckResult` per matcher hit, with
 * `matcher` set to the matcher name so fingerprints stay stable. Then pass
 * `[...BUILTIN_CHECKS, ...await templateSource.load()]` as `checks` to `runChecks` (or `deps.checks`
 * of `runStep`). Nothing in the runner or the observation types needs to change; set `source` on
 * each compiled check (e.g. 'nuclei') so findings record where they came from.
 */
import { certificateAssetKey, webAssetKey } from '../asset-keys.js';
import { httpRequest } from '../http-request.js';
import type { HostRateLimiter } from '../rate-limit.js';
import { isScopeError, type ScopeGuard } from '../scope.js';
import type { AssetRef, CertificateObservation, FindingObservation, WebObservation } from '../types.js';
import type { CertificateCheckContext, Check, CheckContextBase, CheckResult, WebCheckContext } from './check.js';
import { httpDirectoryListing } from './http-directory-listing.js';
import { httpExposedGit } from './http-exposed-git.js';
import { httpMissingSecurityHeaders } from './http-missing-security-headers.js';
import { httpServerVersionDisclosure } from './http-server-version-disclosure.js';
import { tlsExpiredCertificate } from './tls-expired-certificate.js';
import { tlsSelfSignedCertificate } from './tls-self-signed-certificate.js';

export type * from './check.js';
export { missingSecurityHeaders } from './http-missing-security-headers.js';

export const BUILTIN_CHECKS: readonly Check[] = [
  tlsExpiredCertificate,
  tlsSelfSignedCertificate,
  httpMissingSecurityHeaders,
  httpServerVersionDisclosure,
  httpExposedGit,
  httpDirectoryListing,
];

/** Where checks come from; the built-ins are one source, a template engine would be another. */
export interface CheckSource {
  /** The source's name; checks it produces carry it as `source`, which findings record. */
  readonly name: string;
  load(): Promise<readonly Check[]>;
}

export const builtinCheckSource: CheckSource = {
  name: 'builtin',
  load: async () => BUILTIN_CHECKS,
};

export interface RunChecksInput {
  web?: readonly WebObservation[];
  certificates?: readonly CertificateObservation[];
}

export interface RunChecksDeps {
  guard: ScopeGuard;
  limiter?: HostRateLimiter;
  /** Per request a check makes. */
  timeoutMs?: number;
  /** Defaults to BUILTIN_CHECKS. */
  checks?: readonly Check[];
  /** Only run these check ids. */
  checkIds?: readonly string[];
  /** Check/target pairs run at once (the limiter still bounds each host). */
  concurrency?: number;
  now?: Date;
}

/** A check that could not run to the end; other checks still report. */
export interface CheckError {
  checkId: string;
  assetKey: string;
  code: string;
  message: string;
}

export interface RunChecksResult {
  findings: FindingObservation[];
  errors: CheckError[];
}

export async function runChecks(input: RunChecksInput, deps: RunChecksDeps): Promise<RunChecksResult> {
  const checks = (deps.checks ?? BUILTIN_CHECKS).filter((check) => !deps.checkIds || deps.checkIds.includes(check.id));
  const base: Omit<CheckContextBase, 'request'> = {
    guard: deps.guard,
    limiter: deps.limiter,
    timeoutMs: deps.timeoutMs ?? 10_000,
    now: deps.now ?? new Date(),
  };
  const request: CheckContextBase['request'] = (options) => httpRequest({ timeoutMs: base.timeoutMs, ...options, guard: deps.guard, limiter: deps.limiter });

  const jobs: Array<{ check: Check; asset: AssetRef; run: () => Promise<CheckResult[]> }> = [];
  for (const check of checks) {
    if (check.appliesTo === 'web') {
      for (const web of input.web ?? []) {
        const ctx: WebCheckContext = {
          ...base,
          request,
          web,
          fetchPath: (path, init) => request({ ...init, url: new URL(path, web.url).href, address: web.address }),
        };
        jobs.push({ check, asset: webAsset(web), run: () => check.run(ctx) });
      }
    } else {
      for (const certificate of input.certificates ?? []) {
        const ctx: CertificateCheckContext = { ...base, request, certificate };
        jobs.push({ check, asset: certificateAsset(certificate), run: () => check.run(ctx) });
      }
    }
  }

  const findings: FindingObservation[] = [];
  const errors: CheckError[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < jobs.length) {
      const job = jobs[next++];
      try {
        for (const result of await job.run()) findings.push(toFinding(job.check, job.asset, result));
      } catch (err) {
        const code = isScopeError(err) ? 'SCOPE_BLOCKED' : String((err as { code?: unknown }).code ?? 'CHECK_FAILED');
        errors.push({ checkId: job.check.id, assetKey: job.asset.key, code, message: (err as Error).message });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(deps.concurrency ?? 8, jobs.length) }, worker));
  // Deterministic order regardless of which request finished first.
  findings.sort((a, b) => a.fingerprintParts.join('\0').localeCompare(b.fingerprintParts.join('\0')));
  return { findings, errors };
}

function toFinding(check: Check, asset: AssetRef, result: CheckResult): FindingObservation {
  const matcher = result.matcher ?? check.id;
  return {
    kind: 'finding',
    checkId: check.id,
    name: check.name,
    severity: result.severity ?? check.severity,
    description: check.description,
    remediation: check.remediation,
    asset,
    matcher,
    fingerprintParts: [check.id, asset.key, matcher],
    evidence: result.evidence,
    source: check.source ?? 'builtin',
  };
}

function webAsset(web: WebObservation): AssetRef {
  return { type: 'web', key: webAssetKey(web), host: web.host, address: web.address, port: web.port };
}

function certificateAsset(certificate: CertificateObservation): AssetRef {
  return { type: 'certificate', key: certificateAssetKey(certificate), host: certificate.host, address: certificate.address, port: certificate.port };
}
