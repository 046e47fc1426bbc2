/**
 * Templates and tools both list the built-in rows (workspaceId null) plus a workspace's own, each with the
 * workspace's setting for it. This groups rows loaded for many workspaces at once (one query) per workspace;
 * workspaces the caller does not belong to get nothing.
 */
export function groupBuiltinAndOwn<Row extends { workspaceId: string | null; settings: { workspaceId: string; enabled: boolean }[] }, Out>(
  workspaceIds: readonly string[],
  rows: readonly Row[],
  visible: ReadonlySet<string>,
  toResponse: (row: Row, setting: { enabled: boolean } | undefined) => Out,
): Out[][] {
  return workspaceIds.map((workspaceId) =>
    visible.has(workspaceId)
      ? rows
          .filter((row) => row.workspaceId === null || row.workspaceId === workspaceId)
          .map((row) =>
            toResponse(
              row,
              row.settings.find((setting) => setting.workspaceId === workspaceId),
            ),
          )
      : [],
  );
}
