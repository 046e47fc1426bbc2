import type { ServiceContext } from '../../context.js';
import type { ScanOptions, ScanOptionsInput } from './schemas.js';
import { startScan } from './service.js';

/** The probing steps a newly enabled host goes through (discovery already found it). */
const CANDIDATE_STEPS = ['dns', 'ports', 'http', 'tls', 'checks'] as const;

/**
 * A member enabled discovered hosts that were waiting as candidates: each target they were found through gets
 * one scan of just those hosts. Hosts without a target (imported by a tool) have nothing to scan them through.
 */
export async function scanEnabledHosts(ctx: ServiceContext, workspaceId: string, hosts: Array<{ name: string; targetId: string | null }>): Promise<void> {
  const byTarget = new Map<string, Set<string>>();
  for (const { name, targetId } of hosts) {
    if (!targetId) continue;
    const names = byTarget.get(targetId) ?? new Set<string>();
    names.add(name);
    byTarget.set(targetId, names);
  }
  for (const [targetId, names] of byTarget) {
    try {
      const options = { ...(await profileOfLastScan(ctx, workspaceId, targetId)), steps: [...CANDIDATE_STEPS] };
      await startScan(ctx, workspaceId, { targetId, options }, { hosts: [...names].sort() });
    } catch (error) {
      // The hosts are enabled either way (that is what the member asked); a scan that cannot start now (its tools are
      // switched off, the target is gone) leaves them for the next scan of the target.
      ctx.deps.log.warn({ workspaceId, targetId, err: error }, 'could not start the scan of newly enabled hosts');
    }
  }
}

/** The ports, timeouts and rates of the target's latest scan (the one that found the candidates, usually): the new hosts get the same profile. */
async function profileOfLastScan(ctx: ServiceContext, workspaceId: string, targetId: string): Promise<ScanOptionsInput> {
  const last = await ctx.deps.prisma.scan.findFirst({ where: { workspaceId, targetId }, orderBy: { createdAt: 'desc' }, select: { options: true } });
  if (!last) return {};
  const { ports, timeoutMs, portConcurrency, requestsPerSecond, maxRedirects, maxRequestsPerTemplatePerEndpoint } =
    last.options as unknown as Partial<ScanOptions>;
  return Object.fromEntries(
    Object.entries({ ports, timeoutMs, portConcurrency, requestsPerSecond, maxRedirects, maxRequestsPerTemplatePerEndpoint }).filter(
      ([, value]) => value !== undefined,
    ),
  );
}
