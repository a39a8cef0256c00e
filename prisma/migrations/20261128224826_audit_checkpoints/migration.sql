-- The anchored audit trail (docs/audit.md, "Checkpoints"): each tenant's Merkle tree over its chain
-- (its size and last leaf, and its tiles: the complete subtrees at levels 4, 8, 12…, written once),
-- the gateway-wide key that signs checkpoints (sealed), and the signed checkpoints.
-- CreateTable
CREATE TABLE "audit_trees" (
    "tenantId" TEXT NOT NULL,
    "size" BIGINT NOT NULL DEFAULT 0,
    "hash" TEXT NOT NULL DEFAULT '0000000000000000000000000000000000000000000000000000000000000000',

    CONSTRAINT "audit_trees_pkey" PRIMARY KEY ("tenantId")
);

-- CreateTable
CREATE TABLE "audit_tree_nodes" (
    "tenantId" TEXT NOT NULL,
    "level" SMALLINT NOT NULL,
    "index" BIGINT NOT NULL,
    "hash" BYTEA NOT NULL,

    CONSTRAINT "audit_tree_nodes_pkey" PRIMARY KEY ("tenantId","level","index")
);

-- CreateTable
CREATE TABLE "audit_signing_keys" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "publicKey" TEXT NOT NULL,
    "verifierKey" TEXT NOT NULL,
    "privateKeySealed" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'active',
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "retiredAt" TIMESTAMPTZ(3),

    CONSTRAINT "audit_signing_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "audit_checkpoints" (
    "id" TEXT NOT NULL,
    "tenantId" TEXT NOT NULL,
    "treeSize" BIGINT NOT NULL,
    "rootHash" TEXT NOT NULL,
    "keyId" TEXT NOT NULL,
    "note" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "audit_checkpoints_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "audit_signing_keys_verifierKey_key" ON "audit_signing_keys"("verifierKey");

-- CreateIndex
CREATE INDEX "audit_signing_keys_status_idx" ON "audit_signing_keys"("status");

-- CreateIndex
CREATE INDEX "audit_checkpoints_tenantId_treeSize_idx" ON "audit_checkpoints"("tenantId", "treeSize");

-- CreateIndex
CREATE UNIQUE INDEX "audit_checkpoints_tenantId_treeSize_keyId_key" ON "audit_checkpoints"("tenantId", "treeSize", "keyId");

-- AddForeignKey
ALTER TABLE "audit_trees" ADD CONSTRAINT "audit_trees_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "audit_checkpoints" ADD CONSTRAINT "audit_checkpoints_tenantId_fkey" FOREIGN KEY ("tenantId") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "audit_checkpoints" ADD CONSTRAINT "audit_checkpoints_keyId_fkey" FOREIGN KEY ("keyId") REFERENCES "audit_signing_keys"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- Hand-written: one round trip that extends a tenant's tree from what the checkpointer holds in
-- memory (storage/tables/audit-tree.ts): iff the tree is still the one it was computed from
-- (compare-and-set on size and last hash, which also takes the row lock), it stores the new tiles,
-- moves the tree, and stores the checkpoint signed over the new size. False: nothing written.
CREATE FUNCTION "audit_tree_extend"(
  "p_tenant" text, "p_from_size" bigint, "p_from_hash" text, "p_to_size" bigint,
  "p_to_hash" text, "p_levels" smallint[], "p_indexes" bigint[], "p_hashes" text[],
  "p_checkpoint" jsonb)
RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE audit_trees SET size = p_to_size, hash = p_to_hash
  WHERE "tenantId" = p_tenant AND size = p_from_size AND hash = p_from_hash;
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  INSERT INTO audit_tree_nodes ("tenantId", level, index, hash)
  SELECT p_tenant, n.level, n.index, decode(n.hash, 'hex')
  FROM unnest(p_levels, p_indexes, p_hashes) AS n(level, index, hash)
  ON CONFLICT DO NOTHING;
  IF p_checkpoint IS NOT NULL THEN
    INSERT INTO audit_checkpoints (id, "tenantId", "treeSize", "rootHash", "keyId", note)
    VALUES (p_checkpoint->>'id', p_tenant, p_to_size, p_checkpoint->>'rootHash',
            p_checkpoint->>'keyId', p_checkpoint->>'note')
    ON CONFLICT ("tenantId", "treeSize", "keyId") DO NOTHING;
  END IF;
  RETURN true;
END $$;
