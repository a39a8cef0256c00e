-- CreateTable
CREATE TABLE "tenants" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "displayName" TEXT,
    "configVersion" INTEGER NOT NULL DEFAULT 1,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "tenants_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "api_keys" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "secretHash" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "scopes" TEXT[],
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "createdBy" TEXT,
    "expiresAt" TIMESTAMPTZ(3),
    "revokedAt" TIMESTAMPTZ(3),
    "lastUsedAt" TIMESTAMPTZ(3),

    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "gateway_policies" (
    "tenantId" TEXT NOT NULL,
    "trustedServers" TEXT[],
    "blockedMethods" TEXT[],
    "blockedTools" TEXT[],
    "denyDestructive" BOOLEAN NOT NULL DEFAULT true,
    "destructiveToolPatterns" TEXT[],
    "exfilDetectSecrets" BOOLEAN NOT NULL DEFAULT true,
    "exfilBulkExportLimit" INTEGER DEFAULT 1000,
    "exfilCheckDestinations" BOOLEAN NOT NULL DEFAULT true,
    "exfilAllowedDomains" TEXT[],
    "oauthMode" TEXT NOT NULL DEFAULT 'none',
    "maxDelegationDepth" INTEGER NOT NULL DEFAULT 3,
    "pinnedPolicies" TEXT[],
    "allowedModes" TEXT[] DEFAULT ARRAY['production', 'simulation', 'shadow']::TEXT[],
    "approvalTtlSeconds" INTEGER NOT NULL DEFAULT 900,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,
    "updatedBy" TEXT,

    CONSTRAINT "gateway_policies_pkey" PRIMARY KEY ("tenantId")
);

-- CreateTable
CREATE TABLE "mcp_servers" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "serverId" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "transport" TEXT NOT NULL DEFAULT 'streamable-http',
    "mockResults" JSONB NOT NULL DEFAULT '{}',
    "toolAnnotations" JSONB NOT NULL DEFAULT '{}',
    "toolsLearntAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "mcp_servers_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "npl_policy_versions" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "version" TEXT NOT NULL,
    "document" JSONB NOT NULL,
    "source" TEXT NOT NULL,
    "contentHash" TEXT NOT NULL,
    "description" TEXT,
    "publishedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "publishedBy" TEXT,

    CONSTRAINT "npl_policy_versions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "agents" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "role" TEXT NOT NULL DEFAULT 'agent',
    "systemPrompt" TEXT NOT NULL DEFAULT '',
    "personaTone" TEXT,
    "personaLanguage" TEXT,
    "allowedTools" TEXT[],
    "mcpAudiences" TEXT[],
    "publicKey" TEXT NOT NULL,
    "did" TEXT NOT NULL,
    "parentAgentId" TEXT,
    "supervisingUserId" TEXT,
    "status" TEXT NOT NULL DEFAULT 'active',
    "killedReason" TEXT,
    "killedAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "agents_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "identity_credentials" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "agentId" TEXT NOT NULL,
    "supervisingUserId" TEXT,
    "permittedTools" TEXT[],
    "issuedAt" TIMESTAMPTZ(3) NOT NULL,
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,
    "signingKeyId" TEXT NOT NULL,
    "statusListId" TEXT NOT NULL,
    "statusListIndex" INTEGER NOT NULL,
    "revokedAt" TIMESTAMPTZ(3),
    "revokedReason" TEXT,
    "document" JSONB NOT NULL,

    CONSTRAINT "identity_credentials_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "delegation_credentials" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "issuerAgentId" TEXT NOT NULL,
    "subjectAgentId" TEXT NOT NULL,
    "parentId" TEXT,
    "tools" TEXT[],
    "depth" INTEGER NOT NULL,
    "issuedAt" TIMESTAMPTZ(3) NOT NULL,
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,
    "revokedAt" TIMESTAMPTZ(3),
    "document" JSONB NOT NULL,

    CONSTRAINT "delegation_credentials_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "status_lists" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "purpose" TEXT NOT NULL DEFAULT 'revocation',
    "size" INTEGER NOT NULL,
    "bitstring" BYTEA NOT NULL,
    "nextIndex" INTEGER NOT NULL DEFAULT 0,
    "version" INTEGER NOT NULL DEFAULT 1,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "status_lists_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "tenant_signing_keys" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "purpose" TEXT NOT NULL,
    "algorithm" TEXT NOT NULL DEFAULT 'Ed25519',
    "publicKey" TEXT NOT NULL,
    "privateKeySealed" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'active',
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "retiredAt" TIMESTAMPTZ(3),
    "resolvableUntil" TIMESTAMPTZ(3),

    CONSTRAINT "tenant_signing_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "oauth_clients" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "agentId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "secretHash" TEXT NOT NULL,
    "grantTypes" TEXT[],
    "redirectUris" TEXT[],
    "audiences" TEXT[],
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revokedAt" TIMESTAMPTZ(3),

    CONSTRAINT "oauth_clients_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "issued_tokens" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "clientId" TEXT NOT NULL,
    "agentId" TEXT NOT NULL,
    "audience" TEXT NOT NULL,
    "scope" TEXT NOT NULL DEFAULT '',
    "issuedAt" TIMESTAMPTZ(3) NOT NULL,
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,
    "revokedAt" TIMESTAMPTZ(3),

    CONSTRAINT "issued_tokens_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "approvals" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "agentId" TEXT NOT NULL,
    "executionId" TEXT NOT NULL,
    "serverId" TEXT NOT NULL,
    "toolName" TEXT NOT NULL,
    "method" TEXT NOT NULL,
    "callDigest" TEXT NOT NULL,
    "arguments" JSONB NOT NULL,
    "policyUri" TEXT,
    "ruleId" TEXT,
    "reason" TEXT,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,
    "decidedBy" TEXT,
    "decidedAt" TIMESTAMPTZ(3),
    "decisionReason" TEXT,
    "usedAt" TIMESTAMPTZ(3),

    CONSTRAINT "approvals_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "audit_entries" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "seq" BIGINT NOT NULL,
    "action" TEXT NOT NULL,
    "resourceType" TEXT NOT NULL,
    "resourceId" TEXT NOT NULL,
    "metadata" JSONB NOT NULL,
    "after" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL,
    "hash" TEXT NOT NULL,
    "prevHash" TEXT NOT NULL,

    CONSTRAINT "audit_entries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "audit_chain_heads" (
    "tenantId" TEXT NOT NULL,
    "seq" BIGINT NOT NULL,
    "hash" TEXT NOT NULL,
    "lastCreatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "audit_chain_heads_pkey" PRIMARY KEY ("tenantId")
);

