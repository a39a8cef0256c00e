// Idempotency of spawn (the `Idempotency-Key` header, GraphQL's idempotencyKey): a client that
// retries a spawn whose answer it lost must not get a second agent. A key is remembered 24 h per
// tenant and API key (spawn_idempotency_keys), with the SHA-256 of the request's canonical form
// and the first answer's public parts — never a secret, so a replay cannot hand out the private
// key or the client secret a second time. The key's row is inserted in the transaction that
// inserts the agent: of two concurrent spawns with one key, the second blocks on the first's
// primary key, then fails on it and answers as a replay; it never commits an agent. Expired rows
// are ignored and deleted (the row of a reused key in its transaction, the rest now and then).
import { createHash } from 'node:crypto';
import { Prisma } from '../../prisma/generated/client/client.js';
import { gatewayError } from '../../shared/errors/index.js';
import { invalidField } from '../../shared/validation/field-issues.js';
import type { Database } from '../../storage/engine/database.js';

/** How long a key replays its first answer. */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 3600 * 1000;
export const IDEMPOTENCY_KEY_MAX = 255;
/** Visible ASCII (no spaces, no control characters), 1-255 characters: a UUID fits. */
const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
/** Expired keys of every tenant are deleted at most this often per process. */
const PURGE_INTERVAL_MS = 60_000;

export interface IdempotencyScope {
  readonly tenantId: string;
  readonly apiKeyId: string;
  readonly key: string;
}

/** REQUEST_INVALID naming `field` unless `key` is a well-formed idempotency key. */
export function checkIdempotencyKey(key: string, field: string): string {
  if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
    throw invalidField(
      field,
      `must be 1-${IDEMPOTENCY_KEY_MAX} visible ASCII characters (no spaces)`,
    );
  }
  return key;
}

/**
 * SHA-256 (hex) of a request's canonical JSON: object keys sorted at every level, undefined
 * members left out, arrays in their order. Two bodies that differ only in key order or spacing
 * hash alike.
 */
export function canonicalHash(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value), 'utf8').digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const members = Object.entries(value as Record<string, unknown>)
      .filter(([, member]) => member !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key, member]) => `${JSON.stringify(key)}:${canonicalJson(member)}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * The stored answer of a live key used with the same body; null when the key is unused (or
 * expired). IDEMPOTENCY_KEY_REUSED (422) when it was used with another body.
 */
export async function findReplay(
  db: Database,
  scope: IdempotencyScope,
  bodyHash: string,
  now: Date,
): Promise<Prisma.JsonValue | null> {
  const row = await db.prisma.spawnIdempotencyKey.findUnique({
    where: { tenantId_apiKeyId_key: scope },
    select: { bodyHash: true, answer: true, expiresAt: true },
  });
  if (row === null || row.expiresAt <= now) return null;
  if (row.bodyHash !== bodyHash) {
    throw gatewayError('IDEMPOTENCY_KEY_REUSED', { key: scope.key });
  }
  return row.answer;
}

/** Thrown when a concurrent spawn committed the same key first: answer as its replay. */
export class IdempotencyKeyTaken extends Error {
  constructor() {
    super('the idempotency key was committed by a concurrent spawn');
  }
}

/**
 * Records the key in the spawn's transaction, replacing an expired row of the same key.
 * IdempotencyKeyTaken when a live row exists (a concurrent spawn committed first).
 */
export async function recordIdempotencyKey(
  tx: Prisma.TransactionClient,
  scope: IdempotencyScope,
  record: { bodyHash: string; agentId: string; answer: Prisma.InputJsonObject },
  now: Date,
): Promise<void> {
  await tx.spawnIdempotencyKey.deleteMany({ where: { ...scope, expiresAt: { lte: now } } });
  try {
    await tx.spawnIdempotencyKey.create({
      data: {
        ...scope,
        ...record,
        createdAt: now,
        expiresAt: new Date(now.getTime() + IDEMPOTENCY_KEY_TTL_MS),
      },
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw new IdempotencyKeyTaken();
    throw error;
  }
}

export function isUniqueViolation(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002';
}

const lastPurge = new WeakMap<Database, number>();

/** Deletes expired keys of every tenant, at most once a minute per database handle. */
export async function purgeExpiredIdempotencyKeys(db: Database, now: Date): Promise<void> {
  const last = lastPurge.get(db) ?? 0;
  if (now.getTime() - last < PURGE_INTERVAL_MS) return;
  lastPurge.set(db, now.getTime());
  await db.prisma.spawnIdempotencyKey.deleteMany({ where: { expiresAt: { lte: now } } });
}
