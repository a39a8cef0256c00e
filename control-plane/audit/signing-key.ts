// The gateway-wide audit signing key (audit_signing_keys): one active Ed25519 key that signs every
// tenant's checkpoints, and the retired ones a rotation leaves published so old checkpoints still
// verify. Made on first need by the process that cuts checkpoints (the control plane, or
// `start`), under a transaction-scoped advisory lock so two control planes never make two.
// The private half is sealed like the tenant CA keys (KeyCustody, bound to `audit/<id>`); the
// key's name, `<gateway>/audit`, is fixed by the first key from the public URL and kept by every
// rotation, so a checkpoint's origin (`<name>/<tenant id>`) never changes.
import { randomBytes, randomUUID } from 'node:crypto';
import { unseal } from '../../shared/crypto/seal.js';
import { gatewayError } from '../../shared/errors/index.js';
import { formatVerifierKey, type NoteSigner, noteSigner } from '../../shared/tlog/index.js';
import type { Database, SqlExecutor } from '../../storage/engine/database.js';
import type { KeyCustody } from '../services/agentiam/custody.js';

/** pg_advisory_xact_lock key of audit key creation and rotation ("audk" in ASCII). */
const AUDIT_KEY_LOCK = 0x6175646b;
/** The custody "tenant" of the audit key's AAD: `audit/<id>` (tenant ids are UUIDs). */
const CUSTODY_SCOPE = 'audit';

export interface AuditSigningKeyRecord {
  readonly id: string;
  readonly name: string;
  /** `<name>+<key id>+<base64 key>`. */
  readonly verifierKey: string;
  readonly privateKeySealed: string;
  readonly status: 'active' | 'retired';
  readonly createdAt: Date;
}

const COLUMNS = 'id, name, "verifierKey", "privateKeySealed", status, "createdAt"';

/** The name a new gateway's audit key gets: `<host[:port][/path]>/audit` of its public URL. */
export function auditKeyName(publicUrl: string): string {
  const url = new URL(publicUrl);
  const path = url.pathname.replace(/\/+$/, '');
  return `${url.host}${path}/audit`;
}

/** Every audit key, the active one first, then the retired ones newest first. */
export function listAuditSigningKeys(db: SqlExecutor): Promise<AuditSigningKeyRecord[]> {
  return db.query<AuditSigningKeyRecord>(
    `select ${COLUMNS} from audit_signing_keys
     order by (status = 'active') desc, "createdAt" desc, id`,
  );
}

/** The active audit key, or null before the first checkpoint. */
export async function findActiveAuditKey(db: SqlExecutor): Promise<AuditSigningKeyRecord | null> {
  const [row] = await db.query<AuditSigningKeyRecord>(
    `select ${COLUMNS} from audit_signing_keys where status = 'active'
     order by "createdAt" desc limit 1`,
  );
  return row ?? null;
}

/** The active key, made now (named from `publicUrl`) when there is none. */
export async function getOrCreateAuditKey(
  db: Database,
  custody: KeyCustody,
  publicUrl: string,
): Promise<AuditSigningKeyRecord> {
  const existing = await findActiveAuditKey(db);
  if (existing) return existing;
  return db.transaction(async (tx) => {
    await tx.query('select pg_advisory_xact_lock($1)', [AUDIT_KEY_LOCK]);
    const again = await findActiveAuditKey(tx);
    if (again) return again;
    const [named] = await tx.query<{ name: string }>(
      'select name from audit_signing_keys order by "createdAt" limit 1',
    );
    return insertKey(tx, custody, named?.name ?? auditKeyName(publicUrl));
  });
}

/**
 * Rotation: a new active key under the same name; the active one retired (still listed, so its
 * checkpoints verify). Throws AUDIT_CHECKPOINT_UNAVAILABLE when there is no key to rotate yet.
 */
export async function rotateAuditKey(
  db: Database,
  custody: KeyCustody,
  now = new Date(),
): Promise<{ key: AuditSigningKeyRecord; retired: AuditSigningKeyRecord }> {
  return db.transaction(async (tx) => {
    await tx.query('select pg_advisory_xact_lock($1)', [AUDIT_KEY_LOCK]);
    const active = await findActiveAuditKey(tx);
    if (active === null) {
      throw gatewayError('AUDIT_CHECKPOINT_UNAVAILABLE', {
        reason:
          'there is no audit signing key to rotate yet (one is made with the first checkpoint)',
      });
    }
    await tx.query(
      `update audit_signing_keys set status = 'retired', "retiredAt" = $1 where status = 'active'`,
      [now.toISOString()],
    );
    const key = await insertKey(tx, custody, active.name);
    return { key, retired: { ...active, status: 'retired' } };
  });
}

async function insertKey(
  tx: SqlExecutor,
  custody: KeyCustody,
  name: string,
): Promise<AuditSigningKeyRecord> {
  const id = randomUUID();
  const seed = randomBytes(32);
  const signer = noteSigner(name, seed);
  const [row] = await tx.query<AuditSigningKeyRecord>(
    `insert into audit_signing_keys (id, name, "publicKey", "verifierKey", "privateKeySealed", status)
     values ($1, $2, $3, $4, $5, 'active') returning ${COLUMNS}`,
    [
      id,
      name,
      Buffer.from(signer.publicKey).toString('base64'),
      formatVerifierKey(name, signer.publicKey),
      custody.seal(CUSTODY_SCOPE, id, seed),
    ],
  );
  // Every tenant's DID document lists the audit keys: the snapshot is rebuilt, and with it each
  // tenant's compiled identity (a key is made or rotated rarely: once, then per rotation).
  await tx.query('update tenants set "configVersion" = "configVersion" + 1');
  return row as AuditSigningKeyRecord;
}

/** A signer with the key's private half, unsealed for this process's memory only. */
export function auditNoteSigner(custody: KeyCustody, key: AuditSigningKeyRecord): NoteSigner {
  const signer = noteSigner(key.name, custody.unseal(CUSTODY_SCOPE, key.id, key.privateKeySealed));
  if (formatVerifierKey(signer.name, signer.publicKey) !== key.verifierKey) {
    throw gatewayError('SIGNING_KEY_UNAVAILABLE', {
      reason: `audit signing key ${key.id} does not match its published verifier key`,
    });
  }
  return signer;
}

/**
 * Refuses a master key that cannot open the active audit key (MASTER_KEY_MISMATCH naming it), as
 * checkSealedCaKeys does for the CA keys; run at start by every process that signs.
 */
export async function checkSealedAuditKey(
  db: SqlExecutor,
  masterKey: Buffer,
  source: string,
): Promise<{ checked: number }> {
  const active = await findActiveAuditKey(db);
  if (active === null) return { checked: 0 };
  unseal(masterKey, active.privateKeySealed, `${CUSTODY_SCOPE}/${active.id}`, {
    source,
    keyId: active.id,
  });
  return { checked: 1 };
}