-- CreateTable
CREATE TABLE "data_planes" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "credentialHash" TEXT NOT NULL,
    "address" TEXT,
    "softwareVersion" TEXT,
    "appliedSnapshotVersion" INTEGER,
    "connectedAt" TIMESTAMPTZ(3),
    "lastSeenAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revokedAt" TIMESTAMPTZ(3),

    CONSTRAINT "data_planes_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "tenants_name_key" ON "tenants"("name");

-- CreateIndex
CREATE UNIQUE INDEX "api_keys_prefix_key" ON "api_keys"("prefix");

-- CreateIndex
CREATE INDEX "api_keys_tenantId_idx" ON "api_keys"("tenantId");

-- CreateIndex
CREATE UNIQUE INDEX "mcp_servers_tenantId_serverId_key" ON "mcp_servers"("tenantId", "serverId");

-- CreateIndex
CREATE UNIQUE INDEX "npl_policy_versions_tenantId_name_version_key" ON "npl_policy_versions"("tenantId", "name", "version");

-- CreateIndex
CREATE UNIQUE INDEX "agents_publicKey_key" ON "agents"("publicKey");

-- CreateIndex
CREATE INDEX "agents_tenantId_name_idx" ON "agents"("tenantId", "name");

-- CreateIndex
CREATE INDEX "identity_credentials_tenantId_agentId_idx" ON "identity_credentials"("tenantId", "agentId");

-- CreateIndex
CREATE UNIQUE INDEX "identity_credentials_statusListId_statusListIndex_key" ON "identity_credentials"("statusListId", "statusListIndex");

-- CreateIndex
CREATE INDEX "delegation_credentials_tenantId_issuerAgentId_idx" ON "delegation_credentials"("tenantId", "issuerAgentId");

-- CreateIndex
CREATE INDEX "delegation_credentials_tenantId_subjectAgentId_idx" ON "delegation_credentials"("tenantId", "subjectAgentId");

-- CreateIndex
CREATE INDEX "status_lists_tenantId_purpose_idx" ON "status_lists"("tenantId", "purpose");

-- CreateIndex
CREATE INDEX "tenant_signing_keys_tenantId_purpose_status_idx" ON "tenant_signing_keys"("tenantId", "purpose", "status");

