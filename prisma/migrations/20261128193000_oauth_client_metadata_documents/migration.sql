-- Client ID metadata documents (docs/oauth.md): a client identified by an https URL is recorded
-- under the agent whose identity proof it authorized with, one row per (tenant, agent, URL).
ALTER TABLE "oauth_clients" ADD COLUMN "metadataUrl" TEXT;

CREATE UNIQUE INDEX "oauth_clients_tenantId_agentId_metadataUrl_key"
  ON "oauth_clients"("tenantId", "agentId", "metadataUrl");
