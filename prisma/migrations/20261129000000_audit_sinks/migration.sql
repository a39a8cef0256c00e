-- Checkpoint sinks and witnesses (docs/audit.md, "Sinks"): each sink's progress through the
-- checkpoints, in (createdAt, id) order, which the new index serves; witness cosignatures stored
-- with their checkpoint.
-- AlterTable
ALTER TABLE "audit_checkpoints" ADD COLUMN     "cosignatures" TEXT NOT NULL DEFAULT '';

-- CreateTable
CREATE TABLE "audit_sink_progress" (
    "sink" TEXT NOT NULL,
    "lastCreatedAt" TIMESTAMPTZ(3),
    "lastId" TEXT,
    "delivered" BIGINT NOT NULL DEFAULT 0,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastError" TEXT,
    "lastErrorAt" TIMESTAMPTZ(3),

    CONSTRAINT "audit_sink_progress_pkey" PRIMARY KEY ("sink")
);

-- CreateIndex
CREATE INDEX "audit_checkpoints_createdAt_id_idx" ON "audit_checkpoints"("createdAt", "id");
