-- CreateTable
CREATE TABLE "audit_log" (
    "id" UUID NOT NULL,
    "at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "workspaceId" UUID,
    "actorKind" TEXT NOT NULL,
    "actorId" TEXT,
    "actorDisplay" TEXT,
    "surface" TEXT NOT NULL,
    "operation" TEXT NOT NULL,
    "entityIds" TEXT[],
    "outcome" TEXT NOT NULL,
    "clientAddress" TEXT NOT NULL,
    "requestId" TEXT,

    CONSTRAINT "audit_log_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "audit_log_workspaceId_at_idx" ON "audit_log"("workspaceId", "at");

-- CreateIndex
CREATE INDEX "audit_log_at_idx" ON "audit_log"("at");
