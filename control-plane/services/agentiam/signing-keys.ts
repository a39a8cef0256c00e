// The tenant's AgentIAM CA keys (TenantSigningKey, purpose `agentiam-ca`): one active key per
// tenant, made on first need, and the retired ones a rotation leaves behind. Invariants:
// - every function taking a transaction expects the caller to hold the tenant's row lock
//   (lockTenant): key creation, rotation, issuance and revocation of a tenant are serialized, so
//   two issuers at once cannot both create an active key, and a credential is never signed by a
//   key a concurrent rotation has just retired;
// - the private half is stored only sealed (custody.ts); the public half is `z6Mk…`;
// - a retired key stays resolvable (in the DID document, for the gateway's verifier) until the
//   latest expiry of the live credentials it signed; standard verifiers see only the active key.
import { randomUUID } from 'node:crypto';
import type { Prisma, TenantSigningKey } from '../../../prisma/generated/client/client.js';
import { signCredential } from '../../../shared/agentiam/credentials.js';
import { tenantVerificationMethodId } from '../../../shared/agentiam/dids.js';
import { createDocumentLoader } from '../../../shared/agentiam/document-loader.js';
import {
  type Ed25519KeyMaterial,
  generateEd25519KeyMaterial,
  keyMaterialFromSeed,
} from '../../../shared/agentiam/ed25519-keys.js';
import { unseal } from '../../../shared/crypto/seal.js';
import { gatewayError } from '../../../shared/errors/index.js';
import type { Database } from '../../../storage/engine/database.js';
import { bumpConfigVersion } from '../../../storage/tables/config-version.js';
import { aadOf, type KeyCustody } from './custody.js';

export const CA_KEY_PURPOSE = 'agentiam-ca';
export const CA_KEY_STATUS = { ACTIVE: 'active', RETIRED: 'retired' } as const;

export type Transaction = Prisma.TransactionClient;

/** A TenantSigningKey row of purpose `agentiam-ca`. */
export type CaKeyRecord = TenantSigningKey;

/** Signs documents as the tenant's CA (`did:svc:<tenantId>#agentiam-ca`) with one key. */
export interface CaSigner {
  readonly tenantId: string;
  /** TenantSigningKey.id of the key that signs. */
  readonly kid: string;
  sign(document: Record<string, unknown>): Promise<Record<string, unknown>>;
}

/**
 * Signing needs the context documents only (loaded statically, never fetched): the proof names
 * the verification method without dereferencing it.
 */
const signingLoader = createDocumentLoader(() => null);

/**
 * Takes the tenant's row lock until the transaction ends; false when there is no such tenant.
 * The one lock AgentIAM writes of a tenant take, always first, so they cannot deadlock.
 */
export async function lockTenant(tx: Transaction, tenantId: string): Promise<boolean> {
  const rows = await tx.$queryRaw<{ id: string }[]>`
    select id from tenants where id = ${tenantId} for update`;
  return rows.length > 0;
}

/** The tenant's active CA key, or null before the first one is needed. */
export function findActiveCaKey(tx: Transaction, tenantId: string): Promise<CaKeyRecord | null> {
  return tx.tenantSigningKey.findFirst({
    where: { tenantId, purpose: CA_KEY_PURPOSE, status: CA_KEY_STATUS.ACTIVE },
    orderBy: { createdAt: 'desc' },
  });
}

/**
 * The tenant's active CA key, created (and the tenant's configVersion bumped, so data planes
 * learn the public key) when it has none. The caller holds the tenant lock.
 */
export async function getOrCreateActiveCaKey(
  tx: Transaction,
  custody: KeyCustody,
  tenantId: string,
): Promise<{ key: CaKeyRecord; created: boolean }> {
  const existing = await findActiveCaKey(tx, tenantId);
  if (existing) return { key: existing, created: false };
  return { key: await createCaKey(tx, custody, tenantId), created: true };
}

