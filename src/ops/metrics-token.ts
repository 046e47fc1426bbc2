import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Whether a request may read /metrics: anyone when METRICS_TOKEN is unset, otherwise only with
 * `Authorization: Bearer <METRICS_TOKEN>`. Compared as digests in constant time, so neither the
 * token's length nor its prefix can be learnt from response times.
 */
export function metricsAuthorized(token: string | undefined, authorization: string | undefined): boolean {
  if (!token) return true;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (!match) return false;
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(match[1]!), digest(token));
}
