import { Prisma } from '../../db.js';
import { utcFromJson, type PreparedRead } from '../../db/prepared-read.js';
import { pageOfIds } from '../../db/page-of-ids.js';
import { findWorkspaceWithPage, type WorkspaceRow } from '../workspaces/page-sql.js';
import type { ServedFindingPage } from './connection-page.js';
import { findingCounterTotal, findingFilterSql } from './page-sql.js';

/**
 * GraphQL's `workspace(id) { findings(...) }` in one prepared statement, where connection-page.ts says it
 * serves the query: the workspace's row when the viewer is a member, the finding page (latest sighting first)
 * and the total as the query asked it. The answer has Prisma's shape (the counter rows' total as one row:
 * findingListTotalOf sums them), so the Prisma plugin resolves the fields from it as from its own rows.
 */
type FindingRow = Prisma.FindingGetPayload<object>;

export type WorkspaceWithFindingPage = WorkspaceRow & {
  findings: FindingRow[];
  findingCounts?: Array<{ count: number }>;
  _count?: { findings: number };
};

type TimestampColumn = 'firstSeenAt' | 'lastSeenAt' | 'fixedAt' | 'dismissedAt' | 'updatedAt';
type RawFinding = Omit<FindingRow, TimestampColumn> & { [K in TimestampColumn]: FindingRow[K] extends Date ? string : string | null };

export async function findWorkspaceWithFindingPage(
  read: PreparedRead,
  query: ServedFindingPage & { viewerId: string; workspaceId: string },
): Promise<WorkspaceWithFindingPage | null> {
  // The membership check gates the whole answer (no row, no page), so the page's filters need not repeat it.
  const filters = [Prisma.sql`f."workspaceId" = ${query.workspaceId}::uuid`, ...findingFilterSql(query)];
  const page = pageOfIds({
    from: Prisma.sql`"finding" f`,
    id: Prisma.sql`f.id`,
    sort: Prisma.sql`f."lastSeenAt"`,
    where: filters,
    direction: 'DESC',
    afterId: query.after,
    limit: query.limit,
    offset: 0,
  });
  // Counted on its own, so an empty page (past the end, or after the last cursor) has it too.
  const total = query.total
    ? (findingCounterTotal(query.workspaceId, query) ?? Prisma.sql`(SELECT count(*) FROM "finding" f WHERE ${Prisma.join(filters, ' AND ')})`)
    : Prisma.sql`NULL`;
  const row = await findWorkspaceWithPage<RawFinding>(read, {
    workspaceId: query.workspaceId,
    viewerId: query.viewerId,
    page,
    total,
    items: Prisma.sql`
             SELECT json_agg(json_build_object(
                      'id', f.id, 'workspaceId', f."workspaceId", 'fingerprint', f."fingerprint", 'checkId', f."checkId", 'source', f."source",
                      'name', f."name", 'severity', f."severity", 'description', f."description", 'remediation', f."remediation",
                      'matcher', f."matcher", 'status', f."status", 'evidence', f."evidence", 'classification', f."classification",
                      'assetId', f."assetId", 'targetId', f."targetId", 'lastScanId', f."lastScanId", 'occurrences', f."occurrences",
                      'firstSeenAt', f."firstSeenAt", 'lastSeenAt', f."lastSeenAt", 'fixedAt', f."fixedAt", 'dismissReason', f."dismissReason",
                      'dismissComment', f."dismissComment", 'dismissedAt', f."dismissedAt", 'dismissedById', f."dismissedById",
                      'updatedAt', f."updatedAt")
                    ORDER BY f."lastSeenAt" DESC, f.id DESC)
             FROM page JOIN "finding" f ON f.id = page.id`,
  });
  if (!row) return null;
  const { items: findings, total: count, ...workspace } = row;
  const answer: WorkspaceWithFindingPage = { ...workspace, findings: findings.map(findingOf) };
  if (query.total === 'counters') answer.findingCounts = [{ count: count ?? 0 }];
  if (query.total === 'count') answer._count = { findings: count ?? 0 };
  return answer;
}

const timestamp = (text: string | null) => (text === null ? null : utcFromJson(text));

/** Field by field (see targets/workspace-page-sql.ts): the JSON's timestamps are UTC text. */
function findingOf(raw: RawFinding): FindingRow {
  return {
    id: raw.id,
    workspaceId: raw.workspaceId,
    fingerprint: raw.fingerprint,
    checkId: raw.checkId,
    source: raw.source,
    name: raw.name,
    severity: raw.severity,
    description: raw.description,
    remediation: raw.remediation,
    matcher: raw.matcher,
    status: raw.status,
    evidence: raw.evidence,
    classification: raw.classification,
    assetId: raw.assetId,
    targetId: raw.targetId,
    lastScanId: raw.lastScanId,
    occurrences: raw.occurrences,
    firstSeenAt: utcFromJson(raw.firstSeenAt),
    lastSeenAt: utcFromJson(raw.lastSeenAt),
    fixedAt: timestamp(raw.fixedAt),
    dismissReason: raw.dismissReason,
    dismissComment: raw.dismissComment,
    dismissedAt: timestamp(raw.dismissedAt),
    dismissedById: raw.dismissedById,
    updatedAt: utcFromJson(raw.updatedAt),
  };
}