async function createCaKey(
  tx: Transaction,
  custody: KeyCustody,
  tenantId: string,
): Promise<CaKeyRecord> {
  const material = generateEd25519KeyMaterial();
  const id = randomUUID();
  const key = await tx.tenantSigningKey.create({
    data: {
      id,
      tenantId,
      purpose: CA_KEY_PURPOSE,
      algorithm: 'Ed25519',
      publicKey: material.publicKeyMultibase,
      privateKeySealed: custody.seal(tenantId, id, material.secretKey),
      status: CA_KEY_STATUS.ACTIVE,
    },
  });
  await bumpConfigVersion(tx, tenantId);
  return key;
}

/**
 * Rotation's key half: a new active key; every active key before it retired, resolvable until
 * the latest expiry of the live (unrevoked, unexpired) credentials it signed, or from now on
 * not at all when it signed none. The caller holds the tenant lock, re-issues the live
 * credentials and re-signs the status lists under the new key in the same transaction.
 */
export async function replaceActiveCaKey(
  tx: Transaction,
  custody: KeyCustody,
  tenantId: string,
  now: Date,
): Promise<{ key: CaKeyRecord; retired: CaKeyRecord[] }> {
  const active = await tx.tenantSigningKey.findMany({
    where: { tenantId, purpose: CA_KEY_PURPOSE, status: CA_KEY_STATUS.ACTIVE },
  });
  const retired: CaKeyRecord[] = [];
  for (const old of active) {
    const latest = await tx.identityCredential.aggregate({
      where: { signingKeyId: old.id, revokedAt: null, expiresAt: { gt: now } },
      _max: { expiresAt: true },
    });
    retired.push(
      await tx.tenantSigningKey.update({
        where: { id: old.id },
        data: {
          status: CA_KEY_STATUS.RETIRED,
          retiredAt: now,
          resolvableUntil: latest._max.expiresAt ?? now,
        },
      }),
    );
  }
  const key = await createCaKey(tx, custody, tenantId);
  return { key, retired };
}

/** A signer with the key's private half, unsealed for this use only. */
export function caSigner(custody: KeyCustody, key: CaKeyRecord): CaSigner {
  const material = caKeyMaterial(custody, key);
  const verificationMethod = tenantVerificationMethodId(key.tenantId);
  return {
    tenantId: key.tenantId,
    kid: key.id,
    sign: (document) =>
      signCredential(document, { verificationMethod, key: material }, signingLoader),
  };
}

function caKeyMaterial(custody: KeyCustody, key: CaKeyRecord): Ed25519KeyMaterial {
  const material = keyMaterialFromSeed(custody.unseal(key.tenantId, key.id, key.privateKeySealed));
  if (material.publicKeyMultibase !== key.publicKey) {
    // The seal authenticates the row's tenant and kid, so this is a corrupted row, not a key
    // from elsewhere: refuse to sign with something the published key cannot verify.
    throw gatewayError('SIGNING_KEY_UNAVAILABLE', {
      reason: `signing key ${key.id} does not match its public key`,
    });
  }
  return material;
}

/**
 * Refuses a master key that cannot open the CA keys still in use (active, or retired and still
 * resolvable): MASTER_KEY_MISMATCH naming the first such key. Run at start, before ready, by
 * every process that signs; the key set is small (a key per tenant and rotation).
 */
export async function checkSealedCaKeys(
  db: Database,
  masterKey: Buffer,
  source: string,
  now = new Date(),
): Promise<{ checked: number }> {
  const keys = await db.prisma.tenantSigningKey.findMany({
    where: {
      purpose: CA_KEY_PURPOSE,
      OR: [{ status: CA_KEY_STATUS.ACTIVE }, { resolvableUntil: { gt: now } }],
    },
    select: { id: true, tenantId: true, privateKeySealed: true },
    orderBy: { createdAt: 'asc' },
  });
  for (const key of keys) {
    // MASTER_KEY_MISMATCH naming the source and the key when the master key does not open it.
    unseal(masterKey, key.privateKeySealed, aadOf(key.tenantId, key.id), { source, keyId: key.id });
  }
  return { checked: keys.length };
}
