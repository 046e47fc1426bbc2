// The hand-written SQL behind bare-server.ts /sql/workspaces: the whole REST workspace page as JSON text, in one statement.

/** ISO 8601 with milliseconds and Z, as JSON.stringify(Date) writes it (the columns are UTC TIMESTAMP(3)). */
const iso = (column: string) => `to_char(${column}, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The whole page in one statement. row_to_json writes compact JSON (json_build_object would add spaces), and
 * arrays are joined with string_agg for the same reason, so the body has the bytes the REST facade sends.
 * Keys come out in select-list order, which is the REST schema's order.
 *
 * The page is the caller's memberships joined to their workspaces, newest first, LIMIT/OFFSET (the order the
 * service uses: createdAt, then id); members (with their users and count) and targets are read for those rows only. The total is
 * the caller's membership count: (workspaceId, userId) is unique and every membership has its workspace, so it
 * equals the number of visible workspaces without touching them. (A window count(*) OVER () over the joined
 * rows cost more than everything else together.)
 *   $1 user id, $2 limit, $3 page
 */
export const PAGE_SQL = `
WITH page AS MATERIALIZED (
  SELECT w.id, w.name, w.description, w."createdAt", w."updatedAt", w."archivedAt", w."isAssetsDiscovery",
         w."isAutoEnableAssetAfterDiscovered", w."ownerId", m.role
  FROM workspace_member m
  JOIN workspace w ON w.id = m."workspaceId"
  WHERE m."userId" = $1
  ORDER BY w."createdAt" DESC, w.id DESC
  LIMIT $2::int OFFSET ($3::int - 1) * $2::int
),
total AS (
  SELECT count(*)::int AS total FROM workspace_member WHERE "userId" = $1
)
SELECT row_to_json(body)::text AS body
FROM (
  SELECT ('[' || coalesce((
           SELECT string_agg(row_to_json(item)::text, ',' ORDER BY p."createdAt" DESC, p.id DESC)
           FROM page p
           CROSS JOIN LATERAL (
             SELECT count(*)::int AS n,
                    ('[' || coalesce(string_agg(row_to_json(member)::text, ',' ORDER BY wm."createdAt", wm.id), '') || ']')::json AS json
             FROM workspace_member wm
             JOIN "user" u ON u.id = wm."userId"
             CROSS JOIN LATERAL (
               SELECT wm.id, wm.role,
                      (SELECT row_to_json(usr) FROM (SELECT u.id, u.name, u.image) usr) AS "user",
                      ${iso('wm."createdAt"')} AS "createdAt",
                      ${iso('wm."updatedAt"')} AS "updatedAt"
             ) member
             WHERE wm."workspaceId" = p.id
           ) members
           CROSS JOIN LATERAL (
             SELECT p.id, encode(convert_to('Workspace:' || p.id, 'UTF8'), 'base64') AS "nodeId", p.name, p.description,
                    ${iso('p."createdAt"')} AS "createdAt",
                    ${iso('p."updatedAt"')} AS "updatedAt",
                    ${iso('p."archivedAt"')} AS "archivedAt",
                    p."isAssetsDiscovery", p."isAutoEnableAssetAfterDiscovered", p."ownerId",
                    (SELECT count(*) FROM target t WHERE t."workspaceId" = p.id)::int AS "targetCount",
                    members.n AS "memberCount",
                    p.role,
                    members.json AS "workspaceMembers"
           ) item
         ), '') || ']')::json AS data,
         t.total,
         $3::int AS page,
         $2::int AS "limit",
         $3::int < ceil(t.total / $2::numeric) AS "hasNextPage",
         ceil(t.total / $2::numeric)::int AS "pageCount"
  FROM total t
) body`;
