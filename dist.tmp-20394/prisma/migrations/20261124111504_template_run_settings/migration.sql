-- AlterTable
ALTER TABLE "scan" ADD COLUMN     "templateVariables" JSONB NOT NULL DEFAULT '{}';

-- CreateTable
CREATE TABLE "workspace_template_run_settings" (
    "workspaceId" UUID NOT NULL,
    "selection" JSONB NOT NULL DEFAULT '{}',
    "variables" JSONB NOT NULL DEFAULT '{}',
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "workspace_template_run_settings_pkey" PRIMARY KEY ("workspaceId")
);

-- AddForeignKey
ALTER TABLE "workspace_template_run_settings" ADD CONSTRAINT "workspace_template_run_settings_workspaceId_fkey" FOREIGN KEY ("workspaceId") REFERENCES "workspace"("id") ON DELETE CASCADE ON UPDATE CASCADE;
