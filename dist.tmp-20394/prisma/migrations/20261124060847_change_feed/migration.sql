-- CreateTable
CREATE TABLE "change_event" (
    "id" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "type" TEXT NOT NULL,
    "at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "assetId" UUID,
    "findingId" UUID,
    "scanId" UUID,
    "targetId" UUID,
    "data" JSONB NOT NULL,

    CONSTRAINT "change_event_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "change_event_workspaceId_at_id_idx" ON "change_event"("workspaceId", "at", "id");

-- CreateIndex
CREATE INDEX "change_event_workspaceId_type_at_idx" ON "change_event"("workspaceId", "type", "at");

-- CreateIndex
CREATE INDEX "change_event_assetId_type_at_idx" ON "change_event"("assetId", "type", "at");

-- CreateIndex
CREATE INDEX "change_event_findingId_at_idx" ON "change_event"("findingId", "at");

-- CreateIndex
CREATE INDEX "change_event_targetId_at_idx" ON "change_event"("targetId", "at");

-- CreateIndex
CREATE INDEX "change_event_scanId_type_idx" ON "change_event"("scanId", "type");

-- AddForeignKey
ALTER TABLE "change_event" ADD CONSTRAINT "change_event_workspaceId_fkey" FOREIGN KEY ("workspaceId") REFERENCES "workspace"("id") ON DELETE CASCADE ON UPDATE CASCADE;
