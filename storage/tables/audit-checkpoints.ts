// Signed audit checkpoints (audit_checkpoints): one row per tenant, tree size and signing key, the
// signed note stored exactly as it is served. Inserting is idempotent (a second cut of the same
// size with the same key returns the first), so two control planes cutting at once agree.
import { randomUUID } from 'node:crypto';
import type { SqlExecutor } from '../engine/database.js';

export interface StoredCheckpoint {
  readonly id: string;
  readonly tenantId: string;
  readonly treeSize: number;
  /** base64, as in the note. */
  readonly rootHash: string;
  readonly keyId: string;
  /** The signed note as the gateway signed it. */
  readonly note: string;
  /** Witness cosignature lines gathered since (empty when none): served after the note. */
  readonly cosignatures: string;
  readonly createdAt: Date;
}

/** The note as served: the gateway's signature, then every witness's cosignature. */
export function servedNote(checkpoint: Pick<StoredCheckpoint, 'note' | 'cosignatures'>): string {
  return checkpoint.note + checkpoint.cosignatures;
}

/** The witness a cosignature line `— <name> <base64>` is of. */
function cosignerOf(line: string): string {
  return line.slice(2, line.indexOf(' ', 2));
}

/** The witnesses whose cosignature lines a checkpoint carries, by name. */
export function cosignersOf(checkpoint: Pick<StoredCheckpoint, 'cosignatures'>): string[] {
  return checkpoint.cosignatures
    .split('\n')
    .filter((line) => line !== '')
    .map(cosignerOf);
}

/**
 * Stores a witness's cosignature lines with a checkpoint, replacing that witness's earlier ones
 * (one cosignature per witness: the newest). Each line is `— <name> <base64>\n`, verified by the
 * caller; the witness sink is the only writer of a witness's lines.
 */
export async function addCosignatures(
  db: SqlExecutor,
  checkpointId: string,
  lines: readonly string[],
): Promise<void> {
  if (lines.length === 0) return;
  const names = new Set(lines.map(cosignerOf));
  const [row] = await db.query<{ cosignatures: string }>(
    'select cosignatures from audit_checkpoints where id = $1',
    [checkpointId],
  );
  if (row === undefined) return;
  const kept = row.cosignatures
    .split('\n')
    .filter((line) => line !== '' && !names.has(cosignerOf(line)))
    .map((line) => `${line}\n`);
  await db.query('update audit_checkpoints set cosignatures = $2 where id = $1', [
    checkpointId,
    [...kept, ...lines].join(''),
  ]);
}

interface CheckpointRow extends Omit<StoredCheckpoint, 'treeSize'> {
  readonly treeSize: string | number;
}

const COLUMNS = 'id, "tenantId", "treeSize", "rootHash", "keyId", note, cosignatures, "createdAt"';

function fromRow(row: CheckpointRow): StoredCheckpoint {
  return { ...row, treeSize: Number(row.treeSize) };
}

/** The tenant's latest checkpoint: the largest tree size, the newest signature of it. */
export async function latestAuditCheckpoint(
  db: SqlExecutor,
  tenantId: string,
): Promise<StoredCheckpoint | null> {
  const [row] = await db.query<CheckpointRow>(
    `select ${COLUMNS} from audit_checkpoints where "tenantId" = $1
     order by "treeSize" desc, "createdAt" desc limit 1`,
    [tenantId],
  );
  return row ? fromRow(row) : null;
}

/** Stores a checkpoint, or returns the one already stored for this tenant, size and key. */
export async function storeAuditCheckpoint(
  db: SqlExecutor,
  checkpoint: Omit<StoredCheckpoint, 'id' | 'createdAt' | 'cosignatures'>,
): Promise<StoredCheckpoint> {
  const [inserted] = await db.query<CheckpointRow>(
    `insert into audit_checkpoints (id, "tenantId", "treeSize", "rootHash", "keyId", note)
     values ($1, $2, $3, $4, $5, $6)
     on conflict ("tenantId", "treeSize", "keyId") do nothing
     returning ${COLUMNS}`,
    [
      randomUUID(),
      checkpoint.tenantId,
      checkpoint.treeSize,
      checkpoint.rootHash,
      checkpoint.keyId,
      checkpoint.note,
    ],
  );
  if (inserted) return fromRow(inserted);
  const [row] = await db.query<CheckpointRow>(
    `select ${COLUMNS} from audit_checkpoints
     where "tenantId" = $1 and "treeSize" = $2 and "keyId" = $3`,
    [checkpoint.tenantId, checkpoint.treeSize, checkpoint.keyId],
  );
  return fromRow(row as CheckpointRow);
}

/** Where each tenant's chain and checkpoints stand: what the checkpointer's sweep decides on. */
export interface CheckpointStanding {
  readonly tenantId: string;
  /** Entries in the chain. */
  readonly head: number;
  /** The latest checkpoint's size, key and time; null before the first. */
  readonly latest: { readonly treeSize: number; readonly keyId: string; readonly at: Date } | null;
}

export async function checkpointStandings(db: SqlExecutor): Promise<CheckpointStanding[]> {
  const rows = await db.query<{
    tenantId: string;
    head: string | number | null;
    treeSize: string | number | null;
    keyId: string | null;
    at: Date | null;
  }>(
    `select t.id as "tenantId", h.seq as head, c."treeSize", c."keyId", c."createdAt" as at
     from tenants t
     left join audit_chain_heads h on h."tenantId" = t.id
     left join lateral (
       select "treeSize", "keyId", "createdAt" from audit_checkpoints
       where "tenantId" = t.id order by "treeSize" desc, "createdAt" desc limit 1
     ) c on true
     order by t.id`,
  );
  return rows.map((row) => ({
    tenantId: row.tenantId,
    head: Number(row.head ?? 0),
    latest:
      row.treeSize === null || row.keyId === null || row.at === null
        ? null
        : { treeSize: Number(row.treeSize), keyId: row.keyId, at: new Date(row.at) },
  }));
}
