import type { Prisma } from '../../db.js';
import type { TargetType } from './normalize.js';
import { nodeIdOf } from '../../graphql/ids.js';

/**
 * Counts are read separately for the rows at hand (targets/counts.ts; the REST page counts them in its own
 * statement, page-sql.ts): a relation `_count` here would join a count over the whole asset and finding tables,
 * every tenant's rows, on every list.
 */
export const targetResponseInclude = {} satisfies Prisma.TargetInclude;

export type TargetRow = Prisma.TargetGetPayload<{ include: typeof targetResponseInclude }>;

export interface TargetCounts {
  assetCount: number;
  findingCount: number;
}

/** Every column of the row (so GraphQL can resolve a Target from it) plus the two counts. */
export interface TargetResponse {
  id: string;
  /** The GraphQL global id. */
  nodeId: string;
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

export function toTargetResponse(row: TargetRow, counts: TargetCounts): TargetResponse {
  return {
    id: row.id,
    nodeId: nodeIdOf('Target', row.id),
    workspaceId: row.workspaceId,
    value: row.value,
    type: row.type,
    lastScannedAt: row.lastScannedAt,
    createdById: row.createdById,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    assetCount: counts.assetCount,
    findingCount: counts.findingCount,
  };
}
