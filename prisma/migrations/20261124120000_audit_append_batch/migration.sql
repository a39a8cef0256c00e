-- Hand-written: a group commit of the audit writer in one round trip (docs/audit-storage.md).
-- The writer chains a batch in JS from the heads it committed last and sends it here with, per
-- tenant, the head it started from ("fromSeq", "fromHash") and the head the batch ends at. The
-- function locks those heads in tenant order (as every writer does, so writers never deadlock)
-- and writes the batch only if every head is still the one the batch was chained from and no
-- caller-given id exists; otherwise it writes nothing and returns false, and the writer takes
-- its transactional path (lock, read the heads, chain, write). Called as one statement, it is
-- one transaction: the batch and the heads are written together or not at all.
CREATE FUNCTION "audit_append_batch"("entries" jsonb, "heads" jsonb, "givenIds" text[])
RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  "current" integer;
BEGIN
  SELECT count(*) INTO "current" FROM (
    SELECT 1 FROM "audit_chain_heads" AS h
    JOIN jsonb_to_recordset("heads") AS e("tenantId" text, "fromSeq" bigint, "fromHash" text)
      ON h."tenantId" = e."tenantId"
    WHERE h."seq" = e."fromSeq" AND h."hash" = e."fromHash"
    ORDER BY h."tenantId"
    FOR UPDATE OF h
  ) AS "unchanged";
  IF "current" <> jsonb_array_length("heads") THEN
    RETURN false;
  END IF;
  IF cardinality("givenIds") > 0
     AND EXISTS (SELECT 1 FROM "audit_entries" WHERE "id" = ANY ("givenIds")) THEN
    RETURN false;
  END IF;
  INSERT INTO "audit_entries"
    ("id", "tenantId", "seq", "action", "resourceType", "resourceId", "metadata", "after",
     "createdAt", "hash", "prevHash")
  SELECT "id", "tenantId", "seq", "action", "resourceType", "resourceId", "metadata", "after",
     "createdAt", "hash", "prevHash"
  FROM jsonb_to_recordset("entries") AS r("id" text, "tenantId" text, "seq" bigint,
    "action" text, "resourceType" text, "resourceId" text, "metadata" jsonb, "after" text,
    "createdAt" timestamptz, "hash" text, "prevHash" text);
  UPDATE "audit_chain_heads" AS h
  SET "seq" = v."seq", "hash" = v."hash", "lastCreatedAt" = v."lastCreatedAt"
  FROM jsonb_to_recordset("heads") AS v("tenantId" text, "seq" bigint, "hash" text,
    "lastCreatedAt" timestamptz)
  WHERE h."tenantId" = v."tenantId";
  RETURN true;
END;
$$;
