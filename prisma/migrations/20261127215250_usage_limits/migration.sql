-- AlterTable
ALTER TABLE "approvals" ADD COLUMN     "limitHit" JSONB;

-- AlterTable
ALTER TABLE "gateway_policies" ADD COLUMN     "limits" JSONB NOT NULL DEFAULT '[]';

-- CreateTable
CREATE TABLE "usage_counters" (
    "tenantId" TEXT NOT NULL,
    "limitId" TEXT NOT NULL,
    "agentId" TEXT NOT NULL,
    "toolName" TEXT NOT NULL,
    "windowStart" BIGINT NOT NULL,
    "windowSeconds" INTEGER NOT NULL,
    "calls" BIGINT NOT NULL DEFAULT 0,
    "amount" DECIMAL(40,10) NOT NULL DEFAULT 0,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "usage_counters_pkey" PRIMARY KEY ("tenantId","limitId","agentId","toolName","windowStart")
);

-- CreateIndex
CREATE INDEX "usage_counters_tenantId_agentId_idx" ON "usage_counters"("tenantId", "agentId");
