-- CreateTable
CREATE TABLE "scan_schedule" (
    "id" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "targetId" UUID,
    "cron" TEXT NOT NULL,
    "timeZone" TEXT NOT NULL,
    "options" JSONB NOT NULL,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "nextRunAt" TIMESTAMP(3),
    "lastRunAt" TIMESTAMP(3),
    "lastScanId" UUID,
    "createdById" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "scan_schedule_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "scan_schedule_run" (
    "id" UUID NOT NULL,
    "scheduleId" UUID NOT NULL,
    "trigger" TEXT NOT NULL,
    "dueAt" TIMESTAMP(3),
    "ranAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started" INTEGER NOT NULL,
    "skipped" INTEGER NOT NULL,
    "outcomes" JSONB NOT NULL,
    "requestedById" TEXT,

    CONSTRAINT "scan_schedule_run_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "scan_schedule_enabled_nextRunAt_idx" ON "scan_schedule"("enabled", "nextRunAt");

-- CreateIndex
CREATE INDEX "scan_schedule_workspaceId_createdAt_idx" ON "scan_schedule"("workspaceId", "createdAt");

-- CreateIndex
CREATE INDEX "scan_schedule_targetId_idx" ON "scan_schedule"("targetId");

-- CreateIndex
CREATE INDEX "scan_schedule_lastScanId_idx" ON "scan_schedule"("lastScanId");

-- CreateIndex
CREATE INDEX "scan_schedule_run_scheduleId_ranAt_idx" ON "scan_schedule_run"("scheduleId", "ranAt");

-- CreateIndex
CREATE UNIQUE INDEX "scan_schedule_run_scheduleId_dueAt_key" ON "scan_schedule_run"("scheduleId", "dueAt");

-- AddForeignKey
ALTER TABLE "scan_schedule" ADD CONSTRAINT "scan_schedule_workspaceId_fkey" FOREIGN KEY ("workspaceId") REFERENCES "workspace"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "scan_schedule" ADD CONSTRAINT "scan_schedule_targetId_fkey" FOREIGN KEY ("targetId") REFERENCES "target"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "scan_schedule" ADD CONSTRAINT "scan_schedule_lastScanId_fkey" FOREIGN KEY ("lastScanId") REFERENCES "scan"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "scan_schedule_run" ADD CONSTRAINT "scan_schedule_run_scheduleId_fkey" FOREIGN KEY ("scheduleId") REFERENCES "scan_schedule"("id") ON DELETE CASCADE ON UPDATE CASCADE;
