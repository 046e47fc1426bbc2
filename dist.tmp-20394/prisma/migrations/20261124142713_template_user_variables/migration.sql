-- AlterTable
ALTER TABLE "template" ADD COLUMN     "userVariables" TEXT[] DEFAULT ARRAY[]::TEXT[];
