-- AlterTable
ALTER TABLE "template" ADD COLUMN     "payloadFilesChecksum" TEXT;
