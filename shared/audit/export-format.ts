// Streaming writer of an audit export: a JSON array with one entry per line, produced chunk by
// chunk so an export of any size never sits in memory. Entries are written with the fields of
// the export format in a fixed order; anything else a storage row carries is left out.
import type { AuditEntry } from './types.js';

const OPTIONAL_FIELDS = ['after', 'before', 'userId', 'agentId', 'ipAddress', 'userAgent'] as const;

/** One entry as export text (one line, no trailing newline). */
export function formatAuditEntry(entry: AuditEntry): string {
  const out: Record<string, unknown> = {
    id: entry.id,
    tenantId: entry.tenantId,
    action: entry.action,
    resourceType: entry.resourceType,
    resourceId: entry.resourceId,
    createdAt: entry.createdAt,
    hash: entry.hash,
    prevHash: entry.prevHash ?? null,
    metadata: entry.metadata ?? null,
  };
  for (const field of OPTIONAL_FIELDS) {
    const value = entry[field];
    if (value !== undefined && value !== null) out[field] = value;
  }
  return JSON.stringify(out);
}

/**
 * The export text of `entries`, in order: `[\n`, the entries separated by `,\n`, then `\n]\n`
 * (`[\n]\n` when there are none). Write the chunks to a file or a response as they come.
 */
export async function* formatAuditExport(
  entries: Iterable<AuditEntry> | AsyncIterable<AuditEntry>,
): AsyncGenerator<string, void, undefined> {
  yield '[\n';
  let first = true;
  for await (const entry of entries) {
    yield first ? formatAuditEntry(entry) : `,\n${formatAuditEntry(entry)}`;
    first = false;
  }
  yield first ? ']\n' : '\n]\n';
}

/** Default size of the pieces `inChunksOf` joins the export text into. */
export const EXPORT_CHUNK_BYTES = 64 * 1024;

/**
 * The same text in pieces of at least `size` characters (the last may be shorter): one write per
 * 64 KiB to a file or a socket instead of one per entry.
 */
export async function* inChunksOf(
  parts: AsyncIterable<string>,
  size = EXPORT_CHUNK_BYTES,
): AsyncGenerator<string> {
  let buffer = '';
  for await (const part of parts) {
    buffer += part;
    if (buffer.length >= size) {
      yield buffer;
      buffer = '';
    }
  }
  if (buffer !== '') yield buffer;
}
