// The entry hash of the NPL audit verifier, hash versions 1 and 2, computed exactly as that
// verifier does so that each side accepts the other's exports:
//   hash = hex(SHA-256(UTF-8(prevHash "\n" createdAt "\n" tenantId "\n" action "\n" payload)))
// prevHash is 64 zeros for the first entry; payload is a JSON object of strings with sorted
// keys (see auditHashPayload). The id and all metadata keys but four never reach the hash, which
// is why our writer adds a seal of id and metadata in the hashed `after` field (sealEntry).
import { hash } from 'node:crypto';
import { canonicalJson } from '../json/canonical-json.js';
import type { AuditHashFields, JsonObject } from './types.js';

/** prevHash of the first entry of a chain (exported as `prevHash: null`). */
export const GENESIS_HASH = '0'.repeat(64);

/** Prefix of the seal carried in `after`. */
export const SEAL_PREFIX = 'seal-sha256:';

const ENTRY_FIELDS = [
  'resourceType',
  'resourceId',
  'before',
  'after',
  'userId',
  'agentId',
  'ipAddress',
  'userAgent',
] as const;
const METADATA_FIELDS = ['hashVersion', 'tool', 'actorType', 'confidence', 'regulatoryRelevance'];
// Payload keys in the order they are written: sorted by code units, as the reference sorts them.
const V1_KEYS: readonly string[] = [...ENTRY_FIELDS].sort();
const V2_KEYS: readonly string[] = [...ENTRY_FIELDS, ...METADATA_FIELDS].sort();

function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex');
}

/** Hash version 2 applies when metadata.hashVersion is 2 or "2"; otherwise version 1. */
export function isHashVersion2(metadata: unknown): boolean {
  if (metadata === null || typeof metadata !== 'object') return false;
  const version = (metadata as Record<string, unknown>).hashVersion;
  return version === 2 || version === '2';
}

/**
 * The payload line of the hash: a JSON object with keys in code-unit order, every value a string,
 * and a key only when its value is neither null/undefined nor the empty string.
 * v1: resourceType, resourceId, before, after, userId, agentId, ipAddress, userAgent.
 * v2: those, plus hashVersion "2" and, from metadata, tool, actorType (String(v)), confidence
 * (String(Number(v))) and regulatoryRelevance (only an array: items as strings, sorted with
 * localeCompare, as a JSON array text).
 */
export function auditHashPayload(entry: AuditHashFields): string {
  const v2 = isHashVersion2(entry.metadata);
  const metadata = v2 ? (entry.metadata as Record<string, unknown>) : null;
  let payload = '';
  for (const key of v2 ? V2_KEYS : V1_KEYS) {
    const value = payloadValue(key, entry, metadata);
    if (value === undefined || value === null) continue;
    const text = String(value);
    if (text === '') continue;
    payload += `${payload === '' ? '' : ','}"${key}":${JSON.stringify(text)}`;
  }
  return `{${payload}}`;
}

function payloadValue(
  key: string,
  entry: AuditHashFields,
  metadata: Record<string, unknown> | null,
): unknown {
  switch (key) {
    case 'hashVersion':
      return '2';
    case 'tool':
    case 'actorType':
      return metadata![key];
    case 'confidence': {
      const confidence = metadata!.confidence;
      return confidence === undefined || confidence === null
        ? undefined
        : String(Number(confidence));
    }
    case 'regulatoryRelevance': {
      const relevance = metadata!.regulatoryRelevance;
      if (!Array.isArray(relevance)) return undefined;
      // localeCompare, not code-unit order: the reference sorts this way.
      const items = relevance.map((item) => String(item)).sort((a, b) => a.localeCompare(b));
      return JSON.stringify(items);
    }
    default:
      return entry[key as (typeof ENTRY_FIELDS)[number]];
  }
}

/** The entry's hash given the previous entry's hash (null or GENESIS_HASH for the first entry). */
export function computeEntryHash(entry: AuditHashFields, prevHash: string | null): string {
  const content = [
    prevHash ?? GENESIS_HASH,
    entry.createdAt,
    entry.tenantId,
    entry.action,
    auditHashPayload(entry),
  ].join('\n');
  return sha256Hex(content);
}

/**
 * The seal our writer stores in `after`: `seal-sha256:` + hex SHA-256 of the canonical JSON of
 * `{"id":…,"metadata":…}`. Being in `after`, it is covered by the hash, so every field of the
 * entry is tamper-evident.
 */
export function sealEntry(entry: {
  readonly id: string;
  readonly metadata: JsonObject | null;
}): string {
  return `${SEAL_PREFIX}${sha256Hex(canonicalJson({ id: entry.id, metadata: entry.metadata }))}`;
}
