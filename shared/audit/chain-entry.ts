// Builds the next entry of a tenant's chain from what the writer supplies. The storage writer
// calls it once per append, in chain order, passing the hash of the tenant's current head (null
// for the first entry), and stores the result as is: every string is hashed verbatim, so the
// store must give back exactly these strings (createdAt with millisecond precision).
import { computeEntryHash, GENESIS_HASH, sealEntry } from './hash.js';
import type { AuditEntry, AuditEntryInput, JsonObject } from './types.js';

const HASH_PATTERN = /^[0-9a-f]{64}$/;
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function requireText(name: string, value: unknown, allowEmpty = false): void {
  if (typeof value !== 'string' || (!allowEmpty && value === '')) {
    throw new TypeError(`chainEntry: ${name} must be a${allowEmpty ? '' : ' non-empty'} string`);
  }
}

function normalizeCreatedAt(value: Date | string): string {
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime()))
      throw new RangeError('chainEntry: createdAt is an invalid Date');
    return value.toISOString();
  }
  if (
    typeof value !== 'string' ||
    !ISO_TIMESTAMP.test(value) ||
    Number.isNaN(Date.parse(value)) ||
    new Date(value).toISOString() !== value
  ) {
    throw new RangeError(
      `chainEntry: createdAt must be a Date or an ISO string like 2026-07-04T10:00:00.000Z, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

// The reference hashes these metadata keys with String()/Number() coercions; restricting their
// types keeps two different values from hashing alike.
function checkHashedMetadata(metadata: JsonObject): void {
  const { tool, actorType, confidence, regulatoryRelevance } = metadata;
  if (tool !== undefined && typeof tool !== 'string') {
    throw new TypeError('chainEntry: metadata.tool must be a string');
  }
  if (actorType !== undefined && typeof actorType !== 'string') {
    throw new TypeError('chainEntry: metadata.actorType must be a string');
  }
  if (
    confidence !== undefined &&
    (typeof confidence !== 'number' || !Number.isFinite(confidence))
  ) {
    throw new TypeError('chainEntry: metadata.confidence must be a finite number');
  }
  if (
    regulatoryRelevance !== undefined &&
    !(
      Array.isArray(regulatoryRelevance) &&
      regulatoryRelevance.every((item) => typeof item === 'string')
    )
  ) {
    throw new TypeError('chainEntry: metadata.regulatoryRelevance must be an array of strings');
  }
}

/**
 * The entry that follows `prevHash` (the hash of the tenant's head entry; null or GENESIS_HASH
 * for the first entry). Always hash version 2, with id and metadata sealed in `after`.
 * Throws TypeError/RangeError for input that could not be verified later.
 */
export function chainEntry(input: AuditEntryInput, prevHash: string | null): AuditEntry {
  requireText('id', input.id);
  requireText('tenantId', input.tenantId);
  requireText('action', input.action);
  requireText('resourceType', input.resourceType);
  requireText('resourceId', input.resourceId, true);
  if (prevHash !== null && !HASH_PATTERN.test(prevHash)) {
    throw new TypeError('chainEntry: prevHash must be null or 64 lowercase hex digits');
  }
  const given = input.metadata ?? {};
  if (given === null || typeof given !== 'object' || Array.isArray(given)) {
    throw new TypeError('chainEntry: metadata must be a JSON object');
  }
  checkHashedMetadata(given);
  const { hashVersion: _reserved, ...rest } = given;
  const metadata: JsonObject = { hashVersion: 2, ...rest };
  const fields = {
    id: input.id,
    tenantId: input.tenantId,
    action: input.action,
    resourceType: input.resourceType,
    resourceId: input.resourceId,
    createdAt: normalizeCreatedAt(input.createdAt),
    metadata,
    after: sealEntry({ id: input.id, metadata }),
  };
  const previous = prevHash === GENESIS_HASH ? null : prevHash;
  return {
    id: fields.id,
    tenantId: fields.tenantId,
    action: fields.action,
    resourceType: fields.resourceType,
    resourceId: fields.resourceId,
    createdAt: fields.createdAt,
    hash: computeEntryHash(fields, previous),
    prevHash: previous,
    metadata: fields.metadata,
    after: fields.after,
  };
}
