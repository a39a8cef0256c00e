-- CreateTable
CREATE TABLE "agent_kills" (
    "seq" BIGSERIAL NOT NULL,
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "agentId" TEXT NOT NULL,
    "publicKey" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "killedAt" TIMESTAMPTZ(3) NOT NULL,
    "killedBy" TEXT NOT NULL,
    "receivedBy" TEXT NOT NULL,
    "revokedCredentials" INTEGER NOT NULL,
    "revokedDelegations" INTEGER NOT NULL,
    "revokedOAuthClients" INTEGER NOT NULL,
    "revokedTokens" INTEGER NOT NULL,
    "rejectedApprovals" INTEGER NOT NULL,
    "abortedExecutions" INTEGER,
    "propagation" JSONB,
    "auditId" TEXT,
    "answer" JSONB,
    "completedAt" TIMESTAMPTZ(3),

    CONSTRAINT "agent_kills_pkey" PRIMARY KEY ("seq")
);

-- CreateTable
CREATE TABLE "spawn_idempotency_keys" (
    "tenantId" TEXT NOT NULL,
    "apiKeyId" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "bodyHash" TEXT NOT NULL,
    "agentId" TEXT NOT NULL,
    "answer" JSONB NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "spawn_idempotency_keys_pkey" PRIMARY KEY ("tenantId","apiKeyId","key")
);

-- CreateTable
CREATE TABLE "delegation_links" (
    "tenantId" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "issuerAgentId" TEXT NOT NULL,
    "subjectAgentId" TEXT NOT NULL,
    "tools" TEXT[],
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,
    "firstSeenAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revokedAt" TIMESTAMPTZ(3),

    CONSTRAINT "delegation_links_pkey" PRIMARY KEY ("tenantId","id")
);

-- CreateIndex
CREATE UNIQUE INDEX "agent_kills_id_key" ON "agent_kills"("id");

-- CreateIndex
CREATE UNIQUE INDEX "agent_kills_agentId_key" ON "agent_kills"("agentId");

-- CreateIndex
CREATE INDEX "agent_kills_tenantId_killedAt_idx" ON "agent_kills"("tenantId", "killedAt");

-- CreateIndex
CREATE INDEX "spawn_idempotency_keys_expiresAt_idx" ON "spawn_idempotency_keys"("expiresAt");

-- CreateIndex
CREATE INDEX "delegation_links_tenantId_issuerAgentId_idx" ON "delegation_links"("tenantId", "issuerAgentId");

-- AddForeignKey
ALTER TABLE "agent_kills" ADD CONSTRAINT "agent_kills_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "agent_kills" ADD CONSTRAINT "agent_kills_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "agents"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "spawn_idempotency_keys" ADD CONSTRAINT "spawn_idempotency_keys_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "delegation_links" ADD CONSTRAINT "delegation_links_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
