-- CreateTable
CREATE TABLE "decision_counts" (
    "tenantId" TEXT NOT NULL,
    "reporter" TEXT NOT NULL,
    "minute" TIMESTAMPTZ(3) NOT NULL,
    "outcome" TEXT NOT NULL,
    "serverId" TEXT NOT NULL,
    "toolName" TEXT NOT NULL,
    "reasonCode" TEXT NOT NULL,
    "count" INTEGER NOT NULL,
    "reportedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "decision_counts_pkey" PRIMARY KEY ("tenantId","reporter","minute","outcome","serverId","toolName","reasonCode")
);

-- CreateIndex
CREATE INDEX "decision_counts_tenantId_minute_idx" ON "decision_counts"("tenantId", "minute");

-- CreateIndex
CREATE INDEX "decision_counts_minute_idx" ON "decision_counts"("minute");

-- AddForeignKey
ALTER TABLE "decision_counts" ADD CONSTRAINT "decision_counts_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
