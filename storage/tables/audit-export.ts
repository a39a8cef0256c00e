// Reads a tenant's audit chain back out of the database as export entries, in chain order, page
// by page (keyset pagination on seq), so an export of millions of entries never sits in memory.
// The export is fixed when it is opened: it ends at the head committed at that moment, so
// entries appended meanwhile never make it run on. Stored rows become export entries exactly:
// the genesis prevHash (stored as GENESIS_HASH) is exported as null, createdAt as the ISO string
// with milliseconds that was hashed. Verification is not done here: the export goes through
// shared/audit's verifier like any other file.
import { type AuditEntry, GENESIS_HASH, type JsonObject } from '../../shared/audit/index.js';
import { gatewayError } from '../../shared/errors/index.js';
import type { SqlExecutor } from '../engine/database.js';

export interface ExportAuditTrailOptions {
  /** Tenant id or name (an id wins when a string is both). */
  readonly tenant: string;
  /** Only entries created at or after this instant. */
  readonly from?: Date | undefined;
  /** Only entries created before this instant (exclusive, so ranges tile). */
  readonly to?: Date | undefined;
  /** Rows per query (default 1000). */
  readonly pageSize?: number | undefined;
}

/** An opened export: iterate it (once) for the entries; the fields describe what it holds. */
export interface AuditTrailExport extends AsyncIterable<AuditEntry> {
  readonly tenantId: string;
  readonly tenantName: string;
  /** The chain's head when the export was opened: its last entry (seq 0 = empty chain). */
  readonly head: { readonly seq: number; readonly hash: string };
  /** True when from/to select a slice: verify it with `partial` unless it starts at seq 1. */
  readonly filtered: boolean;
}

export const DEFAULT_EXPORT_PAGE_SIZE = 1000;

interface EntryRow {
  id: string;
  tenantId: string;
  seq: string | number;
  action: string;
  resourceType: string;
  resourceId: string;
  metadata: JsonObject | null;
  after: string;
  createdAt: Date;
  hash: string;
  prevHash: string;
}

const PAGE = `
select id, "tenantId", seq, action, "resourceType", "resourceId", metadata, after, "createdAt",
  hash, "prevHash"
from audit_entries
where "tenantId" = $1 and seq > $2 and seq <= $3
  and ($4::timestamptz is null or "createdAt" >= $4)
  and ($5::timestamptz is null or "createdAt" < $5)
order by seq
limit $6`;

/**
 * The entries of one tenant's chain, in order. Throws AUDIT_TENANT_UNKNOWN (on the first `next()`)
 * when no tenant has this id or name.
 */
export async function* exportAuditTrail(
  db: SqlExecutor,
  options: ExportAuditTrailOptions,
): AsyncGenerator<AuditEntry, void, undefined> {
  yield* await openAuditExport(db, options);
}

/**
 * Opens the export of one tenant's chain: rejects with AUDIT_TENANT_UNKNOWN when no tenant has
 * this id or name before anything is read, so a caller can fail before writing any output.
 */
export async function openAuditExport(
  db: SqlExecutor,
  options: ExportAuditTrailOptions,
): Promise<AuditTrailExport> {
  const pageSize = options.pageSize ?? DEFAULT_EXPORT_PAGE_SIZE;
  if (!Number.isInteger(pageSize) || pageSize < 1) {
    throw new RangeError('exportAuditTrail: pageSize must be a positive integer');
  }
  for (const bound of [options.from, options.to]) {
    if (bound !== undefined && Number.isNaN(bound.getTime())) {
      throw new RangeError('exportAuditTrail: from and to must be valid dates');
    }
  }
  const tenants = await db.query<{
    id: string;
    name: string;
    seq: string | number | null;
    hash: string | null;
  }>(
    `select t.id, t.name, h.seq, h.hash
     from tenants t left join audit_chain_heads h on h."tenantId" = t.id
     where t.id = $1 or t.name = $1
     order by (t.id = $1) desc
     limit 1`,
    [options.tenant],
  );
  const tenant = tenants[0];
  if (tenant === undefined) {
    throw gatewayError('AUDIT_TENANT_UNKNOWN', {
      lookup: 'id or name',
      tenant: JSON.stringify(options.tenant),
    });
  }
  const head = { seq: Number(tenant.seq ?? 0), hash: tenant.hash ?? GENESIS_HASH };
  const from = options.from?.toISOString() ?? null;
  const to = options.to?.toISOString() ?? null;
  return {
    tenantId: tenant.id,
    tenantName: tenant.name,
    head,
    filtered: from !== null || to !== null,
    async *[Symbol.asyncIterator]() {
      let after = 0;
      while (after < head.seq) {
        const rows = await db.query<EntryRow>(PAGE, [
          tenant.id,
          after,
          head.seq,
          from,
          to,
          pageSize,
        ]);
        for (const row of rows) yield toEntry(row);
        const last = rows.at(-1);
        if (last === undefined || rows.length < pageSize) return;
        after = Number(last.seq);
      }
    },
  };
}

function toEntry(row: EntryRow): AuditEntry {
  return {
    id: row.id,
    tenantId: row.tenantId,
    action: row.action,
    resourceType: row.resourceType,
    resourceId: row.resourceId,
    createdAt: row.createdAt.toISOString(),
    hash: row.hash,
    prevHash: row.prevHash === GENESIS_HASH ? null : row.prevHash,
    metadata: row.metadata,
    after: row.after,
  };
}
