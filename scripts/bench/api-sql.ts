// The hand-written baselines of `npm run bench:api`: for each list page, ONE statement that builds the whole
// REST body as JSON text (bare-server.ts only writes it out). Each checks the caller's membership in the same
// statement, as the app does before answering, and reads counts and child rows for the page's rows only.
import { PAGE_SQL } from './page-sql.js';

/** ISO 8601 with milliseconds and Z, as JSON.stringify(Date) writes it (the columns are UTC TIMESTAMP(3)). */
export const iso = (column: string) => `to_char(${column}, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
/** The GraphQL global id (REST's nodeId): base64 of "<Type>:<uuid>". */
const nodeId = (type: string, column: string) => `encode(convert_to('${type}:' || ${column}, 'UTF8'), 'base64')`;

/**
 * The page envelope around `page` (the page's rows as `p`, numbered by `rn`) and `item` (a SELECT over `p`
 * giving one response object). $1 limit, $2 page number; `total` is the filtered count.
 */
function envelope(parts: { page: string; total: string; item: string }): string {
  return `
WITH page AS MATERIALIZED (${parts.page}),
total AS (${parts.total})
SELECT row_to_json(body)::text AS body
FROM (
  SELECT ('[' || coalesce((
           SELECT string_agg(row_to_json(item)::text, ',' ORDER BY p.rn)
           FROM page p CROSS JOIN LATERAL (${parts.item}) item
         ), '') || ']')::json AS data,
         t.total, $2::int AS page, $1::int AS "limit",
         $2::int < ceil(t.total / $1::numeric) AS "hasNextPage",
         ceil(t.total / $1::numeric)::int AS "pageCount"
  FROM total t
) body`;
}

const OFFSET = `LIMIT $1::int OFFSET ($2::int - 1) * $1::int`;
/** $3 workspace, $4 user: the caller is a member (the app's assertCan). */
const MEMBER = `EXISTS (SELECT 1 FROM workspace_member m WHERE m."workspaceId" = $3::uuid AND m."userId" = $4)`;

/**
 * GET /api/targets (createdAt DESC): with asset and open-finding counts per target, the latter from the product's
 * per-target counter, as the app reads it (counting finding_target rows instead got a plan that scans the whole
 * finding table once per target on a small database, flattering REST / bare).
 */
const TARGETS_SQL = envelope({
  page: `SELECT t.*, row_number() OVER (ORDER BY t."createdAt" DESC, t.id DESC) AS rn FROM target t
         WHERE t."workspaceId" = $3::uuid AND ${MEMBER} ORDER BY t."createdAt" DESC, t.id DESC ${OFFSET}`,
  total: `SELECT count(*)::int AS total FROM target WHERE "workspaceId" = $3::uuid AND ${MEMBER}`,
  item: `SELECT p.id, ${nodeId('Target', 'p.id')} AS "nodeId", p."workspaceId", p.value, p.type, ${iso('p."lastScannedAt"')} AS "lastScannedAt",
                p."createdById", ${iso('p."createdAt"')} AS "createdAt", ${iso('p."updatedAt"')} AS "updatedAt",
                (SELECT count(*) FROM asset_target a WHERE a."targetId" = p.id)::int AS "assetCount",
                coalesce((SELECT c.open FROM finding_target_count c WHERE c."targetId" = p.id), 0) AS "findingCount"`,
});

/** GET /api/assets?kind=host&enabled=true (lastSeenAt DESC): with their discovery provenance. $5 kind. */
const ASSET_FILTER = `"workspaceId" = $3::uuid AND kind = $5::"AssetKind" AND enabled AND ${MEMBER}`;
const ASSETS_SQL = envelope({
  page: `SELECT a.*, row_number() OVER (ORDER BY a."lastSeenAt" DESC, a.id DESC) AS rn FROM asset a
         WHERE ${ASSET_FILTER} ORDER BY a."lastSeenAt" DESC, a.id DESC ${OFFSET}`,
  total: `SELECT count(*)::int AS total FROM asset WHERE ${ASSET_FILTER}`,
  item: `SELECT p.id, ${nodeId('Asset', 'p.id')} AS "nodeId", p."workspaceId", p.kind, p.key, p.value, p.data, p.enabled,
                p."parentId", p."targetId", p."lastScanId", ${iso('p."firstSeenAt"')} AS "firstSeenAt", ${iso('p."lastSeenAt"')} AS "lastSeenAt",
                coalesce((SELECT json_agg(json_build_object('source', d.source, 'from', d."from", 'fromAssetId', d."fromAssetId", 'scanId', d."scanId",
                                                            'firstSeenAt', ${iso('d."firstSeenAt"')}, 'lastSeenAt', ${iso('d."lastSeenAt"')})
                                          ORDER BY d."firstSeenAt", d.source)
                          FROM asset_discovery d WHERE d."assetId" = p.id), '[]') AS discovery,
                p."references", p."dismissedAt" IS NOT NULL AS dismissed, ${iso('p."dismissedAt"')} AS "dismissedAt"`,
});

/** GET /api/vulnerabilities?severity=high&status=open (lastSeenAt DESC). $5 severity. */
const FINDING_FILTER = `"workspaceId" = $3::uuid AND status = 'open' AND severity = $5::"Severity" AND ${MEMBER}`;
const FINDINGS_SQL = envelope({
  page: `SELECT f.*, row_number() OVER (ORDER BY f."lastSeenAt" DESC, f.id DESC) AS rn FROM finding f
         WHERE ${FINDING_FILTER} ORDER BY f."lastSeenAt" DESC, f.id DESC ${OFFSET}`,
  total: `SELECT count(*)::int AS total FROM finding WHERE ${FINDING_FILTER}`,
  item: `SELECT p.id, ${nodeId('Finding', 'p.id')} AS "nodeId", p."workspaceId", p.fingerprint, p."checkId", p.source, p.name, p.severity,
                p.description, p.remediation, p.matcher, p.status, p.evidence, p.classification, p."assetId", p."targetId", p."lastScanId",
                p.occurrences, ${iso('p."firstSeenAt"')} AS "firstSeenAt", ${iso('p."lastSeenAt"')} AS "lastSeenAt", ${iso('p."fixedAt"')} AS "fixedAt",
                p."dismissReason", p."dismissComment", ${iso('p."dismissedAt"')} AS "dismissedAt", p."dismissedById", ${iso('p."updatedAt"')} AS "updatedAt"`,
});

/** GET /api/agents/conversations/{id}/messages (createdAt DESC): the caller's own conversation. $5 conversation. */
const MESSAGE_FILTER = `"conversationId" = $5::uuid AND ${MEMBER}
  AND EXISTS (SELECT 1 FROM conversation c WHERE c.id = $5::uuid AND c."workspaceId" = $3::uuid AND c."createdById" = $4)`;
const MESSAGES_SQL = envelope({
  page: `SELECT msg.*, row_number() OVER (ORDER BY msg."createdAt" DESC, msg.id DESC) AS rn FROM message msg
         WHERE ${MESSAGE_FILTER} ORDER BY msg."createdAt" DESC, msg.id DESC ${OFFSET}`,
  total: `SELECT count(*)::int AS total FROM message WHERE ${MESSAGE_FILTER}`,
  item: `SELECT p.id, p."conversationId", p.role, p.content, p."messageType", ${iso('p."createdAt"')} AS "createdAt", p.metadata, p.parts,
                coalesce((SELECT json_agg(json_build_object('toolCallId', tc."toolCallId", 'toolName', tc."toolName", 'args', tc.args,
                                                            'result', tc.result, 'isError', tc."isError") ORDER BY tc.position)
                          FROM tool_call tc WHERE tc."messageId" = p.id), '[]') AS "toolCalls"`,
});

export interface BareQuery {
  text: string;
  values: unknown[];
}

/** The statements bare-server.ts serves at /sql/<name>. */
export function bareQueries(ids: { userId: string; workspaceId: string; conversationId: string; limit: number }): Record<string, BareQuery> {
  const { userId, workspaceId, conversationId, limit } = ids;
  return {
    workspaces: { text: PAGE_SQL, values: [userId, limit, 1] },
    targets: { text: TARGETS_SQL, values: [limit, 1, workspaceId, userId] },
    assets: { text: ASSETS_SQL, values: [limit, 1, workspaceId, userId, 'host'] },
    vulnerabilities: { text: FINDINGS_SQL, values: [limit, 1, workspaceId, userId, 'high'] },
    messages: { text: MESSAGES_SQL, values: [limit, 1, workspaceId, userId, conversationId] },
  };
}
