-- AlterTable
ALTER TABLE "agents" ADD COLUMN     "executionMode" TEXT;

-- AlterTable
ALTER TABLE "gateway_policies" ADD COLUMN     "approvalWaitSeconds" INTEGER NOT NULL DEFAULT 120,
ADD COLUMN     "proxyExecutionMode" TEXT NOT NULL DEFAULT 'production',
ADD COLUMN     "proxyModeHeader" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "toolPinning" TEXT NOT NULL DEFAULT 'first_sight';

-- CreateTable
CREATE TABLE "tool_definition_pins" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "serverId" TEXT NOT NULL,
    "toolName" TEXT NOT NULL,
    "approvedDigest" TEXT,
    "approvedDefinition" JSONB,
    "approvedAt" TIMESTAMPTZ(3),
    "approvedBy" TEXT,
    "observedDigest" TEXT NOT NULL,
    "observedDefinition" JSONB NOT NULL,
    "observedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "tool_definition_pins_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "tool_definition_pins_tenantId_serverId_toolName_key" ON "tool_definition_pins"("tenantId", "serverId", "toolName");

-- AddForeignKey
ALTER TABLE "tool_definition_pins" ADD CONSTRAINT "tool_definition_pins_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
