// The server's check of a tenant's trail (GraphQL verifyAuditTrail, the console's "Verify chain"):
// the hash chain of the export, as `agent-gateway audit verify` checks it, and then that export
// against the tenant's latest signed checkpoint, as `audit verify --checkpoint --proofs` does.
// The chain alone shows the entries are internally whole; the checkpoint shows they are the
// history the gateway signed (and the witnesses cosigned), so a history rewritten in the database
// after that checkpoint (entries changed or removed, the chain recomputed) fails here.
//
// The checkpoint is read before the export is opened, so every entry it covers is in the export
// and an export shorter than it is a truncation, never a race. A whole trail is anchored by the
// root of its first treeSize entries, computed as it streams by; a time range by the inclusion
// proof of its last entry the checkpoint covers (through the chain, that entry commits to the
// range's earlier ones), and a range wholly after the checkpoint is reported as not reached.
import {
  type AnchorResult,
  AUDIT_PROOFS_FORMAT,
  type AuditProofs,
  ExportTreeTap,
  type VerifyAuditChainResult,
  verifyAnchors,
  verifyAuditChain,
} from '../../shared/audit/index.js';
import {
  type NoteVerifierKey,
  parseVerifierKey,
  type WitnessKey,
} from '../../shared/tlog/index.js';
import type { SqlExecutor } from '../../storage/engine/database.js';
import {
  latestAuditCheckpoint,
  type StoredCheckpoint,
  servedNote,
} from '../../storage/tables/audit-checkpoints.js';
import { openAuditExport } from '../../storage/tables/audit-export.js';
import { auditInclusionProof } from './proofs.js';
import { listAuditSigningKeys } from './signing-key.js';

export interface VerifyTrailRequest {
  readonly tenantId: string;
  readonly from?: Date | undefined;
  readonly to?: Date | undefined;
  /** The configured witnesses' keys: their cosignatures of the checkpoint are reported. */
  readonly witnessKeys: readonly WitnessKey[];
}

export interface TrailVerification {
  readonly chain: VerifyAuditChainResult;
  /** True for a time range: its first entry's link to earlier entries is taken on trust. */
  readonly partial: boolean;
  /** The tenant's latest checkpoint when the check began; null before the first. */
  readonly checkpoint: StoredCheckpoint | null;
  /** The export against that checkpoint; null without one, or when the chain is broken. */
  readonly anchor: AnchorResult | null;
}

export const LATEST_CHECKPOINT_SOURCE = 'the latest checkpoint';

export async function verifyTenantTrail(
  db: SqlExecutor,
  request: VerifyTrailRequest,
): Promise<TrailVerification> {
  const { tenantId, from, to } = request;
  const checkpoint = await latestAuditCheckpoint(db, tenantId);
  const trail = await openAuditExport(db, { tenant: tenantId, from, to });
  const partial = trail.filtered;
  const inclusion =
    checkpoint !== null && partial
      ? await rangeInclusionProof(db, tenantId, checkpoint.treeSize, from, to)
      : null;
  const tap = new ExportTreeTap(
    checkpoint !== null && !partial ? [checkpoint.treeSize] : [],
    inclusion === null ? [] : [inclusion.entryId],
  );
  const chain = await verifyAuditChain(tap.tap(trail), {
    partial,
    ...(!partial && trail.head.seq > 0 ? { expectedHead: trail.head.hash } : {}),
  });
  if (checkpoint === null || !chain.ok) return { chain, partial, checkpoint, anchor: null };
  const anchor = verifyAnchors({
    checkpoints: [{ source: LATEST_CHECKPOINT_SOURCE, note: servedNote(checkpoint) }],
    keys: await verifierKeys(db),
    witnessKeys: request.witnessKeys,
    proofs:
      inclusion === null
        ? undefined
        : {
            format: AUDIT_PROOFS_FORMAT,
            tenantId,
            checkpoints: [],
            inclusion: [inclusion],
            consistency: [],
          },
    tap,
    tenantId: chain.tenantId ?? tenantId,
    partial,
  });
  return { chain, partial, checkpoint, anchor };
}

/** Every audit key the gateway has had: the checkpoint may predate a rotation. */
async function verifierKeys(db: SqlExecutor): Promise<NoteVerifierKey[]> {
  const keys: NoteVerifierKey[] = [];
  for (const record of await listAuditSigningKeys(db)) {
    const key = parseVerifierKey(record.verifierKey);
    if (typeof key !== 'string') keys.push(key);
  }
  return keys;
}

/**
 * The inclusion proof, in a tree of `treeSize`, of the range's last entry that tree covers (seq ≤
 * treeSize); null when the range holds none.
 */
async function rangeInclusionProof(
  db: SqlExecutor,
  tenantId: string,
  treeSize: number,
  from: Date | undefined,
  to: Date | undefined,
): Promise<AuditProofs['inclusion'][number] | null> {
  const [row] = await db.query<{ id: string }>(
    `select id from audit_entries
     where "tenantId" = $1 and seq <= $2
       and ($3::timestamptz is null or "createdAt" >= $3)
       and ($4::timestamptz is null or "createdAt" < $4)
     order by seq desc limit 1`,
    [tenantId, treeSize, from ?? null, to ?? null],
  );
  if (row === undefined) return null;
  return { entryId: row.id, ...(await auditInclusionProof(db, tenantId, row.id, treeSize)) };
}
