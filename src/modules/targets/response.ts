import type { Prisma } from '../../db.js';
import type { TargetType } from './normalize.js';

/** Counts come with the row in the same query (Prisma `_count`); findingCount counts open findings. */
export const targetResponseInclude = {
  _count: { select: { assets: true, findings: { where: { status: 'open' } } } },
} satisfies Prisma.TargetInclude;

export type TargetRow = Prisma.TargetGetPayload<{ include: typeof targetResponseInclude }>;

/** Every column of the row (so GraphQL can resolve a Target from it) plus the two counts. */
export interface TargetResponse {
  id: string;
  workspaceId: string;
  value: string;
  type: TargetType;
  lastScannedAt: Date | null;
  createdById: string | null;
  createdAt: Date;
  updatedAt: Date;
  assetCount: number;
  findingCount: number;
}

export function toTargetResponse(row: TargetRow): TargetResponse {
  return {
    id: row.id,
    workspaceId: row.workspaceId,
    value: row.value,
    type: row.type,
    lastScannedAt: row.lastScannedAt,
    createdById: row.createdById,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    assetCount: row._count.assets,
    findingCount: row._count.findings,
  };
}
