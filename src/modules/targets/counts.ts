import type { PrismaClient } from '../../db.js';
import type { TargetCounts } from './response.js';

/**
 * Asset and open-finding counts of the given targets: two grouped counts limited to those ids (index on
 * targetId), whatever the size of the tables. Callers have already checked the targets are visible.
 */
export async function countsOfTargets(prisma: PrismaClient, targetIds: readonly string[]): Promise<TargetCounts[]> {
  if (!targetIds.length) return [];
  const ids = [...targetIds];
  const [assets, findings] = await Promise.all([
    prisma.asset.groupBy({ by: ['targetId'], where: { targetId: { in: ids } }, _count: { _all: true } }),
    prisma.finding.groupBy({ by: ['targetId'], where: { targetId: { in: ids }, status: 'open' }, _count: { _all: true } }),
  ]);
  const assetCount = new Map(assets.map((row) => [row.targetId, row._count._all]));
  const findingCount = new Map(findings.map((row) => [row.targetId, row._count._all]));
  return ids.map((id) => ({ assetCount: assetCount.get(id) ?? 0, findingCount: findingCount.get(id) ?? 0 }));
}
