/**
 * Members decide about the inventory: enable a candidate (it gets scanned), disable an asset, or dismiss one
 * ("not ours": disabled, and discovery never offers it as new again, since its row stays).
 */
import type { ServiceContext } from '../../context.js';
import { assertCan, isUuid, requireViewer, visibleWorkspacesWhere, workspaceRole } from '../../auth/authz.js';
import { validate } from '../../validate.js';
import { publishWorkspaceEvent } from '../workspaces/events.js';
import { scanEnabledHosts } from '../scans/candidates.js';
import { updateAssetsInput, type UpdateAssetsInput } from './schemas.js';

export interface AssetChange {
  enabled?: boolean;
  dismissed?: boolean;
}

export interface BulkAssetUpdate {
  /** Assets of the workspace named (each is now in the state asked for, changed or already so). */
  updated: number;
  /** Ids that are not assets of the workspace, as sent: nothing was done to them. */
  notFound: string[];
}

interface AssetState {
  enabled: boolean;
  dismissedAt: Date | null;
}

/** The state an asset ends in: dismissing disables; enabling takes a dismissal back. */
function nextState(row: AssetState, change: AssetChange): { enabled: boolean; dismissed: boolean } {
  const dismissed = change.dismissed ?? (change.enabled === true ? false : row.dismissedAt !== null);
  const enabled = dismissed ? false : (change.enabled ?? row.enabled);
  return { enabled, dismissed };
}

/**
 * Applies one change to assets of one workspace (validated by the caller). Ids of other workspaces, or of
 * nothing, are reported in notFound and never touched. Hosts that go from disabled to enabled get a scan
 * (scanEnabledHosts); every asset that changed publishes `asset.updated`.
 */
export async function updateAssetsIn(ctx: ServiceContext, workspaceId: string, ids: readonly string[], change: AssetChange): Promise<BulkAssetUpdate> {
  await assertCan(ctx, 'target:write', { workspaceId });
  const sentById = firstSentById(ids);
  const wanted = [...sentById.keys()].filter(isUuid);
  const now = new Date();
  const { found, changed, newlyEnabled } = await ctx.deps.prisma.$transaction(async (tx) => {
    const rows = await tx.asset.findMany({ where: { id: { in: wanted }, workspaceId }, select: { id: true, enabled: true, dismissedAt: true } });
    const changed = rows
      .filter((row) => {
        const next = nextState(row, change);
        return next.enabled !== row.enabled || next.dismissed !== (row.dismissedAt !== null);
      })
      .map((row) => row.id);
    if (!changed.length) return { found: rows, changed, newlyEnabled: [] };
    // The enabled=false condition sits in the UPDATE itself: of two concurrent requests only one schedules the scan.
    const newlyEnabled =
      change.enabled === true
        ? await tx.asset.updateManyAndReturn({
            where: { id: { in: changed }, workspaceId, enabled: false },
            data: { enabled: true, dismissedAt: null },
            select: { id: true, kind: true, value: true, targetId: true },
          })
        : [];
    await tx.asset.updateMany({ where: { id: { in: changed }, workspaceId }, data: changeData(change, now) });
    return { found: rows, changed, newlyEnabled };
  });
  for (const id of changed) await publishWorkspaceEvent(ctx, workspaceId, 'asset.updated', id);
  const hosts = newlyEnabled.filter((row) => row.kind === 'host').map((row) => ({ name: row.value, targetId: row.targetId }));
  if (hosts.length) await scanEnabledHosts(ctx, workspaceId, hosts);
  const foundIds = new Set(found.map((row) => row.id));
  return { updated: found.length, notFound: [...sentById].filter(([id]) => !foundIds.has(id)).map(([, sent]) => sent) };
}

/** UUIDs compare case-insensitively: one entry per id, remembered as first sent. */
function firstSentById(ids: readonly string[]): Map<string, string> {
  const sentById = new Map<string, string>();
  for (const id of ids) if (!sentById.has(id.toLowerCase())) sentById.set(id.toLowerCase(), id);
  return sentById;
}

function changeData(change: AssetChange, now: Date): { enabled?: boolean; dismissedAt?: Date | null } {
  if (change.dismissed === true) return { enabled: false, dismissedAt: now };
  if (change.enabled === true) return { enabled: true, dismissedAt: null };
  return { ...(change.enabled === false ? { enabled: false } : {}), ...(change.dismissed === false ? { dismissedAt: null } : {}) };
}

/** PATCH /api/assets: one change to many assets of the workspace of X-Workspace-Id. */
export async function updateAssets(ctx: ServiceContext, workspaceId: string, input: UpdateAssetsInput): Promise<BulkAssetUpdate> {
  const { ids, ...change } = validate(updateAssetsInput, input);
  return updateAssetsIn(ctx, workspaceId, ids, change);
}

/**
 * For GraphQL, where assets are named by id alone: each id's workspace is found among the caller's (a
 * workspace API key sees its own only), and the change applies per workspace. Ids that are not visible
 * assets are notFound, exactly like ids of nothing.
 */
export async function updateVisibleAssets(ctx: ServiceContext, input: UpdateAssetsInput): Promise<BulkAssetUpdate> {
  const viewer = requireViewer(ctx);
  const { ids, ...change } = validate(updateAssetsInput, input);
  const sentById = firstSentById(ids);
  const rows = await ctx.deps.prisma.asset.findMany({
    where: { id: { in: [...sentById.keys()] }, workspace: visibleWorkspacesWhere(viewer) },
    select: { id: true, workspaceId: true },
  });
  const idsByWorkspace = new Map<string, string[]>();
  for (const row of rows) idsByWorkspace.set(row.workspaceId, [...(idsByWorkspace.get(row.workspaceId) ?? []), row.id]);
  let updated = 0;
  const done = new Set<string>();
  for (const [workspaceId, workspaceIds] of idsByWorkspace) {
    if (!(await workspaceRole(ctx, workspaceId))) continue;
    const result = await updateAssetsIn(ctx, workspaceId, workspaceIds, change);
    updated += result.updated;
    // Deleted since the lookup: as not found as an id of nothing.
    const gone = new Set(result.notFound);
    for (const id of workspaceIds) if (!gone.has(id)) done.add(id);
  }
  return { updated, notFound: [...sentById].filter(([id]) => !done.has(id)).map(([, sent]) => sent) };
}
