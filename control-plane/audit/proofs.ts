// Inclusion and consistency proofs of a tenant's audit tree (RFC 9162 §2.1.3, §2.1.4), read from
// its stored tiles and the entries' hashes below them: two indexed queries, whatever the tree's size.
// Tree sizes run from 1 to the tenant's latest checkpoint's size, so every proof can be checked
// against a root some signed checkpoint vouches for (the checkpoint of that size, or, through a
// consistency proof, a later one). Hashes are base64, in RFC 9162 order.
import { gatewayError } from '../../shared/errors/index.js';
import {
  consistencyProofRanges,
  inclusionProofRanges,
  type LeafRange,
  nodesOfRanges,
} from '../../shared/tlog/index.js';
import type { SqlExecutor } from '../../storage/engine/database.js';
import { hashOf, readTreeHashes } from '../../storage/tables/audit-tree.js';

export interface InclusionProof {
  readonly treeSize: number;
  /** 0-based: the entry's seq − 1. */
  readonly leafIndex: number;
  readonly hashes: readonly string[];
}

export interface ConsistencyProof {
  /** The larger tree: `second`. */
  readonly treeSize: number;
  readonly first: number;
  readonly second: number;
  readonly hashes: readonly string[];
}

async function foldRanges(
  db: SqlExecutor,
  tenantId: string,
  ranges: readonly LeafRange[],
): Promise<string[]> {
  const plan = nodesOfRanges(ranges);
  const hashes = await readTreeHashes(db, tenantId, plan.nodes);
  return plan
    .fold((node) => hashOf(hashes, tenantId, node))
    .map((hash) => Buffer.from(hash).toString('base64'));
}

function checkSize(field: string, value: number, latest: number): void {
  if (!Number.isSafeInteger(value) || value < 1 || value > latest) {
    throw gatewayError('AUDIT_PROOF_SIZE_INVALID', {
      problem: `${field} must be a tree size from 1 to ${latest} (the latest checkpoint's size), not ${value}`,
    });
  }
}

/** The inclusion proof of entry `entryId` of the tenant in its tree of `treeSize`. */
export async function auditInclusionProof(
  db: SqlExecutor,
  tenantId: string,
  entryId: string,
  treeSize: number,
): Promise<InclusionProof> {
  // The tenant is the caller's: an entry of another tenant is not found. One round trip for the
  // entry's position and the latest checkpoint's size.
  const [found] = await db.query<{ seq: string | number | null; latest: string | number | null }>(
    `select (select seq from audit_entries where "tenantId" = $1 and id = $2) as seq,
       (select max("treeSize") from audit_checkpoints where "tenantId" = $1) as latest`,
    [tenantId, entryId],
  );
  if (found?.seq === null || found?.seq === undefined) {
    throw gatewayError('AUDIT_ENTRY_NOT_FOUND', { entryId });
  }
  if (found.latest === null) throw gatewayError('AUDIT_CHECKPOINT_NOT_FOUND');
  checkSize('tree_size', treeSize, Number(found.latest));
  const seq = Number(found.seq);
  if (seq > treeSize) {
    throw gatewayError('AUDIT_PROOF_SIZE_INVALID', {
      problem: `tree_size ${treeSize} does not include entry ${entryId} (its seq is ${seq}): ask for a tree size of at least ${seq}`,
    });
  }
  const leafIndex = seq - 1;
  const hashes = await foldRanges(db, tenantId, inclusionProofRanges(leafIndex, treeSize));
  return { treeSize, leafIndex, hashes };
}

/** The consistency proof of the tenant's tree from size `first` to size `second`. */
export async function auditConsistencyProof(
  db: SqlExecutor,
  tenantId: string,
  first: number,
  second: number,
): Promise<ConsistencyProof> {
  const [row] = await db.query<{ latest: string | number | null }>(
    'select max("treeSize") as latest from audit_checkpoints where "tenantId" = $1',
    [tenantId],
  );
  if (row?.latest === null || row?.latest === undefined) {
    throw gatewayError('AUDIT_CHECKPOINT_NOT_FOUND');
  }
  checkSize('first', first, Number(row.latest));
  checkSize('second', second, Number(row.latest));
  if (first > second) {
    throw gatewayError('AUDIT_PROOF_SIZE_INVALID', {
      problem: `first (${first}) must not be larger than second (${second})`,
    });
  }
  const hashes = await foldRanges(db, tenantId, consistencyProofRanges(first, second));
  return { treeSize: second, first, second, hashes };
}
