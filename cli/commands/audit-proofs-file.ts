// The proofs file `audit export --proofs` writes beside an export (never inside it, so the export
// stays byte for byte what the open verifier reads): the tenant's signed checkpoints and the
// proofs that tie the export to them (shared/audit/verify-anchors.ts reads it).
// - A whole export of m entries: the latest checkpoint and, when it is larger than m, the
//   consistency proof from m to it; also the largest checkpoint of at most m entries, which the
//   export's own root must match.
// - A slice: the latest checkpoint and the inclusion proof of the slice's last entry it covers;
//   through the chain, that entry's hash commits to every entry before it.
import { auditConsistencyProof, auditInclusionProof } from '../../control-plane/audit/proofs.js';
import { AUDIT_PROOFS_FORMAT, type AuditProofs } from '../../shared/audit/index.js';
import type { Database } from '../../storage/engine/database.js';
import {
  latestAuditCheckpoint,
  type StoredCheckpoint,
  servedNote,
} from '../../storage/tables/audit-checkpoints.js';
import { writeFileAtomically } from '../write-file-atomically.js';

export interface AuditProofsRequest {
  readonly file: string;
  readonly tenantId: string;
  /** undefined: a whole export; null: an empty slice; else the slice's last entry. */
  readonly slice: { readonly firstId: string; readonly lastId: string } | null | undefined;
  /** Entries exported. */
  readonly count: number;
}

/** Writes the proofs file; resolves with one line saying what it holds. */
export async function writeAuditProofs(db: Database, request: AuditProofsRequest): Promise<string> {
  const { tenantId, count } = request;
  const latest = await latestAuditCheckpoint(db, tenantId);
  const proofs: { -readonly [K in keyof AuditProofs]: AuditProofs[K] } = {
    format: AUDIT_PROOFS_FORMAT,
    tenantId,
    checkpoints: [],
    inclusion: [],
    consistency: [],
  };
  const said: string[] = [];
  if (latest !== null) {
    proofs.checkpoints = [servedNote(latest)];
    said.push(`checkpoint of tree size ${latest.treeSize}`);
    if (request.slice === undefined) {
      if (latest.treeSize > count && count > 0) {
        const proof = await auditConsistencyProof(db, tenantId, count, latest.treeSize);
        proofs.consistency = [{ first: count, second: latest.treeSize, hashes: proof.hashes }];
        said.push(`consistency proof ${count} → ${latest.treeSize}`);
      } else if (latest.treeSize < count) {
        const covered = await largestCheckpointUpTo(db, tenantId, count);
        if (covered && covered.id !== latest.id) {
          proofs.checkpoints = [servedNote(covered), servedNote(latest)];
        }
      }
    } else if (request.slice !== null) {
      const entryId = await lastCoveredEntry(db, tenantId, request.slice, latest.treeSize);
      if (entryId !== null) {
        const proof = await auditInclusionProof(db, tenantId, entryId, latest.treeSize);
        proofs.inclusion = [{ entryId, ...proof }];
        said.push(`inclusion proof of entry ${entryId}`);
      }
    }
  }
  await writeFileAtomically(request.file, oneChunk(`${JSON.stringify(proofs, null, 2)}\n`));
  return latest === null
    ? `proofs file written to ${request.file} without a checkpoint: tenant ${tenantId} has none yet (POST /api/v1/audit/checkpoint cuts one)`
    : `proofs file written to ${request.file}: ${said.join(', ')}`;
}

async function* oneChunk(text: string): AsyncGenerator<string> {
  yield text;
}

async function largestCheckpointUpTo(
  db: Database,
  tenantId: string,
  size: number,
): Promise<StoredCheckpoint | null> {
  const [row] = await db.query<StoredCheckpoint & { treeSize: string | number }>(
    `select id, "tenantId", "treeSize", "rootHash", "keyId", note, cosignatures, "createdAt"
     from audit_checkpoints
     where "tenantId" = $1 and "treeSize" <= $2 and "treeSize" > 0
     order by "treeSize" desc, "createdAt" desc limit 1`,
    [tenantId, size],
  );
  return row ? { ...row, treeSize: Number(row.treeSize) } : null;
}

/** The slice's last entry with seq ≤ treeSize: the one a checkpoint of that size covers. */
async function lastCoveredEntry(
  db: Database,
  tenantId: string,
  slice: { readonly firstId: string; readonly lastId: string },
  treeSize: number,
): Promise<string | null> {
  const seqOf = async (id: string) => {
    const [row] = await db.query<{ seq: string | number }>(
      'select seq from audit_entries where "tenantId" = $1 and id = $2',
      [tenantId, id],
    );
    return row === undefined ? undefined : Number(row.seq);
  };
  const first = await seqOf(slice.firstId);
  const last = await seqOf(slice.lastId);
  if (first === undefined || last === undefined || first > treeSize) return null;
  if (last <= treeSize) return slice.lastId;
  // The slice runs past the checkpoint: its entry at the checkpoint's size (slices are
  // contiguous runs of seq: createdAt never goes back within a chain).
  const [covered] = await db.query<{ id: string }>(
    'select id from audit_entries where "tenantId" = $1 and seq = $2',
    [tenantId, treeSize],
  );
  return covered?.id ?? null;
}
