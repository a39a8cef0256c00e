-- DropIndex
DROP INDEX "agents_publicKey_key";

-- AlterTable
ALTER TABLE "mcp_servers" DROP COLUMN "toolsLearntAt",
ADD COLUMN     "toolsRefreshError" TEXT,
ADD COLUMN     "toolsRefreshFailedAt" TIMESTAMPTZ(3),
ADD COLUMN     "toolsRefreshedAt" TIMESTAMPTZ(3);

-- CreateIndex
CREATE UNIQUE INDEX "agents_tenantId_publicKey_key" ON "agents"("tenantId", "publicKey");

-- toolAnnotations entries change from tool -> annotations to tool -> { annotations, digest }.
-- Entries written before carry no digest; the next refresh of the server adds it.
UPDATE "mcp_servers"
SET "toolAnnotations" = (
  SELECT coalesce(jsonb_object_agg(entry.key, jsonb_build_object('annotations', entry.value)), '{}'::jsonb)
  FROM jsonb_each("toolAnnotations") AS entry
)
WHERE jsonb_typeof("toolAnnotations") = 'object' AND "toolAnnotations" <> '{}'::jsonb;
