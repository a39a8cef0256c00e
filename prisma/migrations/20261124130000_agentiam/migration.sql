-- DropForeignKey
ALTER TABLE "delegation_credentials" DROP CONSTRAINT "delegation_credentials_issuerAgentId_fkey";

-- DropForeignKey
ALTER TABLE "delegation_credentials" DROP CONSTRAINT "delegation_credentials_parentId_fkey";

-- DropForeignKey
ALTER TABLE "delegation_credentials" DROP CONSTRAINT "delegation_credentials_subjectAgentId_fkey";

-- DropForeignKey
ALTER TABLE "delegation_credentials" DROP CONSTRAINT "delegation_credentials_tenantId_fkey";

-- AlterTable
ALTER TABLE "gateway_policies" ADD COLUMN     "requireAgentIdentity" BOOLEAN NOT NULL DEFAULT false;

-- AlterTable
ALTER TABLE "status_lists" ADD COLUMN     "credential" JSONB;

-- DropTable
DROP TABLE "delegation_credentials";

-- An agent's identifier is the did:key of its public key (AgentIAM: the subject of its
-- credentials); it used to be a did:svc path nothing resolved.
UPDATE "agents" SET "did" = 'did:key:' || "publicKey";
