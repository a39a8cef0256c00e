// Types of the audit trail's export format: the entry shape of the open NPL audit verifier
// ("hash version 2"), what a writer supplies to append an entry, and the verification result.

export type JsonPrimitive = string | number | boolean | null;
export type JsonValue = JsonPrimitive | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/**
 * One exported entry. The first nine fields are the export format; `after` carries the metadata
 * seal our writer adds over id and metadata, which the hash leaves out (see docs/audit.md). `before`, `userId`, `agentId`, `ipAddress` and
 * `userAgent` are optional fields of the reference format: we never write them, but when an
 * export carries them they are part of the hash.
 */
export interface AuditEntry {
  readonly id: string;
  readonly tenantId: string;
  readonly action: string;
  readonly resourceType: string;
  readonly resourceId: string;
  /** ISO 8601 UTC with milliseconds (`2026-07-04T10:00:00.000Z`), hashed as the exact string. */
  readonly createdAt: string;
  /** SHA-256 of the entry, 64 lowercase hex digits. */
  readonly hash: string;
  /** `hash` of the previous entry of the tenant's chain; null for the first entry. */
  readonly prevHash: string | null;
  readonly metadata: JsonObject | null;
  /** `seal-sha256:<hex>`: digest of id and metadata (our seal; see sealEntry), or reference data. */
  readonly after?: string | null;
  readonly before?: string | null;
  readonly userId?: string | null;
  readonly agentId?: string | null;
  readonly ipAddress?: string | null;
  readonly userAgent?: string | null;
}

/** What a writer supplies for one append; `chainEntry` adds hash, prevHash and the seal. */
export interface AuditEntryInput {
  readonly id: string;
  readonly tenantId: string;
  readonly action: string;
  readonly resourceType: string;
  readonly resourceId: string;
  /** A Date, or a string already in the `Date#toISOString()` form. */
  readonly createdAt: Date | string;
  /**
   * Event details. `tool`, `actorType` (strings), `confidence` (finite number) and
   * `regulatoryRelevance` (string array) are hashed by the reference verifier as well;
   * `hashVersion` is reserved (always 2).
   */
  readonly metadata?: JsonObject;
}

/** The fields `computeEntryHash` reads. */
export type AuditHashFields = Pick<
  AuditEntry,
  'tenantId' | 'action' | 'resourceType' | 'resourceId' | 'createdAt'
> &
  Partial<
    Pick<
      AuditEntry,
      'metadata' | 'after' | 'before' | 'userId' | 'agentId' | 'ipAddress' | 'userAgent'
    >
  >;
