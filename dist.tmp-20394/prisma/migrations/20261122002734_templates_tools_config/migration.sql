-- CreateTable
CREATE TABLE "template" (
    "id" UUID NOT NULL,
    "workspaceId" UUID,
    "fileName" TEXT NOT NULL,
    "templateKey" TEXT,
    "name" TEXT,
    "severity" "Severity",
    "tags" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "builtin" BOOLEAN NOT NULL DEFAULT false,
    "storageKey" TEXT,
    "checksum" TEXT,
    "sizeBytes" INTEGER,
    "warnings" JSONB,
    "createdById" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "template_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "workspace_template_setting" (
    "workspaceId" UUID NOT NULL,
    "templateId" UUID NOT NULL,
    "enabled" BOOLEAN NOT NULL,

    CONSTRAINT "workspace_template_setting_pkey" PRIMARY KEY ("workspaceId","templateId")
);

-- CreateTable
CREATE TABLE "tool" (
    "id" UUID NOT NULL,
    "workspaceId" UUID,
    "name" TEXT NOT NULL,
    "category" TEXT NOT NULL,
    "description" TEXT NOT NULL,
    "version" TEXT NOT NULL,
    "builtin" BOOLEAN NOT NULL DEFAULT false,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "tool_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "workspace_tool_setting" (
    "workspaceId" UUID NOT NULL,
    "toolId" UUID NOT NULL,
    "enabled" BOOLEAN NOT NULL,

    CONSTRAINT "workspace_tool_setting_pkey" PRIMARY KEY ("workspaceId","toolId")
);

-- CreateTable
CREATE TABLE "tool_key" (
    "id" UUID NOT NULL,
    "toolId" UUID NOT NULL,
    "workspaceId" UUID,
    "prefix" TEXT NOT NULL,
    "keyHash" TEXT NOT NULL,
    "createdById" TEXT,
    "lastUsedAt" TIMESTAMP(3),
    "revokedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "tool_key_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "system_config" (
    "id" INTEGER NOT NULL DEFAULT 1,
    "name" TEXT NOT NULL DEFAULT 'Perimeter',
    "logoPath" TEXT,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    "updatedBy" TEXT,

    CONSTRAINT "system_config_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "template_workspaceId_enabled_idx" ON "template"("workspaceId", "enabled");

-- CreateIndex
CREATE UNIQUE INDEX "template_workspaceId_fileName_key" ON "template"("workspaceId", "fileName");

-- CreateIndex
CREATE UNIQUE INDEX "tool_workspaceId_name_key" ON "tool"("workspaceId", "name");

-- CreateIndex
CREATE UNIQUE INDEX "tool_key_keyHash_key" ON "tool_key"("keyHash");

-- CreateIndex
CREATE INDEX "tool_key_toolId_idx" ON "tool_key"("toolId");

-- AddForeignKey
ALTER TABLE "template" ADD CONSTRAINT "template_workspaceId_fkey" FOREIGN KEY ("workspaceId") REFERENCES "workspace"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "workspace_template_setting" ADD CONSTRAINT "workspace_template_setting_workspaceId_fkey" FOREIGN KEY ("workspaceId") REFERENCES "workspace"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "workspace_template_setting" ADD CONSTRAINT "workspace_template_setting_templateId_fkey" FOREIGN KEY ("templateId") REFERENCES "template"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "tool" ADD CONSTRAINT "tool_workspaceId_fkey" FOREIGN KEY ("workspaceId") REFERENCES "workspace"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "workspace_tool_setting" ADD CONSTRAINT "workspace_tool_setting_workspaceId_fkey" FOREIGN KEY ("workspaceId") REFERENCES "workspace"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "workspace_tool_setting" ADD CONSTRAINT "workspace_tool_setting_toolId_fkey" FOREIGN KEY ("toolId") REFERENCES "tool"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "tool_key" ADD CONSTRAINT "tool_key_toolId_fkey" FOREIGN KEY ("toolId") REFERENCES "tool"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "tool_key" ADD CONSTRAINT "tool_key_workspaceId_fkey" FOREIGN KEY ("workspaceId") REFERENCES "workspace"("id") ON DELETE CASCADE ON UPDATE CASCADE;
