-- CreateTable
CREATE TABLE "approval_waits" (
    "id" TEXT NOT NULL,
    "approvalId" TEXT NOT NULL,
    "until" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "approval_waits_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "approval_waits_approvalId_until_idx" ON "approval_waits"("approvalId", "until");

-- CreateIndex
CREATE INDEX "approval_waits_until_idx" ON "approval_waits"("until");

-- AddForeignKey
ALTER TABLE "approval_waits" ADD CONSTRAINT "approval_waits_approvalId_fkey" FOREIGN KEY ("approvalId") REFERENCES "approvals"("id") ON DELETE CASCADE ON UPDATE CASCADE;
