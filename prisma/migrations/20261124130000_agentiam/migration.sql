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
