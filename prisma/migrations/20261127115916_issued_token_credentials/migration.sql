-- AlterTable
ALTER TABLE "issued_tokens" ADD COLUMN     "credentialId" TEXT;

-- CreateIndex
CREATE INDEX "issued_tokens_credentialId_idx" ON "issued_tokens"("credentialId");
