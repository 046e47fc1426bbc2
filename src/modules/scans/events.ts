import type { AppDeps } from '../../context.js';

type ScanRow = { id: string; workspaceId: string; status: string; stepsDone: number; stepsTotal: number };

/** After a scan row changed (and committed): its own topic for scanUpdated, and the workspace feed. */
export function publishScanUpdate(deps: Pick<AppDeps, 'pubsub'>, scan: ScanRow): void {
  deps.pubsub.publish('scan:updated', scan.id, {
    scanId: scan.id,
    workspaceId: scan.workspaceId,
    status: scan.status,
    stepsDone: scan.stepsDone,
    stepsTotal: scan.stepsTotal,
  });
  deps.pubsub.publish('workspace:event', scan.workspaceId, {
    type: 'scan.updated',
    workspaceId: scan.workspaceId,
    entityId: scan.id,
    at: new Date().toISOString(),
  });
}

export function publishWorkspaceEvents(deps: Pick<AppDeps, 'pubsub'>, workspaceId: string, type: string, ids: readonly string[]): void {
  const at = new Date().toISOString();
  for (const entityId of ids) deps.pubsub.publish('workspace:event', workspaceId, { type, workspaceId, entityId, at });
}