-- CreateIndex
CREATE INDEX "oauth_clients_tenantId_agentId_idx" ON "oauth_clients"("tenantId", "agentId");

-- CreateIndex
CREATE INDEX "issued_tokens_tenantId_agentId_idx" ON "issued_tokens"("tenantId", "agentId");

-- CreateIndex
CREATE INDEX "issued_tokens_expiresAt_idx" ON "issued_tokens"("expiresAt");

-- CreateIndex
CREATE INDEX "approvals_tenantId_status_createdAt_idx" ON "approvals"("tenantId", "status", "createdAt");

-- CreateIndex
CREATE INDEX "approvals_tenantId_agentId_idx" ON "approvals"("tenantId", "agentId");

-- CreateIndex
CREATE INDEX "audit_entries_tenantId_createdAt_idx" ON "audit_entries"("tenantId", "createdAt");

-- CreateIndex
CREATE INDEX "audit_entries_tenantId_action_createdAt_idx" ON "audit_entries"("tenantId", "action", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "audit_entries_tenantId_seq_key" ON "audit_entries"("tenantId", "seq");

-- CreateIndex
CREATE UNIQUE INDEX "audit_entries_tenantId_prevHash_key" ON "audit_entries"("tenantId", "prevHash");

-- CreateIndex
CREATE UNIQUE INDEX "data_planes_name_key" ON "data_planes"("name");

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "gateway_policies" ADD CONSTRAINT "gateway_policies_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "mcp_servers" ADD CONSTRAINT "mcp_servers_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "npl_policy_versions" ADD CONSTRAINT "npl_policy_versions_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "agents" ADD CONSTRAINT "agents_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "agents" ADD CONSTRAINT "agents_parentAgentId_fkey" FOREIGN KEY ("parentAgentId") REFERENCES "agents"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "identity_credentials" ADD CONSTRAINT "identity_credentials_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "identity_credentials" ADD CONSTRAINT "identity_credentials_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "agents"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "identity_credentials" ADD CONSTRAINT "identity_credentials_statusListId_fkey" FOREIGN KEY ("statusListId") REFERENCES "status_lists"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "delegation_credentials" ADD CONSTRAINT "delegation_credentials_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "delegation_credentials" ADD CONSTRAINT "delegation_credentials_issuerAgentId_fkey" FOREIGN KEY ("issuerAgentId") REFERENCES "agents"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "delegation_credentials" ADD CONSTRAINT "delegation_credentials_subjectAgentId_fkey" FOREIGN KEY ("subjectAgentId") REFERENCES "agents"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "delegation_credentials" ADD CONSTRAINT "delegation_credentials_parentId_fkey" FOREIGN KEY ("parentId") REFERENCES "delegation_credentials"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "status_lists" ADD CONSTRAINT "status_lists_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "tenant_signing_keys" ADD CONSTRAINT "tenant_signing_keys_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "oauth_clients" ADD CONSTRAINT "oauth_clients_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "oauth_clients" ADD CONSTRAINT "oauth_clients_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "agents"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "issued_tokens" ADD CONSTRAINT "issued_tokens_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "issued_tokens" ADD CONSTRAINT "issued_tokens_clientId_fkey" FOREIGN KEY ("clientId") REFERENCES "oauth_clients"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "approvals" ADD CONSTRAINT "approvals_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "approvals" ADD CONSTRAINT "approvals_agentId_fkey" FOREIGN KEY ("agentId") REFERENCES "agents"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "audit_entries" ADD CONSTRAINT "audit_entries_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "audit_chain_heads" ADD CONSTRAINT "audit_chain_heads_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- Hand-written: the audit trail is append-only at the database level, not only in code. Any
-- UPDATE, DELETE or TRUNCATE of audit rows fails; only a superuser who disables the triggers can
-- alter a row, and the hash chain then names the altered entry (agent-gateway audit verify).
CREATE FUNCTION "audit_entries_reject_change"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_entries is append-only: % is not allowed', TG_OP
    USING ERRCODE = 'insufficient_privilege';
END;
$$;

CREATE TRIGGER "audit_entries_no_update_delete"
  BEFORE UPDATE OR DELETE ON "audit_entries"
  FOR EACH ROW EXECUTE FUNCTION "audit_entries_reject_change"();

CREATE TRIGGER "audit_entries_no_truncate"
  BEFORE TRUNCATE ON "audit_entries"
  FOR EACH STATEMENT EXECUTE FUNCTION "audit_entries_reject_change"();
