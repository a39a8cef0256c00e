// The process's access-token signing key (DESIGN.md §6a): an Ed25519 private JWK in
// `<dataDir>/token-signing-key.jwk` (mode 0600), created on the first start and kept across
// restarts, so tokens minted before a restart still verify. Its public half is upserted into
// token_signing_keys (id = kid = RFC 7638 thumbprint) before the first snapshot is built, so the
// JWKS every data plane serves from its snapshot names it.
//
// Rotation (`agent-gateway token-key rotate`, docs/oauth.md): a new key is published first, then
// written to the key file, then the old key is marked retired. A process that starts afterwards
// signs with the new key; a running one switches when the snapshot retiring its key reaches it
// (data-plane/oauth/follow-key-rotation.ts). The retired key stays in the JWKS until the tokens it
// signed have expired (shared/oauth/token-lifetimes.ts); the snapshot builder drops it after that.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFile, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { calculateJwkThumbprint, type JWK } from 'jose';
import type { TokenSigningKeyMaterial } from '../data-plane/oauth/token-signer.js';
import { gatewayError } from '../shared/errors/index.js';
import type { Database } from '../storage/engine/database.js';
import { writeSecretFile } from './secret-file.js';

export const TOKEN_SIGNING_KEY_FILE = 'token-signing-key.jwk';

/** A new Ed25519 key pair as JWKs, with its thumbprint as kid. */
export async function generateTokenSigningKey(): Promise<TokenSigningKeyMaterial> {
  const { privateKey } = generateKeyPairSync('ed25519');
  return describeKey(privateKey.export({ format: 'jwk' }) as JWK);
}

/** Reads the key file of `dataDir`, or creates it (mode 0600) when there is none. */
export async function loadTokenSigningKey(dataDir: string): Promise<TokenSigningKeyMaterial> {
  const file = join(dataDir, TOKEN_SIGNING_KEY_FILE);
  const existing = await readKeyFile(file);
  if (existing !== undefined) return existing;
  const created = await generateTokenSigningKey();
  try {
    await writeSecretFile(file, JSON.stringify(created.privateJwk));
  } catch (error) {
    throw unwritable(file, error);
  }
  return created;
}

/**
 * Publishes the public half: the next snapshot's JWKS lists it. A key a process signs with is
 * never retired: registering a retired key (a key file restored from a backup) serves it again.
 */
export async function registerTokenSigningKey(
  db: Database,
  key: TokenSigningKeyMaterial,
): Promise<void> {
  await db.query(
    `insert into token_signing_keys (id, "publicJwk") values ($1, $2::jsonb)
     on conflict (id) do update set "retiredAt" = null
       where token_signing_keys."retiredAt" is not null`,
    [key.kid, JSON.stringify(key.publicJwk)],
  );
}

export interface TokenKeyRotation {
  /** The key retired, or null when the data directory had none. */
  readonly previousKid: string | null;
  readonly kid: string;
  readonly file: string;
}

/**
 * Replaces the key of `dataDir` with a new one, in the order that keeps every token verifiable
 * whatever step fails: publish the new public key, put the new private key in the key file
 * (written aside, then renamed over it), then retire the old key.
 */
export async function rotateTokenSigningKey(
  db: Database,
  dataDir: string,
): Promise<TokenKeyRotation> {
  const file = join(dataDir, TOKEN_SIGNING_KEY_FILE);
  const previous = await readKeyFile(file);
  const next = await generateTokenSigningKey();
  await registerTokenSigningKey(db, next);
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeSecretFile(temporary, JSON.stringify(next.privateJwk));
    await rename(temporary, file);
  } catch (error) {
    await unlink(temporary).catch(() => {});
    throw unwritable(file, error);
  }
  if (previous !== undefined) {
    await db.query(
      `update token_signing_keys set "retiredAt" = now() where id = $1 and "retiredAt" is null`,
      [previous.kid],
    );
  }
  return { previousKid: previous?.kid ?? null, kid: next.kid, file };
}

/** The key in `file`, or undefined when there is no file. */
async function readKeyFile(file: string): Promise<TokenSigningKeyMaterial | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw unwritable(file, error);
  }
  let jwk: JWK;
  try {
    jwk = JSON.parse(text) as JWK;
  } catch {
    throw corrupt(file);
  }
  return describeKey(jwk, file);
}

async function describeKey(jwk: JWK, file?: string): Promise<TokenSigningKeyMaterial> {
  if (
    typeof jwk !== 'object' ||
    jwk === null ||
    jwk.kty !== 'OKP' ||
    jwk.crv !== 'Ed25519' ||
    typeof jwk.x !== 'string' ||
    typeof jwk.d !== 'string'
  ) {
    throw corrupt(file ?? TOKEN_SIGNING_KEY_FILE);
  }
  const publicJwk: JWK = { kty: 'OKP', crv: 'Ed25519', x: jwk.x };
  const kid = await calculateJwkThumbprint(publicJwk, 'sha256');
  return { kid, publicJwk, privateJwk: { kty: 'OKP', crv: 'Ed25519', x: jwk.x, d: jwk.d } };
}

function unwritable(file: string, error: unknown) {
  return gatewayError(
    'STORAGE_DATA_DIR_UNWRITABLE',
    { what: 'the token signing key to', path: file, reason: (error as Error).message },
    { cause: error },
  );
}

function corrupt(file: string) {
  return gatewayError('CONFIG_INVALID', {
    setting: file,
    problem:
      'not a private Ed25519 JWK; restore it, or delete it to make a new key (tokens the old key signed then stop verifying)',
  });
}
