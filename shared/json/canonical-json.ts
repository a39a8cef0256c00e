// Canonical JSON: JSON.stringify's text for every value, with object keys sorted by UTF-16 code
// units at every level and no insignificant whitespace. Keys whose value is undefined are left
// out, as JSON.stringify does, so a value and its JSON round trip have the same canonical form
// and the order in which a database (PostgreSQL jsonb) returns keys does not matter. Used for
// NPL content hashes, the audit metadata seal and approval call digests.
import { createHash } from 'node:crypto';

export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    const text = JSON.stringify(value);
    if (text === undefined) throw new TypeError(`canonicalJson: ${typeof value} is not JSON`);
    return text;
  }
  if (Array.isArray(value)) {
    let text = '';
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      text += `${i === 0 ? '' : ','}${item === undefined ? 'null' : canonicalJson(item)}`;
    }
    return `[${text}]`;
  }
  const record = value as Record<string, unknown>;
  let text = '';
  for (const key of Object.keys(record).sort()) {
    const item = record[key];
    if (item === undefined) continue;
    text += `${text === '' ? '' : ','}${JSON.stringify(key)}:${canonicalJson(item)}`;
  }
  return `{${text}}`;
}

/** SHA-256 (lower-case hex) of `canonicalJson(value)`. */
export function contentHash(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value), 'utf8').digest('hex');
}
