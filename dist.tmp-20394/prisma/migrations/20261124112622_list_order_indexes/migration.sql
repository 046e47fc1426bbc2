-- CreateIndex
CREATE INDEX "asset_workspaceId_lastSeenAt_id_idx" ON "asset"("workspaceId", "lastSeenAt", "id");

-- CreateIndex
CREATE INDEX "finding_workspaceId_lastSeenAt_id_idx" ON "finding"("workspaceId", "lastSeenAt", "id");
