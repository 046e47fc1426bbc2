/**
 * Perimeter scan engine: a library that takes a step input and returns observations.
 *
 * It knows nothing about HTTP front doors, GraphQL, databases or queues. A job layer calls
 * `runStep(name, jsonInput, { guard, limiter })`, stores the returned observations (upserting on
 * the natural keys from asset-keys.ts) and schedules follow-up steps:
 *
 *   dns(host) → ports(address) → http(address, port) / tls(address, port) → checks(web, certificates)
 *
 * Every connection goes through the scope guard (scope.ts) and, when given, the per-host limiter.
 */
export * from './types.js';
export * from './asset-keys.js';
export {
  createScopeGuard,
  parseCidrList,
  isScopeError,
  ScopeError,
  LOOPBACK_NETWORKS,
  type ScopeGuard,
  type ScopeGuardOptions,
  type ScopeDecision,
} from './scope.js';
export { createHostRateLimiter, DEFAULT_RATE_LIMITS, type HostRateLimiter, type HostRateLimiterOptions } from './rate-limit.js';
export { expandCidr, MAX_CIDR_ADDRESSES } from './cidr.js';
export { resolveDns, normalizeHostName, DEFAULT_DNS_TIMEOUT_MS, type ResolveDnsOptions } from './dns.js';
export { scanPorts, parsePortSpec, identifyBanner, TOP_PORTS, MAX_PORTS_PER_SCAN, DEFAULT_PORT_SCAN, PortScanError, type ScanPortsOptions } from './ports.js';
export {
  httpRequest,
  HttpRequestError,
  SCANNER_USER_AGENT,
  DEFAULT_HTTP_TIMEOUT_MS,
  DEFAULT_MAX_BODY_BYTES,
  type HttpRequestOptions,
  type HttpResponse,
} from './http-request.js';
export { probeHttp, extractTitle, DEFAULT_HTTP_PROBE, type ProbeHttpOptions } from './http-probe.js';
export { detectTechnologies, type TechnologyInput } from './technologies.js';
export { inspectTls, TlsInspectionError, DEFAULT_TLS_TIMEOUT_MS, type InspectTlsOptions } from './tls.js';
export * from './checks/index.js';
export {
  runStep,
  isRetryableStepError,
  StepInputError,
  STEP_NAMES,
  stepInputSchemas,
  type StepName,
  type StepInputs,
  type StepObservations,
  type StepResult,
  type StepError,
  type StepDeps,
} from './steps.js';
export * from './discovery/index.js';
