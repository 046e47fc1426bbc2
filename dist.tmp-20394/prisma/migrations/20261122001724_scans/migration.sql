-- CreateEnum
CREATE TYPE "AssetKind" AS ENUM ('host', 'service', 'web', 'certificate');

-- CreateEnum
CREATE TYPE "ScanStatus" AS ENUM ('PENDING', 'IN_PROGRESS', 'COMPLETED', 'FAILED', 'CANCELLED');

-- CreateEnum
CREATE TYPE "Severity" AS ENUM ('info', 'low', 'medium', 'high', 'critical');

-- CreateEnum
CREATE TYPE "FindingStatus" AS ENUM ('open', 'fixed', 'dismissed');

-- CreateEnum
CREATE TYPE "DismissReason" AS ENUM ('false_positive', 'accepted_risk', 'not_applicable', 'mitigated', 'other');

-- CreateEnum
CREATE TYPE "FindingEventType" AS ENUM ('opened', 'seen', 'fixed', 'reopened', 'dismissed');

-- DropIndex
DROP INDEX "target_workspaceId_idx";

-- AlterTable
ALTER TABLE "target" ADD COLUMN     "createdById" TEXT,
ADD COLUMN     "lastScannedAt" TIMESTAMP(3);

-- CreateTable
CREATE TABLE "asset" (
    "id" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "kind" "AssetKind" NOT NULL,
    "key" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "parentId" UUID,
    "targetId" UUID,
    "lastScanId" UUID,
    "firstSeenAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastSeenAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "asset_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "scan" (
    "id" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "targetId" UUID NOT NULL,
    "status" "ScanStatus" NOT NULL DEFAULT 'PENDING',
    "options" JSONB NOT NULL,
    "stepsTotal" INTEGER NOT NULL,
    "stepsDone" INTEGER NOT NULL DEFAULT 0,
    "assetsFound" INTEGER NOT NULL DEFAULT 0,
    "findingsInfo" INTEGER NOT NULL DEFAULT 0,
    "findingsLow" INTEGER NOT NULL DEFAULT 0,
    "findingsMedium" INTEGER NOT NULL DEFAULT 0,
    "findingsHigh" INTEGER NOT NULL DEFAULT 0,
    "findingsCritical" INTEGER NOT NULL DEFAULT 0,
    "error" TEXT,
    "requestedById" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "startedAt" TIMESTAMP(3),
    "finishedAt" TIMESTAMP(3),
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "scan_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "scan_step" (
    "id" UUID NOT NULL,
    "scanId" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "status" "ScanStatus" NOT NULL DEFAULT 'PENDING',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "error" TEXT,
    "output" JSONB,
    "startedAt" TIMESTAMP(3),
    "finishedAt" TIMESTAMP(3),

    CONSTRAINT "scan_step_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "finding" (
    "id" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "checkId" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "severity" "Severity" NOT NULL,
    "description" TEXT NOT NULL,
    "remediation" TEXT NOT NULL,
    "matcher" TEXT NOT NULL,
    "status" "FindingStatus" NOT NULL DEFAULT 'open',
    "evidence" JSONB NOT NULL,
    "classification" JSONB,
    "assetId" UUID,
    "targetId" UUID,
    "lastScanId" UUID,
    "occurrences" INTEGER NOT NULL DEFAULT 1,
    "firstSeenAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastSeenAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "fixedAt" TIMESTAMP(3),
    "dismissReason" "DismissReason",
    "dismissComment" TEXT,
    "dismissedAt" TIMESTAMP(3),
    "dismissedById" TEXT,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "finding_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "finding_event" (
    "id" UUID NOT NULL,
    "findingId" UUID NOT NULL,
    "type" "FindingEventType" NOT NULL,
    "scanId" UUID,
    "actorId" TEXT,
    "comment" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "finding_event_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "asset_workspaceId_kind_lastSeenAt_idx" ON "asset"("workspaceId", "kind", "lastSeenAt");

-- CreateIndex
CREATE INDEX "asset_targetId_idx" ON "asset"("targetId");

-- CreateIndex
CREATE UNIQUE INDEX "asset_workspaceId_key_key" ON "asset"("workspaceId", "key");

-- CreateIndex
CREATE INDEX "scan_workspaceId_createdAt_idx" ON "scan"("workspaceId", "createdAt");

-- CreateIndex
CREATE INDEX "scan_targetId_createdAt_idx" ON "scan"("targetId", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "scan_step_scanId_position_key" ON "scan_step"("scanId", "position");

-- CreateIndex
CREATE INDEX "finding_workspaceId_status_severity_idx" ON "finding"("workspaceId", "status", "severity");

-- CreateIndex
CREATE INDEX "finding_assetId_idx" ON "finding"("assetId");

-- CreateIndex
CREATE INDEX "finding_targetId_idx" ON "finding"("targetId");

-- CreateIndex
CREATE UNIQUE INDEX "finding_workspaceId_fingerprint_key" ON "finding"("workspaceId", "fingerprint");

-- CreateIndex
CREATE INDEX "finding_event_findingId_createdAt_idx" ON "finding_event"("findingId", "createdAt");

-- CreateIndex
CREATE INDEX "target_workspaceId_createdAt_idx" ON "target"("workspaceId", "createdAt");

-- AddForeignKey
ALTER TABLE "asset" ADD CONSTRAINT "asset_workspaceId_fkey" FOREIGN KEY ("workspaceId") REFERENCES "workspace"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "asset" ADD CONSTRAINT "asset_parentId_fkey" FOREIGN KEY ("parentId") REFERENCES "asset"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "asset" ADD CONSTRAINT "asset_targetId_fkey" FOREIGN KEY ("targetId") REFERENCES "target"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "asset" ADD CONSTRAINT "asset_lastScanId_fkey" FOREIGN KEY ("lastScanId") REFERENCES "scan"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "scan" ADD CONSTRAINT "scan_workspaceId_fkey" FOREIGN KEY ("workspaceId") REFERENCES "workspace"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "scan" ADD CONSTRAINT "scan_targetId_fkey" FOREIGN KEY ("targetId") REFERENCES "target"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "scan_step" ADD CONSTRAINT "scan_step_scanId_fkey" FOREIGN KEY ("scanId") REFERENCES "scan"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "finding" ADD CONSTRAINT "finding_workspaceId_fkey" FOREIGN KEY ("workspaceId") REFERENCES "workspace"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "finding" ADD CONSTRAINT "finding_assetId_fkey" FOREIGN KEY ("assetId") REFERENCES "asset"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "finding" ADD CONSTRAINT "finding_targetId_fkey" FOREIGN KEY ("targetId") REFERENCES "target"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "finding" ADD CONSTRAINT "finding_lastScanId_fkey" FOREIGN KEY ("lastScanId") REFERENCES "scan"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "finding_event" ADD CONSTRAINT "finding_event_findingId_fkey" FOREIGN KEY ("findingId") REFERENCES "finding"("id") ON DELETE CASCADE ON UPDATE CASCADE;
