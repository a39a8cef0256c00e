-- AlterTable
ALTER TABLE "issued_tokens" ALTER COLUMN "clientId" DROP NOT NULL;

-- AlterTable
ALTER TABLE "oauth_clients" ADD COLUMN     "authMethod" TEXT NOT NULL DEFAULT 'client_secret_basic',
ALTER COLUMN "secretHash" DROP NOT NULL;

-- CreateTable
CREATE TABLE "token_signing_keys" (
    "id" TEXT NOT NULL,
    "publicJwk" JSONB NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "retiredAt" TIMESTAMPTZ(3),

    CONSTRAINT "token_signing_keys_pkey" PRIMARY KEY ("id")
);
