-- DropIndex
DROP INDEX "tool_key_toolId_idx";

-- Instance-wide keys of built-in tools could write into any workspace and cannot be tied to one after the
-- fact: they are removed (their tools are unchanged). Owners make a key per workspace by rotating there.
DELETE FROM "tool_key" WHERE "workspaceId" IS NULL;

-- AlterTable
ALTER TABLE "tool_key" ALTER COLUMN "workspaceId" SET NOT NULL;

-- CreateTable
CREATE TABLE "asset_target" (
    "assetId" UUID NOT NULL,
    "targetId" UUID NOT NULL,
    "firstSeenAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastSeenAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "asset_target_pkey" PRIMARY KEY ("assetId","targetId")
);

-- CreateTable
CREATE TABLE "finding_target" (
    "findingId" UUID NOT NULL,
    "targetId" UUID NOT NULL,
    "firstSeenAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastSeenAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "finding_target_pkey" PRIMARY KEY ("findingId","targetId")
);

-- CreateIndex
CREATE INDEX "asset_target_targetId_idx" ON "asset_target"("targetId");

-- CreateIndex
CREATE INDEX "finding_target_targetId_idx" ON "finding_target"("targetId");

-- CreateIndex
CREATE INDEX "tool_key_toolId_workspaceId_idx" ON "tool_key"("toolId", "workspaceId");

-- AddForeignKey
ALTER TABLE "asset_target" ADD CONSTRAINT "asset_target_assetId_fkey" FOREIGN KEY ("assetId") REFERENCES "asset"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "asset_target" ADD CONSTRAINT "asset_target_targetId_fkey" FOREIGN KEY ("targetId") REFERENCES "target"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "finding_target" ADD CONSTRAINT "finding_target_findingId_fkey" FOREIGN KEY ("findingId") REFERENCES "finding"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "finding_target" ADD CONSTRAINT "finding_target_targetId_fkey" FOREIGN KEY ("targetId") REFERENCES "target"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Backfill: what a target's scan saw so far belongs to that target.
INSERT INTO "asset_target" ("assetId", "targetId", "firstSeenAt", "lastSeenAt")
SELECT "id", "targetId", "firstSeenAt", "lastSeenAt" FROM "asset" WHERE "targetId" IS NOT NULL
ON CONFLICT DO NOTHING;

INSERT INTO "finding_target" ("findingId", "targetId", "firstSeenAt", "lastSeenAt")
SELECT "id", "targetId", "firstSeenAt", "lastSeenAt" FROM "finding" WHERE "targetId" IS NOT NULL
ON CONFLICT DO NOTHING;
