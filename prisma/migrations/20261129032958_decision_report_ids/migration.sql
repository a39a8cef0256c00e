-- Decision reports applied once (docs/config-push.md, "Decision counts"): the ids of the reports
-- each data plane delivered, so a report retried after its answer was lost adds nothing twice.
-- CreateTable
CREATE TABLE "decision_reports" (
    "reporter" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "receivedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "decision_reports_pkey" PRIMARY KEY ("reporter","id")
);

-- CreateIndex
CREATE INDEX "decision_reports_receivedAt_idx" ON "decision_reports"("receivedAt");
