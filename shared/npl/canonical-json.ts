// Canonical JSON (object keys sorted recursively by UTF-16 code units, no whitespace) and the
// content hash built on it. `node:crypto`'s createHash is deterministic and does no I/O.
import { createHash } from 'node:crypto';

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    // A null-prototype object so that a key named __proto__ stays an ordinary key.
    const sorted: Record<string, unknown> = Object.create(null);
    for (const key of Object.keys(value).sort()) {
      sorted[key] = sortKeys((value as Record<string, unknown>)[key]);
    }
    return sorted;
  }
  return value;
}

/** JSON text with object keys sorted at every level and no insignificant whitespace. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value)) ?? 'null';
}

/** SHA-256 (lower-case hex) of `canonicalJson(value)`. */
export function contentHash(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value), 'utf8').digest('hex');
}
