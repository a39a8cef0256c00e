// Data-plane credentials: `agdp_<id>_<secret>`. The id is the data plane's row id (public: it
// finds the row and may appear in logs); the secret is 256 random bits stored only as its SHA-256,
// compared in constant time: the same scheme as tenant API keys (shared/identity/api-keys.ts).
import { randomBytes } from 'node:crypto';
import { gatewayError } from '../../shared/errors/index.js';
import {
  generateApiKey,
  hashApiKeySecret,
  verifyApiKeySecret,
} from '../../shared/identity/api-keys.js';
import type { Database } from '../../storage/engine/database.js';

const CREDENTIAL_PATTERN = /^agdp_([a-z0-9]{12})_([A-Za-z0-9_-]{43})$/;
const BEARER = /^Bearer ([^\s]+)$/;

export interface GeneratedDataPlaneCredential {
  readonly id: string;
  /** The full credential, shown once. */
  readonly credential: string;
  readonly secretHash: string;
}

export function generateDataPlaneCredential(): GeneratedDataPlaneCredential {
  // The API-key generator's uniformly random 12-character prefix serves as the row id.
  const { prefix: id } = generateApiKey();
  const secret = randomBytes(32).toString('base64url');
  return { id, credential: `agdp_${id}_${secret}`, secretHash: hashApiKeySecret(secret) };
}

export function parseDataPlaneCredential(
  presented: unknown,
): { id: string; secret: string } | undefined {
  if (typeof presented !== 'string' || presented.length > 128) return undefined;
  const match = CREDENTIAL_PATTERN.exec(presented);
  return match ? { id: match[1] as string, secret: match[2] as string } : undefined;
}

/** Registers a data plane by name; the credential is returned once and stored hashed. */
export async function registerDataPlane(
  db: Database,
  name: string,
): Promise<{ id: string; name: string; credential: string }> {
  const existing = await db.prisma.dataPlane.findUnique({ where: { name } });
  if (existing) {
    throw gatewayError('DATA_PLANE_NAME_TAKEN', { name: `"${name}"` });
  }
  const generated = generateDataPlaneCredential();
  await db.prisma.dataPlane.create({
    data: { id: generated.id, name, credentialHash: generated.secretHash },
  });
  return { id: generated.id, name, credential: generated.credential };
}

/**
 * Revokes a data plane by name: its credential is refused from now on (the config stream and the
 * acknowledgement), and an open stream is closed at the next revocation check. Revoking again
 * keeps the first instant.
 */
export async function revokeDataPlane(
  db: Database,
  name: string,
): Promise<{ id: string; name: string; revokedAt: Date; alreadyRevoked: boolean }> {
  const row = await db.prisma.dataPlane.findUnique({ where: { name } });
  if (!row) throw gatewayError('NOT_FOUND', { resource: `data plane named "${name}"` });
  if (row.revokedAt) {
    return { id: row.id, name: row.name, revokedAt: row.revokedAt, alreadyRevoked: true };
  }
  const revokedAt = new Date();
  await db.prisma.dataPlane.updateMany({
    where: { id: row.id, revokedAt: null },
    data: { revokedAt },
  });
  return { id: row.id, name: row.name, revokedAt, alreadyRevoked: false };
}

/** Of the given data-plane ids, those revoked (or deleted) by now. */
export async function findRevokedDataPlanes(
  db: Database,
  ids: readonly string[],
): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const active = await db.prisma.dataPlane.findMany({
    where: { id: { in: [...ids] }, revokedAt: null },
    select: { id: true },
  });
  const stillActive = new Set(active.map((row) => row.id));
  return new Set(ids.filter((id) => !stillActive.has(id)));
}

/**
 * The name a data-plane credential was registered with, read by the data plane itself at start
 * (it shares the database): undefined when the credential matches no row (the control plane will
 * refuse it; the data plane keeps retrying). Revoked or not: revocation is the stream's business.
 */
export async function findDataPlaneName(
  db: Database,
  credential: string,
): Promise<string | undefined> {
  const parsed = parseDataPlaneCredential(credential);
  if (!parsed) return undefined;
  const row = await db.prisma.dataPlane.findUnique({ where: { id: parsed.id } });
  if (!row || !verifyApiKeySecret(parsed.secret, row.credentialHash)) return undefined;
  return row.name;
}

export interface AuthenticatedDataPlane {
  readonly id: string;
  readonly name: string;
}

/**
 * Checks `Authorization: Bearer agdp_…` against the data_planes table (the control plane is not a
 * hot path: one indexed read per connection or acknowledgement). One answer for every failure.
 */
export async function authenticateDataPlane(
  db: Database,
  header: string | undefined,
  expectedName?: string,
): Promise<AuthenticatedDataPlane> {
  const presented = header === undefined ? undefined : BEARER.exec(header)?.[1];
  const parsed = parseDataPlaneCredential(presented);
  const row = parsed ? await db.prisma.dataPlane.findUnique({ where: { id: parsed.id } }) : null;
  if (
    !parsed ||
    !row ||
    row.revokedAt !== null ||
    !verifyApiKeySecret(parsed.secret, row.credentialHash) ||
    (expectedName !== undefined && expectedName !== row.name)
  ) {
    throw gatewayError('DATA_PLANE_CREDENTIAL_INVALID');
  }
  return { id: row.id, name: row.name };
}
