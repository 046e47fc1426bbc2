-- AlterTable
ALTER TABLE "asset" ADD COLUMN     "dismissedAt" TIMESTAMP(3),
ADD COLUMN     "references" TEXT[] DEFAULT ARRAY[]::TEXT[];

-- CreateTable
CREATE TABLE "asset_discovery" (
    "id" UUID NOT NULL,
    "assetId" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "source" TEXT NOT NULL,
    "from" TEXT,
    "fromAssetId" UUID,
    "scanId" UUID,
    "firstSeenAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastSeenAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "asset_discovery_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "workspace_discovery_settings" (
    "workspaceId" UUID NOT NULL,
    "rootDomains" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "exclusions" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "wordlist" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "workspace_discovery_settings_pkey" PRIMARY KEY ("workspaceId")
);

-- CreateIndex
CREATE INDEX "asset_discovery_workspaceId_source_idx" ON "asset_discovery"("workspaceId", "source");

-- CreateIndex
CREATE INDEX "asset_discovery_fromAssetId_idx" ON "asset_discovery"("fromAssetId");

-- CreateIndex
CREATE INDEX "asset_discovery_scanId_idx" ON "asset_discovery"("scanId");

-- CreateIndex
CREATE UNIQUE INDEX "asset_discovery_assetId_source_key" ON "asset_discovery"("assetId", "source");

-- AddForeignKey
ALTER TABLE "asset_discovery" ADD CONSTRAINT "asset_discovery_assetId_fkey" FOREIGN KEY ("assetId") REFERENCES "asset"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "asset_discovery" ADD CONSTRAINT "asset_discovery_fromAssetId_fkey" FOREIGN KEY ("fromAssetId") REFERENCES "asset"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "asset_discovery" ADD CONSTRAINT "asset_discovery_scanId_fkey" FOREIGN KEY ("scanId") REFERENCES "scan"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "workspace_discovery_settings" ADD CONSTRAINT "workspace_discovery_settings_workspaceId_fkey" FOREIGN KEY ("workspaceId") REFERENCES "workspace"("id") ON DELETE CASCADE ON UPDATE CASCADE;
