import type { ServiceContext } from '../../context.js';

/** Published after the write commits; subscribers re-read through the service layer. */
export async function publishWorkspaceEvent(ctx: ServiceContext, workspaceId: string, type: string, entityId: string): Promise<void> {
  ctx.deps.pubsub.publish('workspace:event', workspaceId, { type, workspaceId, entityId, at: new Date().toISOString() });
}
