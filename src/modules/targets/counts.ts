import type { PrismaClient } from '../../db.js';
import { assetCountsOfTargets } from '../assets/service.js';
import { openFindingCountsOfTargets } from '../vulnerabilities/service.js';
import type { TargetCounts } from './response.js';

/**
 * Asset and open-finding counts of the given targets, from the assets and findings seen through each (an
 * asset or finding seen through overlapping targets counts for each): two grouped counts limited to those
 * ids, whatever the size of the tables. Callers have already checked the targets are visible.
 */
export async function countsOfTargets(prisma: PrismaClient, targetIds: readonly string[]): Promise<TargetCounts[]> {
  if (!targetIds.length) return [];
  const [assets, findings] = await Promise.all([assetCountsOfTargets(prisma, targetIds), openFindingCountsOfTargets(prisma, targetIds)]);
  return targetIds.map((_id, index) => ({ assetCount: assets[index]!, findingCount: findings[index]! }));
}
